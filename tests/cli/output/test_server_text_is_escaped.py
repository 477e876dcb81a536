"""Text a server sends reaches the terminal escaped: C1 controls on stderr, escapes in table cells,
keys with quotes redacted in JSON errors, an update notice without escape sequences (and an
index URL's credentials never cached in clear), surrogates on stdin and from the backend
printed and saved as their escapes, a FIFO at a path a file error before the download.

Each runs ``bl`` against the scripted server. Found in round two of the reliability review
(docs/reliability.md, "Round two"): each test fails on the code before its fix. Nothing in httpx
is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import time

import pytest
from support import API_KEY, run_inprocess

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

REPORT = "/openapi/jobs/{}/report"


def report(job: str, **extra) -> Reply:
    return json_reply({"job_id": job, "summary": "ok", **extra})


def bl(url: str, *args: str, stdin: str = "", retry: str = "0"):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", retry, *args, stdin=stdin)


# ====================================================== nothing hostile reaches the terminal
def test_c1_control_characters_from_a_server_are_escaped_on_stderr():
    with start_scripted({REPORT.format("J1"): json_reply({"error": "bad \x9b31m\x1b[2J \x85"}, 500)}) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1")
    assert result.code == 1
    assert not any(0x80 <= ord(c) <= 0x9F or c == "\x1b" for c in result.err), repr(result.err)
    assert "\\x9b31m" in result.err


def test_table_cells_escape_server_strings(tmp_path):
    with start_scripted({REPORT.format("J1"): report("J1", summary="\x1b]0;pwned\x07 \x9b2J")}) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1", "--output", "table")
    assert result.code == 0, result.err
    assert not any(c in result.out for c in "\x1b\x07\x9b"), repr(result.out)


@pytest.mark.parametrize("key", ['key"with"quotes-1234', "key\\with\\backslash-1234"])
def test_a_key_with_quotes_or_backslashes_is_redacted_in_json_errors(key):
    with start_scripted({REPORT.format("J1"): json_reply({"error": f"bad key {key}"}, 500)}) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", key, "--retry", "0", "--error-format", "json",
                               "report", "get", "-j", "J1")
    assert result.code == 1
    escaped = json.dumps(key)[1:-1]
    assert key not in result.err and escaped not in result.err, result.err
    assert "***" in result.err


class _Index:
    """A package index answering one hostile version list."""

    def __init__(self, versions: list[str]):
        body = json.dumps({"name": "benchloop-client", "versions": versions}).encode()
        self.server = start_scripted({"/simple/benchloop-client/": Reply(
            200, body, "application/vnd.pypi.simple.v1+json")})

    def url(self, credentials: str = "") -> str:
        return self.server.url.replace("://", f"://{credentials}", 1) + "/simple"


@pytest.fixture
def checks_enabled(monkeypatch):
    monkeypatch.delenv("BENCHLOOP_NO_UPDATE_CHECK", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)


def wait_for_cache():
    from benchloop.cli import update_check

    for _ in range(100):
        if update_check.cache_file().exists():
            return update_check.cache_file()
        time.sleep(0.05)
    raise AssertionError("no update cache written")


def test_an_update_notice_never_prints_escape_sequences(checks_enabled, monkeypatch):
    index = _Index(["99.0.0+\x1b]0;pwned\x07\x1b[2J"])
    monkeypatch.setenv("BENCHLOOP_INDEX_URL", index.url())
    try:
        with start_scripted({REPORT.format("J1"): report("J1")}) as srv:
            bl(srv.url, "report", "get", "-j", "J1")
            wait_for_cache()
            second = bl(srv.url, "report", "get", "-j", "J1")
    finally:
        index.server.stop()
    assert "\x1b" not in second.err and "\x07" not in second.err, repr(second.err)


def test_an_index_url_with_credentials_is_not_cached_in_clear_and_the_cache_is_private(checks_enabled,
                                                                                       monkeypatch):
    index = _Index(["99.0.0"])
    monkeypatch.setenv("BENCHLOOP_INDEX_URL", index.url("user:s3cret-token@"))
    try:
        with start_scripted({REPORT.format("J1"): report("J1")}) as srv:
            bl(srv.url, "report", "get", "-j", "J1")
            cache = wait_for_cache()
            time.sleep(0.1)
            second = bl(srv.url, "report", "get", "-j", "J1")
    finally:
        index.server.stop()
    assert "s3cret-token" not in cache.read_text()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert "99.0.0 is available" in second.err and "s3cret-token" not in second.err


def test_stdin_helper_accepts_surrogates():
    # (self-check) the in-process runner passes a non-UTF-8 id through unchanged
    assert io.StringIO("J\udcff").read() == "J\udcff"


def test_a_fifo_at_a_path_is_a_file_error_of_that_path_before_the_download(tmp_path):
    from benchloop.base import files as writers
    from benchloop.base.errors import BenchloopError

    os.mkfifo(tmp_path / "J1_report.md")
    with pytest.raises(BenchloopError) as caught:
        writers.join_under(str(tmp_path), "J1_report.md")
    assert "not a regular file" in str(caught.value) and "J1_report.md" in str(caught.value)


# ------------------------------------------------------------ text UTF-8 cannot carry
def test_a_lone_surrogate_from_the_backend_is_printed_and_saved_as_its_escape(tmp_path):
    # JSON may escape half of a surrogate pair ("\ud800"); UTF-8 has no form for it, so
    # printing it raw failed ("unexpected error") and saving it failed the id.  A real
    # process with a real pipe: what a script reading stdout gets.
    body = {"job_id": "J1", "metrics": {"note": "a\ud800b", "\udfff": 1}}
    with start_scripted({"/openapi/metrics/J1": json_reply(body)}) as srv:
        base = [sys.executable, "-m", "benchloop", "--host", srv.url, "--api-key", API_KEY, "--retry", "0"]
        runs = {flags: subprocess.run([*base, *flags[:1], "metrics", "get", "-j", "J1", *flags[1:]],
                                      capture_output=True, cwd=tmp_path, timeout=60)
                for flags in ((), ("--no-pretty",), ("--pretty", "--output", "jsonl"))}
        saved = subprocess.run([*base, "-o", str(tmp_path / "out"), "metrics", "download", "-j", "J1"],
                               capture_output=True, cwd=tmp_path, timeout=60)
    for flags, proc in runs.items():
        assert proc.returncode == 0, (flags, proc.stderr)
        text = proc.stdout.decode("utf-8")  # valid UTF-8
        assert "\\ud800" in text and "\\udfff" in text
        doc = json.loads(text)
        element = doc if "jsonl" in flags else doc[0]
        assert element["metrics"] == {"note": "a\ud800b", "\udfff": 1}  # reads back the same
    assert saved.returncode == 0, saved.stderr
    (written,) = (tmp_path / "out").rglob("*.json")
    assert json.loads(written.read_bytes().decode("utf-8"))["metrics"]["note"] == "a\ud800b"
