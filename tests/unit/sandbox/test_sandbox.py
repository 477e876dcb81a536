"""The sandbox backend over real loopback HTTP (httpx), no mocks.

These tests pin the behaviour the client relies on: auth, error bodies, the
newest-first job order with timestamp ties, exact filtered totals, skip/limit,
determinism by seed, keep-alive, path decoding and routing precedence, plus
the secondary flows (trace export, artifacts, faults, the ``-m`` entry point).
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from urllib.parse import quote

import httpx
import pytest

from benchloop.sandbox import handlers as sandbox_handlers
from benchloop.sandbox import start_sandbox
from benchloop.sandbox.routing import Router, load_endpoints
from benchloop.table.model import Endpoint

KEY = "test-key"
SIZES = [120, 40, 7]  # G1 spans more than one default page (50)
TASKS = [75, 25, 3]
RUN_ALLOW = [
    "job_count", "avg_duration_s", "avg_duration_api_s", "avg_thinking_length",
    "avg_api_call_count", "total_api_error_count", "avg_api_error_rate", "avg_tool_call_count",
    "total_tool_error_count", "avg_tool_error_rate", "total_rate_limit_count", "avg_num_turns",
]


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=SIZES, tasks_per_group=TASKS,
                        api_key=KEY, export_waiting=1, export_running=1)


@pytest.fixture()
def client(sandbox):
    with httpx.Client(base_url=sandbox.url, headers={"X-API-Key": KEY}, timeout=30) as c:
        yield c


def all_jobs(client, group, page=1000, **filters):
    out, skip = [], 0
    while True:
        body = client.get("/openapi/jobs", params={"group_id": group, "skip": skip,
                                                   "limit": page, **filters}).json()
        out.extend(body["jobs"])
        skip += len(body["jobs"])
        if not body["jobs"] or skip >= body["total"]:
            return out, body["total"]


# ------------------------------------------------------------------ auth, errors
def test_missing_or_wrong_key_is_401(sandbox):
    with httpx.Client(base_url=sandbox.url) as anon:
        r = anon.get("/openapi/jobs/G1-J0001")
        assert r.status_code == 401
        assert r.json() == {"error": "invalid api key"}
        r = anon.get("/openapi/jobs/G1-J0001", headers={"X-API-Key": "nope"})
        assert r.status_code == 401
        assert r.json() == {"error": "invalid api key"}


def test_unknown_ids_are_404_with_json_error(client):
    cases = {
        "/openapi/jobs/NOPE": "job not found: NOPE",
        "/openapi/metrics/NOPE": "job not found: NOPE",
        "/openapi/groups/GX": "group not found: GX",
        "/openapi/groups/GX/metrics/overall": "group not found: GX",
        "/openapi/groups/GX/eval_tasks": "group not found: GX",
        "/openapi/groups/GX/report": "group not found: GX",
        "/openapi/trajectory-download-tasks/TX": "download task not found: TX",
    }
    for path, message in cases.items():
        r = client.get(path)
        assert r.status_code == 404, path
        assert r.headers["content-type"].startswith("application/json")
        assert r.json() == {"error": message}
    r = client.get("/openapi/metrics", params={"group_id": "GX"})
    assert r.status_code == 404 and r.json() == {"error": "group not found: GX"}
    r = client.get("/no/such/path")
    assert r.status_code == 404 and r.json() == {"error": "not found"}


def test_wrong_method_is_405(client):
    r = client.post("/openapi/jobs/stats", json={})
    assert r.status_code == 405
    assert "error" in r.json()
    assert r.headers["allow"] == "GET"


@pytest.mark.parametrize("method", ["TRACE", "OPTIONS", "DELETE", "PUT", "PATCH", "BREW"])
def test_any_other_method_is_405_in_json_with_allow(client, method):
    """The stdlib server answered TRACE/OPTIONS (and unknown methods) 501 with an HTML page."""
    r = client.request(method, "/openapi/behavior/tasks")
    assert (r.status_code, r.headers["allow"]) == (405, "GET, POST")
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {"error": f"method not allowed: {method}"}


def test_head_answers_without_a_body_and_keeps_the_connection(sandbox, client):
    sandbox.reset_stats()
    r = client.head("/openapi/jobs/G1-J0001")
    assert (r.status_code, r.headers["allow"], r.content) == (405, "GET", b"")
    assert client.get("/openapi/jobs/G1-J0001").json()["job_id"] == "G1-J0001"
    assert sandbox.stats["connections"] == 1


def test_a_malformed_request_is_refused_in_json(sandbox):
    import socket

    with socket.create_connection((sandbox.host, sandbox.port), timeout=10) as sock:
        sock.sendall(b"GET /openapi/jobs HTTP/1.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 ") and b"Content-Type: application/json" in head
    assert json.loads(body) == {"error": "Line too long"}


def _filled(endpoint: Endpoint) -> str:
    ids = {"group": "G1", "job": "G1-J0001", "task": "uid-G1-1", "name": "x"}
    return endpoint.path.format(**{var: ids[var] for var in endpoint.path_vars})


REQUIRED = [(e, p.name) for e in load_endpoints().values() for p in e.query if e.is_required(p.name)]


@pytest.mark.parametrize(("endpoint", "param"), REQUIRED, ids=[f"{e.name}-{p}" for e, p in REQUIRED])
def test_a_required_parameter_missing_or_empty_is_400(client, endpoint, param):
    """What `bl describe --openapi` marks required, the sandbox requires (schemathesis found
    group_id marked optional but refused when missing)."""
    others = {p.name: "oss://sandbox-media/G1/x.png" if p.name == "ossUri" else "G1"
              for p in endpoint.query if p.name != param and endpoint.is_required(p.name)}
    for value in (None, ""):
        params = others if value is None else {**others, param: value}
        r = client.get(_filled(endpoint), params=params)
        assert r.status_code == 400, (param, value)
        assert r.json()["error"] in (f"{param} is required", "groupId 不能为空")


PAGED = [e for e in load_endpoints().values() if any(p.name == "skip" for p in e.query)]


@pytest.mark.parametrize("endpoint", PAGED, ids=[e.name for e in PAGED])
@pytest.mark.parametrize("value", [str(2**63), "-1", "1.5", "1_000", "ten", "9" * 5000])
def test_integers_out_of_range_or_malformed_are_400_never_500(client, endpoint, value):
    """skip=9223372036854775808 crashed SQLite (500, OverflowError); limit did not fit int64 either."""
    headers = {"X-CLUSTER": "hk-prod-2", "Env": "product", "X-API-KEY": "ap-sandbox-key"} \
        if endpoint.service != "benchloop" else {}
    group = "APG-SAMPLE" if endpoint.service != "benchloop" else "G1"
    if value == "-1" and endpoint.service != "benchloop":
        return  # AgentPlatform's skip/limit are literal integers in the table, not pages: -1 fits int64
    for name in ("skip", "limit"):
        r = client.get(_filled(endpoint).replace("G1", group), params={"group_id": group, name: value},
                       headers=headers)
        assert r.status_code == 400, (name, r.text)
        assert r.json()["error"].startswith(f"invalid {name}: ")
    largest = client.get(_filled(endpoint).replace("G1", group), params={"group_id": group, "skip": 2**63 - 1},
                         headers=headers)
    assert largest.status_code == 200
    rows = largest.json()
    # The declared list of rows (or, where none is declared, the answer's list): past the end, empty.
    path = endpoint.response.rows_path
    if path is None:
        path = tuple(k for k, v in rows.items() if isinstance(v, list))[:1]
        assert path, rows
    for key in path:
        rows = rows[key]
    assert rows == []


def test_bodies_are_checked_against_the_table(client, sandbox):
    """A trigger's body is optional (bl sends {}), a behaviour analysis' is required; fields are typed."""
    sandbox.reset_state()
    try:
        assert client.post("/openapi/jobs/G1-J0001/report/trigger").status_code == 200
        assert client.post("/openapi/groups/G1/rsi/trigger").status_code == 200
        r = client.post("/openapi/groups/G1/report/trigger", json={"include_passed": "yes"})
        assert (r.status_code, r.json()) == (400, {"error": "invalid include_passed: 'yes'"})
        r = client.post("/openapi/groups/G1/report/trigger", json=[True])
        assert (r.status_code, r.json()) == (400, {"error": "request body must be a JSON object"})
        r = client.post("/openapi/behavior/tasks")
        assert (r.status_code, r.json()) == (400, {"error": "request body is required"})
        r = client.post("/openapi/behavior/tasks", json={"groupId": "G2", "scoringLimit": 2**63})
        assert (r.status_code, r.json()) == (400, {"error": "scoringLimit 必须大于 0"})
        r = client.post("/openapi/behavior/tasks", json={"groupId": "G2", "scoringLimit": 3, "steps": ["1"]})
        assert (r.status_code, r.json()) == (400, {"error": "steps 必须是整数列表"})
        assert client.post("/openapi/behavior/tasks", json={"groupId": "G2", "scoringLimit": 3}).status_code == 200
    finally:
        sandbox.reset_state()


def test_a_media_type_that_is_no_media_type_is_not_repeated(client):
    uri = "oss://sandbox-media/G1/G1-J0005/shot.png"
    ok = client.get("/openapi/getTrajV2/mediaFile", params={"ossUri": uri, "mime": "image/png"})
    assert ok.headers["content-type"] == "image/png"
    for mime in ("not a type", "image/png\r\nX-Evil: 1", "", "a/b;c=d"):
        r = client.get("/openapi/getTrajV2/mediaFile", params={"ossUri": uri, "mime": mime})
        assert r.status_code == 200 and r.headers["content-type"] == "application/octet-stream"
        assert "x-evil" not in r.headers


def test_every_handler_answers_an_endpoint_of_the_table():
    """A handler is behaviour for an endpoint of the table (the others answer their declared
    shape: tests/unit/sandbox/test_sandbox_generated.py); one for a name the table lost is dead code."""
    stale = sorted(set(sandbox_handlers.HANDLERS) - set(load_endpoints()))
    assert stale == []


# ---------------------------------------------------------------------- jobs
def test_job_list_is_newest_first_with_ties_and_stable(client):
    jobs, total = all_jobs(client, "G1")
    assert total == SIZES[0] == len(jobs)
    stamps = [j["created_at"] for j in jobs]
    assert stamps == sorted(stamps, reverse=True)
    ties = sum(1 for a, b in zip(stamps, stamps[1:], strict=False) if a == b)
    assert ties >= SIZES[0] // 2  # runs of 3 equal timestamps
    # Stable secondary order: descending job number, identical on every call.
    assert [j["job_id"] for j in jobs] == [f"G1-J{n:04d}" for n in range(SIZES[0], 0, -1)]
    again, _ = all_jobs(client, "G1", page=7)
    assert again == jobs
    assert set(jobs[0]) == {"job_id", "group_id", "created_at", "template", "status",
                            "instance_id"}


def test_skip_limit_and_defaults(client):
    full, _ = all_jobs(client, "G1")
    body = client.get("/openapi/jobs", params={"group_id": "G1"}).json()
    assert len(body["jobs"]) == 50 and body["jobs"] == full[:50]
    body = client.get("/openapi/jobs", params={"group_id": "G1", "skip": 10, "limit": 5}).json()
    assert body == {"jobs": full[10:15], "total": SIZES[0]}
    body = client.get("/openapi/jobs", params={"group_id": "G1", "skip": 118, "limit": 5}).json()
    assert body["jobs"] == full[118:] and len(body["jobs"]) == 2
    body = client.get("/openapi/jobs", params={"group_id": "G1", "skip": 500}).json()
    assert body == {"jobs": [], "total": SIZES[0]}
    r = client.get("/openapi/jobs", params={"group_id": "G1", "limit": "x"})
    assert r.status_code == 400


def test_filtered_totals_are_exact(client):
    full, _ = all_jobs(client, "G1")
    for key in ("status", "template", "instance_id"):
        counts = Counter(j[key] for j in full)
        assert len(counts) > 1, key  # the filter really filters
        for value, expected in counts.items():
            jobs, total = all_jobs(client, "G1", page=9, **{key: value})
            assert total == expected
            assert [j["job_id"] for j in jobs] == [j["job_id"] for j in full if j[key] == value]
    status, template = full[0]["status"], full[0]["template"]
    _, total = all_jobs(client, "G1", status=status, template=template)
    assert total == sum(1 for j in full if j["status"] == status and j["template"] == template)


def test_job_stats_literal_route_and_counts(sandbox, client):
    full, _ = all_jobs(client, "G1")
    before = sandbox.stats
    body = client.get("/openapi/jobs/stats", params={"group_id": "G1"}).json()
    assert body["total"] == SIZES[0]
    assert body["by_status"] == {s: sum(1 for j in full if j["status"] == s)
                                 for s in body["by_status"]}
    everything = client.get("/openapi/jobs/stats").json()
    assert everything["total"] == sum(SIZES) + 2  # JORPHAN and ../JODD x
    after = sandbox.stats
    assert after.get("job_stats", 0) - before.get("job_stats", 0) == 2
    assert after.get("job", 0) == before.get("job", 0)


def test_router_prefers_literals_whatever_the_table_order():
    table = {name: Endpoint(name, "GET", path, help="") for name, path in
             (("by_id", "/x/{id}/y"), ("literal", "/x/stats/y"), ("deep", "/{a}/{b}/y"))}
    router = Router(table)
    assert router.match("GET", "/x/stats/y").route.name == "literal"
    m = router.match("GET", "/x/a%2Fb%20c/y")
    assert m.route.name == "by_id" and m.params == {"id": "a/b c"}
    assert router.match("GET", "/q/r/y").route.name == "deep"
    assert router.match("POST", "/x/stats/y").route is None
    assert router.match("GET", "/x/stats") is None


def test_percent_encoded_path_ids_are_decoded(client):
    r = client.get("/openapi/jobs/G1%2DJ0001")
    assert r.status_code == 200 and r.json()["job_id"] == "G1-J0001"
    odd = quote("../JODD x", safe="")
    r = client.get(f"/openapi/jobs/{odd}/meta")
    assert r.status_code == 200 and r.json()["job_id"] == "../JODD x"
    r = client.get(f"/openapi/groups/{quote('G1', safe='')}/job-ids")
    assert r.json()["total"] == SIZES[0]


def test_special_ids(client):
    orphan = client.get("/openapi/jobs/JORPHAN").json()
    assert orphan["job_id"] == "JORPHAN" and orphan["group_id"] is None
    assert client.get("/openapi/groups/GEMPTY").json()["job_count"] == 0
    assert client.get("/openapi/jobs", params={"group_id": "GEMPTY"}).json() == {
        "jobs": [], "total": 0}
    assert client.get("/openapi/groups/GEMPTY/eval_tasks").json() == {"tasks": [], "total": 0}
    # A list filtered by an unknown group is empty; the group probe then 404s.
    assert client.get("/openapi/jobs", params={"group_id": "GX"}).json()["total"] == 0
    everything, total = all_jobs(client, None)
    assert total == sum(SIZES) + 2
    assert {"JORPHAN", "../JODD x"} <= {j["job_id"] for j in everything}


# ------------------------------------------------------------------- metrics
def test_job_metrics_shape(client):
    body = client.get("/openapi/metrics/G1-J0002", params={"source": "trace"}).json()
    assert list(body) == ["job_id", "metrics", "run_metrics", "tokenized_metrics"]
    assert body["job_id"] == "G1-J0002"


def test_group_overall_has_allow_listed_and_hidden_keys(client):
    body = client.get("/openapi/groups/G1/metrics/overall").json()
    assert body["group_id"] == "G1"
    run, tok = body["run_metrics"], body["tokenized_metrics"]
    assert set(RUN_ALLOW) <= set(run)
    assert run["job_count"] == SIZES[0]
    assert "internal_debug_field" in run and "internal_debug_field" in tok
    assert "tokenized_job_count" in tok and "total_llm_calls" in tok
    empty = client.get("/openapi/groups/GEMPTY/metrics/overall").json()
    assert empty["run_metrics"]["job_count"] == 0


def test_group_metrics_detail_pages_follow_job_order(client):
    full, _ = all_jobs(client, "G1")
    ids, skip = [], 0
    while skip < SIZES[0]:
        body = client.get("/openapi/metrics", params={
            "group_id": "G1", "skip": skip, "limit": 33, "source": "trace"}).json()
        assert body["total"] == SIZES[0]
        assert "hidden_aggregate" in body["tokenized_metrics"]
        assert "tokenized_job_count" in body["tokenized_metrics"]
        for item in body["metrics"]:
            assert set(item) == {"job_id", "metrics", "run_metrics", "tokenized_metrics"}
        ids += [m["job_id"] for m in body["metrics"]]
        skip += len(body["metrics"])
    assert ids == [j["job_id"] for j in full]
    assert client.get("/openapi/metrics", params={"group_id": "GEMPTY"}).json()["total"] == 0
    assert client.get("/openapi/metrics").status_code == 400


# --------------------------------------------------------------------- tasks
def test_group_tasks_filters_and_defaults(client):
    body = client.get("/openapi/groups/G1/eval_tasks").json()
    assert body["total"] == TASKS[0] and len(body["tasks"]) == 50
    assert body["tasks"][0] == {**body["tasks"][0], "task_id": "G1-T0001"}
    assert set(body["tasks"][0]) == {"task_id", "name", "status", "score"}
    everything = client.get("/openapi/groups/G1/eval_tasks", params={"limit": 1000}).json()
    tasks = everything["tasks"]
    assert len(tasks) == TASKS[0]
    word = tasks[0]["name"].split("__")[0]
    hits = client.get("/openapi/groups/G1/eval_tasks",
                      params={"search": word.upper(), "limit": 1000}).json()
    assert hits["total"] == sum(1 for t in tasks if word in t["name"]) == len(hits["tasks"])
    assert 0 < hits["total"] < TASKS[0]
    for status in {t["status"] for t in tasks}:
        got = client.get("/openapi/groups/G1/eval_tasks",
                         params={"status": status, "skip": 1, "limit": 2}).json()
        assert got["total"] == sum(1 for t in tasks if t["status"] == status)
        assert got["tasks"] == [t for t in tasks if t["status"] == status][1:3]


def test_eval_summary_and_group(client):
    summary = client.get("/openapi/groups/G2/eval_summary").json()
    assert summary["group_id"] == "G2" and summary["task_count"] == TASKS[1]
    group = client.get("/openapi/groups/G2").json()
    assert group["group_id"] == "G2" and group["job_count"] == SIZES[1] and group["cluster"]


# ------------------------------------------------------------------- reports
def test_job_reports_every_seventh_empty(client):
    for n in range(1, 16):
        body = client.get(f"/openapi/jobs/G1-J{n:04d}/report").json()
        assert body["job_id"] == f"G1-J{n:04d}"
        if n % 7 == 0:
            assert body["reports"] == []
        else:
            assert body["reports"], n
            first = body["reports"][0]
            assert set(first) == {"content", "fail_reason", "sub_fail_reason"}
            assert any(ord(ch) > 127 for ch in first["content"])
    assert len(client.get("/openapi/jobs/G1-J0011/report").json()["reports"]) == 2


def test_group_report(client):
    body = client.get("/openapi/groups/G1/report").json()
    assert body["group_id"] == "G1" and body["reports"][0]["content"].startswith("# ")
    reasons = body["stats"]["fail_reason"]
    assert reasons and all({"count", "sub_fail_reason"} == set(v) for v in reasons.values())
    assert client.get("/openapi/groups/GEMPTY/report").json()["reports"] == []


def test_report_triggers_echo_and_are_recorded(sandbox, client):
    sandbox.reset_stats()
    r = client.post("/openapi/groups/G1/report/trigger", json={"include_passed": True})
    assert r.json() == {"status": "triggered", "group_id": "G1", "include_passed": True}
    r = client.post("/openapi/jobs/G1-J0003/report/trigger", json={})
    assert r.json() == {"status": "triggered", "job_id": "G1-J0003"}
    assert client.post("/openapi/jobs/NOPE/report/trigger", json={}).status_code == 404
    triggers = sandbox.stats["triggers"]
    assert triggers[:2] == [
        {"endpoint": "group_report_trigger", "params": {"group": "G1"},
         "body": {"include_passed": True}},
        {"endpoint": "job_report_trigger", "params": {"job": "G1-J0003"}, "body": {}},
    ]


# ------------------------------------------------------------ stats and log
def test_keep_alive_uses_one_connection(sandbox):
    sandbox.reset_stats()
    with httpx.Client(base_url=sandbox.url, headers={"X-API-Key": KEY}) as c:
        for path in ("/openapi/jobs/G1-J0001", "/openapi/groups/G1", "/openapi/jobs/stats",
                     "/openapi/jobs/G1-J0001/report", "/openapi/jobs/G1-J0001/artifacts/download"):
            assert c.get(path).status_code == 200
    stats = sandbox.stats
    assert stats["connections"] == 1
    assert stats["requests"] == 5
    assert stats["job"] == 1 and stats["job_stats"] == 1


def test_a_new_connection_waits_once_and_the_stats_time_the_requests(make_sandbox):
    # connect_latency_ms: a new connection waits before its first request is read, once; the
    # stats give the monotonic times of the first request read and the last answer sent.
    slow = make_sandbox(seed=7, groups=1, jobs_per_group=3, connect_latency_ms=1000)
    assert (slow.stats["first_request_monotonic"], slow.stats["last_answer_monotonic"]) == (None, None)
    with httpx.Client(base_url=slow.url, headers={"X-API-Key": KEY}, timeout=30) as c:
        started = time.monotonic()
        assert c.get("/openapi/jobs/G1-J0001").status_code == 200
        first = slow.stats
        assert first["first_request_monotonic"] - started >= 1.0  # waited before its first request
        slow.reset_stats()
        again = time.monotonic()
        assert c.get("/openapi/jobs/G1-J0002").status_code == 200
        assert c.get("/openapi/jobs/G1-J0003").status_code == 200
        done = time.monotonic()
        kept = slow.stats
    assert (first["connections"], kept["connections"], kept["requests"]) == (1, 0, 2)
    # The same connection again: no second wait (two requests in well under the 1 s it would add).
    assert again <= kept["first_request_monotonic"] <= kept["last_answer_monotonic"] <= done
    assert kept["first_request_monotonic"] - again < 1.0
    with httpx.Client(base_url=slow.url, headers={"X-API-Key": KEY}, timeout=30) as other:
        fresh = time.monotonic()
        assert other.get("/openapi/jobs/G1-J0001").status_code == 200
        answered = time.monotonic()
    assert answered - fresh >= 1.0  # a new connection waits again
    # The server times an answer once it is flushed, which can be just after the client has read
    # it: wait for that record (bounded) before reading it.
    settle = time.monotonic() + 5
    while (slow.stats["last_answer_monotonic"] or 0) < fresh and time.monotonic() < settle:
        time.sleep(0.01)
    assert slow.stats["connections"] == 1
    assert fresh + 1.0 <= slow.stats["last_answer_monotonic"] <= time.monotonic()
    slow.reset_stats()
    assert (slow.stats["first_request_monotonic"], slow.stats["last_answer_monotonic"]) == (None, None)


def test_requests_log_records_headers(sandbox, client):
    sandbox.reset_stats()
    client.get("/openapi/jobs", params={"group_id": "G2", "limit": 3})
    method, path, headers = sandbox.requests_log[-1]
    assert sandbox.requests_log[-1].body == b""
    assert method == "GET"
    assert path == "/openapi/jobs?group_id=G2&limit=3"
    assert headers["X-API-Key"] == KEY and "x-api-key" in headers


# -------------------------------------------------------------- determinism
DETERMINISM_PATHS = [
    "/openapi/jobs?group_id=G1&limit=1000",
    "/openapi/jobs?group_id=G2&status=failed",
    "/openapi/metrics/G1-J0002",
    "/openapi/metrics?group_id=G1&limit=1000",
    "/openapi/groups/G1/metrics/overall",
    "/openapi/groups/G1/eval_tasks?limit=1000",
    "/openapi/groups/G1/eval_summary",
    "/openapi/jobs/G1-J0004/report",
    "/openapi/groups/G1/report",
    "/openapi/jobs/G1-J0005/trajectory",
    "/openapi/jobs/stats",
]


def _bodies(sandbox):
    with httpx.Client(base_url=sandbox.url, headers={"X-API-Key": sandbox.api_key}) as c:
        return [c.get(p).content for p in DETERMINISM_PATHS]


def test_same_seed_is_byte_identical_other_seed_differs(sandbox):
    first = _bodies(sandbox)
    with start_sandbox(seed=7, groups=3, jobs_per_group=SIZES, tasks_per_group=TASKS,
                       api_key=KEY) as twin:
        assert _bodies(twin) == first
    with start_sandbox(seed=8, groups=3, jobs_per_group=SIZES, tasks_per_group=TASKS,
                       api_key=KEY) as other:
        different = _bodies(other)
    assert sum(a != b for a, b in zip(first, different, strict=True)) >= len(first) - 1


def test_large_group_generates_and_pages():
    n = 20_000
    with start_sandbox(seed=3, groups=1, jobs_per_group=n, tasks_per_group=10) as big:
        with httpx.Client(base_url=big.url, headers={"X-API-Key": big.api_key}) as c:
            seen, last, skip = [], None, 0
            while True:
                body = c.get("/openapi/jobs", params={"group_id": "G1", "skip": skip,
                                                      "limit": 5000}).json()
                assert body["total"] == n
                if not body["jobs"]:
                    break
                assert len(body["jobs"]) == 1000  # limit capped at 1000
                for job in body["jobs"]:
                    assert last is None or job["created_at"] <= last
                    last = job["created_at"]
                seen += [j["job_id"] for j in body["jobs"]]
                skip += len(body["jobs"])
            assert len(seen) == len(set(seen)) == n
            assert seen[0] == "G1-J20000" and seen[-1] == "G1-J0001"


# ------------------------------------------------------------ secondary flows
def test_trace_export_flow(sandbox, client):
    sandbox.reset_state()
    first = client.get("/openapi/groups/G3/trace-trajectory/download").json()
    assert first == {"status": "waiting_for_data", "retry_after_seconds": 1}
    running = client.get("/openapi/groups/G3/trace-trajectory/download").json()
    assert running["status"] == "running"
    name = running["download_job_name"]
    poll = f"/openapi/groups/G3/trace-trajectory/download/{quote(name, safe='')}"
    assert client.get(poll).json() == {"status": "running", "retry_after_seconds": 1}
    done = client.get(poll).json()
    assert done["status"] == "succeeded"
    url = done["download_url"]
    assert url.startswith(sandbox.url + "/_export/G3.jsonl.gz")
    with httpx.Client() as plain:  # presigned-style: no API key needed
        r = plain.get(url)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/octet-stream"
    rows = [json.loads(line) for line in gzip.decompress(r.content).decode().splitlines()]
    ids = client.get("/openapi/groups/G3/job-ids").json()["job_ids"]
    row_ids = {row.get("job_id") or row.get("jobId") for row in rows}
    assert row_ids == set(ids)  # G3 has 7 jobs; job 7 is not a multiple of 13
    assert client.get("/openapi/groups/G3/trace-trajectory/download").json()["status"] == \
        "succeeded"
    assert client.get("/openapi/groups/G3/trace-trajectory/download/other").status_code == 404
    with httpx.Client() as plain:
        assert plain.get(url.split("?")[0] + "?sig=bad").status_code == 403


def test_artifacts(client):
    listing = client.get("/openapi/jobs/G1-J0001/artifacts").json()
    assert listing["artifacts"][0]["name"] == "result.tgz"
    r = client.get("/openapi/jobs/G1-J0001/artifacts/download")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/octet-stream"
    assert int(r.headers["content-length"]) == len(r.content) == 4096
    assert r.content[:2] == b"\x1f\x8b"
    with httpx.Client() as plain:
        assert plain.get(listing["artifacts"][0]["url"]).content == r.content
    assert client.get("/openapi/jobs/G1-J0006/artifacts").json()["artifacts"] == [
        {"error_code": "no_artifact"}]
    r = client.get("/openapi/jobs/G1-J0006/artifacts/download")
    assert r.status_code == 404 and r.json() == {"error": "no artifact for job: G1-J0006"}
    r = client.get("/openapi/jobs/G1-J0005/artifacts/download")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    sign = client.get("/openapi/jobs/G1-J0017/artifacts").json()["artifacts"][0]
    assert sign == {"name": "result.tgz", "error_code": "artifact_sign_failed"}


def test_download_tasks(client):
    t1 = client.get("/openapi/trajectory-download-tasks/T1").json()
    assert t1["job_ids"] == ["G1-J0001", "G1-J0002", "G1-J0001"] and t1["job_count"] == 3
    empty = client.get("/openapi/trajectory-download-tasks/TEMPTY").json()
    assert empty["job_ids"] == []


def test_trace_media_and_sso_redirect(client):
    traj = client.get("/openapi/jobs/G1-J0025/trajectory").json()["trajectory"]
    media = [p["trace_media"] for p in traj[0]["messages"][0]["parts"][0]["response"]]
    uris = [m["oss_uri"] for m in media]
    plain = client.get("/openapi/getTrajV2/mediaFile",
                       params={"ossUri": uris[0], "mime": "image/png"})
    assert plain.status_code == 200 and plain.headers["content-type"] == "image/png"
    sso = [u for u in uris if "/sso/" in u][0]
    r = client.get("/openapi/getTrajV2/mediaFile", params={"ossUri": sso, "mime": "image/png"})
    assert r.status_code == 302 and "login.alibaba-inc.com" in r.headers["location"]


def test_rsi_and_behavior(client):
    assert client.get("/openapi/jobs/G1-J0003/rsi").json()["status"] == "not_created"
    assert client.post("/openapi/jobs/G1-J0003/rsi/trigger", json={}).json() == {
        "status": "creating", "accepted": True}
    assert client.get("/openapi/jobs/G1-J0003/rsi").json()["status"] == "creating"
    done = client.get("/openapi/jobs/G1-J0003/rsi").json()
    assert done["status"] == "created" and done["report"]["report_md"]
    steps = client.get("/openapi/behavior/steps", params={"group_id": "G1"}).json()
    assert steps["samplingMode"] == "step"
    created = client.post("/openapi/behavior/tasks", json={
        "groupId": "G1", "steps": [10], "scoringLimit": 4, "sampleSize": 8}).json()
    uid = created["uid"]
    assert client.get(f"/openapi/behavior/tasks/{uid}").json()["status"] == "Running"
    assert client.get(f"/openapi/behavior/tasks/{uid}").json()["status"] == "Finished"
    assert "categoryScores" in client.get(f"/openapi/behavior/tasks/{uid}/analysis").json()
    r = client.post("/openapi/behavior/tasks", json={"groupId": "GEMPTY", "steps": [],
                                                     "scoringLimit": 4})
    assert r.status_code == 400
    listed = client.get("/openapi/behavior/tasks", params={"group_id": "G1"}).json()
    assert uid in [t["uid"] for t in listed]


def test_injected_faults(sandbox, client):
    sandbox.inject_fault("job", status=503, retry_after=2)
    r = client.get("/openapi/jobs/G1-J0001")
    assert r.status_code == 503 and r.headers["retry-after"] == "2"
    assert client.get("/openapi/jobs/G1-J0001").status_code == 200
    sandbox.inject_fault("job", kind="reset")
    with pytest.raises(httpx.TransportError):
        client.get("/openapi/jobs/G1-J0001")
    sandbox.inject_fault("group", kind="truncate")
    with pytest.raises(httpx.TransportError):
        client.get("/openapi/groups/G1")
    assert client.get("/openapi/groups/G1").status_code == 200


def test_module_entry_point_serves_until_sigterm():
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchloop.sandbox", "--port", "0", "--groups", "1",
         "--jobs-per-group", "5", "--api-key", "k1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("sandbox serving http://127.0.0.1:")
        assert line.endswith(" (api key: k1)")
        url = line.split()[2]
        r = httpx.get(url + "/openapi/jobs", params={"group_id": "G1"}, headers={"X-API-Key": "k1"})
        assert r.json()["total"] == 5
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert proc.stdout.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_instant_export_and_sandbox_options():
    with start_sandbox(seed=1, groups=1, jobs_per_group=14, tasks_per_group=2,
                       export_waiting=0, export_running=0, trajectory_steps=2,
                       artifact_bytes=100_000) as small:
        with httpx.Client(base_url=small.url, headers={"X-API-Key": small.api_key}) as c:
            body = c.get("/openapi/groups/G1/trace-trajectory/download").json()
            assert body["status"] == "succeeded"
            rows = gzip.decompress(httpx.get(body["download_url"]).content).splitlines()
            # 14 jobs, job 13 has an empty trajectory, 2 steps each.
            assert len(rows) == 13 * 2
            assert len(c.get("/openapi/jobs/G1-J0001/trajectory").json()["trajectory"]) == 2
            r = c.get("/openapi/jobs/G1-J0001/artifacts/download")
            assert len(r.content) == int(r.headers["content-length"]) == 100_000


@pytest.mark.serial  # timing: run alone (make test runs these after the parallel part)
def test_sigterm_stops_the_sandbox_well_under_a_second():
    """`make demo` and scripts stop the sandbox with SIGTERM; it used to take 2 to 3 s."""
    import signal
    import subprocess
    import sys
    import time

    process = subprocess.Popen([sys.executable, "-m", "benchloop.sandbox", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout.readline().startswith("sandbox serving http://")
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
        took = time.monotonic() - started
    finally:
        process.kill()
    assert process.returncode == 0 and took < 1.0, took


def test_allow_names_the_methods_of_the_most_specific_template():
    """POST /jobs/rerun beside GET /jobs/{job}: a GET of /jobs/rerun is served by /jobs/{job}, as a
    backend's router would, but the 405 of another method allows POST only (the document lists
    the path under its literal template; ``Allow: GET, POST`` contradicted it)."""
    from types import SimpleNamespace

    from benchloop.sandbox.routing import Router

    router = Router({"job": SimpleNamespace(path="/jobs/{job}", method="GET"),
                     "rerun": SimpleNamespace(path="/jobs/rerun", method="POST")})
    assert router.match("POST", "/jobs/rerun").route.name == "rerun"
    assert router.match("GET", "/jobs/rerun").route.name == "job"
    assert router.match("OPTIONS", "/jobs/rerun").allowed == ("POST",)
    assert router.match("OPTIONS", "/jobs/J1").allowed == ("GET",)
