"""The MCP tools as data: generated from the typed model, no MCP SDK involved.

* which actions become which tools comes from the table (writer, request
  methods, listing flag), so a YAML-added action is a tool (and a POST is a
  write) with no Python;
* names and input schemas are pinned by a snapshot (tests/__snapshots__);
* the truncation keeps whole elements, notes what was left out and gives a
  query that returns exactly the rest.
"""

from __future__ import annotations

import json
import re
from types import MappingProxyType

import jmespath
import pytest

from benchloop.base import masking
from benchloop.mcp_server import budget, guards, workers
from benchloop.mcp_server.tools import (
    DESCRIBE,
    DOWNLOAD,
    DOWNLOADS,
    FILE_OPTIONS,
    LISTING,
    READ,
    WRITE,
    WRITES,
    all_tools,
    parse_tools,
    parse_toolsets,
    select,
    served_resources,
    setting_options,
)
from benchloop.table.build import build_model
from benchloop.table.load import load_model, load_spec
from benchloop.table.model import OPTION_DIMENSIONS, STDOUT_OPTIONS

SPEC = load_model()


def by_rule(spec) -> dict[str, tuple[str, tuple[str, ...]]]:
    """``{tool name: (kind, gates)}`` as the module docstring of ``mcp_server/tools.py`` promises
    it, read off the table's actions here (apart from the code that builds the tools): a printing
    action of GETs is a read tool, one that sends anything else a write; a download action is a
    download tool, and also a listing tool when it has a listing flag; other writers, waits and
    pages for people are no tools."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for resource in spec.resources.values():
        for action in resource.actions.values():
            if action.writer not in ("stdout", "files") or action.waits:
                continue
            if action.writer == "files" and action.combine is not None:
                continue
            posts = any(e.method not in ("GET", "HEAD") for e in spec.action_endpoints(action))
            base = resource.name.replace("-", "_")
            name = base if action.command else f"{base}_{action.name.replace('-', '_')}"
            if action.writer == "stdout":
                out[name] = (WRITE, (WRITES,)) if posts else (READ, ())
                continue
            if action.stdout_when:
                listing = f"{name}_list" if "list" in resource.actions else f"{base}_list"
                out[listing] = (LISTING, (WRITES,) if posts else ())
            out[name] = (DOWNLOAD, (WRITES, DOWNLOADS) if posts else (DOWNLOADS,))
    return out


RULE = by_rule(SPEC)


def names(tools) -> list[str]:
    return [t.name for t in tools]


def served(**kwargs):
    kwargs = {"allow_writes": False, "allow_downloads": False, "toolsets": None, **kwargs}
    return select(all_tools(SPEC), **kwargs)


def test_the_tools_are_the_tables_actions_by_the_documented_rule():
    assert {t.name: (t.kind, t.gates) for t in all_tools(SPEC) if t.action is not None} == RULE
    assert {kind for kind, _ in RULE.values()} == {READ, LISTING, WRITE, DOWNLOAD}  # every kind is there


def test_default_tools_are_the_read_only_ones():
    tools = served()
    ungated = [name for name, (_, gates) in RULE.items() if not gates]
    assert ungated and sorted(names(tools)) == sorted([*ungated, "describe"])
    assert all(t.read_only for t in tools)
    assert {t.kind for t in tools} <= {READ, LISTING, DESCRIBE}


def test_writes_and_downloads_are_opt_in():
    writes = {name for name, (kind, _) in RULE.items() if kind == WRITE}
    assert writes and {t.name for t in served(allow_writes=True) if t.kind == WRITE} == writes
    downloads = {name for name, (kind, gates) in RULE.items() if kind == DOWNLOAD and gates == (DOWNLOADS,)}
    assert downloads and {t.name for t in served(allow_downloads=True) if t.kind == DOWNLOAD} == downloads
    assert not any(t.kind == WRITE for t in served(allow_downloads=True))
    assert not ({t.name for t in served()} & (writes | downloads))


def test_kinds_come_from_the_table():
    for tool in all_tools(SPEC):
        if tool.action is None:
            continue
        methods = {e.method for e in SPEC.action_endpoints(tool.action)}
        assert (WRITES in tool.gates) == bool(methods - {"GET", "HEAD"}), tool.name
        assert (DOWNLOADS in tool.gates) == (tool.kind == DOWNLOAD), tool.name
        if tool.kind in (READ, WRITE):
            assert tool.action.writer == "stdout"
        if tool.kind == LISTING:
            assert tool.fixed == {tool.action.stdout_when: True}
            assert "output_dir" not in tool.input_schema["properties"]


def test_input_schema_comes_from_the_options():
    tools = {t.name: t for t in all_tools(SPEC)}
    metrics = tools["metrics_get"].input_schema
    assert metrics["additionalProperties"] is False
    assert metrics["properties"]["job"]["type"] == "array"
    assert metrics["properties"]["job"]["items"] == {"type": "string"}
    scope = SPEC.action("metrics", "get").option("scope")
    assert metrics["properties"]["scope"]["enum"] == list(scope.choices)
    assert metrics["properties"]["scope"]["default"] == scope.default
    assert scope.help in metrics["properties"]["scope"]["description"]
    assert "query" in metrics["properties"]
    jobs = tools["jobs_get"].input_schema["properties"]
    assert jobs["page"]["minimum"] == 1 and jobs["all"]["type"] == "boolean"
    assert "job" not in jobs  # an id option of a dimension the action lacks stays hidden, as in help
    assert tools["brm_run"].input_schema["properties"]["steps"]["items"] == {"type": "integer"}
    assert tools["trajectory_download"].input_schema["properties"]["task_id"]["maxItems"] == 1
    assert "output" not in metrics["properties"]  # a tool returns JSON


def test_input_schemas_say_what_is_required():
    # Issue 21: nothing was required (jobs_get needs group).
    tools = {t.name: t for t in all_tools(SPEC)}
    assert tools["jobs_get"].input_schema["required"] == ["group"]
    assert tools["brm_get"].input_schema["required"] == ["task_id"]
    assert tools["metadata_download"].input_schema["required"] == ["task_id"]
    assert "required" not in tools["describe"].input_schema
    # Several kinds of id: exactly one is required, said by the schema and by each id argument.
    metrics = tools["metrics_get"].input_schema
    assert "required" not in metrics
    assert metrics["description"] == "Exactly one of group or job is required."
    assert metrics["properties"]["job"]["description"] == "Job id(s)."  # said once, at the root
    assert tools["artifacts_list"].input_schema["description"] == \
        "Exactly one of group, job or task_id is required."
    for tool in all_tools(SPEC):
        if tool.action is not None:
            required = tool.input_schema.get("required", [])
            assert set(required) <= set(tool.input_schema["properties"]), tool.name
            assert bool(required) == (len(tool.action.dimensions) == 1), tool.name


def test_input_schemas_keep_a_plain_root_that_every_client_accepts():
    # The Anthropic API refuses oneOf/anyOf/allOf at the root of a tool's input schema, and Claude
    # Code drops tools with a root if/then: the one-of rule is said in words, never so.
    for tool in all_tools(SPEC):
        schema = tool.input_schema
        assert schema["type"] == "object", tool.name
        assert not {"oneOf", "anyOf", "allOf", "not", "if", "then", "else", "dependentSchemas"} & set(schema)


def test_no_tool_takes_a_host_or_a_key():
    for tool in all_tools(SPEC):
        for name in tool.input_schema["properties"]:
            assert "host" not in name and "api_key" not in name and "base_url" not in name, (tool.name, name)


def test_tools_snapshot(snapshot):
    # Names, kinds, gates and schemas of every tool: review a change here like an API change.
    listed = [{"name": t.name, "kind": t.kind, "gates": list(t.gates), "annotations": t.annotations,
               "input_schema": t.input_schema} for t in all_tools(SPEC)]
    assert json.loads(json.dumps(listed, default=dict)) == snapshot


def test_tools_picks_resources():
    assert parse_tools(SPEC, None) is None
    assert parse_tools(SPEC, "metrics, jobs") == {"metrics", "jobs"}
    tools = served(toolsets={"metrics", "jobs"})
    # Every ungated tool of those two resources, in the table's order, then describe.
    expected = [t.name for t in all_tools(SPEC) if t.resource in {"metrics", "jobs"} and not t.gates]
    assert expected and names(tools) == [*expected, "describe"]
    assert {t.resource for t in tools} == {"metrics", "jobs", None}
    with pytest.raises(ValueError, match="unknown resource"):
        parse_tools(SPEC, "metrics,nope")


def test_toolsets_come_from_the_table():
    assert parse_toolsets(SPEC, None) == SPEC.mcp.default
    assert set(SPEC.mcp.default) <= set(SPEC.mcp.toolsets)
    first, *_, last = SPEC.mcp.toolsets  # given in any order, answered in the table's
    assert parse_toolsets(SPEC, f"{last}, {first}") == (first, last)
    assert parse_toolsets(SPEC, "all") == ("all",)
    default = {r for name in SPEC.mcp.default for r in SPEC.mcp.toolsets[name].resources}
    expected = [t.name for t in all_tools(SPEC) if t.resource in default and not t.gates]
    assert expected and names(served(toolsets=served_resources(SPEC, parse_toolsets(SPEC, None)))) == [
        *expected, "describe"]
    listed = ", ".join(SPEC.mcp.toolsets)
    with pytest.raises(ValueError, match=rf"unknown toolset\(s\) nope; choose from {re.escape(listed)} or all"):
        parse_toolsets(SPEC, f"{first},nope")
    # --toolsets all serves what a server without toolsets served.
    assert names(served(toolsets=served_resources(SPEC, parse_toolsets(SPEC, "all")))) == names(served())


def test_a_tool_that_returns_data_writes_no_local_file():
    """``bl compare --report FILE`` writes a file where the command runs: a tool that returns data
    has no such argument (only download tools write, under their directory), and keeps the others."""
    with_files = 0
    for tool in all_tools(SPEC):
        if tool.action is None or tool.kind == DOWNLOAD:
            continue
        arguments = set(tool.input_schema["properties"])
        paths = {o.name for o in tool.action.options if o.path is not None}
        with_files += bool(paths)
        assert not paths & arguments, tool.name
        watch = set(tool.action.watch_options)
        assert not watch & arguments, tool.name  # a watch waits: a command-line mode only
        kept = {o.name for o in tool.action.options if o.path is None and o.name not in watch
                and o.name not in STDOUT_OPTIONS and o.name != tool.action.stdout_when
                and (tool.kind != LISTING or o.name not in FILE_OPTIONS)
                and (o.name not in OPTION_DIMENSIONS or tool.action.dimension_of(o.name))}
        assert kept - setting_options(SPEC) <= arguments, (tool.name, kept - arguments)
    assert with_files  # some tool that returns data has an option naming a local file (compare's --report)


def test_a_yaml_added_action_is_a_tool_with_no_python():
    data = json.loads(json.dumps(load_spec()))
    data["endpoints"]["job_notes"] = {"method": "GET", "path": "/openapi/jobs/{job}/notes", "help": "Notes."}
    data["endpoints"]["job_notes_add"] = {"method": "POST", "path": "/openapi/jobs/{job}/notes", "help": "Add."}
    job = data["resources"]["report"]["actions"]["get"]["options"][1]
    data["resources"]["notes"] = {"help": "Notes of jobs.", "actions": {
        "get": {"help": "Print the notes of jobs.", "writer": "stdout", "options": [job],
                "dimensions": {"job": {"parts": {"notes": {"request": "job_notes"}}}}},
        "add": {"help": "Add a note to jobs.", "writer": "stdout", "options": [job],
                "dimensions": {"job": {"parts": {"notes": {"request": "job_notes_add"}}}}},
    }}
    tools = {t.name: t for t in all_tools(build_model(MappingProxyType(data)))}
    assert tools["notes_get"].kind == READ and tools["notes_get"].gates == ()
    assert tools["notes_add"].kind == WRITE and tools["notes_add"].gates == (WRITES,)
    assert tools["notes_get"].description.startswith("Print the notes of jobs.")


# -------------------------------------------------------------- truncation
def test_default_budget_is_the_documented_one():
    serve = load_model().command("mcp serve")
    assert budget.DEFAULT_MAX_CHARS == next(o.default for o in serve.options if o.name == "max_chars") == 60_000


def test_default_workers_and_deadline_are_the_documented_ones():
    defaults = {o.name: o.default for o in load_model().command("mcp serve").options}
    assert workers.DEFAULT_WORKERS == defaults["workers"] == 8
    assert workers.DEFAULT_CALL_TIMEOUT == defaults["call_timeout"] == 120.0


def test_a_small_result_is_not_cut():
    assert budget.cut([1, 2, 3], 100) == ([1, 2, 3], [])


def test_an_array_is_cut_at_an_element_boundary_and_the_rest_query_returns_the_rest():
    value = [{"job_id": f"J{i}", "text": "x" * 50} for i in range(100)]
    kept, cuts = budget.cut(value, 1_000)
    assert len(budget.dumps(kept)) <= 1_000
    assert kept == value[:len(kept)] and 0 < len(kept) < 100
    (only,) = cuts
    assert (only.shown, only.total, only.left_out) == (len(kept), 100, 100 - len(kept))
    assert jmespath.search(only.rest_query(None), value) == value[len(kept):]


def test_a_cut_inside_the_first_element_when_none_fits():
    value = [{"group_id": "G1", "jobs": [{"job_id": f"J{i}", "pad": "y" * 40} for i in range(200)]}]
    kept, cuts = budget.cut(value, 2_000)
    assert len(budget.dumps(kept)) <= 2_000
    assert kept[0]["group_id"] == "G1" and 0 < len(kept[0]["jobs"]) < 200
    assert cuts[-1].path == "[0].jobs"
    rest = cuts[-1].rest_query("[?group_id=='G1']")
    assert rest == f"[?group_id=='G1'] | [0].jobs[{len(kept[0]['jobs'])}:]"
    assert jmespath.search(rest, value) == value[0]["jobs"][len(kept[0]["jobs"]):]


def test_a_long_string_is_cut_last():
    kept, cuts = budget.cut([{"report": "é" * 5_000}], 1_000)
    assert len(budget.dumps(kept)) <= 1_000
    assert cuts[-1].kind == "characters" and cuts[-1].total == 5_000


def test_truncation_note_says_what_was_left_out():
    _, cuts = budget.cut(list(range(1_000)), 1_000)
    note, text = budget.truncation(cuts, 3_890, 1_000, None, pages=True)
    assert note["cuts"][0]["left_out"] == cuts[0].left_out
    assert f"{cuts[0].left_out} left out" in text and "'[" in text and "page" in text


def test_everything_composed_fits_the_budget():
    # The data, the truncation note and the failure summary together, in each channel.
    many_keys = [{f"k{i:06d}": i for i in range(20_000)}]
    failures = [(f"J{i:04d}", "API error 500: " + "z" * 2_000) for i in range(300)]
    for value, failed in ((many_keys, []), ([], failures), (many_keys, failures), ([{"a": 1}], failures[:1])):
        for limit in (1_000, 5_000):
            texts, structured = budget.compose(value, failed, "id(s)", limit, "[?x] | [0]", True)
            assert sum(len(t) for t in texts) <= limit
            assert len(budget.dumps(structured)) <= limit
            if failed:
                assert texts[-1].startswith(f"[error] {len(failed)} id(s) failed:")
                shown = len(structured["failures"])
                assert structured.get("failures_left_out", 0) == len(failed) - shown


def test_a_summary_that_fits_is_the_clis():
    texts, structured = budget.compose([{"a": 1}], [("J1", "API error 404: no")], "id(s)", 1_000, None, False)
    assert texts == ['[{"a":1}]', "[error] 1 id(s) failed:\n[error]   - J1: API error 404: no"]
    assert structured == {"result": [{"a": 1}], "failures": [{"id": "J1", "message": "API error 404: no"}]}


def test_an_error_text_is_cut_to_the_budget():
    text = budget.fit_text("x" * 10_000, 1_000)
    assert len(text) == 1_000 and text.endswith("characters left out]")


def test_masking_reaches_keys_and_nested_strings():
    value = {"secret-key": ["a secret-key b", {"k": "secret-key"}], "n": 1}
    assert masking.scrub_value(value, ("secret-key",)) == {"***": ["a *** b", {"k": "***"}], "n": 1}


def test_flatten_deep_replaces_only_what_is_too_deep():
    shallow = '{"a": [1, {"b": "[[[[ not brackets ]]]"}]}'
    assert guards.flatten_deep(shallow, 3) is shallow
    deep = '{"x": ' + "[" * 10 + "]" * 10 + ', "s": "]"}'
    assert guards.flatten_deep(deep, 3) == '{"x": [[null]], "s": "]"}'
    assert guards.flatten_deep("[[[", 1) == "[[["  # not JSON: left for the parser to refuse


def test_bearer_check():
    assert guards.authorized(b"Bearer abc", "abc") and guards.authorized(b"bearer  abc ", "abc")
    assert not guards.authorized(None, "abc") and not guards.authorized(b"Bearer abd", "abc")
    assert not guards.authorized(b"Basic abc", "abc") and not guards.authorized(b"abc", "abc")


def test_many_scalar_fields_are_listed_by_type_in_one_line():
    """An object of six or more plain scalar fields keeps every name and type in one line; fields
    of any other schema (an enum, a reference) and required ones keep their schema; it stays open."""
    from benchloop.mcp_server.compact import FLAT_FIELDS, flat_fields

    scalars = {f"f{i}": {"type": ["number", "null"]} for i in range(FLAT_FIELDS - 1)}
    scalars["names"] = {"type": "array", "items": {"type": "string"}}
    shape = {"type": "object", "required": ["id"],
             "properties": {"id": {"type": "string"}, "verdict": {"type": "string", "enum": ["a", "b"]}, **scalars}}
    flat = flat_fields(shape)
    assert set(flat["properties"]) == {"id", "verdict"}
    assert flat["description"] == (f"number|null: {', '.join(f'f{i}' for i in range(FLAT_FIELDS - 1))}; "
                                   "string[]: names")
    assert "additionalProperties" not in flat  # open, as the table's shapes
    fewer = {**shape, "properties": dict(list(shape["properties"].items())[:FLAT_FIELDS])}
    assert flat_fields(fewer) == fewer  # five scalars: a schema each
