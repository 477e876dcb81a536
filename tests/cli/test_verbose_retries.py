"""``-v`` shows every retry with the whole URL that was tried, never a secret.

A newcomer who points ``--host`` at the wrong place should see, with ``-v``,
exactly which URL each attempt went to; the API key (a header) and a password
in the host URL must not appear.
"""

from __future__ import annotations


def test_retries_name_the_whole_url_and_hide_the_secrets(bl, closed_port):
    key = "verbose-secret-key-1234"
    result = bl("--host", f"http://127.0.0.1:{closed_port}", "--api-key", key, "-v",
                "--retry", "1", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 4
    url = f"http://127.0.0.1:{closed_port}/openapi/metrics/G1-J0001?source=trace"
    retries = [line for line in result.err.splitlines() if line.startswith(f"[debug] GET {url}: ")]
    assert retries, result.err  # the retry line (the request lines: tests/cli/test_request_log.py)
    assert key not in result.err


def test_a_password_in_the_host_is_a_usage_error_that_never_shows_it(bl, closed_port):
    result = bl("--host", f"http://user:hunter2@127.0.0.1:{closed_port}", "--api-key", "verbose-secret-key-1234",
                "-v", "--retry", "1", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 2, result.err
    assert f"'http://***@127.0.0.1:{closed_port}'" in result.err
    assert "hunter2" not in result.err and "user:" not in result.err
