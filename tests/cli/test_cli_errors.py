"""Usage errors, exit codes and stderr levels (docs/contract.md 1.4, 3.7, 5.3, 6).

Usage errors must be detected before any request: every such test checks the
sandbox's request counter did not move.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import API_KEY, argv

from benchloop.table.load import load_spec

SPEC = load_spec()


def no_ids_message(resource: str, action: str) -> str:
    if "task" in SPEC["resources"][resource]["actions"][action]["dimensions"]:
        return "at least one -g/--group, -j/--job or --task-id is required"
    return "at least one -g/--group or -j/--job is required"


def _option_names(action: dict) -> set[str]:
    return {opt["name"] for opt in action["options"]}


# Actions that accept -j only to reject it (jobs, tasks), and actions with both dimensions.
GROUP_ONLY = [(res, act) for res, body in SPEC["resources"].items()
              for act, action in body["actions"].items()
              if set(action["dimensions"]) == {"group"} and "job" in _option_names(action)]
BOTH = [(res, act) for res, body in SPEC["resources"].items()
        for act, action in body["actions"].items()
        if {"group", "job"} <= set(action["dimensions"])]


@pytest.fixture
def no_requests(sandbox):
    """Assert the test made no request at all to the sandbox."""
    before = sandbox.stats["requests"]
    log_before = len(sandbox.requests_log)
    yield
    assert sandbox.stats["requests"] == before
    assert len(sandbox.requests_log) == log_before


def assert_usage(result, resource: str, action: str, message: str | None = None):
    assert result.code == 2, result
    assert result.out == ""
    lines = result.err.splitlines()
    where = " ".join(["bl", *argv(resource, action)])
    assert lines[0] == f"Usage: {where} [OPTIONS]"
    assert lines[1] == f"Try '{where} --help' for help."
    assert lines[-1].startswith("Error: ")
    if message is not None:
        assert lines[-1] == f"Error: {message}"
    assert "Traceback" not in result.err
    assert "╭" not in result.err  # one plain line, no box


def test_the_parametrisation_is_not_empty():
    assert ("jobs", "get") in GROUP_ONLY and ("tasks", "download") in GROUP_ONLY
    assert ("metrics", "get") in BOTH and ("report", "trigger") in BOTH


# ------------------------------------------------------------- usage errors
@pytest.mark.parametrize(("resource", "action"), BOTH + GROUP_ONLY)
def test_group_and_job_are_mutually_exclusive(api, no_requests, resource, action):
    result = api(*argv(resource, action), "-g", "G1", "-j", "G1-J0001")
    assert_usage(result, resource, action, "-g/--group and -j/--job are mutually exclusive")


@pytest.mark.parametrize(("resource", "action"), GROUP_ONLY)
def test_job_dimension_rejected(api, no_requests, resource, action):
    result = api(*argv(resource, action), "-j", "G1-J0001")
    # Changed on purpose (newcomer issue, item 7): the message says which ids the command takes.
    assert_usage(result, resource, action, f"{resource} takes group ids (-g/--group), not -j/--job")


@pytest.mark.parametrize(("resource", "action"), BOTH + GROUP_ONLY)
def test_no_ids(api, no_requests, resource, action):
    result = api(*argv(resource, action))
    assert_usage(result, resource, action, no_ids_message(resource, action))


def test_empty_stdin_counts_as_no_ids(api, no_requests):
    result = api("metrics", "get", "-g", "-", stdin="  \n")
    # Changed on purpose (newcomer issue, item 7): the message says that stdin was empty.
    assert_usage(result, "metrics", "get", "no ids on stdin: '-g -' read an empty input; pipe ids in, e.g. "
                 "echo ID1 ID2 | bl metrics get -g -")


def test_only_commas_count_as_no_ids(api, no_requests):
    result = api("report", "get", "-j", " , ,")
    assert_usage(result, "report", "get", "at least one -g/--group or -j/--job is required")


def test_exclusion_is_checked_after_stdin(api, no_requests):
    result = api("report", "get", "-g", "-", "-j", "G1-J0001", stdin="G1")
    assert_usage(result, "report", "get", "-g/--group and -j/--job are mutually exclusive")


def test_exclusion_before_job_dimension_check(api, no_requests):
    result = api("jobs", "get", "-g", "G1", "-j", "G1-J0001")
    assert_usage(result, "jobs", "get", "-g/--group and -j/--job are mutually exclusive")


@pytest.mark.parametrize(("resource", "value"), [("metrics", "bogus"), ("metrics", "summary"),
                                                 ("overview", "overall"), ("overview", "ALL")])
def test_bad_scope(api, no_requests, resource, value):
    result = api(resource, "get", "-g", "G1", "--scope", value)
    assert_usage(result, resource, "get")
    assert "--scope must be one of" in result.err


def test_bad_scope_message(api, no_requests):
    result = api("metrics", "get", "-g", "G1", "--scope", "bogus")
    assert_usage(result, "metrics", "get", "--scope must be one of overall, detail, all")


def test_choices_are_the_tables_to_check_even_with_pydantic_loaded(api, no_requests):
    # Cyclopts checks a value against its type hint with pydantic whenever pydantic is imported
    # (as the MCP server and the tests do); a choice is still the table's to check, in its order.
    pytest.importorskip("pydantic")
    result = api("metrics", "get", "-g", "G1", "--scope", "bogus")
    assert_usage(result, "metrics", "get", "--scope must be one of overall, detail, all")
    assert_usage(api("metrics", "get", "--scope", "bogus"), "metrics", "get",
                 "at least one -g/--group or -j/--job is required")


def test_scope_is_checked_after_ids(api, no_requests):
    result = api("metrics", "get", "--scope", "bogus")
    assert_usage(result, "metrics", "get", "at least one -g/--group or -j/--job is required")


def test_unknown_action(api, no_requests):
    result = api("metrics", "bogus")
    assert result.code == 2
    assert result.out == ""
    assert "bogus" in result.err.splitlines()[-1]


def test_unknown_action_with_options_names_the_action(api, no_requests):
    result = api("metrics", "bogus", "-j", "G1-J0001")
    assert result.code == 2
    assert result.out == ""
    assert "bogus" in result.err.splitlines()[-1]


@pytest.mark.parametrize("args", [
    ["metrics", "get", "-g", "G1", "--bogus"],
    ["metrics", "get", "-g", "G1", "--cluster", "x"],
    ["jobs", "get", "-g", "G1", "--search", "x"],       # tasks only
    ["tasks", "get", "-g", "G1", "--template", "x"],    # jobs only
    ["report", "get", "-g", "G1", "--include-passed"],  # trigger only
    ["metrics", "get", "-g", "G1", "--skip-existing"],  # download only
])
def test_unknown_option(api, no_requests, args):
    result = api(*args)
    assert_usage(result, args[0], args[1])
    assert args[4] in result.err


def test_unknown_global_option(bl):
    result = bl("--cluster", "x", "metrics", "get", "-j", "J1")
    assert result.code == 2
    assert result.out == ""
    assert "--cluster" in result.err


def test_option_without_value(api, no_requests):
    result = api("metrics", "get", "-g")
    assert_usage(result, "metrics", "get")
    assert "-g" in result.err.splitlines()[-1]


@pytest.mark.parametrize("args", [
    ["jobs", "get", "-g", "G1", "--page-size", "0"],
    ["tasks", "get", "-g", "G1", "--page-size", "0"],
    ["jobs", "download", "-g", "G1", "--page-size", "0"],
    ["tasks", "download", "-g", "G1", "--page-size", "-5"],
    ["jobs", "get", "-g", "G1", "--page", "0"],
    ["jobs", "get", "-g", "G1", "--page-size", "many"],
])
def test_bad_page_values(api, no_requests, args):
    result = api(*args)
    assert_usage(result, args[0], args[1])
    assert args[-2] in result.err.splitlines()[-1]


@pytest.mark.parametrize("value", ["0", "-1"])
def test_bad_concurrency(bl, sandbox, no_requests, value):
    result = bl("--host", sandbox.url, "--api-key", API_KEY, "--concurrency", value,
                "jobs", "get", "-g", "G1")
    assert result.code == 2
    assert result.out == ""
    assert "--concurrency" in result.err
    assert "Traceback" not in result.err


def test_usage_error_makes_no_network_call_even_to_a_dead_host(bl):
    # Usage errors never need the HTTP client (docs/contract.md 1.1).
    result = bl("--host", "http://127.0.0.1:9", "metrics", "get", "-g", "G1", "-j", "J1")
    assert result.code == 2
    assert "network" not in result.err


# --------------------------------------------------------------- exit codes
def test_partial_failure_exits_1_after_printing_the_good_ones(api):
    result = api("--no-pretty", "--concurrency", "1", "metrics", "get", "-j", "G1-J0001,NOPE")
    assert result.code == 1
    data = json.loads(result.out)
    assert [e["job_id"] for e in data] == ["G1-J0001"]
    assert result.err.splitlines() == [
        "[error] 1 id(s) failed:",
        '[error]   - NOPE: API error 404: {"error": "job not found: NOPE"}',
    ]


def test_failure_summary_comes_after_the_array(sandbox, tmp_path):
    # Real process, stdout and stderr on one pipe: the array is flushed before the summary.
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-m", "benchloop", "--host", sandbox.url, "--api-key", API_KEY,
         "--retry", "0", "--no-pretty", "report", "get", "-j", "G1-J0001,NOPE"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=tmp_path, timeout=60,
    )
    assert proc.returncode == 1
    lines = proc.stdout.decode("utf-8").splitlines()
    assert lines[0].startswith('[{"job_id":"G1-J0001"')
    assert lines[1:] == [
        "[error] 1 id(s) failed:",
        '[error]   - NOPE: API error 404: {"error": "job not found: NOPE"}',
    ]


def test_all_failed_with_404_exits_1(api):
    result = api("report", "get", "-g", "NOPE1,NOPE2")
    assert result.code == 1
    assert result.out == "[]\n"
    lines = result.err.splitlines()
    assert lines[0] == "[error] 2 id(s) failed:"
    assert lines[1].startswith("[error]   - NOPE1: API error 404: {")
    assert lines[2].startswith("[error]   - NOPE2: API error 404: {")


def test_error_body_rendered_as_json_not_python(api):
    result = api("report", "get", "-j", "NOPE")
    assert '{"error": "job not found: NOPE"}' in result.err
    assert "{'error'" not in result.err


def test_wrong_api_key_exits_3(bl, sandbox):
    sandbox.reset_stats()
    result = bl("--host", sandbox.url, "--api-key", "wrong", "--retry", "0", "--concurrency", "1",
                "metrics", "get", "-j", "G1-J0001,G1-J0002,G1-J0003")
    assert result.code == 3
    assert result.out == ""
    assert result.err.splitlines() == ["[error] authentication error: authentication failed (HTTP 401)",
                                       f"[error] {sandbox.url} refused the API key from --api-key; "
                                       "check that it is the key of this backend"]
    # README: a 401 cancels the remaining work at once
    assert sandbox.stats["unauthorized"] == 1


def test_wrong_api_key_on_downloads_exits_3(bl, sandbox, tmp_path):
    result = bl("--host", sandbox.url, "--api-key", "wrong", "--retry", "0",
                "report", "download", "-g", "G1", "-o", str(tmp_path / "out"))
    assert result.code == 3
    assert "[error] authentication error: authentication failed (HTTP 401)" in result.err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.md"))


def test_missing_api_key_exits_3(bl, sandbox):
    result = bl("--host", sandbox.url, "--retry", "0", "overview", "get", "-g", "G1")
    assert result.code == 3
    assert "[error] authentication error:" in result.err


def test_closed_port_exits_4(bl, closed_port):
    result = bl("--host", f"http://127.0.0.1:{closed_port}", "--api-key", "k", "--retry", "0",
                "metrics", "get", "-j", "A,B")
    assert result.code == 4
    assert result.out == "[]\n"
    lines = result.err.splitlines()
    assert lines[0] == "[error] 2 id(s) failed:"
    assert lines[1].startswith("[error]   - A: network: ")
    assert lines[2].startswith("[error]   - B: network: ")


def test_closed_port_download_exits_4(bl, closed_port, tmp_path):
    result = bl("--host", f"http://127.0.0.1:{closed_port}", "--api-key", "k", "--retry", "0",
                "jobs", "download", "-g", "G1", "-o", str(tmp_path))
    assert result.code == 4
    assert "[error]   - G1: network: " in result.err
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------ stderr levels
def test_quiet_hides_progress_and_info_but_not_errors(api, tmp_path):
    result = api("-q", "--concurrency", "1", "report", "download", "-j", "G1-J0001,NOPE",
                 "-o", str(tmp_path))
    assert result.code == 1
    assert (tmp_path / "G1-J0001_report.md").is_file()
    assert result.err.splitlines() == [
        "[error] 1 id(s) failed:",
        '[error]   - NOPE: API error 404: {"error": "job not found: NOPE"}',
    ]


def test_quiet_download_success_prints_nothing(api, tmp_path):
    result = api("-q", "jobs", "download", "-g", "G1", "-o", str(tmp_path))
    assert result.code == 0
    assert result.out == "" and result.err == ""


def test_without_quiet_progress_and_info_are_printed(api, tmp_path):
    result = api("jobs", "download", "-g", "G1", "-o", str(tmp_path))
    assert "[progress] group jobs G1: 40/40 jobs, fetched" in result.err
    assert f"wrote {tmp_path}/G1/job_list.json (40 jobs)" in result.err


def test_verbose_adds_debug_lines_for_pagination_overlap(api):
    result = api("-v", "--no-pretty", "jobs", "get", "-g", "G1", "--all", "--page-size", "7")
    assert result.code == 0
    data = json.loads(result.out)
    assert data[0]["total"] == 40 and len({j["job_id"] for j in data[0]["jobs"]}) == 40
    # -v also shows each request sent ([debug] GET <url> -> 200 (n ms)): the pagination lines here
    debug = [line for line in result.err.splitlines()
             if line.startswith("[debug] ") and not line.startswith("[debug] GET ")]
    assert debug
    # jobs 34..36 share one created_at: the first page (40..34) ends on a run of 3
    assert debug[0].startswith("[debug] group G1 pagination boundary overlap: skip=0 page_count=7 "
                               "overlap=3 next_skip=4 boundary='")
    assert debug[0].endswith("' new=7 duplicates=0")
    assert all("pagination boundary overlap" in line for line in debug)


def test_no_debug_lines_without_verbose(api):
    result = api("jobs", "get", "-g", "G1", "--all", "--page-size", "7")
    assert result.code == 0
    assert "[debug]" not in result.err


def test_quiet_wins_over_verbose(api):
    result = api("-q", "-v", "jobs", "get", "-g", "G1", "--all", "--page-size", "7")
    assert result.code == 0
    assert result.err == ""


def test_stdout_carries_data_only(api):
    result = api("jobs", "get", "-g", "G1", "--all", "--page-size", "7", "-v")
    json.loads(result.out)
    assert "[progress]" not in result.out and "[debug]" not in result.out


# ------------------------------------------------------------------ retries
def test_get_is_retried_after_a_5xx(api, sandbox):
    with sandbox.faulted("job_report", status=503, retry_after=0):
        result = api("report", "get", "-j", "G1-J0001", retry="1")
    assert result.code == 0, result.err
    assert json.loads(result.out)[0]["job_id"] == "G1-J0001"
    assert sandbox.stats["job_report"] == 2


def test_get_gives_up_after_the_retries(api, sandbox):
    with sandbox.faulted("job_report", status=503, retry_after=0, count=3):
        result = api("report", "get", "-j", "G1-J0001", retry="1")
    assert result.code == 1
    assert result.out == "[]\n"
    assert "[error]   - G1-J0001: API error 503: " in result.err
    assert sandbox.stats["job_report"] == 2


def test_negative_retry_counts_as_zero(api, sandbox):
    with sandbox.faulted("job_report", status=503, retry_after=0):
        result = api("report", "get", "-j", "G1-J0001", retry="-3")
    assert result.code == 1
    assert sandbox.stats["job_report"] == 1


def test_trigger_is_not_retried_after_a_5xx(api, sandbox):
    # README: a POST is retried only when the server cannot have received it, or on 429.
    with sandbox.faulted("group_report_trigger", status=503, retry_after=0):
        result = api("report", "trigger", "-g", "G1", retry="2")
    assert result.code == 1
    assert sandbox.stats["group_report_trigger"] == 1


def test_trigger_is_retried_after_a_429(api, sandbox):
    with sandbox.faulted("group_report_trigger", status=429, retry_after=0):
        result = api("report", "trigger", "-g", "G1", retry="1")
    assert result.code == 0, result.err
    assert json.loads(result.out) == [{"status": "triggered", "group_id": "G1", "include_passed": False}]
    assert sandbox.stats["group_report_trigger"] == 2
    assert len(sandbox.stats["triggers"]) == 1  # the 429 answer never reached the handler


def test_a_failing_part_fails_the_whole_group(api, sandbox):
    with sandbox.faulted("group_metrics_overall", status=500):
        result = api("--no-pretty", "metrics", "get", "-g", "G1,G2", "--scope", "all",
                     "--concurrency", "1")
    assert result.code == 1
    assert [e["group_id"] for e in json.loads(result.out)] == ["G2"]
    assert "[error]   - G1: API error 500: " in result.err
