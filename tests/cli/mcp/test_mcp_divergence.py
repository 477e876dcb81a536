"""An agent with the default MCP toolsets finds where a candidate went wrong, within budget.

The question of a user: "where did CAND2 go wrong on requests__requests-1518?". The
default tools (``mcp: default`` of the table) answer it with the step and the differing
path in at most 3 tool calls and under 8 KB of results, driven by the official ``mcp``
client in process.  The truth is the sandbox's story (``sandbox.trajectories``), read
independently of the tool: the step where the failing trial edits the other file.
"""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client

from benchloop.mcp_server.serve import build_runner
from benchloop.mcp_server.server import build_server
from benchloop.sandbox import payloads
from benchloop.sandbox.dataset import Dataset
from benchloop.sandbox.trajectories import Instance
from benchloop.table.load import load_model

SPEC = load_model()
INSTANCE = "requests__requests-1518"


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160)


def default_tool(resource: str) -> str:
    """The name of the tool of ``resource`` among the default toolsets (from the table)."""
    from benchloop.mcp_server.tools import all_tools

    default = {r for name in SPEC.mcp.default for r in SPEC.mcp.toolsets[name].resources}
    assert resource in default, f"{resource} is not in the default toolsets"
    return next(t.name for t in all_tools(SPEC) if t.action is not None and t.action.resource == resource)


def ask(sandbox, *calls):
    runner = build_runner({"http": None, "tools": None, "toolsets": None, "allow_writes": False,
                           "allow_downloads": None, "max_chars": 60_000},
                          {"host": sandbox.url, "api_key": sandbox.api_key, "retry": 0})
    server = build_server(runner)

    async def main():
        async with Client(server) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            return names, [await client.call_tool(name, args) for name, args in calls]

    try:
        return anyio.run(main)
    finally:
        runner.close()


def truth() -> tuple[int, str, str]:
    """(the step, the right file, the file edited instead) of CAND2's failing trial on INSTANCE."""
    data = Dataset(seed=7, groups=3, compare_jobs=160)
    inst = Instance(INSTANCE)
    for job in data.iter_group_jobs("CAND2"):
        if job["instance_id"] != INSTANCE or job["status"] != "failed":
            continue
        for step in payloads.job_trajectory(job)["trajectory"]:
            for call in step.get("tool_calls") or ():
                args = call["arguments"]
                if args.get("command") == "str_replace" and args.get("path") == inst.wrong_path:
                    return step["step"], inst.path, inst.wrong_path
    raise AssertionError("CAND2 plants no edit of another file on " + INSTANCE)


def test_where_cand2_went_wrong_in_one_default_tool_call_under_8_kb(sandbox):
    tool = default_tool("divergence")
    names, [result] = ask(sandbox, (tool, {"group": ["BASE", "CAND2"], "instance_id": INSTANCE}))
    assert tool in names
    assert not result.is_error, result
    text = "".join(c.text for c in result.content if hasattr(c, "text"))
    size = len(text.encode()) + len(json.dumps(result.structured_content or {}).encode())
    assert size < 8 * 1024, size
    [element] = (result.structured_content or {})["result"] if "result" in (result.structured_content or {}) \
        else json.loads(text)
    step, right, wrong = truth()
    assert element["step"] == step
    path = next(c for c in element["changes"] if c["argument"] == "path")
    assert (path["left"], path["right"]) == (right, wrong)
    assert f"path: {right} -> {wrong}" in element["note"]
    assert [t["group_id"] for t in element["trials"]] == ["BASE", "CAND2"]
    assert element["trials"][1]["pass"] is False
