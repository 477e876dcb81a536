"""A downloaded file holds the bytes of one object: a gzip-encoded answer saved decoded, a resume
that sends ``If-Range`` and takes a changed object whole, a 206 of another length or under
another validator never glued, temp names that never take over a listed artifact or a user's
file, a killed run's leftovers found by pattern and lock, FIFOs never opened.

Each runs ``bl`` against the scripted server. Found in round two of the reliability review
(docs/reliability.md, "Round two"): each test fails on the code before its fix. Nothing in httpx
is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import gzip
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support import API_KEY, ROOT, final_files, leftovers, run_inprocess

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

OBJECT = bytes(range(256)) * 800  # 200 kB
REPORT = "/openapi/jobs/{}/report"


def report(job: str, **extra) -> Reply:
    return json_reply({"job_id": job, "summary": "ok", **extra})


def bl(url: str, *args: str, stdin: str = "", retry: str = "0"):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", retry, *args, stdin=stdin)


# ====================================================== downloads are the bytes of one object
def test_a_gzip_encoded_download_is_saved_decoded_and_identity_is_asked(tmp_path):
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": Reply(200, gzip.compress(OBJECT), "application/octet-stream",
                                                           headers={"Content-Encoding": "gzip"})}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
        sent = [s.headers.get("accept-encoding") for s in srv.seen if s.path.endswith("/download")]
    assert result.code == 0, result.err
    assert final_files(tmp_path) == {"J1/result.tgz": OBJECT}
    assert sent == ["identity"]


V1, V2 = b"1" * 200_000, b"2" * 200_000


def resume_routes(second: Reply) -> dict:
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    first = Reply(200, V1, "application/octet-stream", headers={"ETag": '"v1"'}, cut="truncate", send=100_000)
    return {"/openapi/jobs/J1/artifacts": json_reply(listing), "/openapi/jobs/J1/artifacts/download": [first, second]}


def test_a_resume_sends_if_range_and_takes_a_changed_object_whole(tmp_path):
    # The object changed between the cut and the resume: a server honouring If-Range answers 200.
    second = Reply(200, V2, "application/octet-stream", headers={"ETag": '"v2"'})
    with start_scripted(resume_routes(second)) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path), retry="2")
        resumed = [s.headers for s in srv.seen if s.path.endswith("/download")][1]
    assert result.code == 0, result.err
    assert resumed.get("if-range") == '"v1"' and resumed.get("range") == "bytes=100000-"
    assert final_files(tmp_path) == {"J1/result.tgz": V2}


def test_a_206_of_an_object_of_another_length_is_never_glued(tmp_path):
    # A server that ignores If-Range sends the rest of a new, longer version: the total differs.
    rest = (V2 + b"2" * 50_000)[100_000:]
    second = Reply(206, rest, "application/octet-stream",
                   headers={"Content-Range": f"bytes 100000-249999/{250_000}", "ETag": '"v2"'})
    third = Reply(200, V2 + b"2" * 50_000, "application/octet-stream", headers={"ETag": '"v2"'})
    routes = resume_routes(second)
    routes["/openapi/jobs/J1/artifacts/download"].append(third)
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path), retry="3")
    assert result.code == 0, result.err
    saved = final_files(tmp_path)["J1/result.tgz"]
    assert saved == V2 + b"2" * 50_000  # never 100,000 ones followed by twos


OLD_DATE, NEW_DATE = "Mon, 30 Nov 2026 10:00:00 GMT", "Tue, 01 Dec 2026 10:00:00 GMT"


@pytest.mark.parametrize("sent, answered", [
    ({"ETag": '"v1"'}, {"ETag": '"v2"'}),
    ({"Last-Modified": OLD_DATE}, {"Last-Modified": NEW_DATE}),
    ({"ETag": '"v1"'}, {}),  # a 206 must carry the validator it answers to
], ids=["etag", "last-modified", "none"])
def test_a_206_under_another_validator_is_never_glued(tmp_path, sent, answered):
    # Issue 22: a server that ignores If-Range sends the rest of a new version of the same
    # length. Appending it would save the first 100,000 bytes of v1 and the rest of v2.
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    first = Reply(200, V1, "application/octet-stream", headers=sent, cut="truncate", send=100_000)
    rest = Reply(206, V2[100_000:], "application/octet-stream",
                 headers={"Content-Range": "bytes 100000-199999/200000", **answered})
    whole = Reply(200, V2, "application/octet-stream", headers=answered)
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": [first, rest, whole]}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path), retry="3")
        asked = [s.headers for s in srv.seen if s.path.endswith("/download")]
    assert result.code == 0, result.err
    assert asked[1].get("if-range") == next(iter(sent.values()))
    assert [h.get("range") for h in asked] == [None, "bytes=100000-", None]  # started over
    assert final_files(tmp_path) == {"J1/result.tgz": V2}


def test_a_206_under_the_same_validator_is_appended(tmp_path):
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    first = Reply(200, V1, "application/octet-stream", headers={"ETag": '"v1"'}, cut="truncate", send=100_000)
    rest = Reply(206, V1[100_000:], "application/octet-stream",
                 headers={"Content-Range": "bytes 100000-199999/200000", "ETag": '"v1"'})
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": [first, rest]}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path), retry="3")
        asked = [s.headers.get("range") for s in srv.seen if s.path.endswith("/download")]
    assert result.code == 0, result.err
    assert asked == [None, "bytes=100000-"]
    assert final_files(tmp_path) == {"J1/result.tgz": V1}


def test_an_artifact_named_like_another_ones_temp_file_is_kept(tmp_path):
    listing = {"artifacts": [{"name": ".result.tgz.part", "url": "x"}, {"name": "result.tgz", "url": "x"}]}

    def answer(seen):
        name = seen.target.split("name=")[-1]
        return Reply(200, b"A" * 1000 if name == "result.tgz" else b"P" * 500, "application/octet-stream")

    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing), "/openapi/jobs/J1/artifacts/download": answer}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "--concurrency", "1", "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert (tmp_path / "J1" / ".result.tgz.part").read_bytes() == b"P" * 500
    assert (tmp_path / "J1" / "result.tgz").read_bytes() == b"A" * 1000


def test_a_users_file_named_like_a_temp_file_is_never_truncated_or_taken_over(tmp_path):
    mine = tmp_path / ".J1_report.md.tmp"
    mine.write_text("my notes")
    with start_scripted({REPORT.format("J1"): report("J1", reports=[{"content": "# J1"}])}) as srv:
        result = bl(srv.url, "report", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert mine.read_text() == "my notes"
    assert (tmp_path / "J1_report.md").exists()


def test_a_killed_runs_leftovers_are_found_by_pattern_and_lock(tmp_path):
    from benchloop.base import files as writers

    dead = tmp_path / ".J1_report.md.%tmp-0123456789abcdef.tmp"
    dead.write_text("half")
    writers._swept.discard(str(tmp_path))
    with start_scripted({REPORT.format("J1"): report("J1", reports=[{"content": "# J1"}])}) as srv:
        result = bl(srv.url, "report", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert not dead.exists() and leftovers(tmp_path) == []


def fifo_run(tmp_path: Path, fifo: Path) -> subprocess.CompletedProcess:
    os.mkfifo(fifo)
    with start_scripted({REPORT.format("J1"): report("J1", reports=[{"content": "# J1"}])}) as srv:
        try:
            return subprocess.run([sys.executable, "-m", "benchloop", "--host", srv.url, "--api-key", API_KEY,
                                   "--retry", "0", "report", "download", "-j", "J1", "-o", str(tmp_path)],
                                  capture_output=True, text=True, timeout=30, cwd=ROOT,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        except subprocess.TimeoutExpired:
            pytest.fail("a FIFO made the run hang")


def test_a_fifo_at_the_old_temp_name_is_never_opened(tmp_path):
    fifo = tmp_path / ".J1_report.md.tmp"
    done = fifo_run(tmp_path, fifo)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert (tmp_path / "J1_report.md").is_file()


def test_a_fifo_at_the_final_path_is_refused(tmp_path):
    fifo = tmp_path / "J1_report.md"
    done = fifo_run(tmp_path, fifo)
    assert done.returncode == 1, done.stderr
    assert "not a regular file" in done.stderr and str(fifo) in done.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still the FIFO: never replaced, never opened
    assert leftovers(tmp_path) == []
