"""`bl describe`: the machine-readable command schema.

The document is validated against its own JSON Schema (spec/describe.schema.json),
cross-checked against the endpoint table it is generated from, and pinned with
snapshots: one for the envelope (global options, exit codes) and one per
resource, so a table change shows up in review as a readable diff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest
from support import ROOT

from benchloop import __version__
from benchloop.table.load import load_model, load_spec

SCHEMA = json.loads((ROOT / "spec" / "describe.schema.json").read_text(encoding="utf-8"))
SPEC = load_spec()
RESOURCES = list(SPEC["resources"])
ACTIONS = [(r, a) for r, body in SPEC["resources"].items() for a in body["actions"]]


def describe(bl, *args: str) -> dict:
    result = bl("describe", *args)
    assert result.code == 0, result.err
    assert result.err == ""
    return json.loads(result.out)


@pytest.fixture(scope="module")
def document():
    from benchloop.surface.describe import describe_spec
    from benchloop.table.build import build_model

    return describe_spec(build_model(load_spec()))


def test_schema_is_a_valid_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_whole_document_validates_against_its_schema(bl):
    doc = describe(bl)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["version"] == __version__
    assert list(doc["resources"]) == RESOURCES


@pytest.mark.parametrize(("resource", "action"), ACTIONS, ids=[f"{r}-{a}" for r, a in ACTIONS])
def test_narrowed_documents_validate_and_match_the_whole(bl, document, resource, action):
    one = describe(bl, resource)
    jsonschema.Draft202012Validator(SCHEMA).validate(one)
    assert list(one["resources"]) == [resource]
    assert one["resources"][resource] == document["resources"][resource]
    both = describe(bl, resource, action)
    jsonschema.Draft202012Validator(SCHEMA).validate(both)
    assert list(both["resources"][resource]["actions"]) == [action]
    assert both["resources"][resource]["actions"][action] == document["resources"][resource]["actions"][action]
    assert both["global_options"] == document["global_options"]


def as_text(value) -> str:
    """JSON text as `bl describe` prints it, so the snapshots pin the key order too."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def test_envelope_snapshot(document, text_snapshot):
    envelope = {k: v for k, v in document.items() if k != "resources"}
    envelope["version"] = "<version>"
    assert as_text(envelope) == text_snapshot


@pytest.mark.parametrize("resource", RESOURCES)
def test_resource_snapshot(document, text_snapshot, resource):
    assert as_text(document["resources"][resource]) == text_snapshot


def test_key_order_follows_the_table(document):
    for rname, resource in SPEC["resources"].items():
        described = document["resources"][rname]
        assert list(described["actions"]) == list(resource["actions"])
        for aname, action in resource["actions"].items():
            out = described["actions"][aname]
            assert [o["name"] for o in out["options"]] == [o["name"] for o in action["options"]]
            assert list(out["dimensions"]) == list(action["dimensions"])
            for dname, dim in action["dimensions"].items():
                assert list(out["dimensions"][dname].get("parts", {})) == list(dim["parts"])


def test_commands_options_and_requests_come_from_the_table(document):
    for rname, resource in SPEC["resources"].items():
        for aname, action in resource["actions"].items():
            out = document["resources"][rname]["actions"][aname]
            words = [rname] if resource.get("command") else [rname, aname]
            assert out["command"] == " ".join(["bl", *words])
            assert out["help"] == action["help"]
            assert out["writer"] == action["writer"]
            for table_opt, opt in zip(action["options"], out["options"], strict=True):
                if table_opt.get("positional"):  # ap-cmd's GROUP_ID: no flags
                    assert (opt["flags"], opt["metavar"]) == ([], table_opt["metavar"])
                    continue
                assert opt["flags"] == table_opt["flags"]
                assert opt["choices"] == table_opt.get("choices")
                assert opt["short"] == [f for f in table_opt["flags"] if not f.startswith("--")]
                assert opt["repeatable"] == (table_opt["type"] in ("ids", "list", "ints"))
            for dname, dim in action["dimensions"].items():
                for pname, part in dim["parts"].items():
                    described = out["dimensions"][dname]["parts"][pname]
                    if part.get("request"):
                        endpoint = SPEC["endpoints"][part["request"]]
                        assert described["request"]["path"] == endpoint["path"]
                        assert described["request"]["method"] == endpoint["method"]
                        assert described["request"]["query"] == endpoint.get("query", {})
                    elif part.get("step"):
                        assert described["step"]["name"] == part["step"]
                    if part.get("wait"):
                        assert described["wait"]["name"] == part["wait"]


def test_specific_facts(document):
    res = document["resources"]
    get = res["metrics"]["actions"]["get"]
    scope = next(o for o in get["options"] if o["name"] == "scope")
    assert scope["choices"] == ["overall", "detail", "all"] and scope["default"] == "all"
    group = next(o for o in get["options"] if o["name"] == "group")
    assert group["short"] == ["-g"] and group["repeatable"] and group["stdin"] and group["dimension"] == "group"
    assert get["ids"]["mutually_exclusive"] and get["ids"]["options"] == ["group", "job"]
    assert get["dimensions"]["group"]["outputs"] == [{"part": None, "kind": "stdout", "path": None, "format": "json"}]
    detail = get["dimensions"]["group"]["parts"]["detail"]
    assert detail["pagination"]["mode"] == "unique_scan"
    assert detail["pagination"]["parameters"]["page_size"] == 1000
    assert detail["request"]["query"]["skip"] == "{skip}"

    download = res["metrics"]["actions"]["download"]
    assert [o["path"] for o in download["dimensions"]["group"]["outputs"]] == [
        "{group}/overall_metrics.json", "{group}/detail_metrics.json"]

    trajectory = res["trajectory"]["actions"]["download"]
    assert trajectory["ids"]["options"] == ["group", "job", "task_id"]
    task = trajectory["dimensions"]["task"]
    assert task["writer"] == "archive"
    assert task["outputs"][0] == {"part": None, "kind": "archive", "path": "{task}_trajectories.zip", "format": "zip"}
    assert task["parts"]["trajectory"]["output"]["kind"] == "archive_entry"
    assert task["parts"]["trajectory"]["required"] is True
    assert task["parts"]["source"]["output"]["format"] == "binary"
    export = trajectory["dimensions"]["group"]["parts"]["trajectory"]
    poll = export["wait"]["follows"]["trace_export_status"]
    assert poll["request"]["path_variables"] == ["group", "name"]
    follow = export["wait"]["acceptors"][2]
    assert follow["state"] == "follow" and follow["binds"] == {"name": ["download_job_name", "downloadJobName"]}
    assert export["wait"]["acceptors"][0] == {"state": "success", "matcher": "path", "argument": "status",
                                              "expected": ["succeeded"], "fold": True}
    assert export["wait"]["timeout"] == {"option": "download_timeout", "flag": "--download-timeout"}
    waits = res["jobs"]["actions"]["wait"]["dimensions"]["group"]["parts"]["jobs"]["wait"]
    assert waits["enumeration"]["name"] == "group_jobs" and waits["result"] == "counts"
    assert waits["acceptors"][0]["statuses"] == {"name": "job", "set": "not_final",
                                                 "values": ["running"]}
    assert waits["delay"]["option"] == {"option": "interval", "flag": "--interval"}
    assert export["step"]["endpoints"]["job_ids"]["path"] == "/openapi/groups/{group}/job-ids"

    jobs = res["jobs"]["actions"]["get"]["dimensions"]["group"]["parts"]
    assert jobs["page"]["when"] == {"option": "all", "flag": "--all", "equals": False}
    assert jobs["page"]["pagination"]["parameters"] == {"page": "{page}", "collection": "jobs", "page_size": "{page_size}"}

    reports = res["report"]["actions"]["download"]["dimensions"]["group"]
    assert reports["parts"]["jobs"]["each"]["binds"] == "job"
    assert reports["parts"]["jobs"]["output"] == {"kind": "file", "path": "{group}/{job}_report.md",
                                                  "format": "markdown"}
    assert reports["serial"] is True

    trigger = res["report"]["actions"]["trigger"]["dimensions"]["group"]["parts"]["trigger"]["request"]
    assert trigger["method"] == "POST" and trigger["body"] == {"include_passed": "{include_passed}"}

    artifacts = res["artifacts"]["actions"]["download"]
    assert artifacts["stdout_when"] == {"option": "list_only", "flag": "--list-only"}
    assert artifacts["dimensions"]["group"]["parts"]["artifacts"]["step"]["enumerations"]["enumerate"]["name"] \
        == "group_jobs"

    pull = res["pull"]
    assert pull["command"] is True
    assert pull["actions"]["pull"]["command"] == "bl pull"
    assert pull["actions"]["pull"]["compose"]["sections"]["metrics"]["command"] == "bl metrics download"
    assert pull["actions"]["pull"]["dimensions"]["group"]["sections"][0] == "metrics"

    brm_run = res["brm"]["actions"]["run"]
    assert brm_run["ids"] == {"options": ["group"], "flags": [["--group", "-g"]], "mutually_exclusive": False,
                              "required": True, "max_ids": 1}
    steps = next(o for o in brm_run["options"] if o["name"] == "steps")
    assert steps["value"] == "integer" and steps["repeatable"]


def test_exit_codes_and_global_options(document):
    assert [c["code"] for c in document["exit_codes"]] == [0, 1, 2, 3, 4, 124, 75, 130, 141]
    names = [o["name"] for o in document["global_options"]]
    assert names == [o.name for o in load_model().global_options] + ["help", "version"]
    pretty = next(o for o in document["global_options"] if o["name"] == "pretty")
    assert pretty["negative"] == "--no-pretty" and pretty["value"] is None


@pytest.mark.parametrize("args", [("nope",), ("metrics", "nope"), ("metrics", "--openapi")])
def test_unknown_names_are_usage_errors(bl, args):
    result = bl("describe", *args)
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith("Usage: bl describe")
    assert "Error: " in result.err


def test_no_pretty_is_one_compact_line(bl):
    result = bl("--no-pretty", "describe", "report", "get")
    assert result.code == 0
    assert result.out.count("\n") == 1
    assert json.loads(result.out)["resources"]["report"]["actions"]["get"]["command"] == "bl report get"


def test_describe_imports_no_heavy_modules():
    # A fresh interpreter, run twice: the first run may compile the table (YAML, jsonschema);
    # the second, warm one must not import the HTTP stack, the YAML parser or the validator.
    code = (
        "import json, sys\n"
        "from benchloop.cli.app import main\n"
        "assert main(['describe']) == 0\n"
        "assert main(['describe', '--openapi']) == 0\n"
        "heavy = ('httpx', 'yaml', 'jsonschema', 'jinja2')\n"
        "sys.stderr.write('MODULES=' + json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(heavy))))\n"
    )
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=dict(os.environ), timeout=60)
        assert done.returncode == 0, done.stderr
    assert "MODULES=[]" in done.stderr
