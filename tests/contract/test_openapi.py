"""`bl describe --openapi`: the endpoint table as an OpenAPI 3.1 document.

The document is checked by independent tools: openapi-spec-validator, and
schemathesis against a live sandbox: every answer must be documented (status
code, media type, JSON schema against the table's response schemas) and none
may be a 5xx; data the document refuses must be refused (400), a required
header missing too; a method the document does not list gets 405 with
``Allow``.  Valid data must be accepted is the one check left out: two rules
no OpenAPI document can state hold in the sandbox (AgentPlatform's ``Env``
header must match its ``X-CLUSTER``; a step-mode behaviour analysis needs 1
to 20 of the group's steps), and the sandbox answers 400 when they are broken.
The run uses its own small sandbox, so the requests it makes (POST triggers
included) never touch the session sandbox that other tests read, and it stays
bounded: a handful of examples per operation, derandomized.

``test_generated_client.py`` builds a client from the document with
openapi-python-client and calls the sandbox with it.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

from benchloop.surface.openapi import openapi_document
from benchloop.table.build import build_model
from benchloop.table.load import load_spec

SPEC = load_spec()
DOC = openapi_document(build_model(SPEC))
API_KEY = "openapi-key"
METHODS = ("get", "post")


def operations(doc: dict) -> list[tuple[str, str, dict]]:
    return [(path, method, item[method]) for path, item in doc["paths"].items() for method in METHODS
            if method in item]


def test_cli_prints_the_document(bl):
    result = bl("describe", "--openapi")
    assert result.code == 0, result.err
    assert json.loads(result.out) == json.loads(json.dumps(DOC))
    compact = bl("--no-pretty", "describe", "--openapi")
    assert compact.out.count("\n") == 1


def test_valid_openapi_3_1():
    from openapi_spec_validator import validate

    assert DOC["openapi"].startswith("3.1.")
    validate(DOC)


def test_the_validator_catches_an_array_without_items():
    """What the old document got wrong: the validator refuses an array schema without ``items``
    only where OpenAPI demands it, so check what our document guarantees ourselves: every array
    in every schema says what its items are."""
    def arrays_without_items(node, where="$"):
        if isinstance(node, dict):
            kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
            if "array" in kinds and "items" not in node:
                yield where
            for key, value in node.items():
                yield from arrays_without_items(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from arrays_without_items(value, f"{where}[{i}]")

    assert list(arrays_without_items(DOC)) == []
    assert list(arrays_without_items({"type": ["object", "array"]})) == ["$"]


def test_every_endpoint_is_an_operation():
    seen = [name for _, _, op in operations(DOC) for name in op["x-benchloop-endpoints"]]
    assert sorted(seen) == sorted(SPEC["endpoints"])
    for name, endpoint in SPEC["endpoints"].items():
        item = DOC["paths"][endpoint["path"]]
        op = item[endpoint["method"].lower()]
        assert name in op["x-benchloop-endpoints"]
        declared = {p["name"] for p in item.get("parameters", []) if p["in"] == "path"}
        assert declared == set(re.findall(r"\{([^{}]+)\}", endpoint["path"]))
        query = {p["name"]: p for p in op["parameters"] if p["in"] == "query"}
        assert set(endpoint.get("query") or {}) <= set(query)
        for key in ("skip", "limit"):
            if key in query:
                assert query[key]["schema"]["type"] == "integer"
        if endpoint["method"] == "POST":
            assert op["requestBody"]["content"]["application/json"]["schema"]["type"] == "object"
        ok = op["responses"]["200"]["content"]
        response = endpoint["response"]
        if "json" in response:
            assert ok == {"application/json": {"schema": _components(response["json"])}}
        else:
            kind = "binary" if "binary" in response else "text"
            assert list(ok) == response[kind]
        assert op["description"].startswith(endpoint["help"])  # every operation is described
        prefix = "" if endpoint.get("service", "benchloop") == "benchloop" else "AgentPlatform"
        for status, name in (("401", "Unauthorized"), ("404", "NotFound"), ("default", "Error")):
            assert op["responses"][status] == {"$ref": f"#/components/responses/{prefix}{name}"}


def _components(schema):
    """The table's schema as the document writes it (references into components)."""
    return json.loads(json.dumps(schema).replace('"#/schemas/', '"#/components/schemas/'))


def test_response_schemas_are_the_tables():
    assert set(DOC["components"]["schemas"]) == set(SPEC["schemas"])
    for name, schema in SPEC["schemas"].items():
        assert DOC["components"]["schemas"][name] == _components(schema)
    page = DOC["paths"]["/openapi/jobs"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert page == {"$ref": "#/components/schemas/JobPage"}
    untyped = [(path, method) for path, method, op in operations(DOC)
               if op["responses"]["200"]["content"].get("application/json", {}).get("schema")
               in ({}, {"type": ["object", "array"]})]
    assert untyped == []


def test_security_and_error_schema():
    """One scheme per service, one spelling per header (names are case-insensitive)."""
    schemes = DOC["components"]["securitySchemes"]
    assert schemes["apiKey"] == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    assert schemes["agentplatformApiKey"] == {"type": "apiKey", "in": "header", "name": "X-API-Key",
                                              "description": "The AgentPlatform API key (bl sends it as X-API-KEY)."}
    assert DOC["security"] == [{"apiKey": []}]
    error = DOC["components"]["schemas"]["Error"]
    assert error["properties"]["error"]["type"] == "string" and "required" not in error
    responses = DOC["components"]["responses"]
    assert responses["NotFound"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    assert responses["AgentPlatformForbidden"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/AgentPlatformError"}
    assert "Forbidden" not in responses  # Benchloop refuses a key with 401 only


def test_required_parameters_and_bodies():
    """What the backend refuses to do without is marked required, and nothing else."""
    # What the table's YAML lists under ``required`` (read from the compiled table, not the model).
    endpoints = SPEC["endpoints"].values()
    required = {(path, method, p["name"]) for path, method, op in operations(DOC)
                for p in op["parameters"] if p["in"] == "query" and p["required"]}
    assert required and required == {(e["path"], e["method"].lower(), name) for e in endpoints
                                     for name in e.get("required") or () if name in (e.get("query") or {})}
    bodies = {(path, method): op["requestBody"] for path, method, op in operations(DOC) if "requestBody" in op}
    declared = {(e["path"], e["method"].lower()): e for e in endpoints if e.get("body") is not None}
    assert bodies and set(bodies) == set(declared)
    for key, body in bodies.items():
        fields = [name for name in declared[key]["body"] if name in (declared[key].get("required") or ())]
        assert body["required"] == bool(fields), key
        schema = body["content"]["application/json"]["schema"]
        assert schema.get("required", []) == fields, key
        assert list(schema["properties"]) == list(declared[key]["body"]), key
    assert {b["required"] for b in bodies.values()} == {True, False}  # both kinds are there
    create = DOC["paths"]["/openapi/behavior/tasks"]["post"]["requestBody"]["content"]["application/json"]
    assert create["schema"]["properties"]["scoringLimit"]["minimum"] == 1
    detail = {p["name"]: p for p in DOC["paths"]["/openapi/metrics"]["get"]["parameters"]}
    assert detail["group_id"]["schema"] == {"type": "string", "minLength": 1}
    assert detail["skip"]["schema"] == {"type": "integer", "format": "int64", "minimum": 0,
                                        "maximum": 2**63 - 1}


def test_typed_parameters_and_bodies():
    group_trigger = DOC["paths"]["/openapi/groups/{group}/report/trigger"]["post"]
    body = group_trigger["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["include_passed"] == {"type": "boolean"}
    detail = DOC["paths"]["/openapi/metrics"]["get"]
    params = {p["name"]: p for p in detail["parameters"]}
    assert params["source"]["schema"] == {"type": "string", "default": "trace"}
    assert params["group_id"]["x-benchloop-template"] == "{group}"
    page = detail["responses"]["200"]["content"]["application/json"]["schema"]
    assert page == {"$ref": "#/components/schemas/MetricsPage"}
    assert "bl metrics get" in detail["x-benchloop-commands"]


def test_the_commands_named_by_the_operations_are_the_commands_that_request():
    """``x-benchloop-commands``: together, every command of the CLI that makes a request, each as
    ``bl --help`` spells it (the model's command lines of the actions that name an endpoint)."""
    model = build_model(SPEC)
    named = {c for _, _, op in operations(DOC) for c in op["x-benchloop-commands"]}
    requesting = {a.command_line() for a in model.actions if model.action_endpoints(a)}
    assert named and named == requesting
    assert all(c.startswith("bl ") for c in named)


def test_endpoints_sharing_a_path_and_method_become_one_operation():
    spec = copy.deepcopy(SPEC)
    spec["endpoints"]["job_meta_again"] = {**spec["endpoints"]["job_meta"], "query": {"fields": "{fields}"},
                                           "help": "The same operation under another name."}
    doc = openapi_document(build_model(spec))
    op = doc["paths"]["/openapi/jobs/{job}/meta"]["get"]
    assert op["x-benchloop-endpoints"] == ["job_meta", "job_meta_again"]
    assert [p["name"] for p in op["parameters"]] == ["fields"]
    assert op["summary"] == "Metadata of one job. / The same operation under another name."
    # The first operation's own description (whichever commands use it today), then the second's.
    alone = openapi_document(build_model(SPEC))["paths"]["/openapi/jobs/{job}/meta"]["get"]["description"]
    assert alone.startswith("Metadata of one job. Used by `bl ")
    assert op["description"] == f"{alone} / The same operation under another name. Used by no command."
    assert list(op["responses"]) == ["200", "400", "401", "404", "default"]


def test_document_snapshot(text_snapshot):
    doc = copy.deepcopy(DOC)
    doc["info"]["version"] = "<version>"
    assert json.dumps(doc, indent=2, ensure_ascii=False) + "\n" == text_snapshot


# ------------------------------------------------------------ schemathesis
import schemathesis  # noqa: E402 - the test extra installs it
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis import checks  # noqa: E402

# Ids the sandbox knows, so that the examples phase reaches 200 answers too (AgentPlatform's own).
EXAMPLES = {"group": "G1", "job": "G1-J0001", "task": "T1", "name": "G1-export"}
AP_EXAMPLES = {"group": "APG-SAMPLE", "job": "apj-sample-1", "template": "swe-agent", "profile": "prof1",
               "dataset": "swe-bench/test", "X-CLUSTER": "hk-prod-2", "Env": "product"}
CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance, checks.response_headers_conformance,
          checks.negative_data_rejection, checks.missing_required_header, checks.unsupported_method,
          checks.allow_header_conformance, checks.ignored_auth]


def _with_examples(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    for item in doc["paths"].values():
        examples = AP_EXAMPLES if "servers" in item else EXAMPLES
        for param in item.get("parameters", []):
            if param["name"] in examples:
                param["example"] = examples[param["name"]]
        for method in METHODS:
            for param in (item.get(method) or {}).get("parameters", []):
                var = re.fullmatch(r"\{(group|job|task)\}", str(param.get("x-benchloop-template")))
                if var:
                    param["example"] = EXAMPLES[var.group(1)]
                elif param["in"] == "header" and param["name"] in examples:
                    param["example"] = examples[param["name"]]
    return doc


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    # One key for both services: the document names one header for both (case-insensitive).
    return make_sandbox(seed=7, groups=1, jobs_per_group=6, tasks_per_group=3, api_key=API_KEY,
                        ap_api_key=API_KEY, export_waiting=0, export_running=0)


SCHEMA = schemathesis.openapi.from_dict(
    _with_examples(DOC),
    config=schemathesis.Config.from_dict({
        "generation": {"mode": "all"},
        # Through the document's security schemes, so that negative cases may leave the key out.
        "auth": {"openapi": {scheme: {"api_key": API_KEY} for scheme in DOC["components"]["securitySchemes"]}},
    }),
)


@SCHEMA.parametrize()
@settings(max_examples=6, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_sandbox_conforms_to_the_document(case, sandbox):
    case.call_and_validate(base_url=sandbox.url, checks=CHECKS)


def test_wrong_key_answers_the_documented_401(sandbox):
    import httpx

    response = httpx.get(f"{sandbox.url}/openapi/groups/G1", headers={"X-API-Key": "wrong"})
    assert response.status_code == 401
    assert set(response.json()) == {"error"}
