"""Errors that explain (newcomer issue, items 4-8): each message says what to do next.

Usage errors keep the contract's three-line form (docs/contract.md 1.4); the
runtime hints are extra ``[error]``/``[warn]`` lines after the failure lines
scripts already parse, which stay unchanged.
"""

from __future__ import annotations

import json

import pytest
from support import API_KEY


def error_line(result) -> str:
    assert result.code == 2, result
    assert result.out == ""
    return result.err.splitlines()[-1]


# ------------------------------------------------------------ 4. network
def test_network_failure_names_the_host_and_the_flag(bl, closed_port):
    url = f"http://127.0.0.1:{closed_port}"
    result = bl("--host", url, "--api-key", "k", "--retry", "0", "metrics", "get", "-j", "X")
    assert result.code == 4
    lines = result.err.splitlines()
    assert lines[:2] == ["[error] 1 id(s) failed:", "[error]   - X: network: [Errno 111] Connection refused"]
    assert lines[2:] == [f"[error] network errors talking to {url} (host from --host); check the URL and the "
                         "network (-v shows each retry)"]


def test_network_failure_names_the_environment_variable(bl, closed_port, monkeypatch):
    monkeypatch.setenv("BENCHLOOP_HOST", f"http://127.0.0.1:{closed_port}")
    result = bl("--api-key", "k", "--retry", "0", "metrics", "get", "-j", "X")
    assert result.code == 4
    assert f"[error] network errors talking to http://127.0.0.1:{closed_port} (host from BENCHLOOP_HOST)" in result.err


def test_a_host_with_user_info_in_the_config_is_refused_names_the_file_and_masks_it(bl, closed_port, tmp_path):
    # Round four: user info in the backend URL is a usage error (a URL read as two hosts sent
    # the key to the one before the '@'), named with where it came from, the user info masked.
    config = tmp_path / "c.toml"
    config.write_text(f'[profile]\nhost = "http://me:s3cret@127.0.0.1:{closed_port}"\n', encoding="utf-8")
    config.chmod(0o600)
    result = bl("--config", str(config), "--api-key", "k", "--retry", "0", "metrics", "get", "-j", "X")
    assert result.code == 2, result.err
    assert (f"invalid backend URL 'http://***@127.0.0.1:{closed_port}': it has user info") in result.err
    assert f"(from host in {config} [profile])" in result.err
    assert "s3cret" not in result.err and "me:" not in result.err


# --------------------------------------------------------- 5. missing key
def test_missing_key_says_how_to_set_one(bl, sandbox):
    result = bl("--host", sandbox.url, "--retry", "0", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 3
    assert result.err.splitlines() == [
        "[error] authentication error: authentication failed (HTTP 401)",
        "[error] no API key is configured, so none was sent; set one with 'bl config set --api-key KEY' "
        "or the BENCHLOOP_API_KEY environment variable",
    ]


def test_wrong_key_keeps_the_plain_message_and_names_its_source(api, sandbox):
    result = api("metrics", "get", "-j", "G1-J0001", key="wrong")
    assert result.code == 3
    assert result.err == ("[error] authentication error: authentication failed (HTTP 401)\n"
                          f"[error] {sandbox.url} refused the API key from --api-key; "
                          "check that it is the key of this backend\n")


# ------------------------------------------------------ 6. invalid config
def test_invalid_stored_host_names_the_file_and_key(bl, tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('[profile]\nhost = "127.0.0.1:8765"\n', encoding="utf-8")
    config.chmod(0o600)
    line = error_line(bl("--config", str(config), "metrics", "get", "-j", "X"))
    assert line == ("Error: invalid backend URL '127.0.0.1:8765': expected http://HOST[:PORT][/PATH] or "
                    f"https://HOST[:PORT][/PATH] (from host in {config} [profile])")


def test_missing_config_file_given_explicitly_is_reported(bl, tmp_path):
    missing = tmp_path / "nonexistent.toml"
    result = bl("--config", str(missing), "config", "show")
    assert result.code == 0
    assert result.err == (f"[warn] config file {missing} (from --config) does not exist; "
                          "using the environment and defaults\n")


# ------------------------------------------------------ 7. parser messages
def test_a_bare_id_suggests_the_options(bl):
    assert error_line(bl("metrics", "get", "G1-J0001")) == (
        "Error: unexpected argument(s) 'G1-J0001': ids are given with an option, e.g. -j G1-J0001 or -g G1-J0001")


@pytest.mark.parametrize("words", [["help"], ["help", "metrics"], ["help", "metrics", "get"]])
def test_help_command_shows_help(bl, words):
    result = bl(*words)
    expected = bl(*words[1:], "--help")
    assert result.code == 0 and result.out == expected.out and result.out.startswith("Usage: bl")


@pytest.mark.parametrize("words, line", [(["help", "nope"], "Error: Unknown command 'nope'."),
                                         (["help", "metrics", "nope"], "Error: Unknown command 'nope' of metrics.")])
def test_help_of_an_unknown_command_is_a_usage_error_as_the_command_is(bl, words, line):
    result = bl(*words)
    assert result.code == 2 and bl(*words[1:]).code == 2
    assert error_line(result) == line


def test_unknown_option_before_the_resource_is_called_an_option(bl):
    assert error_line(bl("--outptu-dir", "x", "metrics", "get", "-j", "X")) == (
        "Error: Unknown option: --outptu-dir. Did you mean --output-dir?")
    assert error_line(bl("metrics", "get", "-j", "X", "--outptu-dir", "x")) == (
        "Error: Unknown option: --outptu-dir. Did you mean --output-dir?")


def test_jobs_says_it_takes_group_ids(bl):
    assert error_line(bl("jobs", "get", "-j", "X")) == "Error: jobs takes group ids (-g/--group), not -j/--job"


def test_empty_stdin_is_named(bl):
    assert error_line(bl("report", "get", "-j", "-", stdin="")) == (
        "Error: no ids on stdin: '-j -' read an empty input; pipe ids in, e.g. echo ID1 ID2 | bl report get -j -")


# --------------------------------------------------- 8. unknown empty group
@pytest.mark.parametrize("args", [["jobs", "download", "-o", "OUT"], ["jobs", "get", "--all"]])
def test_unknown_group_of_jobs_warns_and_keeps_exit_0(api, tmp_path, args):
    args = [str(tmp_path) if a == "OUT" else a for a in args]
    result = api(*args, "-g", "G99")
    assert result.code == 0  # the official client's exit code (docs/contract.md 1.5)
    assert ('[warn] group G99 has no jobs and does not exist (API error 404: {"error": "group not found: G99"}); '
            "check the id") in result.err.splitlines()


def test_an_existing_empty_group_does_not_warn(api, tmp_path):
    result = api("jobs", "download", "-g", "GEMPTY", "-o", str(tmp_path))
    assert result.code == 0 and "[warn]" not in result.err
    assert json.loads((tmp_path / "GEMPTY" / "job_list.json").read_text())["jobs"] == []


def test_status_help_lists_the_values(bl):
    jobs = bl("jobs", "get", "--help").out
    tasks = bl("tasks", "download", "--help").out
    assert "succeeded, failed, running or cancelled" in " ".join(jobs.split())
    assert "passed, failed, error or pending" in " ".join(tasks.split())


def test_key_never_shows_in_the_hints(bl, closed_port):
    key = "a-long-secret-key-0123456789"
    result = bl("-v", "--host", f"http://127.0.0.1:{closed_port}", "--api-key", key, "--retry", "1",
                "metrics", "get", "-j", "X")
    assert result.code == 4 and key not in result.err
    assert API_KEY not in result.err
