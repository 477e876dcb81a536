"""`bl mcp serve` driven by the MCP SDK's client, against the sandbox.

* In process (``mcp.Client`` on the server object): every served tool is called
  and its result compared with the CLI's output for the same arguments (text =
  ``bl --no-pretty`` stdout, structured content = the same value; the failure
  summary of failed ids in a tool error); errors, truncation, write and
  download gating, --tools, downloads only under DIR, the key never shown.
* Over stdio with a real ``bl mcp serve`` subprocess: the tools, a call, and
  stdout carrying nothing but JSON-RPC messages; a YAML-added resource served
  as a tool; without the SDK, the install line and exit 2.
* Over streamable HTTP on loopback (``--http 0``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp_support import HttpServer
from support import ROOT, cli_words, comparable_files, final_files

from benchloop.mcp_server.serve import build_runner
from benchloop.mcp_server.server import build_server
from benchloop.mcp_server.tools import DESCRIBE, DOWNLOAD, LISTING, READ, Tool, all_tools, select
from benchloop.table.load import load_model
from benchloop.table.model import DIMENSION_KINDS

SPEC = load_model()
IDS = {"group": ["G1"], "job": ["G1-J0001", "G1-J0002", "NOPE"], "task_id": ["T1"]}
TASK_LISTS = {"brm": ["uid-G1-1"]}
BL = [sys.executable, "-m", "benchloop"]


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    # Its own sandbox: triggers and brm runs change the backend's state.
    # Short trajectories: a group's whole export fits the tool's budget, as the CLI prints it.
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, trajectory_steps=3)


def make_runner(sandbox, **values):
    values = {"http": None, "tools": None, "toolsets": "all", "allow_writes": False, "allow_downloads": None,
              "max_chars": 60_000, **values}
    return build_runner(values, {"host": sandbox.url, "api_key": sandbox.api_key, "retry": 0})


def session(runner, *calls: tuple[str, dict[str, Any]]):
    """List the tools and make the calls through the SDK's client, in process."""
    server = build_server(runner)

    async def main():
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, args) for name, args in calls]

    try:
        return anyio.run(main)
    finally:
        runner.close()


def call(sandbox, name: str, args: dict[str, Any], **values):
    _, (result,) = session(make_runner(sandbox, **values), (name, args))
    return result


# ------------------------------------------------------------------ listing
def test_lists_the_read_only_tools_with_their_schemas(sandbox):
    runner = make_runner(sandbox)
    tools, _ = session(runner)
    assert [t.name for t in tools] == list(runner.tools)
    for tool in tools:
        mine = runner.tools[tool.name]
        assert tool.input_schema == mine.input_schema
        assert tool.annotations.read_only_hint is True
        assert tool.description == mine.description
    # What the SDK's client lists is the model's read-only selection (every toolset, no gate).
    expected = select(all_tools(SPEC), allow_writes=False, allow_downloads=False, toolsets=None)
    assert [t.name for t in tools] == [t.name for t in expected] and len(tools) > 1
    assert {t.kind for t in expected} == {READ, LISTING, DESCRIBE}


# ------------------------------------------------------------------- parity
def _cases() -> list[Any]:
    cases = []
    for tool in all_tools(SPEC):
        if tool.action is None or not on_the_sandbox(tool):
            continue
        for dim in tool.action.dimensions:
            option = DIMENSION_KINDS[dim].option
            ids = TASK_LISTS.get(tool.resource, IDS[option]) if dim == "task" else IDS[option]
            cases.append(pytest.param(tool.name, {option: ids}, id=f"{tool.name}-{dim}"))
    cases += [
        pytest.param("metrics_get", {"group": ["G1"], "scope": "overall"}, id="metrics_get-scope"),
        pytest.param("jobs_get", {"group": ["G1"], "page": 2, "page_size": 7, "status": "failed"}, id="jobs_get-page"),
        pytest.param("jobs_get", {"group": ["G1"], "all": True, "query": "[0].jobs[].job_id"}, id="jobs_get-query"),
        pytest.param("jobs_get", {"group": ["G1"], "page": 0}, id="jobs_get-page-0"),
        pytest.param("artifacts_list", {"job": ["G1-J0001"], "include": "*.tgz"}, id="artifacts_list-include"),
        pytest.param("brm_run", {"group": ["G1"], "steps": [10, 10]}, id="brm_run-duplicate-steps"),
        pytest.param("metrics_get", {"job": ["G1-J0001,G1-J0002"]}, id="metrics_get-commas"),
        pytest.param("compare", {"group": ["G1", "G2"], "pass_threshold": 0.6}, id="compare-two-groups"),
        pytest.param("compare", {"group": ["G1", "NOPE", "G2"], "query": "[].candidate"}, id="compare-failed-candidate"),
        pytest.param("compare", {"group": ["G1"]}, id="compare-one-group"),
        pytest.param("trend", {"group": ["G1", "G2", "G3"]}, id="trend-three-runs"),
        pytest.param("trend", {"group": ["G1", "G2"], "query": "[0].runs[].group_id"}, id="trend-query"),
        pytest.param("jobs_table", {"group": ["G1", "G2"], "fields": ["job_id", "score"]}, id="jobs_table-fields"),
    ]
    return cases


def on_the_sandbox(tool: Tool) -> bool:
    """The sandbox plays the default backend only (not another service of the table)."""
    return all(getattr(e, "service", "benchloop") == "benchloop" for e in SPEC.action_endpoints(tool.action))


def tool_words(tool: Tool, args: dict[str, Any], out: Path) -> list[str]:
    """The command line of a tool call (a download tool's files go under ``out``)."""
    return cli_words(tool.action, {**args, **tool.fixed}) + (["-o", str(out)] if tool.kind == DOWNLOAD else [])


def in_argument_words(tool: Tool, message: str) -> str:
    """A CLI message with the action's flags (``-g/--group``, ``--steps``) written as argument names."""
    for opt in sorted(tool.action.options, key=lambda o: -len("/".join(o.flags))):
        for spelled in ("/".join(sorted(opt.flags, key=len)), *sorted(opt.flags, key=len, reverse=True)):
            message = re.sub(rf"(?<![\w-]){re.escape(spelled)}(?![\w-])", opt.name, message)
    return message


def _normalized(text: str) -> str:
    return re.sub(r"uid-\d+", "uid-N", text)  # every brm run creates a new behaviour task


@pytest.mark.parametrize(("name", "args"), _cases())
def test_each_tool_agrees_with_the_cli(name, args, sandbox, api, tmp_path):
    runner = make_runner(sandbox, allow_writes=True, allow_downloads=str(tmp_path / "mcp"))
    tool = runner.every[name]
    compact = [] if tool.kind == DOWNLOAD else ["--no-pretty"]  # files are written pretty, as by default
    cli = api(*compact, *tool_words(tool, args, tmp_path / "cli"))
    _, (result,) = session(runner, (name, args))
    text = [c.text for c in result.content]
    if cli.code == 2:
        assert result.is_error
        # "Error: <the CLI's message>", naming the tool's arguments where the CLI names its flags
        assert text == [in_argument_words(tool, cli.err.strip().splitlines()[-1])]
        return
    assert result.is_error == (cli.code != 0), (text, cli.err)
    summary = [line for line in cli.err.splitlines() if line.startswith("[error] ") and
               (" failed:" in line or line.startswith("[error]   - "))]
    if cli.code:
        assert text[-1].splitlines() == summary
        assert [f["id"] for f in result.structured_content["failures"]] == cli.failed
    if tool.kind == DOWNLOAD:
        assert comparable_files(tmp_path / "mcp") == comparable_files(tmp_path / "cli")
        paths = result.structured_content["result"]["paths"]
        assert {str(Path(p).relative_to(tmp_path / "mcp")) for p in paths} == set(final_files(tmp_path / "mcp"))
        return
    assert _normalized(text[0] + "\n") == _normalized(cli.out)
    assert result.structured_content["result"] == json.loads(text[0])
    if "query" not in args:  # the elements as the table declares them: the schema's first branch
        declared = tool.output_schema
        strict = {"$defs": declared.get("$defs", {}), **declared["properties"]["result"]["anyOf"][0]}
        errors = list(jsonschema.Draft202012Validator(strict).iter_errors(result.structured_content["result"]))
        assert not errors, f"{name}: {errors[0].message} at {list(errors[0].absolute_path)}"


def test_output_schemas_declare_the_elements(sandbox):
    """Data tools say what their result holds (the table's outputs, each shape once in $defs)."""
    tools, _ = session(make_runner(sandbox))
    jobs = next(t for t in tools if t.name == "jobs_get").output_schema
    jsonschema.Draft202012Validator.check_schema(jobs)
    items = jobs["properties"]["result"]["anyOf"][0]["items"]
    assert "JobSummary" in jobs["$defs"] and "#/$defs/JobPage" in json.dumps(items)
    assert "$defs" not in json.dumps(jobs["$defs"]).replace('"#/$defs/', "")  # no nested bundles


def test_describe_is_bl_describe(sandbox, bl):
    result = call(sandbox, "describe", {"resource": "jobs"})
    assert not result.is_error
    assert result.structured_content["result"] == json.loads(bl("describe", "jobs").out)
    unknown = call(sandbox, "describe", {"resource": "nope"})
    assert unknown.is_error and "unknown resource" in unknown.content[0].text


# ------------------------------------------------------------------- errors
def test_argument_errors_are_tool_errors_in_the_words_of_the_tool(sandbox):
    runner = make_runner(sandbox)
    _, results = session(runner, ("jobs_get", {"group": ["G1"], "bogus": 1}),
                         ("metrics_get", {"group": ["G1"], "job": ["J1"]}),
                         ("metrics_get", {"group": ["G1"], "scope": "everything"}),
                         ("metrics_get", {"group": ["G1"], "query": "[?"}),
                         ("metrics_get", {}),
                         ("jobs_get", {"group": ["G1"], "page": "two"}),
                         ("metrics_get", {"group": ["-"]}),
                         ("no_such_tool", {}))
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results)
    assert texts[0].startswith("Error: jobs_get got an unexpected argument 'bogus'")
    # The tool's argument names, never the CLI's flags (issue 21).
    assert texts[1] == "Error: group and job are mutually exclusive"
    assert texts[2] == "Error: scope must be one of overall, detail, all"
    assert texts[3].startswith("Error: invalid query expression")
    assert texts[4] == "Error: at least one group or job is required"
    assert "page" in texts[5] and "int" in texts[5]
    assert texts[6].startswith("Error: group: '-' (read stdin)")
    assert not any("--" in text or "-g/" in text for text in texts[1:7])
    assert texts[7].startswith("unknown tool 'no_such_tool'")


def test_a_failed_id_is_a_tool_error_after_the_results(sandbox):
    result = call(sandbox, "report_get", {"job": ["G1-J0001", "NOPE"]})
    assert result.is_error
    assert [e["job_id"] for e in json.loads(result.content[0].text)] == ["G1-J0001"]
    assert result.content[-1].text.splitlines()[0] == "[error] 1 id(s) failed:"
    assert "NOPE" in result.content[-1].text


def test_a_wrong_key_is_an_authentication_error_not_a_crash(sandbox):
    values = {"http": None, "tools": None, "allow_writes": False, "allow_downloads": None, "max_chars": 60_000}
    runner = build_runner(values, {"host": sandbox.url, "api_key": "wrong-key-123", "retry": 0})
    _, (bad, again) = session(runner, ("metrics_get", {"job": ["G1-J0001"]}), ("brm_list", {"group": ["G1"]}))
    assert bad.is_error and again.is_error
    assert bad.content[0].text.startswith("[error] authentication error")
    assert "wrong-key-123" not in bad.content[0].text


def test_the_key_never_appears_in_results_or_descriptions(sandbox):
    runner = make_runner(sandbox, allow_writes=True)
    tools, results = session(runner, ("metrics_get", {"job": [sandbox.api_key, "G1-J0001"]}),
                             ("describe", {}))
    everything = json.dumps([t.model_dump() for t in tools] + [r.model_dump() for r in results])
    assert sandbox.api_key not in everything
    assert "***" in results[0].content[-1].text  # the id that was the key, masked in the summary


def test_unreachable_backend_is_a_tool_error(closed_port):
    values = {"http": None, "tools": None, "allow_writes": False, "allow_downloads": None, "max_chars": 60_000}
    runner = build_runner(values, {"host": f"http://127.0.0.1:{closed_port}", "api_key": "k", "retry": 0})
    _, (result,) = session(runner, ("metrics_get", {"job": ["G1-J0001"]}))
    assert result.is_error and "could not reach" in result.content[-1].text


# --------------------------------------------------------------- truncation
def test_a_large_result_is_cut_with_a_note_and_the_rest_query_works(sandbox, api):
    full = json.loads(api("--no-pretty", "jobs", "get", "-g", "G1", "--all").out)
    runner = make_runner(sandbox, max_chars=2_000)
    _, (cut,) = session(runner, ("jobs_get", {"group": ["G1"], "all": True}))
    assert not cut.is_error
    assert len(cut.content[0].text) <= 2_000
    shown = json.loads(cut.content[0].text)[0]["jobs"]
    assert shown == full[0]["jobs"][:len(shown)]
    note = cut.structured_content["truncated"]["cuts"][-1]
    assert note["left_out"] == len(full[0]["jobs"]) - len(shown)
    assert f"{note['left_out']} left out" in cut.content[1].text
    _, (rest,) = session(make_runner(sandbox), ("jobs_get", {"group": ["G1"], "all": True,
                                                             "query": note["rest_query"]}))
    assert json.loads(rest.content[0].text) == full[0]["jobs"][len(shown):]


# ------------------------------------------------------------------- gating
def test_writes_are_served_only_with_allow_writes(sandbox):
    tools, (refused,) = session(make_runner(sandbox), ("report_trigger", {"group": ["G1"]}))
    assert "report_trigger" not in {t.name for t in tools}
    assert refused.is_error and "--allow-writes" in refused.content[0].text
    before = sandbox.stats["requests"]
    tools, (done,) = session(make_runner(sandbox, allow_writes=True), ("report_trigger", {"group": ["G1"]}))
    assert {"report_trigger", "rsi_trigger", "brm_run"} <= {t.name for t in tools}
    assert not done.is_error and sandbox.stats["requests"] > before
    trigger = next(t for t in tools if t.name == "report_trigger")
    assert trigger.annotations.read_only_hint is False


def test_downloads_write_only_under_dir(sandbox, tmp_path):
    tools, (refused,) = session(make_runner(sandbox), ("metrics_download", {"job": ["G1-J0001"]}))
    assert not any(t.name.endswith("_download") for t in tools)
    assert refused.is_error and "--allow-downloads" in refused.content[0].text
    root = tmp_path / "dl"
    (tmp_path / "outside").mkdir()
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "link").symlink_to(tmp_path / "outside")
    runner = make_runner(sandbox, allow_downloads=str(root))
    tools, results = session(runner, ("metrics_download", {"job": ["G1-J0001"], "output_dir": "a/b"}),
                             ("metrics_download", {"job": ["G1-J0001"], "output_dir": "../x"}),
                             ("metrics_download", {"job": ["G1-J0001"], "output_dir": str(tmp_path)}),
                             ("metrics_download", {"job": ["G1-J0001"], "output_dir": "sub/link"}),
                             ("report_download", {"group": ["G1"]}))
    ok, dotdot, absolute, link, default = results
    (written,) = ok.structured_content["result"]["paths"]
    assert not ok.is_error and Path(written).parent == root / "a" / "b" and Path(written).is_file()
    assert dotdot.is_error and absolute.is_error and link.is_error
    assert not default.is_error
    assert list((tmp_path / "outside").iterdir()) == []
    assert all(Path(p).is_relative_to(root) for p in default.structured_content["result"]["paths"])
    assert {t.name for t in tools if t.name.endswith("_download")} >= {"metrics_download", "artifacts_download"}
    assert "report_trigger" not in {t.name for t in tools}  # downloads do not open writes


def test_tools_limits_the_resources(sandbox):
    tools, (other,) = session(make_runner(sandbox, tools="metrics,brm", toolsets=None), ("jobs_get", {"group": ["G1"]}))
    assert [t.name for t in tools] == ["metrics_get", "brm_get", "brm_status", "brm_list", "describe"]
    assert other.is_error and "--toolsets, --tools" in other.content[0].text


def test_the_default_toolsets_and_all(sandbox):
    tools, (other,) = session(make_runner(sandbox, toolsets=None), ("tasks_get", {"group": ["G1"]}))
    from benchloop.mcp_server.tools import all_tools

    default = {r for name in SPEC.mcp.default for r in SPEC.mcp.toolsets[name].resources}
    assert [t.name for t in tools] == [*(t.name for t in all_tools(SPEC) if t.resource in default and not t.gates),
                                       "describe"]
    assert {"metrics_get", "jobs_get", "compare", "report_get", "divergence"} <= {t.name for t in tools}
    assert other.is_error and "not enabled" in other.content[0].text
    tools, (ok,) = session(make_runner(sandbox, toolsets="tasks"), ("tasks_get", {"group": ["G1"]}))
    assert [t.name for t in tools] == ["tasks_get", "describe"] and not ok.is_error


# ------------------------------------------------------------ stdio, for real
def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env


def stdio(args: list[str], *calls: tuple[str, dict[str, Any]], env: dict[str, str] | None = None):
    params = StdioServerParameters(command=BL[0], args=[*BL[1:], *args], env=env or _env())

    async def main():
        async with Client(params) as client:
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, a) for name, a in calls]

    return anyio.run(main)


def test_stdio_subprocess_serves_the_tools(sandbox, api):
    args = ["--host", sandbox.url, "--api-key", sandbox.api_key, "mcp", "serve"]
    tools, (result,) = stdio(args, ("metrics_get", {"job": ["G1-J0001"]}))
    assert "metrics_get" in {t.name for t in tools}
    assert result.content[0].text + "\n" == api("--no-pretty", "metrics", "get", "-j", "G1-J0001").out


_RAW = r"""
import json, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
messages = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "metrics_get",
     "arguments": {"job": ["G1-J0001", "NOPE"]}}},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "jobs_get", "arguments": {"page": -1}}},
]
proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
proc.stdin.flush()
lines, seen = [], set()
while not {1, 2, 3, 4} <= seen:  # a client keeps stdin open until its answers are in
    line = proc.stdout.readline()
    if not line:
        break
    lines.append(line.decode())
    seen.add(json.loads(line).get("id"))
proc.stdin.close()
rest, err = proc.stdout.read(), proc.stderr.read()
proc.wait(timeout=60)
out = "".join(lines) + rest.decode()
err = err.decode()
print(json.dumps({"code": proc.returncode, "out": out, "err": err}))
"""


def test_stdout_carries_only_protocol_messages(sandbox):
    # A raw client: every line on the server's stdout must be one JSON-RPC message; logs go to stderr.
    args = [*BL, "--host", sandbox.url, "--api-key", sandbox.api_key, "-v", "mcp", "serve"]
    done = subprocess.run([sys.executable, "-c", _RAW, *args], capture_output=True, text=True, timeout=180)
    report = json.loads(done.stdout)
    lines = report["out"].splitlines()
    messages = [json.loads(line) for line in lines]
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    by_id = {m.get("id"): m for m in messages}
    assert {1, 2, 3, 4} <= set(by_id)
    assert by_id[3]["result"]["isError"] is True
    assert by_id[4]["result"]["isError"] is True
    assert isinstance(by_id[3]["result"]["structuredContent"], dict)  # an object, as 2025-11-25 requires
    assert report["code"] == 0, report["err"]
    assert sandbox.api_key not in report["out"] + report["err"]


def test_without_the_sdk_it_says_how_to_install_and_exits_2():
    guard = ("import sys; sys.modules['mcp'] = None; from benchloop.cli.app import main; "
             "sys.exit(main(['mcp', 'serve']))")
    done = subprocess.run([sys.executable, "-c", guard], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "pip install 'benchloop-client[mcp]'" in done.stderr


def test_bad_settings_are_usage_errors_before_serving(tmp_path):
    done = subprocess.run([*BL, "--host", "ftp://nope", "mcp", "serve"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "invalid backend URL" in done.stderr and done.stdout == ""
    done = subprocess.run([*BL, "mcp", "serve", "--tools", "metrics,nope"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "unknown resource(s) nope" in done.stderr
    for option, value, message in (("--workers", "0", "--workers must be between 1 and 256"),
                                   ("--call-timeout", "0", "--call-timeout must be a number of seconds above 0"),
                                   ("--call-timeout", "nan", "--call-timeout must be a number of seconds above 0")):
        done = subprocess.run([*BL, "mcp", "serve", option, value], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 2 and message in done.stderr and done.stdout == "", done.stderr


GUIDE = ROOT / "docs" / "adding-an-endpoint.md"


def test_a_yaml_added_resource_is_a_tool(sandbox, tmp_path, backend):
    # The guide's job-meta example (docs/adding-an-endpoint.md), appended to a copy of the table.
    text = GUIDE.read_text(encoding="utf-8")
    block = re.search(r"<!-- example:resource:start -->\s*```yaml\n(.*?)```", text, re.S).group(1)
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    for name in ("benchloop.schema.json", "benchloop.yaml"):
        (spec_dir / name).write_text((ROOT / "spec" / name).read_text(encoding="utf-8"), encoding="utf-8")
    table = spec_dir / "benchloop.yaml"
    table.write_text(table.read_text(encoding="utf-8").rstrip("\n") + "\n" + block, encoding="utf-8")
    env = _env(BENCHLOOP_SPEC_DIR=str(spec_dir), BENCHLOOP_CACHE_DIR=str(tmp_path / "cache"))
    args = ["--host", sandbox.url, "--api-key", sandbox.api_key, "mcp", "serve", "--toolsets", "all"]
    tools, (result,) = stdio(args, ("job_meta_get", {"job": ["G1-J0001"]}), env=env)
    assert "job_meta_get" in {t.name for t in tools}
    assert "job_meta_download" not in {t.name for t in tools}  # a download: opt-in
    assert not result.is_error
    assert json.loads(result.content[0].text) == [backend("/openapi/jobs/G1-J0001/meta")]


# ------------------------------------------------------------ streamable HTTP
def test_http_transport_on_loopback(sandbox):
    # The token is generated and shown once on stderr; the SDK's client sends it as a bearer header.
    server = HttpServer(["--host", sandbox.url, "--api-key", sandbox.api_key, "mcp", "serve", "--toolsets", "behavior"])
    try:
        assert server.token and len(server.token) >= 32

        async def main():
            async with server.client() as client:
                tools = (await client.list_tools()).tools
                return tools, await client.call_tool("brm_list", {"group": ["G1"]})

        tools, result = anyio.run(main)
        assert "brm_list" in {t.name for t in tools}
        assert not result.is_error and json.loads(result.content[0].text)[0]["group_id"] == "G1"
    finally:
        out, err = server.stop()
    assert out == ""
    assert server.token not in err  # shown once, at start


def test_every_tool_kind_is_exercised():
    kinds = {t.kind for t in make_tools()}
    assert kinds == {"read", "write", "listing", "download", DESCRIBE} and LISTING in kinds


def make_tools() -> list[Tool]:
    from benchloop.mcp_server.tools import all_tools

    return all_tools(SPEC)
