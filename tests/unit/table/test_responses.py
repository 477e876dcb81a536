"""The answers as data: the table's response schemas and what the model offers on them.

Three concerns:

* the schemas are sound JSON Schema 2020-12 (checked against the meta-schema,
  which the lints leave out because it is slow);
* they stay open: the contract's example answers (``support.CONTRACT_ANSWERS``,
  docs/contract.md section 9) validate, and so do the same answers
  with a new field in every object, and with the sections the contract says
  may be an object or a list in either form; the fields bl relies on are
  required, so an answer without them does not;
* the model API consumers use: an endpoint's typed response, the schema
  resolved, the schema of a field path, the rows of a collection and their
  scalar fields, a service's error body.
"""

from __future__ import annotations

import copy

import jsonschema
import pytest
from support import CONTRACT_ANSWERS as EXAMPLES
from support import with_new_fields

from benchloop.sandbox import generated
from benchloop.table.build import build_model
from benchloop.table.load import load_spec
from benchloop.table.model import Endpoint
from benchloop.table.responses import KINDS, Response, Schemas, rewrite_refs

SPEC = load_spec()
MODEL = build_model(SPEC)


def schemas_in_the_table():
    yield from ((f"schemas.{n}", s) for n, s in SPEC["schemas"].items())
    yield from ((f"endpoints.{n}", e["response"]["json"]) for n, e in SPEC["endpoints"].items()
                if "json" in e["response"])
    yield from ((f"services.{n}", s["error"]) for n, s in SPEC["services"].items())


@pytest.mark.parametrize(("where", "schema"), list(schemas_in_the_table()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_schema_is_valid_json_schema_2020_12(where, schema):
    jsonschema.Draft202012Validator.check_schema(schema)


def validator(endpoint: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(MODEL.endpoints[endpoint].response.resolved)


def test_every_contract_answer_is_of_a_json_endpoint():
    """docs/contract.md section 9 holds answers of the table's JSON endpoints only (none stale);
    an endpoint it does not hold (one a maintainer added) is checked with the sandbox's
    generated answer below."""
    assert set(EXAMPLES) <= {n for n, e in MODEL.endpoints.items() if e.response.is_json}


def _generated(name: str) -> dict:
    endpoint = MODEL.endpoints[name]
    ids = {var: f"{var.upper()}-ID1" for var in endpoint.path_vars}
    return generated.json_answer(endpoint, ids, 7)


CASES = [(name, i, answer) for name, answers in EXAMPLES.items() for i, answer in enumerate(answers)]
CASES += [(name, 0, _generated(name)) for name, e in MODEL.endpoints.items()
          if e.response.is_json and name not in EXAMPLES]


@pytest.mark.parametrize(("endpoint", "i", "answer"), CASES, ids=[f"{n}-{i}" for n, i, _ in CASES])
def test_the_contract_answers_validate_with_and_without_new_fields(endpoint, i, answer):
    check = validator(endpoint)
    assert list(check.iter_errors(answer)) == []
    assert list(check.iter_errors(with_new_fields(answer))) == []


def undescribed(schemas: Schemas, node, where: str) -> list[str]:
    """Declared fields with no description (of their own or of the schema they reference)."""
    found = []
    for name, sub in (node.get("properties") or {}).items():
        if not (sub.get("description") or schemas.resolve(sub).get("description")):
            found.append(f"{where}.{name}")
        found += undescribed(schemas, sub, f"{where}.{name}")
    subs = [(k, node[k]) for k in ("items", "additionalProperties") if isinstance(node.get(k), dict)]
    subs += [(f"{k}{i}", b) for k in ("anyOf", "oneOf", "allOf") for i, b in enumerate(node.get(k) or ())]
    for key, sub in subs:
        if "$ref" not in sub:
            found += undescribed(schemas, sub, f"{where}.{key}")
    return found


def test_every_schema_and_field_is_described():
    """`bl describe` and the reference pages show these descriptions."""
    schemas = MODEL.schemas
    found = [name for name in schemas if not schemas.get(name).get("description")]
    for name in schemas:
        found += undescribed(schemas, schemas.get(name), name)
    assert found == []


def test_no_schema_is_closed():
    def closed(node):
        if isinstance(node, dict):
            extra = node.get("additionalProperties", node.get("unevaluatedProperties"))
            if extra is False or (isinstance(extra, dict) and "type" in extra):
                return True
            return any(closed(v) for v in node.values())
        return isinstance(node, list) and any(closed(v) for v in node)

    assert [where for where, schema in schemas_in_the_table() if closed(schema)] == []


@pytest.mark.parametrize(("endpoint", "answer", "message"), [
    ("job_list", {"jobs": [{"job_id": "J1"}]}, "'total' is a required property"),
    ("job_list", {"jobs": [{"created_at": "x"}], "total": 1}, "'job_id' is a required property"),
    ("group_tasks", {"tasks": [], "total": "3"}, "'3' is not of type 'integer'"),
    ("group_metrics_detail", {"total": 1}, "'metrics' is a required property"),
    ("group_trace_export", {"download_url": "x"}, "'status' is a required property"),
    ("download_task", {"task_id": "T1"}, "'job_ids' is a required property"),
    ("download_task", {"job_ids": ["J1", 2]}, "2 is not of type 'string'"),
    ("job_artifacts", {"job_id": "J1"}, "'artifacts' is a required property"),
])
def test_what_bl_relies_on_is_required(endpoint, answer, message):
    assert [e.message for e in validator(endpoint).iter_errors(answer)] == [message]


# ------------------------------------------------------------------- model API
def test_endpoint_responses_are_typed():
    job_list, media, download = (MODEL.endpoints[n] for n in ("job_list", "trace_media", "job_artifact_download"))
    assert isinstance(job_list.response, Response) and job_list.response.is_json
    assert job_list.response.schema == {"$ref": "#/schemas/JobPage"}
    assert not job_list.binary and media.binary and download.binary
    assert media.response.content_types == ("application/octet-stream", "*/*")
    assert download.response.content_types == ("application/octet-stream", "text/html")
    assert media.response.resolved is None and media.response.rows() is None
    assert {"json", "binary"} <= {e.response.describe() for e in MODEL.endpoints.values()} <= set(KINDS)


def test_resolved_schemas_hold_no_reference():
    for endpoint in MODEL.endpoints.values():
        if endpoint.response.is_json:
            assert "$ref" not in repr(endpoint.response.resolved), endpoint.name
    page = MODEL.endpoints["job_list"].response.resolved
    assert page["required"] == ["jobs", "total"]
    assert page["properties"]["jobs"]["items"]["properties"]["status"]["type"] == "string"


def test_field_paths():
    response = MODEL.endpoints["job_list"].response
    assert response.field(["total"])["type"] == "integer"
    assert response.field(["jobs", "*", "status"]) == MODEL.schemas.get("JobStatus")
    assert response.field(["jobs", 0, "job_id"])["type"] == "string"
    assert response.field(["jobs", "*", "statuz"]) is None and not response.declares(["totl"])
    # Through anyOf: a run_metrics entry, whether the section is a list or an object.
    metrics = MODEL.endpoints["job_metrics"].response
    assert metrics.field(["run_metrics", "duration_s"])["type"] == ["string", "number"]
    assert metrics.field(["run_metrics", "*", "duration_s"])["type"] == ["string", "number"]
    assert MODEL.endpoints["job_rsi"].response.field(["report", "report_md"])["type"] == "string"


def test_rows_and_their_scalar_fields():
    rows = MODEL.endpoints["job_list"].response.rows()
    assert rows.path == ("jobs",)
    assert list(rows.fields) == ["job_id", "id", "group_id", "created_at", "template", "status", "instance_id",
                                 "updated_at"]
    assert rows.fields["group_id"]["type"] == ["string", "null"]
    assert "description" in rows.fields["status"]
    tasks = MODEL.endpoints["group_tasks"].response.rows()
    assert list(tasks.fields) == ["task_id", "id", "name", "status", "score"]
    # Only scalar fields are columns: a metrics row's sections are not.
    assert list(MODEL.endpoints["group_metrics_detail"].response.rows().fields) == ["job_id"]
    # The answer itself may be the list (a behaviour task list), or hold it.
    listed = MODEL.endpoints["behavior_list"].response
    assert listed.rows_path == () and "uid" in listed.rows().fields
    assert "uid" in listed.rows(["tasks"]).fields
    assert MODEL.endpoints["job"].response.rows() is None
    assert MODEL.endpoints["group_job_ids"].response.rows(["job_ids"]) is None  # strings, not rows
    declared = {name for name, e in MODEL.endpoints.items() if e.response.rows_path is not None}
    assert declared == {name for name, e in SPEC["endpoints"].items() if "rows" in (e.get("response") or {})}
    assert {"job_list", "group_tasks", "group_metrics_detail", "behavior_list"} <= declared


def test_service_error_bodies():
    assert MODEL.services["benchloop"].error.field(["error"])["type"] == "string"
    assert MODEL.services["agentplatform"].error.resolved["type"] == "object"


def test_schemas_resolver():
    schemas = Schemas({"A": {"type": "object", "properties": {"b": {"$ref": "#/schemas/B"}}},
                       "B": {"type": "array", "items": {"$ref": "#/schemas/A"}}})
    # A reference back into a schema being inlined stays a reference.
    assert schemas.inline({"$ref": "#/schemas/A"}) == {
        "type": "object", "properties": {"b": {"type": "array", "items": {"$ref": "#/schemas/A"}}}}
    assert schemas.resolve({"$ref": "#/schemas/B", "description": "why"})["description"] == "why"
    assert schemas.field({"$ref": "#/schemas/A"}, ["b", "*", "b", "*"]) == schemas.get("A")
    assert schemas.resolve({"$ref": "#/schemas/Nope"}) == {}  # the lints report it; readers never crash
    assert rewrite_refs({"$ref": "#/schemas/A", "enum": ["#/schemas/A"]}, "#/c/") == {
        "$ref": "#/c/A", "enum": ["#/schemas/A"]}


def test_an_endpoint_without_a_declared_response_answers_any_json():
    endpoint = Endpoint("x", "GET", "/x", help="")
    assert endpoint.response.is_json and endpoint.response.resolved == {} and not endpoint.binary
    data = copy.deepcopy(SPEC)
    del data["endpoints"]["job"]["response"]
    assert build_model(data).endpoints["job"].response.schema == {}
