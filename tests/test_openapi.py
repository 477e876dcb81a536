"""`bl describe --openapi`: the endpoint table as an OpenAPI 3.1 document.

The document is checked three ways: by openapi-spec-validator (when installed),
against the table it comes from, and against a live sandbox with schemathesis
(when installed): every answer of the sandbox must be documented (status code,
media type, JSON schema) and none may be a 5xx.  The schemathesis run uses its
own small sandbox, so the requests it makes (POST triggers included) never
touch the session sandbox that other tests read, and it stays bounded:
positive data only, a handful of examples per operation, derandomized.
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
    validator = pytest.importorskip("openapi_spec_validator")
    assert DOC["openapi"].startswith("3.1.")
    validator.validate(DOC)


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
        media = set(op["responses"]["200"]["content"])
        if endpoint.get("response") == "binary":
            assert "application/octet-stream" in media
        else:
            assert media == {"application/json"}
        for status in ("401", "404"):
            assert op["responses"][status] == {"$ref": f"#/components/responses/{_ref_name(status)}"}


def _ref_name(status: str) -> str:
    return {"401": "Unauthorized", "404": "NotFound"}[status]


def test_security_and_error_schema():
    assert DOC["components"]["securitySchemes"]["apiKey"] == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    assert DOC["security"] == [{"apiKey": []}]
    error = DOC["components"]["schemas"]["Error"]
    assert error["properties"]["error"] == {"type": "string"} and error["required"] == ["error"]


def test_typed_parameters_and_bodies():
    group_trigger = DOC["paths"]["/openapi/groups/{group}/report/trigger"]["post"]
    body = group_trigger["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["include_passed"] == {"type": "boolean"}
    detail = DOC["paths"]["/openapi/metrics"]["get"]
    params = {p["name"]: p for p in detail["parameters"]}
    assert params["source"]["schema"] == {"type": "string", "default": "trace"}
    assert params["group_id"]["x-benchloop-template"] == "{group}"
    page = detail["responses"]["200"]["content"]["application/json"]["schema"]
    assert page["required"] == ["metrics"]
    assert "bl metrics get" in detail["x-benchloop-commands"]


def test_endpoints_sharing_a_path_and_method_become_one_operation():
    spec = copy.deepcopy(SPEC)
    spec["endpoints"]["job_meta_again"] = {**spec["endpoints"]["job_meta"], "query": {"fields": "{fields}"},
                                           "help": "The same operation under another name."}
    doc = openapi_document(build_model(spec))
    op = doc["paths"]["/openapi/jobs/{job}/meta"]["get"]
    assert op["x-benchloop-endpoints"] == ["job_meta", "job_meta_again"]
    assert [p["name"] for p in op["parameters"]] == ["fields"]
    assert op["summary"] == "Metadata of one job. / The same operation under another name."
    assert list(op["responses"]) == ["200", "400", "401", "404", "default"]


def test_document_snapshot(text_snapshot):
    doc = copy.deepcopy(DOC)
    doc["info"]["version"] = "<version>"
    assert json.dumps(doc, indent=2, ensure_ascii=False) + "\n" == text_snapshot


# ------------------------------------------------------------ schemathesis
try:
    import schemathesis
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - the test extra installs it
    schemathesis = None

# Ids the sandbox knows, so that the examples phase reaches 200 answers too.
EXAMPLES = {"group": "G1", "job": "G1-J0001", "task": "T1", "name": "G1-export"}


def _with_examples(doc: dict) -> dict:
    doc = copy.deepcopy(doc)
    for item in doc["paths"].values():
        for param in item.get("parameters", []):
            if param["name"] in EXAMPLES:
                param["example"] = EXAMPLES[param["name"]]
        for method in METHODS:
            for param in (item.get(method) or {}).get("parameters", []):
                var = re.fullmatch(r"\{(group|job|task)\}", str(param.get("x-benchloop-template")))
                if var:
                    param["example"] = EXAMPLES[var.group(1)]
    return doc


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=1, jobs_per_group=6, tasks_per_group=3, api_key=API_KEY,
                        export_waiting=0, export_running=0)


if schemathesis is not None:
    SCHEMA = schemathesis.openapi.from_dict(
        _with_examples(DOC),
        config=schemathesis.Config.from_dict({
            "generation": {"mode": "positive"},
            # The sandbox's stdlib server answers TRACE/HEAD with a bare 501 page; not part of the table.
            "phases": {"coverage": {"unexpected-methods": []}},
        }),
    )

    @SCHEMA.parametrize()
    @settings(max_examples=5, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def test_sandbox_conforms_to_the_document(case, sandbox):
        from schemathesis import checks

        case.call_and_validate(
            base_url=sandbox.url,
            headers={"X-API-Key": API_KEY},
            checks=[checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
                    checks.response_schema_conformance, checks.response_headers_conformance],
        )
else:  # pragma: no cover

    def test_sandbox_conforms_to_the_document():
        pytest.skip("schemathesis is not installed")


def test_wrong_key_answers_the_documented_401(sandbox):
    import httpx

    response = httpx.get(f"{sandbox.url}/openapi/groups/G1", headers={"X-API-Key": "wrong"})
    assert response.status_code == 401
    assert set(response.json()) == {"error"}
