"""Bad input: broken configuration, a broken table, broken responses, huge id lists.

Each case must give a clear message and the right exit code, and never a
Python traceback.  Responses come from a scripted loopback server
(``benchloop.sandbox.scripted``) that answers exactly the bytes a case
needs: non-JSON, HTML, JSON cut short, wrongly typed fields, corrupt export
files.  A hypothesis fuzz run then feeds random shapes to the response
parsers (pagination modes, export rows, task payloads, artifact listings,
header parsing) and checks that they only ever raise the error types the
engine turns into per-id failures.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT, leftovers, run_inprocess

from benchloop.base.errors import BenchloopError, StepError
from benchloop.base.files import join_under, safe_component
from benchloop.base.ids import expand_ids
from benchloop.base.log import Log
from benchloop.engine.pagination import PaginationError, single_page, task_scan, unique_scan
from benchloop.engine.polling import Backoff, Polling
from benchloop.engine.steps import trace_export
from benchloop.engine.transforms import task_job_ids
from benchloop.sandbox import start_sandbox
from benchloop.sandbox.scripted import Reply, json_reply, start_scripted
from benchloop.table.load import load_model, load_spec
from benchloop.table.templates import Context, render_file
from benchloop.transport import retry, urls

KEY = "input-key"
REPO = ROOT


def no_traceback(result) -> None:
    assert "Traceback" not in result.err, result.err
    assert "unexpected error" not in result.err, result.err


# ----------------------------------------------------------------- config
@pytest.mark.parametrize(("text", "message"), [
    ("[profile\nhost = 'x'\n", "invalid config file"),
    ("profile = 3\n", "[profile] must be a table"),
    ("[profile]\napi_key = 5\n", "profile.api_key must be a string"),
    ("[profile]\nhost = \"a\"\nhost = \"b\"\n", "invalid config file"),
    ("[profile]\napi_key = \"a\x00b\"\n", "invalid config file"),
    ("[profile]\nhost = [1, 2]\n", "profile.host must be a string"),
], ids=["syntax", "not-a-table", "key-type", "duplicate", "nul", "host-type"])
def test_malformed_config_is_a_usage_error(tmp_path, text, message):
    config = tmp_path / "config.toml"
    config.write_text(text)
    config.chmod(0o600)
    result = run_inprocess("--config", str(config), "jobs", "get", "-g", "G1")
    assert result.code == 2, result.err
    assert message in result.err and str(config) in result.err
    assert result.out == ""
    no_traceback(result)


def test_config_that_is_a_directory_or_unknown_profile(tmp_path):
    result = run_inprocess("--config", str(tmp_path), "jobs", "get", "-g", "G1")
    assert result.code == 2 and "cannot read config file" in result.err
    no_traceback(result)
    config = tmp_path / "c.toml"
    config.write_text('[profiles.a]\nhost = "http://127.0.0.1:9"\n')
    config.chmod(0o600)
    result = run_inprocess("--config", str(config), "--profile", "nope", "jobs", "get", "-g", "G1")
    assert result.code == 2 and "unknown profile 'nope'" in result.err
    no_traceback(result)


def test_config_that_is_not_utf8_is_a_usage_error(tmp_path):
    config = tmp_path / "config.toml"
    config.write_bytes(b'[profile]\napi_key = "\xff\xfe"\n')
    config.chmod(0o600)
    result = run_inprocess("--config", str(config), "jobs", "get", "-g", "G1")
    assert result.code == 2 and "invalid config file" in result.err
    no_traceback(result)


# ------------------------------------------------------------------ table
def _broken_spec(tmp_path: Path, edit) -> Path:
    where = tmp_path / "spec"
    shutil.copytree(REPO / "spec", where)
    path = where / "benchloop.yaml"
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return where


def _run_with_spec(monkeypatch, tmp_path, where: Path, *args: str):
    monkeypatch.setenv("BENCHLOOP_SPEC_DIR", str(where))
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "cache"))
    return run_inprocess("--host", "http://127.0.0.1:9", *args)


TABLE_BREAKS = {
    "yaml-syntax": (lambda t: t + "\nresources: [unclosed\n", "invalid YAML"),
    "unknown-key": (lambda t: t.replace("  job_metrics:\n", "  job_metrics:\n    bogus_key: 1\n", 1),
                    "bogus_key"),
    "missing-endpoint": (lambda t: t.replace("request: job_metrics\n", "request: no_such_endpoint\n", 1),
                         "no_such_endpoint"),
}


@pytest.mark.parametrize("case", list(TABLE_BREAKS))
def test_malformed_table_gives_a_clear_message(monkeypatch, tmp_path, case):
    edit, needle = TABLE_BREAKS[case]
    where = _broken_spec(tmp_path, edit)
    for args in (["jobs", "get", "-g", "G1"], ["--help"]):
        result = _run_with_spec(monkeypatch, tmp_path, where, *args)
        assert result.code == 2, result.err
        assert needle in result.err and "benchloop.yaml" in result.err
        assert result.out == ""
        no_traceback(result)


def test_malformed_table_is_refused_not_used(monkeypatch, tmp_path):
    """Whatever the message, a broken table never runs a command (no request, no output)."""
    from benchloop.table.load import SpecError

    for case, (edit, needle) in TABLE_BREAKS.items():
        where = _broken_spec(tmp_path / case, edit)
        monkeypatch.setenv("BENCHLOOP_SPEC_DIR", str(where))
        monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / case / "cache"))
        with pytest.raises(SpecError) as info:
            load_spec(use_cache=False)
        assert needle in str(info.value) and "benchloop.yaml" in str(info.value)


def test_a_corrupt_compile_cache_is_recompiled(monkeypatch, tmp_path):
    from benchloop.table import load as specload

    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "cache"))
    key = specload.cache_key((specload.spec_dir() / specload.SPEC_NAME).read_bytes())
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / f"spec-{key}.json").write_text('{"endpoints": {"trunc')
    specload._MEMO.clear()
    result = run_inprocess("--host", "http://127.0.0.1:9", "--retry", "0", "jobs", "get", "-g", "G1")
    assert result.code == 4, result.err  # ran normally, then found no server
    no_traceback(result)


# -------------------------------------------------------- bad responses
def run_against(routes: dict[str, Any], *args: str, retry: str = "0"):
    with start_scripted(routes) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", KEY, "--retry", retry, *args)
    return result


REPORT = "/openapi/jobs/J1/report"
JOBS = "/openapi/jobs"


@pytest.mark.parametrize(("reply", "code", "message"), [
    (Reply(200, b"not json at all", "text/plain"), 1, "API error 200: not json at all"),
    (Reply(200, b"<html><body>Login</body></html>", "text/html"), 1, "API error 200: <html>"),
    (Reply(200, b'{"reports": [{"content": "x"', "application/json"), 1, "API error 200: {\"reports\""),
    (Reply(200, b"", "application/json"), 1, "API error 200: "),
    (Reply(500, b"<html>oops</html>", "text/html"), 1, "API error 500: <html>oops</html>"),
    (Reply(404, b'{"error": "x"}', "application/json"), 1, 'API error 404: {"error": "x"}'),
    (Reply(200, b'{"reports": [{"content": "x"}]}', cut="truncate", send=10), 4, "network:"),
    (Reply(200, cut="reset"), 4, "network:"),
    (Reply(302, b"<html>moved</html>", "text/html", {"Location": "http://127.0.0.1:9/login"}), 1,
     "API error 302"),
], ids=["text", "html", "truncated-json", "empty", "html-500", "json-404", "cut-body", "reset",
        "redirect"])
def test_broken_json_responses_fail_the_id_with_a_clear_message(reply, code, message):
    result = run_against({REPORT: reply}, "report", "get", "-j", "J1")
    assert result.code == code, result.err
    assert f"[error]   - J1: {message}" in result.err
    assert result.out == "[]\n"
    no_traceback(result)


def test_null_and_wrong_top_level_types(tmp_path):
    result = run_against({REPORT: json_reply(None)}, "report", "get", "-j", "J1")
    assert result.code == 0 and result.out == "[]\n" and "[warn] J1: the backend returned null" in result.err
    for body in ([1, 2], "text", 5, {"reports": "nope"}, {"reports": [None]}):
        result = run_against({REPORT: json_reply(body)}, "report", "download", "-j", "J1", "-o",
                             str(tmp_path))
        assert result.code == 0, result.err  # nothing to write is not a failure
        no_traceback(result)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(("page", "code", "message"), [
    ({"jobs": [{"job_id": "J1"}], "total": "1"}, 0, None),  # non-integer total = unknown
    ({"jobs": [{"job_id": "J1"}], "total": None}, 0, None),
    ({"jobs": [{"name": "no id"}], "total": 1}, 1, "page item without job_id"),
    ({"jobs": "J1,J2", "total": 2}, 1, "page field 'jobs' must be a list"),
    ([{"job_id": "J1"}], 1, "page response must be a JSON object"),
    ({"jobs": [{"job_id": "J1"}], "total": 5}, 1, "pagination collected 1 of 5 unique jobs"),
    ({"jobs": ["J1", "J2"], "total": 2}, 1, "page item without job_id"),
], ids=["total-string", "total-null", "item-without-id", "jobs-string", "page-list", "short",
        "items-strings"])
def test_wrongly_typed_pages(page, code, message):
    result = run_against({JOBS: json_reply(page)}, "jobs", "get", "-g", "G1", "--all")
    assert result.code == code, result.err
    if message:
        assert message in result.err
    no_traceback(result)


@pytest.mark.parametrize("ident", [["J1"], {"a": 1}], ids=["list", "dict"])
def test_unhashable_ids_in_a_page(ident):
    result = run_against({JOBS: json_reply({"jobs": [{"job_id": ident}], "total": 1})},
                         "jobs", "get", "-g", "G1", "--all")
    assert result.code == 1, result.err
    no_traceback(result)


def test_a_backend_that_ignores_skip_does_not_hang_unique_scan():
    calls = []

    def fetch(skip: int, limit: int) -> Any:
        calls.append(skip)
        if len(calls) > 500:
            raise RuntimeError("runaway pagination")
        return {"jobs": [{"job_id": f"J{i}"} for i in range(limit)]}  # same page, whatever skip

    with pytest.raises(PaginationError):
        unique_scan(fetch, page_size=5, collection="jobs", id_keys=["job_id"])


def _export_routes(export: Reply, job_ids: Any = None) -> dict[str, Any]:
    def create(seen):
        host = seen.headers["host"]
        return json_reply({"status": "succeeded", "download_url": f"http://{host}/export.jsonl.gz"})

    return {
        "/openapi/groups/G1/trace-trajectory/download": create,
        "/export.jsonl.gz": export,
        "/openapi/groups/G1/job-ids": json_reply({"job_ids": ["J1"] if job_ids is None else job_ids}),
    }


@pytest.mark.parametrize(("export", "job_ids", "message"), [
    (b'{"job_id": "J1"}\nnot json\n', None, "invalid trace trajectory JSON at line 2"),
    (b'{"job_id": "J1"}\n[1, 2]\n', None, "trace trajectory row at line 2 is not an object"),
    (b'{"job_id": "J1"}\n{"job_id": 5}\n', None, "trace trajectory row is missing job_id"),
    (b'{"job_id": "J1"}\n', "J1", "job_ids as a list"),
    (b'{"job_id": "J1"}\n', [1, 2], "job_ids as a list"),
    (b'{"job_id": "J1"}\n', [""], "job_ids as a list"),
], ids=["bad-json", "not-object", "id-not-string", "ids-string", "ids-ints", "ids-empty"])
def test_broken_group_exports(tmp_path, export, job_ids, message):
    result = run_against(_export_routes(Reply(200, export, "application/octet-stream"), job_ids),
                         "trajectory", "download", "-g", "G1", "-o", str(tmp_path))
    assert result.code == 1, result.err
    assert message in result.err
    no_traceback(result)
    assert not (tmp_path / "G1" / "trajectory.json").exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize("export", [
    b"\x1f\x8b" + b"garbage" * 10,
    gzip.compress(b'{"job_id": "J1"}\n' * 50, mtime=0)[:-12],
    b'{"job_id": "J1", "text": "\xff\xfe"}\n',
], ids=["gzip-garbage", "gzip-cut", "not-utf8"])
def test_corrupt_export_files_fail_the_group_cleanly(tmp_path, export):
    result = run_against(_export_routes(Reply(200, export, "application/octet-stream")),
                         "trajectory", "download", "-g", "G1", "-o", str(tmp_path))
    assert result.code == 1, result.err
    assert "[error]   - G1: " in result.err
    no_traceback(result)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(("task", "message"), [
    (None, "download task response is empty"),
    ([1], "must be a JSON object"),
    ({"job_ids": "J1"}, "missing job_ids"),
    ({"job_ids": [1, "J2"]}, "non-string job id"),
    ({"job_ids": [" ", ""]}, "contains no job ids"),
    ({}, "missing job_ids"),
], ids=["null", "list", "ids-string", "ids-int", "ids-blank", "no-ids"])
def test_broken_download_tasks(tmp_path, task, message):
    result = run_against({"/openapi/trajectory-download-tasks/T1": json_reply(task)},
                         "trajectory", "download", "--task-id", "T1", "-o", str(tmp_path))
    assert result.code == 1, result.err
    assert message in result.err
    no_traceback(result)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("listing", "code"), [
    ({"artifacts": "x"}, 1),
    ({"artifacts": None}, 0),
    ({"artifacts": [None, 5, "x"]}, 1),
    ({"artifacts": [{"name": 5, "url": ""}]}, 1),
    ({"artifacts": [{"name": {"a": 1}, "error_code": "no_artifact"}]}, 0),
    ([], 0),
], ids=["string", "null", "scalars", "name-int", "name-dict", "list"])
def test_broken_artifact_listings(tmp_path, listing, code):
    result = run_against({"/openapi/jobs/J1/artifacts": json_reply(listing)},
                         "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == code, result.err
    no_traceback(result)
    assert leftovers(tmp_path) == []


# --------------------------------------------------------- many ids
def test_100000_ids_on_stdin_stop_at_the_first_401():
    ids = "\n".join(f"J{i:06d}" for i in range(100_000)) + "\n"
    with start_scripted({"*": json_reply({"error": "invalid api key"}, 401)}) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", KEY, "report", "get", "-j", "-",
                               stdin=ids)
        sent = len(srv.seen)
    assert result.code == 3, result.err[-500:]
    assert "[error] authentication error: authentication failed (HTTP 401)" in result.err
    assert sent < 200  # cancelled, not drained
    assert result.out == ""
    no_traceback(result)


def test_many_unknown_ids_are_each_named(monkeypatch):
    with start_sandbox(seed=1, groups=1, jobs_per_group=3, tasks_per_group=1, api_key=KEY) as sb:
        ids = [f"NOPE{i}" for i in range(600)] + ["G1-J0001"]
        result = run_inprocess("--host", sb.url, "--api-key", KEY, "--retry", "0", "--concurrency",
                               "16", "-q", "report", "get", "-j", "-", stdin=" ".join(ids * 2))
    assert result.code == 1
    assert result.failed == [f"NOPE{i}" for i in range(600)]  # input order, de-duplicated
    assert json.loads(result.out)[0]["job_id"] == "G1-J0001"
    no_traceback(result)


def test_100000_ids_parse_quickly_and_exactly():
    import io

    tokens = [f"J{i}" for i in range(100_000)]
    text = "\n".join(tokens + tokens[:1000]) + "\n\t  "
    started = time.perf_counter()
    out = expand_ids(["A,B", "-", "B, ,C"], stdin=io.StringIO(text))
    assert out == ["A", "B", *tokens, "C"]
    assert time.perf_counter() - started < 30  # linear, not quadratic (a generous ceiling)


# ------------------------------------------------------------ fuzz
json_leaf = st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats(allow_nan=True) | st.text(max_size=8)
json_value = st.recursive(json_leaf, lambda c: st.lists(c, max_size=4) | st.dictionaries(
    st.sampled_from(["job_id", "jobId", "id", "total", "jobs", "items", "created_at", "status",
                     "name", "x"]) | st.text(max_size=4), c, max_size=5), max_leaves=12)
ident = st.one_of(st.text(max_size=6), st.integers(0, 20), st.none(), st.lists(st.text(max_size=2), max_size=2))
item = st.one_of(json_value, st.fixed_dictionaries({"job_id": ident}, optional={
    "created_at": st.sampled_from(["t1", "t2", None]), "x": json_value}))
page_body = st.one_of(json_value, st.fixed_dictionaries(
    {"jobs": st.one_of(st.lists(item, max_size=6), json_value)},
    optional={"total": st.one_of(st.integers(-2, 12), st.text(max_size=3), st.none(), st.floats())}))

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _bounded(bodies: list[Any]):
    """A fetch over a finite list of pages; afterwards an empty last page (no runaway loops)."""
    calls = []

    def fetch(skip: int, limit: int) -> Any:
        calls.append((skip, limit))
        if len(calls) > 400:
            raise AssertionError(f"runaway pagination: {calls[:10]}...")
        return bodies[len(calls) - 1] if len(calls) <= len(bodies) else {"jobs": [], "total": 0}

    return fetch


def _hashable_ids(bodies: list[Any]) -> bool:
    for body in bodies:
        if isinstance(body, dict) and isinstance(body.get("jobs"), list):
            for entry in body["jobs"]:
                if isinstance(entry, dict) and isinstance(entry.get("job_id"), (list, dict)):
                    return False
    return True


@FUZZ
@given(st.lists(page_body, min_size=1, max_size=5), st.integers(1, 4), st.sampled_from([None, "created_at"]))
def test_fuzz_pagination_modes_raise_only_pagination_errors(bodies, size, tie):
    # Unhashable ids are a known bug (test_unhashable_ids_in_a_page); keep the fuzz on the rest.
    if not _hashable_ids(bodies):
        return
    for mode, kwargs in ((unique_scan, {"tie_key": tie, "keep_first": ["x"]}), (task_scan, {})):
        try:
            scan = mode(_bounded(bodies), page_size=size, collection="jobs", id_keys=["job_id"], **kwargs)
        except PaginationError:
            continue
        assert isinstance(scan.items, list) and isinstance(scan.total, int)
    assert single_page(_bounded(bodies), page=2, page_size=size) is bodies[0]  # as fetched (a NaN body is not equal to itself)


@FUZZ
@given(st.lists(st.one_of(json_value, st.text(max_size=30), st.binary(max_size=30)), max_size=6),
       st.booleans(), st.lists(st.text(min_size=1, max_size=4), max_size=3))
def test_fuzz_export_rows_raise_only_step_errors(tmp_path_factory, lines, compress, ids):
    raw = b""
    for line in lines:
        if isinstance(line, bytes):
            chunk = line
        elif isinstance(line, str):
            chunk = line.encode("utf-8")
        else:
            chunk = json.dumps(line).encode("utf-8")
        raw += chunk.replace(b"\n", b" ") + b"\n"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return  # non-UTF-8 exports are a known bug (test_corrupt_export_files_fail_the_group_cleanly)
    work = tmp_path_factory.mktemp("rows", numbered=True)
    export = work / "export.bin"
    export.write_bytes(gzip.compress(raw) if compress else raw)
    index = trace_export.RowIndex(str(work), list(dict.fromkeys(ids)), pretty=True)
    try:
        index.load(str(export))
        out = io.StringIO()
        trace_export.write_document(out, "G", index, pretty=True)
    except StepError:
        return
    finally:
        index.close()
    doc = json.loads(out.getvalue())
    assert out.getvalue() == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert doc["group_id"] == "G" and [t["job_id"] for t in doc["trajectories"]][:len(set(ids))] == list(
        dict.fromkeys(ids))


@FUZZ
@given(json_value)
def test_fuzz_export_status_and_task_payloads(body):
    waiter = load_model().action("trajectory", "get").dimensions["group"].parts["trajectory"].wait
    assert waiter is not None
    for acceptor in waiter.acceptors:  # an acceptor decides on any answer, or raises nothing
        assert isinstance(acceptor.matches(body, None), bool)
    if isinstance(body, dict):
        wait = Backoff(waiter.delay, {}, rng=lambda: 0.5).next(body, True)
        assert waiter.delay.low <= wait <= (waiter.delay.high or 0) and not math.isnan(wait)
    try:
        jobs = task_job_ids(body, "T1")
    except StepError:
        return
    assert jobs and all(isinstance(j, str) and j and j == j.strip() for j in jobs)
    assert len(set(jobs)) == len(jobs)


export_body = st.one_of(json_value, st.fixed_dictionaries({
    "status": st.sampled_from(["succeeded", "running", "waiting_for_data", "SUCCEEDED", "", "odd", 3]),
}, optional={"download_url": st.one_of(st.text(max_size=10), st.integers(), st.none()),
             "download_job_name": st.one_of(st.text(max_size=5), st.none(), st.integers()),
             "retry_after_seconds": st.one_of(st.floats(), st.text(max_size=3), st.integers(-5, 5))}))


@FUZZ
@given(st.lists(export_body, min_size=1, max_size=6))
def test_fuzz_export_flow_raises_only_step_errors(bodies):
    waiter = load_model().action("trajectory", "get").dimensions["group"].parts["trajectory"].wait
    assert waiter is not None

    def answer(current: Any, variables: dict[str, Any], check: Any) -> Any:
        check()
        if not bodies:
            raise StepError("no more answers")
        return bodies.pop(0)

    try:
        url = Polling(waiter, answer, sleep=lambda _s: None, log=Log(quiet=True), timeout=60, options={},
                      render=lambda text, variables: text).run()
    except StepError:
        return
    assert isinstance(url, str) and url == url.strip() and url


@FUZZ
@given(json_value, st.sampled_from(["job", "group"]))
def test_fuzz_artifact_listings_raise_only_step_errors(body, mode):
    from benchloop.engine.items import select

    part = load_model().action("artifacts", "download").dimensions[mode].parts["artifacts"]
    ctx = Context({"job": "J1", "group": "G1" if mode == "group" else None})
    try:
        entries = select(part.items, body, ctx, {"include": "*.tgz", "exclude": None})
    except StepError:
        return
    assert all(isinstance(e, dict) and e["job_id"] == "J1" for e in entries)
    assert mode != "group" or all(e["group_id"] == "G1" for e in entries)
    assert all(str(e.get("name") or "").endswith(".tgz") for e in entries)


@FUZZ
@given(st.one_of(st.none(), st.text(max_size=12), st.sampled_from(["0", "1.5", "-3", "1e9", "nan", "inf"])))
def test_fuzz_retry_after_is_bounded(value):
    wait = retry.retry_after(value)
    assert wait is None or (0.0 <= wait <= retry.MAX_RETRY_AFTER)


@FUZZ
@given(st.text(max_size=40), st.text(max_size=40))
def test_fuzz_origin_checks_never_raise(a, b):
    httpx = urls.import_httpx()
    home = urls.origin(httpx.URL("http://127.0.0.1:8080"))
    for text in (a, b, "http://" + a, "https://" + b):
        try:
            url = httpx.URL(text)
        except httpx.InvalidURL:
            continue  # never sent: the caller fails that one request
        urls.carries_key(url, home)
        urls.is_login_url(url, ("login.example",), home)


FILE_TEMPLATES = sorted({
    part["file"]
    for resource in load_spec()["resources"].values()
    for action in resource["actions"].values()
    for dim in (action.get("dimensions") or {}).values()
    for part in (dim.get("parts") or {}).values()
    if isinstance(part, dict) and part.get("file")
})


@FUZZ
@given(st.sampled_from(FILE_TEMPLATES), st.text(max_size=300), st.text(max_size=300))
def test_fuzz_path_templates_stay_under_the_root(tmp_path_factory, template, one, two):
    root = str(tmp_path_factory.mktemp("tmpl", numbered=True))
    ctx = Context({"group": one, "job": two, "task": one})
    path = join_under(root, render_file(template, ctx))
    rel = os.path.relpath(path, root)
    assert not os.path.isabs(rel)
    for part in rel.split(os.sep):  # '..0_report.md' is a name under the root; '..' alone is not
        assert part not in ("", ".", "..") and len(part.encode("utf-8")) <= 255
        assert "\x00" not in part and "\\" not in part


@FUZZ
@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_fuzz_safe_component_is_injective_on_short_names(a, b):
    if a != b:
        assert safe_component(a) != safe_component(b)


def test_fuzz_suite_reports_only_engine_error_types():
    """The error types the fuzz tests allow are all per-id failures of the engine."""
    assert issubclass(StepError, BenchloopError)
    assert not issubclass(PaginationError, BenchloopError)  # the engine wraps it in StepError


@pytest.mark.parametrize("pretty", [True, False])
def test_export_job_order_repeats_unknown_jobs_and_lone_surrogates(tmp_path, pretty):
    # Listed jobs in their order (the first of a repeat counts, a job without rows gets []),
    # then jobs only rows name, by their first row.  A listed id with a lone surrogate (the
    # index keeps ids as bytes) comes back as it went in.
    odd = "J\ud800x"
    rows = [{"job_id": "C", "n": 1}, {"job_id": "A", "n": 2}, {"job_id": "é", "n": 3},
            {"job_id": "D", "n": 4}, {"job_id": "C", "n": 5}]
    export = tmp_path / "export.bin"
    export.write_text("".join(json.dumps(row) + "\n" for row in rows))
    index = trace_export.RowIndex(str(tmp_path), ["B", odd, "é", "A", "B"], pretty=pretty)
    try:
        index.load(str(export))
        out = io.StringIO()
        trace_export.write_document(out, "G", index, pretty=pretty)
    finally:
        index.close()
    expected = {"group_id": "G", "trajectories": [
        {"job_id": "B", "trajectory": []},
        {"job_id": odd, "trajectory": []},
        {"job_id": "é", "trajectory": [rows[2]]},
        {"job_id": "A", "trajectory": [rows[1]]},
        {"job_id": "C", "trajectory": [rows[0], rows[4]]},
        {"job_id": "D", "trajectory": [rows[3]]},
    ]}
    text = json.dumps(expected, indent=2 if pretty else None, ensure_ascii=False,
                      separators=None if pretty else (",", ":")) + "\n"
    assert out.getvalue() == text.replace("\ud800", "\\ud800")  # written as its escape (UTF-8 has none)
    assert json.loads(out.getvalue()) == expected


def test_an_index_that_cannot_be_made_fails_the_group_with_its_directory(tmp_path, monkeypatch):
    full = tmp_path / "full"
    full.mkdir()
    with pytest.raises(StepError, match=f"cannot index the trace export in {tmp_path / 'gone'}"):
        trace_export.RowIndex(str(tmp_path / "gone"), ["J1"])
    # A full disk while the job ids go in: the connection is closed, the error names the directory.
    ids = (f"J{n:06d}" + "x" * 200 for n in range(100_000))
    real_connect = trace_export.sqlite3.connect
    made = []

    def small_connect(path):
        db = real_connect(path)
        db.execute("PRAGMA max_page_count = 8")
        made.append(db)
        return db

    monkeypatch.setattr(trace_export.sqlite3, "connect", small_connect)
    with pytest.raises(StepError, match="cannot index the trace export in .*full.*full"):
        trace_export.RowIndex(str(full), ids)
    with pytest.raises(Exception, match="closed"):
        made[0].execute("SELECT 1")
