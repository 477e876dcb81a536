"""The answers as data: the table's response schemas and what the model offers on them.

Three concerns:

* the schemas are sound JSON Schema 2020-12 (checked against the meta-schema,
  which the lints leave out because it is slow);
* they stay open: the contract's example answers (docs/contract.md section 9,
  written here in the shapes it gives) validate, and so do the same answers
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

from benchloop.table.load import load_spec
from benchloop.table.model import Endpoint, build_model
from benchloop.table.responses import Response, Schemas, rewrite_refs

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


# The contract's example answers, one or more per endpoint.
EXAMPLES = {
    "download_task": [{"task_id": "T1", "group_id": "G1", "job_count": 2, "job_ids": ["J1", "J2"],
                       "created_at": "2026-07-14T10:00:00"},
                      {"task_id": "T9", "group_id": "G1", "job_count": 0, "job_ids": []}],
    "job_metrics": [
        {"job_id": "J1", "metrics": [{"type": "eval", "data": {"task_score": 0.85}}],
         "run_metrics": [{"duration_s": "12.5", "thinking_total_length": "900", "tokens_sent": "100",
                          "context_peak": "200"}],
         "tokenized_metrics": [{"schema_version": "v1.1", "tokenizer_class": "Qwen2Tokenizer",
                                "tokenizer_output_total": 42, "llm_calls": 3}]},
        {"job_id": "J2", "metrics": [], "run_metrics": {"duration_s": 2, "tokens_sent": 99},
         "tokenized_metrics": {"llm_calls": 1}},
        {"job_id": None, "metrics": [2]},
    ],
    "group_metrics_overall": [
        {"group_id": "G1", "run_metrics": {"job_count": 3, "avg_duration_s": 12.5, "avg_thinking_length": 456.0,
                                           "avg_tokens_sent": 100.0},
         "tokenized_metrics": {"tokenized_job_count": 3, "avg_tokenizer_output_total": 42.0,
                               "max_tokenizer_output_total": 50.0, "total_tokenizer_output_total": 126.0,
                               "internal_debug_field": "hidden"}},
        {"group_id": "G1", "run_metrics": [{"job_count": 3}], "tokenized_metrics": [{"avg_llm_calls": 4.0}]},
    ],
    "group_metrics_detail": [{"total": 3, "metrics": [
        {"job_id": "J1", "metrics": [{"type": "eval", "data": {"task_score": 1}}]},
        {"job_id": "J2", "metrics": [2]}], "tokenized_metrics": {"tokenized_job_count": 1, "avg_llm_calls": 4.0,
                                                                   "hidden_aggregate": 9}}],
    "job_list": [{"jobs": [{"job_id": "J1", "created_at": "2026-07-22T04:00:00"},
                           {"job_id": "J2", "created_at": "2026-07-22T03:00:00"}], "total": 6}],
    "group_tasks": [{"tasks": [{"task_id": "T1"}, {"task_id": "T2"}], "total": 3},
                    {"tasks": [{"id": "T1"}], "total": 1}],
    "group_eval_summary": [{"score": 0.8}],
    "job": [{"job_id": "J1", "group_id": "G1"}],
    "job_stats": [{"total": 5}],
    "job_trajectory": [
        {"job_id": "J1", "trajectory": [{"step": "J1"}]},
        {"steps": [{"t": 1}, {"t": 2}]},
        {"job_id": "J1", "trajectory": [{"messages": [{"role": "tool", "parts": [{"response": [
            {"type": "input_image", "trace_media": {"mime_type": "image/png",
                                                    "oss_uri": "oss://bucket/a/b/shot.png"}}]}]}]}]},
    ],
    "group_trace_export": [{"status": "waiting_for_data", "retry_after_seconds": 15},
                           {"status": "running", "download_job_name": "sls-1"},
                           {"status": "succeeded", "download_url": "https://oss.example/trace.gz"},
                           {"status": "Succeeded", "downloadUrl": "https://oss.example/trace.gz"}],
    "group_trace_export_status": [{"status": "running"},
                                  {"status": "succeeded", "download_url": "https://oss.example/trace.gz"}],
    "group_job_ids": [{"group_id": "G1", "total": 3, "job_ids": ["J1", "J2", "J3"]}],
    "job_meta": [{"job_id": "J1", "model": "qwen-max", "tags": ["t1"]}],
    "job_artifacts": [
        {"job_id": "J1", "artifacts": [{"name": "result.tgz", "url": "https://oss.example.com/J1/result.tgz"}]},
        {"job_id": "J1", "artifacts": [{"name": "result.tgz", "error_code": "artifact_sign_failed"},
                                       {"error_code": "no_artifact"}]},
        {"artifacts": []},
    ],
    "job_report": [{"job_id": "J1", "reports": [{"content": "# J1", "fail_reason": "model",
                                                 "sub_fail_reason": "reason-a"}]},
                   {"reports": []}],
    "group_report": [{"group_id": "G1", "reports": [{"content": "# Group Report"}], "stats": {"fail_reason": {
        "model": {"count": 1, "sub_fail_reason": {"timeout": 1}},
        "environment": {"count": 1, "sub_fail_reason": {"timeout": 1}}}}}],
    "job_report_trigger": [{"status": "triggered"}],
    "group_report_trigger": [{"status": "triggered"}],
    "job_rsi_trigger": [{"status": "creating", "accepted": True}],
    "group_rsi_trigger": [{"status": "creating", "accepted": True}],
    "job_rsi": [{"entity_type": "job", "job_id": "J1", "status": "not_created", "report": None, "request": None},
                {"status": "creating", "report": None},
                {"status": "created", "report": {"report_md": "# job rsi"}}],
    "group_rsi": [{"entity_type": "group", "group_id": "G1", "status": "created",
                   "report": {"summary_md": "# group"}, "request": None}],
    "behavior_steps": [{"hasStep": True, "steps": [10, 20, 30], "samplingMode": "step"},
                       {"hasStep": False, "steps": [], "samplingMode": "all_jobs", "candidateCount": 8},
                       {"has_step": True, "steps": [{"step": 10}, 20.0]}],
    "behavior_create": [{"uid": "uid-1"}, {"uid": "uid-1", "task_id": "tsearch-uid:1"}],
    "behavior_task": [{"uid": "uid-1", "status": "Running"},
                      {"uid": "uid-1", "status": "Finished", "task_id": "tsearch-uid:9"}],
    "behavior_analysis": [{"summary": {"totalSamples": 3, "averageOverallScore": 4.2},
                           "categoryScores": [{"category": "A", "scoreSum": 1.5}],
                           "behaviorPatterns": {"positive": [{"id": "P1", "triggerRate": 0.1}],
                                                "negative": [{"id": "N1", "triggerRate": 0.2}]},
                           "samplingMode": "step"}],
    "behavior_list": [[{"uid": "uid-1", "groupId": "G1", "status": "Finished"},
                       {"uid": "uid-2", "groupId": "G1", "status": "Running"}],
                      {"tasks": [{"uid": "uid-1"}]}, {"uid": "uid-3"}],
    "group": [{"group_id": "G1"}, {"cluster": "EVAL-HK-PROD-1"}],
    "ap_group": [{"group_id": "G123", "template": "my-template", "name": "my-suite", "dataset": "my-dataset",
                  "agenthub_revision": "rev1", "max_concurrency": 4, "queue_id": "q1",
                  "submission_context": {"params": {"model": "qwen3.7-max", "model_api_key": "k"},
                                         "overrides": {"resources": {"cpu": "2"}}, "batch_size": 100}},
                 {"group_id": "G124", "profile_id": "prof1", "profile_version": 2,
                  "submission_context": {"trials": 3}}],
    "ap_template": [{"params_schema": {"model": {"default": "qwen3.7-max", "required": False},
                                       "model_api_key": {"default": "", "required": False}}}],
    "ap_profile": [{"profile_id": "prof1", "name": "prof", "version": 2, "spec": {
        "template": "my-template", "agenthub_revision": "rev0", "concurrency": 2, "dataset": "other-dataset",
        "trials": 1, "params": {"temperature": 0.5}, "overrides": {"resources": {"cpu": "2"}}}}],
    "ap_group_jobs": [{"jobs": [{"job_id": "job1"}]}],
    "ap_job": [{"job_spec_data": {"spec": {"env": {"model": "qwen3.7-max", "INSTANCE_ID": "i1", "DATASET": "d1",
                                                   "SPLIT": "test"}}}}],
    "ap_dataset_instances": [{"instances": []}],
}


def test_every_json_endpoint_has_an_example():
    assert sorted(n for n, e in MODEL.endpoints.items() if e.response.is_json) == sorted(EXAMPLES)


def with_new_fields(value):
    """The same answer with fields the table does not know in every object (maps included)."""
    if isinstance(value, dict):
        return {**{k: with_new_fields(v) for k, v in value.items()}, "added_later": {"any": [1, None, "x"]},
                "added_text": "x", "added_null": None}
    if isinstance(value, list):
        return [with_new_fields(v) for v in value]
    return value


CASES = [(name, i, answer) for name, answers in EXAMPLES.items() for i, answer in enumerate(answers)]


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
    assert {e.response.describe() for e in MODEL.endpoints.values()} == {"json", "binary"}


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
    assert list(rows.fields) == ["job_id", "id", "group_id", "created_at", "template", "status", "instance_id"]
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
    assert declared == {"job_list", "group_tasks", "group_metrics_detail", "job_artifacts", "behavior_list"}


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
