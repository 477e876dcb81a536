"""Reliability and security, round three: the MCP server against hostile backends and callers.

Each test runs a real ``bl mcp serve`` subprocess (stdio, or ``--http``) driven by the
official ``mcp`` client SDK, against a loopback backend that misbehaves on purpose: one
that echoes the API key back, one that never answers, one whose answers are huge.  Where
the SDK's client cannot play the caller (a message nested 50,000 deep cannot even be
serialised by it; a client that vanishes without a word), a raw JSON-RPC writer does.
Each test fails on the code before its fix; docs/reliability.md ("Round three: the MCP
server") lists them.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_support import BL, HttpServer, StdioServer, env

from benchloop.mcp_server.guards import TOKEN_ENV
from benchloop.mcp_server.runner import MAX_ARGUMENT_DEPTH
from benchloop.sandbox.scripted import RawServer, Reply, json_reply, start_raw, start_scripted

KEY = "hostile-key-4f2a9c"
PROTOCOL = "2025-11-25"


def serve_args(url: str, *extra: str, retry: str = "0") -> list[str]:
    return ["--host", url, "--api-key", KEY, "--retry", retry, "mcp", "serve", *extra]


def wait_for(check: Callable[[], bool], seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return check()


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ------------------------------------------------------------- hung backend
class Hung:
    """A loopback backend that reads each request and never answers (the scripted server's raw
    mode); it counts the requests and the connections the client closed (aborted) while waiting."""

    def __init__(self):
        self.closed = 0
        self._server = start_raw(self._hold)
        self.url = self._server.url

    @property
    def requests(self) -> int:
        return self._server.requests

    def _hold(self, conn: socket.socket, server: RawServer) -> None:
        conn.settimeout(0.1)
        while not server.stopped.is_set():  # hold the request: read until the client gives up
            try:
                if not conn.recv(1):
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        else:
            return
        with server.lock:
            self.closed += 1

    def stop(self) -> None:
        self._server.stop()


@pytest.fixture
def hung():
    server = Hung()
    yield server
    server.stop()


# ----------------------------------------------------------- the key leaks
def test_a_key_the_backend_echoes_is_masked_in_every_channel():
    # The text was masked, the structured content not (the check ran on the already-masked text).
    def echo(seen) -> Reply:
        key = seen.headers.get("X-API-Key")
        return json_reply({"job_id": "J1", "summary": f"your key is {key}", key: "as a key",
                           "nested": [{"token": key}]})

    def fail(seen) -> Reply:
        return json_reply({"error": f"bad key {seen.headers.get('X-API-Key')}"}, 500)

    routes = {"/openapi/jobs/J1/report": echo, "/openapi/jobs/J2/report": fail}
    with start_scripted(routes) as backend:
        server = StdioServer(["-v", *serve_args(backend.url)])

        async def main():
            async with server.client() as client:
                return [await client.call_tool("report_get", {"job": ["J1"]}),
                        await client.call_tool("report_get", {"job": ["J1", "J2"]}),
                        await client.call_tool("report_get", {"job": ["J1"], "query": "[0].nested"})]

        replies = anyio.run(main)
    assert [r.is_error for r in replies] == [False, True, False]
    for reply in replies:
        assert KEY not in compact(reply.model_dump())
    assert replies[0].structured_content["result"] == [
        {"job_id": "J1", "summary": "your key is ***", "***": "as a key", "nested": [{"token": "***"}]}]
    assert "bad key ***" in replies[1].content[-1].text
    assert KEY not in server.err()


# ------------------------------------------------------------- availability
def test_a_call_past_its_deadline_is_stopped_and_its_worker_freed(hung):
    # With --timeout 300 and --retry 4 one hung call held a worker for about 25 minutes.
    server = StdioServer(serve_args(hung.url, "--call-timeout", "2", "--workers", "1", retry="4"))

    async def main():
        async with server.client() as client:
            with anyio.fail_after(60):
                first = await client.call_tool("metrics_get", {"job": ["J1"]})
                aborted = await anyio.to_thread.run_sync(wait_for, lambda: hung.closed == 1, 5)
                second = await client.call_tool("metrics_get", {"job": ["J2"]})  # the one worker is free
            return first, aborted, second

    first, aborted, second = anyio.run(main)
    for reply in (first, second):
        assert reply.is_error
        assert reply.content[0].text.startswith("[error] deadline: metrics_get took longer than 2 s")
    assert aborted  # the hung request was aborted, not left to run for --timeout
    assert hung.requests == 2 and wait_for(lambda: hung.closed == 2)


def test_a_call_the_client_cancels_is_stopped(hung):
    # The client gave up (its own timeout sends notifications/cancelled): the request went on for --timeout.
    server = StdioServer(serve_args(hung.url, "--timeout", "600"))

    async def main():
        async with server.client() as client:
            for n in (1, 2):
                with pytest.raises(MCPError, match="timed out"):
                    await client.call_tool("metrics_get", {"job": [f"J{n}"]}, read_timeout_seconds=1)
                assert await anyio.to_thread.run_sync(wait_for, lambda n=n: hung.closed == n)
                assert hung.requests == n

    anyio.run(main)


def test_busy_workers_answer_busy_at_once_and_local_tools_never_wait(hung):
    # 40 hung calls used to take every thread: describe, even a wrong call, waited behind them.
    server = StdioServer(serve_args(hung.url, "--timeout", "600"))  # 8 workers by default
    replies: list[Any] = []

    async def hung_call(client, n: int) -> None:
        replies.append(await client.call_tool("metrics_get", {"job": [f"J{n}"]}))

    async def main():
        async with server.client() as client:
            async with anyio.create_task_group() as group:
                for n in range(40):
                    group.start_soon(hung_call, client, n)
                with anyio.fail_after(30):
                    while len(replies) < 32 or hung.requests < 8:
                        await anyio.sleep(0.05)
                    described = await client.call_tool("describe", {"resource": "jobs"})
                    wrong = await client.call_tool("metrics_get", {})
                    busy = await client.call_tool("report_get", {"job": ["J1"]})
                group.cancel_scope.cancel()  # the client cancels the 8 calls still running
            return described, wrong, busy

    described, wrong, busy = anyio.run(main)
    assert len(replies) == 32 and hung.requests == 8
    for reply in [*replies, busy]:
        assert reply.is_error
        assert reply.content[0].text.startswith("[error] busy: all 8 workers of this server are running")
    assert not described.is_error and described.structured_content["result"]["resources"]
    assert wrong.is_error and wrong.content[0].text == "Error: at least one group or job is required"
    assert wait_for(lambda: hung.closed == 8)  # every cancelled call's request was aborted


_GONE = r"""
import json, subprocess, sys
proc = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
send = lambda m: (proc.stdin.write((json.dumps(m) + "\n").encode()), proc.stdin.flush())
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": sys.argv[1],
      "capabilities": {}, "clientInfo": {"name": "gone", "version": "0"}}})
proc.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "metrics_get",
      "arguments": {"job": ["J1"]}}})
print("sent", flush=True)
sys.stdin.readline()   # the test says when
proc.stdin.close()     # the client goes away without a word: no cancel, no answer awaited
try:
    print(proc.wait(timeout=20), flush=True)
except subprocess.TimeoutExpired:
    proc.kill()
    print("still running", flush=True)
"""


def test_a_client_that_goes_away_stops_its_calls(hung):
    # The client closes stdin in the middle of a hung call: the server stops the call and exits.
    driver = subprocess.Popen([sys.executable, "-c", _GONE, PROTOCOL, *BL,
                               *serve_args(hung.url, "--timeout", "600")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env())
    try:
        assert driver.stdout.readline().strip() == "sent"
        assert wait_for(lambda: hung.requests == 1)
        driver.stdin.write("go\n")
        driver.stdin.flush()
        outcome = driver.stdout.readline().strip()
    finally:
        driver.kill()
        driver.wait()
    assert outcome == "0"  # it exited by itself, at once, and cleanly
    assert hung.closed == 1


def test_the_http_transport_stops_a_call_its_client_cancels_and_frees_its_worker(hung):
    with HttpServer(serve_args(hung.url, "--workers", "1", "--timeout", "600")) as server:

        async def main():
            for n in (1, 2):  # the second call finds the one worker free (not "busy")
                async with server.client() as client:
                    with pytest.raises(MCPError, match="timed out"):
                        await client.call_tool("metrics_get", {"job": [f"J{n}"]}, read_timeout_seconds=1)
                assert await anyio.to_thread.run_sync(wait_for, lambda n=n: hung.closed == n)

        anyio.run(main)
    assert hung.requests == 2


# ------------------------------------------------------------ --max-chars
def test_a_truncation_note_fits_the_budget():
    # left_out_keys used to list every key left out: 2 MB of note at --max-chars 1000.
    report = {"job_id": "J1", **{f"k{i:06d}": i for i in range(200_000)}}
    with start_scripted({"/openapi/jobs/J1/report": json_reply(report)}) as backend:
        server = StdioServer(serve_args(backend.url, "--max-chars", "1000"))

        async def main():
            async with server.client() as client:
                return await client.call_tool("report_get", {"job": ["J1"]})

        reply = anyio.run(main)
    assert not reply.is_error
    assert sum(len(c.text) for c in reply.content) <= 1_000
    assert len(compact(reply.structured_content)) <= 1_000
    (cut,) = reply.structured_content["truncated"]["cuts"]
    assert cut["total"] == 200_001 and cut["left_out"] == 200_001 - len(reply.structured_content["result"][0])


def test_a_failure_summary_fits_the_budget():
    # 300 failed ids with long messages: 550 kB of summary at --max-chars 1000.
    with start_scripted({"*": json_reply({"error": "z" * 3_000}, 404)}) as backend:
        server = StdioServer(serve_args(backend.url, "--max-chars", "1000"))
        ids = [f"J{i:04d}" for i in range(300)]

        async def main():
            async with server.client() as client:
                return await client.call_tool("metrics_get", {"job": ids})

        reply = anyio.run(main)
    assert reply.is_error
    assert sum(len(c.text) for c in reply.content) <= 1_000
    assert len(compact(reply.structured_content)) <= 1_000
    summary = reply.content[-1].text
    assert summary.startswith("[error] 300 id(s) failed:\n[error]   - J0000: API error 404")
    shown = len(reply.structured_content["failures"])
    assert reply.structured_content["failures_left_out"] == 300 - shown
    assert f"and {300 - shown} more id(s) not shown" in summary


def test_an_error_message_fits_the_budget(sandbox):
    server = StdioServer(serve_args(sandbox.url, "--max-chars", "1000"))

    async def main():
        async with server.client() as client:
            return [await client.call_tool("jobs_get", {"group": ["G1"], "page": "x" * 50_000}),
                    await client.call_tool("n" * 50_000, {})]

    for reply in anyio.run(main):
        assert reply.is_error and sum(len(c.text) for c in reply.content) <= 1_000


# ---------------------------------------------------------- bearer token
def test_http_needs_the_bearer_token(sandbox):
    # Any local process could call the tools with the operator's key.
    with HttpServer(["--host", sandbox.url, "--api-key", sandbox.api_key, "mcp", "serve", "--toolsets", "all"]) as server:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        for given in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {server.token}"}):
            refused = httpx.post(server.url, json=initialize, headers={**headers, **given})
            assert refused.status_code == 401, refused.text
            assert refused.headers["www-authenticate"].startswith("Bearer")
            assert "Authorization: Bearer" in refused.json()["error"]["message"]
        bearer = {"Authorization": f"Bearer {server.token}"}
        assert httpx.post(server.url, json=initialize, headers={**headers, **bearer}).status_code == 200
        # The Host and Origin checks still hold with the token.
        assert httpx.post(server.url, json=initialize, headers={**headers, **bearer, "Host": "evil.example"}
                          ).status_code == 421
        assert httpx.post(server.url, json=initialize, headers={**headers, **bearer,
                                                                 "Origin": "http://evil.example"}).status_code == 403

        async def main():
            with pytest.raises(Exception) as refused:  # noqa: PT011 - an exception group of the SDK's client
                async with server.client(token="wrong-token-0123456789") as client:
                    await client.list_tools()
            assert refused.group_contains(MCPError, match="^Unauthorized: send the token")
            async with server.client() as client:
                return await client.call_tool("brm_list", {"group": ["G1"]})

        reply = anyio.run(main)
    assert not reply.is_error and reply.structured_content["result"][0]["group_id"] == "G1"


def test_http_takes_the_token_from_the_environment(sandbox):
    token = "a-token-from-the-environment-0042"
    environ = env(**{TOKEN_ENV: token})
    with HttpServer(["--host", sandbox.url, "--api-key", sandbox.api_key, "mcp", "serve"], environ) as server:
        assert server.lines[1].startswith(f"mcp token: from {TOKEN_ENV}")
        assert server.token is None and token not in "".join(server.lines)
        refused = httpx.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                             headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401

        async def main():
            async with server.client(token=token) as client:
                return await client.call_tool("describe", {"resource": "jobs"})

        assert not anyio.run(main).is_error


# ------------------------------------------------------------- deep input
def test_a_deeply_nested_query_is_a_clear_tool_error(sandbox):
    # 5,000 levels: "unexpected error: RecursionError" and a 3,000-line traceback on stderr.
    server = StdioServer(serve_args(sandbox.url))

    async def main():
        async with server.client() as client:
            return [await client.call_tool("jobs_get", {"group": ["G1"], "query": "[" * 5_000 + "]" * 5_000}),
                    await client.call_tool("describe", {"query": "(" * 5_000 + "@" + ")" * 5_000}),
                    await client.call_tool("jobs_get", {"group": _deep(150)})]

    query, describe, argument = anyio.run(main)
    for reply in (query, describe):
        assert reply.is_error
        assert reply.content[0].text == "Error: invalid query expression: nested too deeply to parse"
    assert argument.is_error and argument.content[0].text == (
        f"Error: argument group is nested too deeply (more than {MAX_ARGUMENT_DEPTH} levels of arrays and "
        "objects); see the tool's input schema")
    assert "Traceback" not in server.err() and "RecursionError" not in server.err()


def _deep(levels: int) -> Any:
    value: Any = "G1"
    for _ in range(levels):
        value = {"a": value}
    return value


def _deep_text(levels: int) -> str:
    return '{"a":' * levels + '"G1"' + "}" * levels


_DEEP = r"""
import json, subprocess, sys, threading
proc = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
deep = '{"a":' * int(sys.argv[2]) + '"G1"' + '}' * int(sys.argv[2])
lines = [
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": sys.argv[1],
                "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "jobs_get", "arguments": '
    '{"group": ' + deep + '}}}',
    json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "describe",
                "arguments": {"resource": "jobs"}}}),
]
proc.stdin.write("".join(line + "\n" for line in lines).encode())
proc.stdin.flush()
answers = {}
def read():
    for line in proc.stdout:
        message = json.loads(line)
        answers[message.get("id")] = message
        if {2, 3} <= set(answers):
            return
reader = threading.Thread(target=read, daemon=True)
reader.start()
reader.join(60)
proc.stdin.close()
err = proc.stderr.read().decode()
proc.wait(timeout=60)
print(json.dumps({"answers": answers, "err": err}))
"""


def test_a_message_nested_50000_deep_is_answered_with_a_tool_error(sandbox):
    # The SDK's parser refused the line and nobody answered it. (Its client cannot even send it.)
    done = subprocess.run([sys.executable, "-c", _DEEP, PROTOCOL, "50000", *BL, *serve_args(sandbox.url)],
                          capture_output=True, text=True, timeout=180, env=env())
    report = json.loads(done.stdout)
    answers = report["answers"]
    assert {"2", "3"} <= set(answers), report["err"][-2_000:]
    deep = answers["2"]["result"]
    assert deep["isError"] is True
    assert deep["content"][0]["text"].startswith("Error: argument group is nested too deeply")
    assert answers["3"]["result"]["isError"] is False  # the server went on serving


def test_a_body_nested_50000_deep_is_answered_with_a_tool_error_over_http(sandbox):
    with HttpServer(["--host", sandbox.url, "--api-key", sandbox.api_key, "mcp", "serve"]) as server:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   "Authorization": f"Bearer {server.token}"}
        with httpx.Client(headers=headers, timeout=60) as http:
            started = http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
            assert started.status_code == 200, started.text
            session = {"Mcp-Session-Id": started.headers["mcp-session-id"], "MCP-Protocol-Version": PROTOCOL}
            http.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            body = ('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "jobs_get", '
                    '"arguments": {"group": ' + _deep_text(50_000) + "}}}")
            answer = http.post(server.url, content=body, headers=session)
    assert answer.status_code == 200, answer.text
    data = [json.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    (result,) = [m["result"] for m in data if m.get("id") == 2]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Error: argument group is nested too deeply")


def test_a_query_that_fails_on_the_answer_is_a_clear_tool_error(sandbox):
    # abs() of an object: JMESPath's type error, once "unexpected error: UsageError: ...".
    server = StdioServer(["--host", sandbox.url, "--api-key", sandbox.api_key, "--retry", "0", "mcp", "serve"])

    async def main():
        async with server.client() as client:
            return await client.call_tool("jobs_get", {"group": ["G1"], "query": "abs(@)"})

    reply = anyio.run(main)
    assert reply.is_error
    assert reply.content[0].text.startswith("Error: query failed: In function abs(), invalid type for value")
    assert "unexpected" not in reply.content[0].text
