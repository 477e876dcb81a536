"""A task scan always ends: full pages of tasks without ids or a total stop with no progress
(``tasks get --all``, the Python client's iterator, the MCP tool), an announced total bounds
the scan, and a well-behaved backend's tasks without an id are all kept.

Against a scripted backend that answers every page with the same full page. Found in round three
of the reliability review (docs/reliability.md, "Round three: the engine and the client"): each
test fails on the code before its fix. Nothing in httpx is mocked; nothing leaves loopback.
"""

from __future__ import annotations

from typing import Any

import pytest
from support import API_KEY, run_inprocess

import benchloop
from benchloop.engine.pagination import task_scan
from benchloop.sandbox.scripted import Reply, Seen, json_reply, start_scripted

TASKS = "/openapi/groups/G1/eval_tasks"


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
