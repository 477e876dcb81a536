"""``-v`` shows each request, as ``gh --verbose`` does: method, URL, status, time.

One ``[debug]`` line per request sent - every page, every redirect hop, every retry - of the
form ``[debug] GET <url> -> <status> (<n> ms)`` (``-> failed: <error>`` when no answer came).
No secret shows: the API key is never in a URL and is masked anywhere in a line, user info is
masked, and the query of a URL on another origin (a presigned object store's signature) is
left out.  Without ``-v`` (or with ``-q``) there is no such line.
"""

from __future__ import annotations

import re

from support import final_files

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

LINE = re.compile(r"^\[debug\] (?P<method>[A-Z]+) (?P<url>\S+) -> (?P<outcome>\d{3}|failed: \w+) \((?P<ms>\d+) ms\)$")
KEY = "request-log-key-0123456789"


def _lines(err: str) -> list[re.Match[str]]:
    return [m for m in map(LINE.match, err.splitlines()) if m]


def test_every_request_of_a_paged_walk_is_shown(api, sandbox):
    sandbox.reset_stats()
    result = api("-v", "jobs", "get", "-g", "G1", "--all", "--page-size", "7")
    assert result.code == 0, result.err
    seen = [r for r in sandbox.requests_log if r.path.startswith("/openapi/")]
    shown = _lines(result.err)
    assert len(shown) == len(seen) > 1
    assert sorted(m["url"].removeprefix(sandbox.url) for m in shown) == sorted(r.path for r in seen)
    assert {m["method"] for m in shown} == {"GET"} and {m["outcome"] for m in shown} == {"200"}
    assert sandbox.api_key not in result.err


def test_no_request_lines_without_verbose_or_with_quiet(api):
    assert _lines(api("jobs", "get", "-g", "G1").err) == []
    assert _lines(api("-v", "-q", "jobs", "get", "-g", "G1").err) == []


def test_retries_redirect_hops_and_presigned_queries(bl, tmp_path):
    body = b"artifact bytes"
    with start_scripted({"/bucket/result.tgz": Reply(200, body, "application/gzip")}) as store:
        presigned = f"{store.url.replace('://', '://user:pw@')}/bucket/result.tgz?Signature=SIGNED-SECRET&Expires=9"
        listing = {"job_id": "J1", "artifacts": [{"name": "result.tgz", "url": "x", "size": len(body)}]}
        routes = {"/openapi/jobs/J1/artifacts": [json_reply({"error": "busy"}, 503), json_reply(listing)],
                  "/openapi/jobs/J1/artifacts/download": Reply(302, b"", headers={"Location": presigned})}
        with start_scripted(routes) as srv:
            result = bl("--host", srv.url, "--api-key", KEY, "--retry", "1", "-v",
                        "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert final_files(tmp_path) == {"J1/result.tgz": body}
    shown = [(m["method"], m["url"], m["outcome"]) for m in _lines(result.err)]
    assert shown == [
        ("GET", f"{srv.url}/openapi/jobs/J1/artifacts", "503"),
        ("GET", f"{srv.url}/openapi/jobs/J1/artifacts", "200"),
        ("GET", f"{srv.url}/openapi/jobs/J1/artifacts/download?name=result.tgz", "302"),
        ("GET", f"{store.url}/bucket/result.tgz", "200"),  # no user info, no signature
    ]
    assert "SIGNED-SECRET" not in result.err and "pw@" not in result.err and KEY not in result.err


def test_a_request_that_got_no_answer_is_shown_as_failed(bl, closed_port):
    result = bl("--host", f"http://127.0.0.1:{closed_port}", "--api-key", KEY, "--retry", "0", "-v",
                "jobs", "get", "-g", "G1")
    assert result.code == 4, result.err
    (line,) = _lines(result.err)
    assert line["outcome"] == "failed: ConnectError", result.err
    assert line["url"].startswith(f"http://127.0.0.1:{closed_port}/openapi/")
