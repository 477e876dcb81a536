"""Names built to hide part of themselves (bidi overrides, zero-width and tag characters) are
shown: escaped on stderr and in table cells, percent-encoded in file names (ordinary
non-ASCII kept, distinct names kept distinct), and kept as they are in JSON output.

Against the scripted server. Found in round three of the reliability review
(docs/reliability.md, "Round three: the engine and the client"): each test fails on the code
before its fix. Nothing in httpx is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import json

from support import API_KEY, final_files, run_inprocess

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

REPORT = "/openapi/jobs/{}/report"


def bl(url: str, *args: str, stdin: str = ""):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", "0", *args, stdin=stdin)


# ============================================================ unicode that hides things
HIDING = "report\u202egnp.exe \u200b\u2066x\u2069\ufeff\U000e0041"


def test_format_characters_from_a_server_are_escaped_on_stderr():
    with start_scripted({REPORT.format("J1"): json_reply({"error": HIDING}, 500)}) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1")
    assert result.code == 1
    assert not any(c in result.err for c in "\u202e\u200b\u2066\u2069\ufeff\U000e0041"), repr(result.err)
    assert "report\\u202egnp.exe \\u200b\\u2066x\\u2069\\ufeff\\U000e0041" in result.err


def test_format_characters_are_escaped_in_table_cells():
    with start_scripted({REPORT.format("J1"): json_reply({"job_id": "J1", "summary": HIDING})}) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1", "--output", "table")
    assert result.code == 0, result.err
    assert not any(c in result.out for c in "\u202e\u200b\u2066\ufeff"), repr(result.out)
    assert "report\\u202egnp.exe" in result.out


def test_format_characters_in_server_names_are_percent_encoded_in_file_names(tmp_path):
    name = "result\u202ezgt.exe"
    listing = {"artifacts": [{"name": name, "url": "x"}, {"name": "zero\u200bwidth.tgz", "url": "x"}]}
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": Reply(200, b"A" * 100, "application/octet-stream")}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert sorted(final_files(tmp_path)) == ["J1/result%E2%80%AEzgt.exe", "J1/zero%E2%80%8Bwidth.tgz"]
    assert "\u202e" not in result.err and "\u200b" not in result.err


def test_file_names_keep_ordinary_non_ascii_and_stay_distinct():
    from benchloop.base.files import safe_component

    assert safe_component("G1-J0001") == "G1-J0001"
    assert safe_component("日本語-é") == "日本語-é"  # letters are not hiding anything
    assert safe_component("a\x85b") == "a%C2%85b"  # a C1 control, as its UTF-8 bytes like the rest
    names = ["a\u202eb", "a%E2%80%AEb", "a\u0600b", "a\x06" + "00b", "a\u2028b", "a\ud800b"]
    encoded = [safe_component(n) for n in names]
    assert len(set(encoded)) == len(names), encoded
    assert all(c.isprintable() for e in encoded for c in e), encoded


def test_json_output_keeps_the_servers_text_as_it_is():
    """Only what a person reads is escaped: stdout's JSON is the data, byte for byte."""
    with start_scripted({REPORT.format("J1"): json_reply({"job_id": "J1", "summary": HIDING})}) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1")
    assert json.loads(result.out)[0]["summary"] == HIDING
