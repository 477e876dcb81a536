"""An artifact is saved only at the size its listing announced.

A hostile (or broken) backend answers an artifact without ``Content-Length`` and closes the
connection early: the body looks complete to HTTP/1.1's close-delimited framing.  The
listing's ``size`` is what tells: a body of another size fails that artifact with both sizes
in the message, nothing is written, ``--skip-existing`` downloads an existing file of another
size again, and ``--allow-size-mismatch`` keeps such a body with a warning.
"""

from __future__ import annotations

import json

import pytest
from support import final_files, leftovers

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

SIZE = 50_000
BODY = bytes(range(256)) * (SIZE // 256) + bytes(SIZE % 256)
LISTING = "/openapi/jobs/J1/artifacts"
DOWNLOAD = "/openapi/jobs/J1/artifacts/download"


def _listing(size=SIZE) -> Reply:
    return json_reply({"job_id": "J1", "artifacts": [{"name": "result.tgz", "url": "https://store/x", "size": size}]})


def _short(sent: int = 20_000) -> Reply:
    return Reply(200, BODY, "application/gzip", cut="unframed", send=sent)


def _run(bl, srv, out, *extra: str, retry: str = "0"):
    return bl("--host", srv.url, "--api-key", "k", "--retry", retry, "artifacts", "download", "-j", "J1",
              "-o", str(out), *extra)


def test_a_body_cut_short_without_a_length_fails_with_both_sizes(bl, tmp_path):
    with start_scripted({LISTING: _listing(), DOWNLOAD: _short()}) as srv:
        result = _run(bl, srv, tmp_path)
    assert result.code == 1, result.err
    assert result.failed == ["J1:result.tgz"]
    assert "20000" in result.err and "50000" in result.err, result.err
    assert final_files(tmp_path) == {} and leftovers(tmp_path) == []


def test_a_cut_is_asked_again_and_a_whole_body_then_saved(bl, tmp_path):
    with start_scripted({LISTING: _listing(), DOWNLOAD: [_short(), _short(SIZE)]}) as srv:
        result = _run(bl, srv, tmp_path, retry="1")
        asked = [seen.path for seen in srv.seen].count(DOWNLOAD)
    assert result.code == 0, result.err
    assert asked == 2
    assert final_files(tmp_path) == {"J1/result.tgz": BODY}


@pytest.mark.parametrize("announced", [SIZE - 1, SIZE + 1])
def test_a_whole_body_of_another_size_than_announced_fails(bl, tmp_path, announced):
    with start_scripted({LISTING: _listing(announced), DOWNLOAD: Reply(200, BODY, "application/gzip")}) as srv:
        result = _run(bl, srv, tmp_path)
    assert result.code == 1, result.err
    assert str(SIZE) in result.err and str(announced) in result.err, result.err
    assert final_files(tmp_path) == {}


def test_skip_existing_downloads_a_file_of_another_size_again(bl, tmp_path):
    target = tmp_path / "J1" / "result.tgz"
    target.parent.mkdir()
    target.write_bytes(BODY[:20_000])  # what an older bl saved from a cut answer
    with start_scripted({LISTING: _listing(), DOWNLOAD: Reply(200, BODY, "application/gzip")}) as srv:
        result = _run(bl, srv, tmp_path, "--skip-existing")
    assert result.code == 0, result.err
    assert target.read_bytes() == BODY
    assert f"[info] existing {target} is 20000 bytes, the listing announced {SIZE}: downloading it again" \
        in result.err.splitlines()
    with start_scripted({LISTING: _listing(), DOWNLOAD: _short()}) as srv:
        again = _run(bl, srv, tmp_path, "--skip-existing")
        asked = [seen.path for seen in srv.seen]
    assert again.code == 0, again.err
    assert DOWNLOAD not in asked and "skip existing" in again.err  # the right size: kept


def test_allow_size_mismatch_keeps_the_body_with_a_warning(bl, tmp_path):
    with start_scripted({LISTING: _listing(), DOWNLOAD: _short()}) as srv:
        result = _run(bl, srv, tmp_path, "--allow-size-mismatch")
    assert result.code == 0, result.err
    assert final_files(tmp_path) == {"J1/result.tgz": BODY[:20_000]}
    warning = [line for line in result.err.splitlines() if line.startswith("[warn]") and "50000" in line]
    assert warning and "20000" in warning[0], result.err


@pytest.mark.parametrize("size", [None, "50000", -1, True, 1e3])
def test_a_listing_without_a_byte_count_checks_nothing_more(bl, tmp_path, size):
    entry = {"name": "result.tgz", "url": "https://store/x"}
    if size is not None:
        entry["size"] = size
    listing = json_reply({"job_id": "J1", "artifacts": [entry]})
    with start_scripted({LISTING: listing, DOWNLOAD: Reply(200, BODY[:1000], "application/gzip")}) as srv:
        result = _run(bl, srv, tmp_path)
    assert result.code == 0, result.err
    assert final_files(tmp_path) == {"J1/result.tgz": BODY[:1000]}


def test_list_only_shows_the_announced_size(bl, tmp_path):
    with start_scripted({LISTING: _listing()}) as srv:
        result = _run(bl, srv, tmp_path, "--list-only")
    assert result.code == 0, result.err
    assert json.loads(result.out)[0]["size"] == SIZE
