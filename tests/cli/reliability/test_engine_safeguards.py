"""Reliability and security, round three: the engine and the client.

Each test plays a hostile server (the scripted server on loopback), a reader that closes
stdout, a multiprocessing pool or a name built to hide part of itself, and fails on the code
before its fix (checked against that code).  Nothing in httpx is mocked; nothing leaves
loopback.  docs/reliability.md ("Round three: the engine and the client") lists them.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import socket
import subprocess
import sys
from typing import Any

import pytest
from support import API_KEY, ROOT, final_files, run_inprocess

import benchloop
from benchloop.engine.pagination import task_scan
from benchloop.sandbox.scripted import Reply, Seen, json_reply, start_scripted

TASKS = "/openapi/groups/G1/eval_tasks"
REPORT = "/openapi/jobs/{}/report"
LOGIN = "https://login.alibaba-inc.com/ssoLogin.htm?backURL=x"
ENV = {**os.environ, "BENCHLOOP_NO_UPDATE_CHECK": "1", "PYTHONPATH": str(ROOT)}


def bl(url: str, *args: str, stdin: str = ""):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", "0", *args, stdin=stdin)


# ====================================================== a task scan always ends
class EndlessTasks:
    """Answers every page request with the same full page of tasks that have no id and no total.

    After ``limit`` requests it answers an empty page, so that the code before the fix (which
    walked such a backend without end) ends too and the test can say how far it went."""

    def __init__(self, page_size: int = 50, limit: int = 300):
        self.page = {"tasks": [{"name": f"task {i}", "status": "passed"} for i in range(page_size)]}
        self.limit = limit
        self.requests = 0

    def __call__(self, seen: Seen) -> Reply:
        self.requests += 1
        return json_reply(self.page if self.requests <= self.limit else {"tasks": []})


def test_tasks_all_over_full_pages_without_ids_or_total_stops_with_no_progress():
    server = EndlessTasks()
    with start_scripted({TASKS: server}) as srv:
        result = bl(srv.url, "-q", "tasks", "get", "-g", "G1", "--all", "--page-size", "50")
    assert result.code == 1, result.err
    assert "group G1 tasks pagination made no progress" in result.err
    assert server.requests == 2, server.requests  # was: 300 (and 15,000 tasks printed)
    assert result.out.strip() == "[]"


def test_tasks_iter_over_full_pages_without_ids_or_total_raises():
    server = EndlessTasks()
    with start_scripted({TASKS: server}) as srv, benchloop.Client(host=srv.url, api_key=API_KEY,
                                                                  retry=0) as client:
        walked = []
        with pytest.raises(benchloop.PartialFailure, match="made no progress"):
            for task in client.tasks.iter(group="G1", page_size=50):
                walked.append(task)
    assert server.requests == 2 and len(walked) == 50, (server.requests, len(walked))


def test_the_mcp_tool_over_full_pages_without_ids_or_total_is_an_error():
    from benchloop.mcp_server.serve import build_runner

    server = EndlessTasks()
    with start_scripted({TASKS: server}) as srv:
        runner = build_runner({"http": None, "tools": None, "toolsets": "all", "allow_writes": False, "allow_downloads": None,
                               "max_chars": 60_000}, {"host": srv.url, "api_key": API_KEY, "retry": 0})
        try:
            reply = runner.call("tasks_get", {"group": ["G1"], "all": True, "page_size": 50})
        finally:
            runner.close()
    assert reply.is_error and "made no progress" in reply.texts[-1], reply.texts
    assert server.requests == 2


def test_the_announced_total_bounds_the_task_scan():
    """1 new task per full page whatever ``skip`` says, total 100: the walk stops at skip 100
    (2 pages of 50), not after 100 pages."""
    requests = []

    def answer(seen: Seen) -> Reply:
        requests.append(seen.target)
        n = len(requests)
        page = [{"task_id": f"T{n}"}] + [{"task_id": "T1"}] * 49
        return json_reply({"tasks": page, "total": 100})

    with start_scripted({TASKS: answer}) as srv:
        result = bl(srv.url, "-q", "tasks", "get", "-g", "G1", "--all", "--page-size", "50")
    assert result.code == 1, result.err
    assert "group G1 pagination ended at 2 of 100 tasks" in result.err
    assert len(requests) == 2, len(requests)  # was: 100 requests, exit 0


def test_the_task_scan_keeps_every_task_without_an_id_of_a_well_behaved_backend():
    """The official algorithm is kept: tasks without an id are all kept, equal ones included."""
    items = [{"name": "same"}] * 3 + [{"name": f"t{i}"} for i in range(5)]

    def fetch(skip: int, limit: int) -> dict[str, Any]:
        return {"tasks": items[skip:skip + limit]}

    scan = task_scan(fetch, page_size=3, collection="tasks", id_keys=["task_id", "id"])
    assert scan.items == items and scan.total == 8


# ============================================================= errors that say the right thing
@pytest.mark.parametrize("query, says", [
    ("abs(@)", "--query failed: In function abs(), invalid type for value: "),
    ("|".join(["@"] * 3000), "--query failed: the expression nests too deeply to evaluate"),
    ("[" * 3000 + "@" + "]" * 3000, "invalid --query expression: nested too deeply to parse"),
], ids=["type-error", "recursion-when-searching", "recursion-when-parsing"])
def test_a_query_that_fails_is_a_usage_error_with_jmespaths_message(sandbox, query, says):
    result = bl(sandbox.url, "metrics", "get", "-j", "G1-J0001", "--query", query)
    assert result.code == 2, result.err
    assert says in result.err and "unexpected" not in result.err, result.err
    assert "Usage: bl metrics get" in result.err and result.out == ""
    assert len(result.err) < 1000  # the offending value (the whole output) is cut


@pytest.mark.parametrize("location", [LOGIN, "/_sso/login.alibaba-inc.com/ssoLogin.htm"])
def test_a_json_call_redirected_to_the_login_page_is_an_authentication_failure(location):
    routes = {REPORT.format("J1"): Reply(302, b"<html>login</html>", "text/html", {"Location": location}),
              "/openapi/jobs": Reply(302, b"", headers={"Location": location})}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1")
        with benchloop.Client(host=srv.url, api_key=API_KEY, retry=0) as client:
            with pytest.raises(benchloop.AuthError, match="login page"):
                client.report.get(job="J1")  # was: PartialFailure (API error 302)
            with pytest.raises(benchloop.AuthError, match="login page"):
                list(client.jobs.iter(group="G1"))
        seen = [s.path for s in srv.seen]
    assert result.code == 3, result.err
    assert "authentication error: endpoint requires SSO login (redirected to login.alibaba-inc.com); X-API-Key not accepted" in result.err
    assert not any("ssoLogin" in path for path in seen)  # never followed


def test_a_redirect_elsewhere_is_still_an_api_error():
    routes = {REPORT.format("J1"): Reply(302, b"", headers={"Location": "https://elsewhere.example/x"})}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1")
    assert result.code == 1 and "API error 302" in result.err, result.err


@pytest.fixture
def busy_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


def test_sandbox_serve_on_a_busy_port_says_the_port_is_in_use(busy_port):
    result = run_inprocess("sandbox", "serve", "--port", str(busy_port))
    assert result.code == 2, result.err
    assert f"Error: port {busy_port} is in use on 127.0.0.1" in result.err
    assert "local file" not in result.err


def test_python_m_sandbox_on_a_busy_port_says_the_port_is_in_use(busy_port, capsys):
    from benchloop.sandbox.__main__ import main

    assert main(["--port", str(busy_port)]) == 2
    assert f"port {busy_port} is in use" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["--output", "json", "jobs", "get", "-g", "G1"],
     "--output is an option of 'jobs get', not a global option: give it after the action "
     "('jobs get ... --output json'); only global options go before the resource"),
    (["--all", "jobs", "get", "-g", "G1"], "give it after the action ('jobs get ... --all')"),
    (["--openapi", "describe"], "--openapi is an option of 'describe', not a global option: give it after the command"),
], ids=["output", "flag", "builtin"])
def test_an_option_of_the_action_given_before_the_resource_says_where_it_goes(argv, says):
    result = run_inprocess(*argv)
    assert result.code == 2
    assert says in result.err and "Did you mean" not in result.err, result.err


def test_an_unknown_option_before_the_resource_still_gets_a_suggestion():
    result = run_inprocess("--verbos", "jobs", "get", "-g", "G1")
    assert result.code == 2 and "Unknown option: --verbos. Did you mean --verbose?" in result.err, result.err


# ======================================================================= closed pipes
ENTRY = [sys.executable, "-c", "import sys; from benchloop.entry import main; sys.argv[0] = 'bl'; main()"]
MODULE = [sys.executable, "-m", "benchloop"]


@pytest.mark.parametrize("command", [
    [*ENTRY, "--version"], [*MODULE, "--version"], [*ENTRY, "--help"], [*MODULE, "help", "jobs", "get"],
    [*MODULE, "jobs"], [*MODULE, "describe"], [*MODULE, "describe", "--openapi"],
    [*MODULE, "completion", "bash"], [*MODULE, "config", "show"], [*MODULE, "config", "path"],
], ids=["entry-version", "version", "entry-help", "help", "resource-page", "describe", "openapi",
        "completion", "config-show", "config-path"])
def test_every_command_ends_quietly_with_141_when_the_reader_closes_stdout(command, tmp_path):
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env={**ENV, "HOME": str(tmp_path)})
    proc.stdout.close()  # the reader is gone before the first byte
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141, err.decode()
    assert err == b"", err.decode()


# ===================================================================== client objects
def _failures() -> list[Any]:
    result = benchloop.DownloadResult(["out/J1_report.md"], [], [("NOPE", "API error 404: {}")])
    return [benchloop.PartialFailure([("NOPE", "API error 404: {}")], result),
            benchloop.PartialFailure([("NOPE", "API error 404: {}")], [{"job_id": "J1"}]),
            benchloop.NetworkError([("J1", "network: connection refused")], [])]


@pytest.mark.parametrize("error", _failures(), ids=["partial-download", "partial-get", "network"])
def test_the_clients_errors_survive_a_pickle_round_trip(error):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert copy.failures == error.failures and copy.results == error.results


def _fails_in_a_worker(url: str) -> None:
    with benchloop.Client(host=url, api_key=API_KEY, retry=0) as client:
        client.metrics.get(job=["G1-J0001", "NOPE"])


def test_a_partial_failure_travels_back_from_a_multiprocessing_pool(sandbox):
    with multiprocessing.get_context("fork").Pool(1) as pool:
        pending = pool.apply_async(_fails_in_a_worker, (sandbox.url,))
        with pytest.raises(benchloop.PartialFailure) as caught:
            pending.get(timeout=60)  # was: the pool's result thread died unpickling it; get() waited
    assert caught.value.failures[0][0] == "NOPE"
    assert [m["job_id"] for m in caught.value.results] == ["G1-J0001"]


@pytest.mark.parametrize("host", ["http://user:SECRET-KEY-1234@127.0.0.1:9",
                                  "https://SECRET-KEY-1234@backend.example:8443/base"])
def test_a_client_refuses_credentials_in_the_host_without_showing_them(host):
    with pytest.raises(benchloop.UsageError) as caught:
        benchloop.Client(host=host, api_key="k")
    shown = str(caught.value)
    assert "SECRET-KEY-1234" not in shown and "***@" in shown and "user info" in shown, shown


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
