"""`bl describe --openapi` describes every request that goes on the wire.

Every command of the table runs against the sandbox (all resources, actions
and dimensions, with the options that change which requests are made), while
the sandbox logs every request it receives.  Each logged request must then be
an operation of the OpenAPI document: its method, a path template that
matches, query parameter names the operation declares, and JSON body
properties its request body declares.  The pseudo object-store paths that
stand in for presigned URLs (``/_export``, ``/_oss``, ``/_sso``) are not API
calls and are left out.  Finally every endpoint of the table must have been
called at least once, so the run really covered the table.

The answers are checked too: every JSON answer the sandbox gave fits the
schema its endpoint declares (``response:``, or the service's ``error:`` for a
status of 400 or more), and every other answer comes with one of the endpoint's
declared content types.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from benchloop.sandbox.dataset import Dataset
from benchloop.surface.openapi import openapi_document
from benchloop.table.load import load_model

PSEUDO = ("/_export/", "/_oss/", "/_sso/")
# Ids of the sandbox for each kind of id of the table (their flags are the model's); a kind
# the table gains needs ids here (test_every_kind_of_id_has_sandbox_ids says so).
IDS = {"group": ["G1"], "job": ["G1-J0001,G2-J0002"], "task": ["T1"]}
BRM_IDS = ["uid-G1-1"]  # a preset behaviour analysis of the sandbox
# A wait: work that is done (G1's running jobs never finish): the live group, finished, or its jobs.
_DATA = Dataset(groups=3, jobs_per_group=26, live_jobs=3)  # the wire fixture's sandbox
WAIT_IDS = {"group": ["GLIVE"], "job": _DATA.job_ids("GLIVE")[:2]}
EXTRA = {  # options that select other parts (and so other requests)
    ("jobs", "get"): [[], ["--all", "--status", "failed"]],
    ("tasks", "get"): [[], ["--all", "--search", "t", "--status", "done"]],
    ("artifacts", "download"): [[], ["--list-only"]],
    ("report", "trigger"): [["--include-passed"]],
    ("rsi", "trigger"): [["--include-passed"]],
    ("pull", "pull"): [["--with", "metrics,trajectory,report,artifacts,tasks,jobs"]],
    ("brm", "run"): [["--steps", "10,20"]],  # G1 samples by step (the body has sampleSize)
    ("compare", "compare"): [["-g", "G2", "--status", "failed"]],  # a baseline and a candidate
    ("jobs", "table"): [["--template", "t", "--status", "failed", "--instance-id", "i"]],
}
ALL_JOBS_RUN = ["brm", "run", "-g", "G2"]  # G2 samples all jobs (no sampleSize in the body)
EMPTY_GROUP = ["report", "download", "-g", "GEMPTY"]  # no jobs: the group existence probe
MEDIA_TASK = ["trajectory", "download", "--task-id", "TMEDIA"]  # trajectories that reference media
G1_INSTANCE = _DATA.job("G1-J0001")["instance_id"]  # for a trial of -g G1


def trial_options(action, dim: str) -> list[str]:
    """A group's trial (the ``trial`` step: bl view, bl divergence) stands for the group on one
    instance, named by the action's ``instance_id`` option; a job is its own trial."""
    trial = any(getattr(getattr(part, "step", None), "name", None) == "trial" for part in action.dimensions[dim].parts.values())
    return [action.flag_of("instance_id"), G1_INSTANCE] if trial and dim == "group" else []


def ap_lines(url: str) -> list[list[str]]:
    """ap-cmd runs that reach every AgentPlatform endpoint (and the Benchloop group lookup)."""
    ap = ["--ap-base-url", url, "--ap-api-key", "ap-sandbox-key"]
    return [["ap-cmd", "APG-PROFILE", *ap], ["ap-cmd", "APG-SAMPLE@hk-prod-2", *ap],
            ["ap-cmd", "APG-PARAMS", *ap, "--ap-cluster", "hk-test"]]


def command_lines(tmp: str) -> list[list[str]]:
    spec = load_model()
    lines = []
    for action in spec.actions:
        if action.positional is not None:  # ap-cmd: see ap_lines
            continue
        for dim in action.dimensions:
            flag = action.dimensions[dim].kind.short
            values = BRM_IDS if action.resource == "brm" and dim == "task" else IDS[dim]
            if action.waits and dim in WAIT_IDS:  # a wait: ids whose work finishes
                values = WAIT_IDS[dim]
            if action.min_ids and dim == "group" and (action.resource, action.name) not in EXTRA:
                values = [*values, "G2"]  # an action of two runs or more (trend)
            ids = [w for value in values for w in (flag, value)]
            for extra in EXTRA.get((action.resource, action.name), [[]]):
                extra = [*extra, *trial_options(action, dim)]
                out = ["-o", tmp] if action.option("output_dir") else []
                lines.append([*action.words, *ids, *extra, *out])
    return lines


def test_every_kind_of_id_has_sandbox_ids():
    kinds = {dim for action in load_model().actions for dim in action.dimensions}
    assert kinds and kinds <= set(IDS), f"no sandbox ids for {sorted(kinds - set(IDS))}"
    assert WAIT_IDS["job"] and all(_DATA.job(j) for j in WAIT_IDS["job"])


def _operations(doc: dict) -> list[tuple[re.Pattern, str, dict]]:
    ops = []
    for path, item in doc["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{[^{}]+\\\}", "[^/]+", re.escape(path)) + "$")
        for method in ("get", "post"):
            if method in item:
                ops.append((pattern, method.upper(), item[method]))
    return ops


def _check(request, ops) -> str | None:
    """None when the OpenAPI document describes the request, else what it misses."""
    url = urlsplit(request.path)
    matches = [(method, op) for pattern, method, op in ops if pattern.match(url.path)]
    if not matches:
        return f"no path template matches {url.path}"
    candidates = [op for method, op in matches if method == request.method]
    if not candidates:
        return f"{request.method} is not an operation of {url.path}"
    problems = [_misses(request, url.query, op) for op in candidates]  # /jobs/stats is also /jobs/{job}
    return None if None in problems else problems[0]


def _misses(request, query: str, op: dict) -> str | None:
    declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
    sent = {name for name, _ in parse_qsl(query, keep_blank_values=True)}
    if sent - declared:
        return f"query {sorted(sent - declared)} not declared by {op['operationId']}"
    if request.body:
        properties = op["requestBody"]["content"]["application/json"]["schema"]["properties"]
        extra = set(json.loads(request.body)) - set(properties)
        if extra:
            return f"body {sorted(extra)} not declared by {op['operationId']}"
    return None


@pytest.fixture(scope="module")
def wire(make_sandbox, module_env, tmp_path_factory):
    """(requests logged while every command ran, the commands' exit codes)."""
    from support import run_inprocess

    sandbox = make_sandbox(groups=3, jobs_per_group=26, api_key="wire-key", live_jobs=3)  # TMEDIA: G1 jobs 10, 25
    sandbox.live.advance(3)
    tmp = str(tmp_path_factory.mktemp("wire"))
    codes = {}
    for line in [*command_lines(tmp), ALL_JOBS_RUN, [*EMPTY_GROUP, "-o", tmp], [*MEDIA_TASK, "-o", tmp],
                 *ap_lines(sandbox.url)]:
        result = run_inprocess("--host", sandbox.url, "--api-key", "wire-key", "--retry", "0", *line)
        codes[" ".join(line)] = (result.code, result.err)
    return sandbox.requests_log, codes


def test_every_command_ran(wire):
    """Every command reached the backend; G1 and TMEDIA hold deliberately broken artifacts and
    media (a login redirect among them), so their commands may exit 1 or 3."""
    _, codes = wire
    failed = {line: err for line, (code, err) in codes.items()
              if code not in (0, 1, 3) or "unexpected" in err
              or (code and not any(f" {bad} " in f"{line} " for bad in ("G1", "TMEDIA")))}
    assert not failed


def test_every_request_on_the_wire_is_described(wire):
    requests, _ = wire
    ops = _operations(openapi_document(load_model()))
    api = [r for r in requests if not urlsplit(r.path).path.startswith(PSEUDO)]
    assert len(api) > 50
    problems = {f"{r.method} {r.path}": _check(r, ops) for r in api}
    assert {k: v for k, v in problems.items() if v} == {}


def test_every_endpoint_was_called(wire):
    requests, _ = wire
    ops = _operations(openapi_document(load_model()))
    called = set()
    for request in requests:
        url = urlsplit(request.path)
        for pattern, method, op in ops:
            if method == request.method and pattern.match(url.path):
                called.update(op["x-benchloop-endpoints"])
    assert sorted(set(load_model().endpoints) - called) == []


def _media_fits(content_type: str, declared: tuple[str, ...]) -> bool:
    media = content_type.split(";")[0].strip().lower()
    return any(d in ("*/*", media) or (d.endswith("/*") and media.startswith(d[:-1])) for d in declared)


def answer_problem(request, router, validators) -> str | None:
    """None when the logged answer fits what the table declares for its endpoint, else what is wrong."""
    match = router.match(request.method, urlsplit(request.path).path)
    if match is None or match.route is None:
        return None  # not an operation (404/405): the sandbox's own refusals, checked in test_sandbox
    endpoint = router.endpoints[match.route.name]
    if request.status >= 400 or endpoint.response.is_json:
        if request.answer is None:
            kind = "too large to keep" if request.content_type.startswith("application/json") else "not JSON"
            return f"{request.status} answer is {request.content_type}, {kind}"
        which = "error" if request.status >= 400 else "response"
        errors = sorted(validators[(endpoint.name, which)].iter_errors(json.loads(request.answer)),
                        key=lambda e: list(map(str, e.absolute_path)))
        return f"{which} {errors[0].json_path}: {errors[0].message}" if errors else None
    if 300 <= request.status < 400:
        return None
    if not _media_fits(request.content_type, endpoint.response.content_types):
        return f"content type {request.content_type} is not one of {endpoint.response.content_types}"
    return None


def _validators(spec) -> dict:
    import jsonschema

    out = {}
    for name, endpoint in spec.endpoints.items():
        error = spec.services[endpoint.service].error
        out[(name, "error")] = jsonschema.Draft202012Validator(error.resolved)
        if endpoint.response.is_json:
            out[(name, "response")] = jsonschema.Draft202012Validator(endpoint.response.resolved)
    return out


def test_every_answer_fits_its_declared_schema(wire):
    from benchloop.sandbox.routing import Router

    requests, _ = wire
    spec = load_model()
    router, validators = Router(dict(spec.endpoints)), _validators(spec)
    api = [r for r in requests if not urlsplit(r.path).path.startswith(PSEUDO)]
    checked = {(r.method, urlsplit(r.path).path, r.status): answer_problem(r, router, validators) for r in api}
    assert {k: v for k, v in checked.items() if v} == {}
    json_answers = [r for r in api if r.answer is not None]
    assert len(json_answers) > 50 and {r.status for r in api} >= {200, 404}
    assert {router.match(r.method, urlsplit(r.path).path).route.name for r in json_answers} >= {
        n for n, e in spec.endpoints.items() if e.response.is_json}


def test_the_answer_check_catches_a_misfit():
    """The checker itself: a missing required field, a wrong type, an undeclared content type."""
    from benchloop.sandbox.routing import Router
    from benchloop.sandbox.state import Headers, LoggedRequest

    spec = load_model()
    router, validators = Router(dict(spec.endpoints)), _validators(spec)

    def answered(path, status, content_type, body):
        entry = LoggedRequest("GET", path, Headers())
        entry.answered(status, content_type, body)
        return answer_problem(entry, router, validators)

    page = {"jobs": [{"job_id": "J1", "status": "done", "surprise": {"new": [1]}}], "total": 1, "more": True}
    assert answered("/openapi/jobs?group_id=G1", 200, "application/json", json.dumps(page).encode()) is None
    assert "'total' is a required property" in answered("/openapi/jobs", 200, "application/json", b'{"jobs": []}')
    assert "is not of type 'integer'" in answered("/openapi/jobs", 200, "application/json",
                                                  b'{"jobs": [], "total": "3"}')
    assert "error $.error" in answered("/openapi/jobs/J1", 404, "application/json", b'{"error": 404}')
    assert "not JSON" in answered("/openapi/jobs/J1", 500, "text/html", b"<html></html>")
    assert answered("/openapi/jobs/J1/artifacts/download", 200, "application/octet-stream", None) is None
    assert "not one of" in answered("/openapi/jobs/J1/artifacts/download", 200, "application/zip", None)
    assert answered("/openapi/getTrajV2/mediaFile?ossUri=x", 200, "image/png", None) is None


def test_the_check_catches_an_undeclared_parameter():
    """The checker itself: a query parameter or body field the document lacks is reported."""
    from benchloop.sandbox.state import Headers, LoggedRequest

    ops = _operations(openapi_document(load_model()))
    assert _check(LoggedRequest("GET", "/openapi/jobs/J1/artifacts/download?name=a", Headers()), ops) is None
    assert "not declared" in _check(LoggedRequest("GET", "/openapi/jobs/J1/meta?x=1", Headers()), ops)
    body = json.dumps({"groupId": "G1", "color": 1}).encode()
    assert "['color']" in _check(LoggedRequest("POST", "/openapi/behavior/tasks", Headers(), body), ops)
    assert "no path template" in _check(LoggedRequest("GET", "/openapi/nothing/here/x", Headers()), ops)
