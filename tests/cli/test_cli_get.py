"""`get` and `trigger` commands against the sandbox (docs/contract.md 1.5, 2.5, 2.6, 3.1, 3.2, 7).

Expected bodies are fetched straight from the sandbox over HTTP (not through
the CLI), and every request the CLI made is read back from the sandbox's
request log, so both what is printed and what is sent are checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

import pytest
from support import API_KEY, compact, pretty

RUN_ALLOW = [
    "job_count", "avg_duration_s", "avg_duration_api_s", "avg_thinking_length",
    "avg_api_call_count", "total_api_error_count", "avg_api_error_rate", "avg_tool_call_count",
    "total_tool_error_count", "avg_tool_error_rate", "total_rate_limit_count", "avg_num_turns",
]
TOKENIZED_ALLOW = [
    "tokenized_job_count", "avg_tokenizer_dedup_input", "max_tokenizer_dedup_input",
    "total_tokenizer_dedup_input", "avg_tokenizer_user_input", "max_tokenizer_user_input",
    "total_tokenizer_user_input", "avg_tokenizer_output_total", "max_tokenizer_output_total",
    "total_tokenizer_output_total", "avg_tokenizer_output_per_turn",
    "max_tokenizer_output_per_turn", "avg_tokenizer_single_seq_context",
    "max_tokenizer_single_seq_context", "avg_tokenizer_context_peak",
    "max_tokenizer_context_peak", "avg_llm_calls", "max_llm_calls", "total_llm_calls",
]
G1_JOBS_NEWEST_FIRST = [f"G1-J{n:04d}" for n in range(40, 0, -1)]


# ----------------------------------------------------------------- helpers
@dataclass
class Req:
    method: str
    path: str  # raw path, no query
    query: dict[str, str]
    headers: dict


class Recorder:
    """The sandbox's request log since the last reset, parsed."""

    def __init__(self, sandbox):
        self.sandbox = sandbox
        self.reset()

    def reset(self) -> None:
        self.sandbox.reset_stats()

    def all(self) -> list[Req]:
        out = []
        for request in self.sandbox.requests_log:
            parts = urlsplit(request.path)
            out.append(Req(request.method, parts.path,
                           dict(parse_qsl(parts.query, keep_blank_values=True)), request.headers))
        return out

    def to(self, path: str) -> list[Req]:
        return [r for r in self.all() if r.path == path]


@pytest.fixture
def rec(sandbox):
    return Recorder(sandbox)


def ok_json(result):
    assert result.code == 0, result.err
    return json.loads(result.out)




# ------------------------------------------------------------------ metrics
def test_metrics_get_job_element_shape(api, backend, rec):
    body = backend("/openapi/metrics/G1-J0001", source="trace")
    rec.reset()
    data = ok_json(api("metrics", "get", "-j", "G1-J0001"))
    assert isinstance(data, list) and len(data) == 1
    element = data[0]
    assert list(element) == ["job_id", "metrics", "run_metrics", "tokenized_metrics"]
    assert element == {k: body[k] for k in ("job_id", "metrics", "run_metrics", "tokenized_metrics")}
    assert element["job_id"] == "G1-J0001"
    (req,) = rec.all()
    assert (req.method, req.path, req.query) == ("GET", "/openapi/metrics/G1-J0001", {"source": "trace"})
    assert req.headers.get("x-api-key") == API_KEY


def test_metrics_get_job_passes_sections_through_unfiltered(api, backend):
    # Job sections are raw: keys the group allow-lists would drop stay.
    element = ok_json(api("metrics", "get", "-j", "G1-J0001"))[0]
    assert element["tokenized_metrics"][0]["schema_version"] == "v1.1"
    assert "tokenizer_class" in element["tokenized_metrics"][0]


def test_metrics_get_job_scope_is_validated_then_ignored(api, rec):
    data = ok_json(api("metrics", "get", "-j", "G1-J0002", "--scope", "overall"))
    assert [e["job_id"] for e in data] == ["G1-J0002"]
    assert [r.path for r in rec.all()] == ["/openapi/metrics/G1-J0002"]


def test_metrics_get_group_overall_filters_allow_lists(api, backend, rec):
    body = backend("/openapi/groups/G1/metrics/overall", source="trace")
    assert "internal_debug_field" in body["run_metrics"]  # the sandbox does send junk
    assert "internal_debug_field" in body["tokenized_metrics"]
    rec.reset()
    data = ok_json(api("metrics", "get", "-g", "G1", "--scope", "overall"))
    assert len(data) == 1
    element = data[0]
    assert list(element) == ["group_id", "overall"]
    overall = element["overall"]
    assert list(overall) == ["group_id", "run_metrics", "tokenized_metrics"]
    assert overall["group_id"] == "G1"
    run, tok = overall["run_metrics"], overall["tokenized_metrics"]
    assert list(run) == [k for k in RUN_ALLOW if k in body["run_metrics"]]
    assert list(tok) == [k for k in TOKENIZED_ALLOW if k in body["tokenized_metrics"]]
    assert run == {k: body["run_metrics"][k] for k in run}
    assert tok == {k: body["tokenized_metrics"][k] for k in tok}
    assert run["job_count"] == 40
    for junk in ("internal_debug_field", "p95_duration_s", "shard_count"):
        assert junk not in run and junk not in tok
    assert [r.path for r in rec.all()] == ["/openapi/groups/G1/metrics/overall"]
    assert rec.all()[0].query == {"source": "trace"}


def test_metrics_get_group_detail(api, backend, rec):
    page = backend("/openapi/metrics", group_id="G1", skip=0, limit=1000, source="trace")
    assert "hidden_aggregate" in page["tokenized_metrics"]
    rec.reset()
    data = ok_json(api("metrics", "get", "-g", "G1", "--scope", "detail"))
    element = data[0]
    assert list(element) == ["group_id", "detail"]
    detail = element["detail"]
    assert list(detail) == ["group_id", "total", "metrics", "tokenized_metrics"]
    assert detail["group_id"] == "G1"
    assert detail["total"] == 40
    ids = [m["job_id"] for m in detail["metrics"]]
    assert ids == G1_JOBS_NEWEST_FIRST  # unique, in job-list order
    assert detail["metrics"] == page["metrics"]
    tok = detail["tokenized_metrics"]
    assert "hidden_aggregate" not in tok
    assert list(tok) == [k for k in TOKENIZED_ALLOW if k in page["tokenized_metrics"]]
    reqs = rec.all()
    assert [r.path for r in reqs] == ["/openapi/metrics"]
    assert reqs[0].query == {"group_id": "G1", "skip": "0", "limit": "1000", "source": "trace"}


@pytest.mark.parametrize("scope", [None, "all"])
def test_metrics_get_group_all_fetches_overall_then_detail(api, rec, scope):
    args = ["metrics", "get", "-g", "G2"] + (["--scope", scope] if scope else [])
    data = ok_json(api(*args))
    assert list(data[0]) == ["group_id", "overall", "detail"]
    assert data[0]["group_id"] == "G2"
    assert data[0]["overall"]["run_metrics"]["job_count"] == 40
    assert data[0]["detail"]["total"] == 40
    assert [r.path for r in rec.all()] == ["/openapi/groups/G2/metrics/overall", "/openapi/metrics"]


def test_metrics_get_group_detail_of_the_empty_group_probes_it(api, rec):
    data = ok_json(api("metrics", "get", "-g", "GEMPTY", "--scope", "detail"))
    assert data[0]["detail"]["total"] == 0
    assert data[0]["detail"]["metrics"] == []
    assert "/openapi/groups/GEMPTY" in [r.path for r in rec.all()]


def test_metrics_get_unknown_group_fails_the_group(api):
    result = api("metrics", "get", "-g", "GNOPE", "--scope", "detail")
    assert result.code == 1
    assert result.out == "[]\n"
    assert "[error]   - GNOPE: API error 404:" in result.err


# ----------------------------------------------------------------- overview
def test_overview_get_job(api, backend, rec):
    job = backend("/openapi/jobs/G1-J0001")
    stats = backend("/openapi/jobs/stats", group_id="G1")
    rec.reset()
    data = ok_json(api("overview", "get", "-j", "G1-J0001"))
    assert data == [{"job_id": "G1-J0001", "job": job, "stats": stats}]
    assert list(data[0]) == ["job_id", "job", "stats"]
    reqs = rec.all()
    assert [(r.path, r.query) for r in reqs] == [
        ("/openapi/jobs/G1-J0001", {}),
        ("/openapi/jobs/stats", {"group_id": "G1"}),
    ]


def test_overview_get_job_without_group_asks_stats_without_query(api, sandbox, rec):
    data = ok_json(api("overview", "get", "-j", "JORPHAN"))
    assert data[0]["job_id"] == "JORPHAN"
    assert data[0]["job"]["group_id"] is None
    stats_requests = [r.path for r in sandbox.requests_log
                      if urlsplit(r.path).path == "/openapi/jobs/stats"]
    assert stats_requests == ["/openapi/jobs/stats"]  # no group_id= at all


@pytest.mark.parametrize(("scope", "keys", "paths"), [
    ("summary", ["group_id", "summary"], ["/openapi/groups/G1/eval_summary"]),
    ("tasks", ["group_id", "tasks"], ["/openapi/groups/G1/eval_tasks"]),
    ("all", ["group_id", "summary", "tasks"],
     ["/openapi/groups/G1/eval_summary", "/openapi/groups/G1/eval_tasks"]),
])
def test_overview_get_group_scopes(api, backend, rec, scope, keys, paths):
    summary = backend("/openapi/groups/G1/eval_summary")
    tasks = backend("/openapi/groups/G1/eval_tasks")
    rec.reset()
    data = ok_json(api("overview", "get", "-g", "G1", "--scope", scope))
    assert len(data) == 1
    assert list(data[0]) == keys
    assert data[0]["group_id"] == "G1"
    if "summary" in keys:
        assert data[0]["summary"] == summary
    if "tasks" in keys:
        assert data[0]["tasks"] == tasks
    reqs = rec.all()
    assert [r.path for r in reqs] == paths
    assert all(r.query == {} for r in reqs)  # eval_tasks without skip/limit/search/status


def test_overview_get_group_default_scope_is_all(api):
    data = ok_json(api("overview", "get", "-g", "G3"))
    assert list(data[0]) == ["group_id", "summary", "tasks"]


# --------------------------------------------------------------------- jobs
def test_jobs_get_single_page(api, backend, rec):
    body = backend("/openapi/jobs", group_id="G1", skip=3, limit=3)
    rec.reset()
    data = ok_json(api("jobs", "get", "-g", "G1", "--page", "2", "--page-size", "3"))
    assert data == [{"group_id": "G1", **body}]
    assert list(data[0])[0] == "group_id"
    assert [j["job_id"] for j in data[0]["jobs"]] == ["G1-J0037", "G1-J0036", "G1-J0035"]
    assert data[0]["total"] == 40
    (req,) = rec.all()
    assert req.path == "/openapi/jobs"
    assert req.query == {"group_id": "G1", "skip": "3", "limit": "3"}


def test_jobs_get_default_page(api, rec):
    data = ok_json(api("jobs", "get", "-g", "G2"))
    assert len(data[0]["jobs"]) == 40
    assert rec.all()[0].query == {"group_id": "G2", "skip": "0", "limit": "50"}


def test_jobs_get_all(api, rec):
    data = ok_json(api("jobs", "get", "-g", "G1", "--all", "--page-size", "7"))
    assert len(data) == 1
    element = data[0]
    assert list(element) == ["group_id", "total", "jobs"]
    assert element["group_id"] == "G1"
    assert element["total"] == 40
    ids = [j["job_id"] for j in element["jobs"]]
    assert ids == G1_JOBS_NEWEST_FIRST
    reqs = rec.all()
    assert len(reqs) > 40 // 7
    assert all(r.query["limit"] == "7" and r.query["group_id"] == "G1" for r in reqs)
    assert reqs[0].query["skip"] == "0"


def test_jobs_get_all_asks_1000_a_request_without_page_size(api, rec):
    # The unique scan's size unless --page-size is given (docs/contract.md 2.6): 10,000 jobs are
    # 10 requests, not 200.
    data = ok_json(api("jobs", "get", "-g", "G1", "--all"))
    assert [j["job_id"] for j in data[0]["jobs"]] == G1_JOBS_NEWEST_FIRST
    reqs = rec.all()
    assert reqs and all(r.query["limit"] == "1000" for r in reqs), [r.query for r in reqs]


def test_jobs_get_filters_are_query_parameters(api, backend, rec):
    job = backend("/openapi/jobs/G1-J0001")
    expected = backend("/openapi/jobs", group_id="G1", instance_id=job["instance_id"],
                       template=job["template"], status=job["status"], limit=1000)
    assert expected["total"] >= 1
    rec.reset()
    data = ok_json(api("jobs", "get", "-g", "G1", "--all", "--template", job["template"],
                       "--status", job["status"], "--instance-id", job["instance_id"]))
    assert data[0]["total"] == expected["total"]
    assert data[0]["jobs"] == expected["jobs"]
    for req in rec.all():
        assert req.query["template"] == job["template"]
        assert req.query["status"] == job["status"]
        assert req.query["instance_id"] == job["instance_id"]


def test_jobs_get_instance_filter_single_page(api, backend, rec):
    instance = backend("/openapi/jobs/G1-J0001")["instance_id"]
    data = ok_json(api("jobs", "get", "-g", "G1", "--instance-id", instance))
    # job n runs task ((n-1) % 25) + 1: G1-J0001 and G1-J0026 share the instance
    assert [j["job_id"] for j in data[0]["jobs"]] == ["G1-J0026", "G1-J0001"]
    assert rec.all()[-1].query == {"group_id": "G1", "skip": "0", "limit": "50",
                                   "instance_id": instance}


def test_jobs_get_several_groups(api):
    data = ok_json(api("--no-pretty", "jobs", "get", "-g", "G3,G1,GEMPTY", "--page-size", "2"))
    assert [e["group_id"] for e in data] == ["G3", "G1", "GEMPTY"]
    assert data[2]["jobs"] == [] and data[2]["total"] == 0


# -------------------------------------------------------------------- tasks
def test_tasks_get_single_page(api, backend, rec):
    body = backend("/openapi/groups/G1/eval_tasks", skip=4, limit=2)
    rec.reset()
    data = ok_json(api("tasks", "get", "-g", "G1", "--page", "3", "--page-size", "2"))
    assert data == [{"group_id": "G1", **body}]
    assert list(data[0])[0] == "group_id"
    assert [t["task_id"] for t in data[0]["tasks"]] == ["G1-T0005", "G1-T0006"]
    (req,) = rec.all()
    assert req.path == "/openapi/groups/G1/eval_tasks"
    assert req.query == {"skip": "4", "limit": "2"}


def test_tasks_get_all(api, rec):
    data = ok_json(api("tasks", "get", "-g", "G2", "--all", "--page-size", "10"))
    element = data[0]
    assert list(element) == ["group_id", "total", "tasks"]
    assert element["total"] == 25
    ids = [t["task_id"] for t in element["tasks"]]
    assert ids == [f"G2-T{n:04d}" for n in range(1, 26)]
    assert [r.query["skip"] for r in rec.all()] == ["0", "10", "20"]


def test_tasks_get_search_and_status(api, backend, rec):
    name = backend("/openapi/groups/G1/eval_tasks", limit=1)["tasks"][0]["name"]
    search = name.split("__")[0]
    expected = backend("/openapi/groups/G1/eval_tasks", search=search, status="passed",
                       limit=1000)
    rec.reset()
    data = ok_json(api("tasks", "get", "-g", "G1", "--all", "--search", search,
                       "--status", "passed"))
    assert data[0]["total"] == expected["total"]
    assert data[0]["tasks"] == expected["tasks"]
    assert all(t["status"] == "passed" and search in t["name"] for t in data[0]["tasks"])
    for req in rec.all():
        assert req.query["search"] == search
        assert req.query["status"] == "passed"


# ------------------------------------------------------------------- report
def test_report_get_job_and_group(api, backend, rec):
    job = backend("/openapi/jobs/G1-J0001/report")
    empty = backend("/openapi/jobs/G1-J0007/report")
    group = backend("/openapi/groups/G1/report")
    rec.reset()
    assert ok_json(api("report", "get", "-j", "G1-J0001,G1-J0007")) == [job, empty]
    assert ok_json(api("report", "get", "-g", "G1")) == [group]
    assert sorted(r.path for r in rec.all()) == [
        "/openapi/groups/G1/report",
        "/openapi/jobs/G1-J0001/report", "/openapi/jobs/G1-J0007/report",
    ]


def _triggers(sandbox):
    return [(t["endpoint"], t["params"], t["body"]) for t in sandbox.stats["triggers"]]


def test_report_trigger_job_sends_empty_body(api, sandbox, rec):
    data = ok_json(api("report", "trigger", "-j", "G1-J0001"))
    assert data == [{"status": "triggered", "job_id": "G1-J0001"}]
    assert _triggers(sandbox) == [("job_report_trigger", {"job": "G1-J0001"}, {})]
    assert [(r.method, r.path) for r in rec.all()] == [("POST", "/openapi/jobs/G1-J0001/report/trigger")]


def test_report_trigger_job_ignores_include_passed(api, sandbox, rec):
    ok_json(api("report", "trigger", "-j", "G1-J0001", "--include-passed"))
    assert _triggers(sandbox) == [("job_report_trigger", {"job": "G1-J0001"}, {})]


@pytest.mark.parametrize(("flag", "value"), [([], False), (["--include-passed"], True)])
def test_report_trigger_group_sends_include_passed(api, sandbox, rec, flag, value):
    data = ok_json(api("report", "trigger", "-g", "G1,G2", *flag))
    assert data == [
        {"status": "triggered", "group_id": "G1", "include_passed": value},
        {"status": "triggered", "group_id": "G2", "include_passed": value},
    ]
    assert sorted(_triggers(sandbox), key=lambda t: t[1]["group"]) == [
        ("group_report_trigger", {"group": "G1"}, {"include_passed": value}),
        ("group_report_trigger", {"group": "G2"}, {"include_passed": value}),
    ]
    assert all(r.method == "POST" for r in rec.all())


# ---------------------------------------------------------- stdout snapshots
SNAPSHOT_COMMANDS = {
    "metrics-job": ["metrics", "get", "-j", "G1-J0001"],
    "metrics-group-overall": ["metrics", "get", "-g", "G1", "--scope", "overall"],
    "overview-job": ["overview", "get", "-j", "G1-J0001"],
    "overview-group-summary": ["overview", "get", "-g", "G1", "--scope", "summary"],
    "jobs-page": ["jobs", "get", "-g", "G1", "--page-size", "3"],
    "tasks-page": ["tasks", "get", "-g", "G1", "--page", "2", "--page-size", "3"],
    "report-job": ["report", "get", "-j", "G1-J0002,G1-J0007"],
    "report-group": ["report", "get", "-g", "G2"],
    "report-trigger-group": ["report", "trigger", "-g", "G1", "--include-passed"],
}


@pytest.mark.parametrize("style", ["pretty", "no-pretty"])
@pytest.mark.parametrize("name", list(SNAPSHOT_COMMANDS))
def test_stdout_snapshot(api, text_snapshot, name, style):
    flags = ["--no-pretty"] if style == "no-pretty" else []
    result = api(*flags, *SNAPSHOT_COMMANDS[name])
    assert result.code == 0, result.err
    assert result.out == text_snapshot


# ------------------------------------------------------------ JSON formatting
def test_pretty_is_two_space_indent_with_literal_non_ascii(api):
    result = api("report", "get", "-j", "G1-J0001")
    data = ok_json(result)
    assert result.out == pretty(data)
    assert result.out.startswith("[\n  {\n    \"job_id\": \"G1-J0001\",\n")
    assert "分组" in result.out and "\\u" not in result.out
    assert result.out.endswith("}\n]\n") and not result.out.endswith("\n\n")
    assert not any(line.endswith(" ") for line in result.out.splitlines())


def test_no_pretty_is_compact_with_literal_non_ascii(api):
    result = api("--no-pretty", "report", "get", "-j", "G1-J0001")
    data = ok_json(result)
    assert result.out == compact(data)
    assert result.out.count("\n") == 1 and result.out.endswith("]\n")
    assert "分组" in result.out and "\\u" not in result.out


def test_global_options_after_the_action(api):
    before = api("--no-pretty", "metrics", "get", "-j", "G1-J0001")
    after = api("metrics", "get", "-j", "G1-J0001", "--no-pretty")
    assert after.code == 0, after.err
    assert after.out == before.out
    assert after.out.count("\n") == 1


def test_one_id_is_still_an_array(api):
    data = ok_json(api("--no-pretty", "overview", "get", "-j", "G2-J0003"))
    assert isinstance(data, list) and len(data) == 1


def test_empty_containers_render_compactly(api):
    result = api("jobs", "get", "-g", "GEMPTY")
    assert result.code == 0
    assert '"jobs": [],' in result.out


def test_all_failed_prints_empty_array(api):
    result = api("metrics", "get", "-j", "NOPE1,NOPE2")
    assert result.code == 1
    assert result.out == "[]\n"


# ---------------------------------------------------------------------- ids
def _job_ids(result) -> list[str]:
    return [e["job_id"] for e in ok_json(result)]


def test_ids_repeatable_comma_trimmed_deduplicated(api, rec):
    result = api("--no-pretty", "report", "trigger", "-j", " G1-J0002 , ,G1-J0001,G1-J0002",
                 "-j", "G1-J0001", "-j", "G1-J0003,")
    assert _job_ids(result) == ["G1-J0002", "G1-J0001", "G1-J0003"]
    assert len(rec.all()) == 3


def test_stdin_ids_split_on_whitespace_not_commas(api):
    result = api("--no-pretty", "report", "trigger", "-j", "-",
                 stdin="G1-J0003\n  G1-J0001\tG1-J0003\n\nG1-J0002 \n")
    assert _job_ids(result) == ["G1-J0003", "G1-J0001", "G1-J0002"]


def test_stdin_token_with_comma_is_one_id(api):
    result = api("--no-pretty", "report", "trigger", "-j", "-", stdin="G1-J0001,G1-J0002\n")
    assert result.code == 1
    assert result.out == "[]\n"
    assert "[error]   - G1-J0001,G1-J0002: API error 404:" in result.err


def test_stdin_ids_merge_at_their_position(api):
    result = api("--no-pretty", "report", "trigger", "-j", "G1-J0004", "-j", "-",
                 "-j", "G1-J0001,G1-J0005", stdin="G1-J0001 G1-J0006")
    assert _job_ids(result) == ["G1-J0004", "G1-J0001", "G1-J0006", "G1-J0005"]


def test_second_stdin_marker_reads_nothing(api):
    result = api("--no-pretty", "report", "trigger", "-j", "-", "-j", "-", stdin="G1-J0001")
    assert _job_ids(result) == ["G1-J0001"]


def test_dash_with_spaces_is_a_literal_id(api):
    result = api("--no-pretty", "report", "trigger", "-j", " - ", stdin="G1-J0001")
    assert result.code == 1
    assert "[error]   - -: API error 404:" in result.err


def test_stdin_groups(api):
    data = ok_json(api("--no-pretty", "report", "trigger", "-g", "-", stdin="G2\nG1\n"))
    assert [e["group_id"] for e in data] == ["G2", "G1"]


ORDER = ["G3-J0017", "G1-J0040", "G2-J0001", "G1-J0002", "G3-J0031", "JORPHAN", "G2-J0020",
         "G1-J0013", "G3-J0001"]


@pytest.mark.parametrize("concurrency", ["1", "5"])
def test_output_order_is_input_order(api, concurrency):
    result = api("--no-pretty", "--concurrency", concurrency, "metrics", "get", "-j", ",".join(ORDER))
    assert _job_ids(result) == ORDER


@pytest.mark.parametrize("concurrency", ["1", "5"])
def test_output_order_with_failures_in_between(api, concurrency):
    ids = ["G1-J0005", "NOPE-A", "G2-J0005", "NOPE-B", "G3-J0005"]
    result = api("--no-pretty", "--concurrency", concurrency, "report", "get", "-j", ",".join(ids))
    assert result.code == 1
    assert [e["job_id"] for e in json.loads(result.out)] == ["G1-J0005", "G2-J0005", "G3-J0005"]
    errors = [line for line in result.err.splitlines() if line.startswith("[error]   - ")]
    assert [line.split(":")[0] for line in errors] == ["[error]   - NOPE-A", "[error]   - NOPE-B"]


def test_ids_are_percent_encoded_in_paths(api, rec):
    data = ok_json(api("metrics", "get", "-j", "../JODD x"))
    assert data[0]["job_id"] == "../JODD x"
    assert [r.path for r in rec.all()] == ["/openapi/metrics/..%2FJODD%20x"]


@pytest.mark.parametrize("ident", [".", ".."])
def test_dot_ids_stay_one_path_segment(api, rec, ident):
    result = api("metrics", "get", "-j", ident)
    assert result.code == 1
    paths = [r.path for r in rec.all()]
    assert len(paths) == 1
    assert paths[0].startswith("/openapi/metrics/")
    assert f'job not found: {ident}"' in result.err


def test_stdin_is_read_once_across_options(api):
    # -g reads stdin first; -j's '-' then reads an exhausted stdin: no exclusion error.
    data = ok_json(api("--no-pretty", "report", "trigger", "-g", "-", "-j", "-", stdin="G2"))
    assert [e["group_id"] for e in data] == ["G2"]


def test_jobs_get_all_with_page_size_one_falls_back_to_a_bigger_scan(api, rec):
    result = api("-v", "--no-pretty", "jobs", "get", "-g", "G1", "--all", "--page-size", "1")
    data = ok_json(result)
    assert [j["job_id"] for j in data[0]["jobs"]] == G1_JOBS_NEWEST_FIRST
    assert "[debug] group G1 pagination cannot advance at skip=0" in result.err.splitlines()
    assert [r.query["limit"] for r in rec.all()][:2] == ["1", "1000"]
