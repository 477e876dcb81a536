"""Unit tests of the engine, beside the end-to-end ones: the pipeline by part kind, the outcomes
and exit codes, the worker pool, the output formats.

The pipeline runs with an in-memory backend in place of the HTTP client (the engine's own
seam, ``Runtime.http_factory``; nothing of httpx is replaced), so a failure here points at the
engine, not at the transport.  The part kinds run over a small table of their own
(``tests/fixtures/small_table.yaml``); the step, combine and format tests use the shipped
table's own steps and combines.
"""

from __future__ import annotations

import io
import json
import threading
import time
from typing import Any

import pytest
from support import TESTS

from benchloop.base.errors import ApiError, AuthError, NetworkError, UsageError
from benchloop.base.log import Log
from benchloop.engine import formats
from benchloop.engine.outcomes import Failure, MultiFailure, Outcome, as_error, exit_code
from benchloop.engine.pipeline import Pipeline
from benchloop.engine.runtime import Runtime
from benchloop.engine.workers import run_pool
from benchloop.table.build import build_model
from benchloop.table.compiler import compile_spec
from benchloop.table.load import load_model, load_spec


class Backend:
    """Answers JSON requests from a table of ``path -> body`` (a callable gets the query)."""

    def __init__(self, answers: dict[str, Any]):
        self.answers = answers
        self.requests: list[tuple[str, str, dict | None, Any]] = []
        self.cancelled = threading.Event()
        self.api_key = "k"
        self.lock = threading.Lock()

    def request_json(self, method: str, path: str, params: dict | None = None, body: Any = None,
                     headers: dict | None = None, expect: Any = None) -> Any:
        with self.lock:
            self.requests.append((method, path, params, body))
        answer = self.answers.get(path)
        if answer is None:
            raise ApiError(404, {"detail": "not found"})
        if isinstance(answer, Exception):
            raise answer
        return answer(params or {}) if callable(answer) else answer

    def sleep(self, seconds: float) -> None:
        pass

    def close(self) -> None:
        pass


# The parts of the engine run over a small table of their own (tests/fixtures/small_table.yaml),
# not today's resources: a change to spec/benchloop.yaml changes nothing here.
FIXTURE = TESTS / "fixtures" / "small_table.yaml"
SMALL = build_model(compile_spec(FIXTURE.read_bytes(), FIXTURE))


def runtime(backend: Backend, tmp_path, pretty: bool = False, spec=None) -> Runtime:
    return Runtime(spec if spec is not None else load_model(), Log(quiet=True, stream=io.StringIO()), pretty, 4,
                   str(tmp_path), lambda _pool: backend, io.StringIO())


def pipeline(backend: Backend, tmp_path, resource: str, action: str, dim: str, spec=None, **opts: Any) -> Pipeline:
    spec = spec if spec is not None else load_model()
    spec_action = spec.action(resource, action)
    return Pipeline(runtime(backend, tmp_path, spec=spec), spec_action, dim, {**spec_action.defaults, **opts})


def small(backend: Backend, tmp_path, resource: str, action: str, dim: str, **opts: Any) -> Pipeline:
    """A pipeline of an action of the fixture table."""
    return pipeline(backend, tmp_path, resource, action, dim, spec=SMALL, **opts)


# ------------------------------------------------------------------- parts
def test_a_request_part_renders_its_endpoint_and_becomes_the_element(tmp_path):
    backend = Backend({"/notes/J1": {"note": "# hi"}})
    assert small(backend, tmp_path, "notes", "get", "job").process("J1") == {"note": "# hi"}
    assert backend.requests == [("GET", "/notes/J1", None, None)]


def test_a_paged_part_walks_every_page_and_applies_its_transform(tmp_path):
    items = [{"job_id": f"J{n}", "created_at": n} for n in range(5)]

    def page(query: dict) -> dict:
        skip, limit = int(query["skip"]), int(query["limit"])
        return {"total": len(items), "items": items[skip:skip + limit]}

    backend = Backend({"/items": page})
    element = small(backend, tmp_path, "items", "get", "group", all=True, page_size=2).process("G1")
    assert element == {"group_id": "G1", "total": 5, "items": items}
    assert {r[2]["limit"] for r in backend.requests} == {2}
    assert {r[2]["group_id"] for r in backend.requests} == {"G1"}


def test_a_single_page_is_one_request_at_the_page_offset(tmp_path):
    backend = Backend({"/items": lambda q: {"total": 9, "items": [{"job_id": "J", "skip": q["skip"]}]}})
    element = small(backend, tmp_path, "items", "get", "group", page=3, page_size=4).process("G1")
    assert element["items"] == [{"job_id": "J", "skip": 8}] and len(backend.requests) == 1


def test_a_fan_out_writes_one_file_per_enumerated_item_and_labels_failures(tmp_path):
    backend = Backend({
        "/groups/G1/note": {"note": "summary"},
        "/items": {"total": 2, "items": [{"job_id": "J1", "created_at": 1}, {"job_id": "J2", "created_at": 2}]},
        "/notes/J1": {"note": "one"},
        "/notes/J2": NetworkError("connection reset"),
    })
    with pytest.raises(Exception) as caught:
        small(backend, tmp_path, "notes", "download", "group").process("G1")
    assert "J2: network: connection reset" in str(caught.value)
    assert json.loads((tmp_path / "G1_note.json").read_text()) == {"note": "summary"}
    assert json.loads((tmp_path / "G1" / "J1_note.json").read_text()) == {"note": "one"}
    assert not (tmp_path / "G1" / "J2_note.json").exists()


def test_skip_existing_is_decided_in_one_place(tmp_path):
    (tmp_path / "J1_note.json").write_text("kept")
    backend = Backend({})
    pipe = small(backend, tmp_path, "notes", "download", "job", skip_existing=True)
    assert pipe.process("J1").endswith("J1_note.json")
    assert backend.requests == [] and (tmp_path / "J1_note.json").read_text() == "kept"


def test_a_step_part_gets_a_narrow_call_with_its_typed_values(tmp_path, monkeypatch):
    from benchloop.engine import steps

    seen = {}

    def fake_behavior_run(call):
        seen.update(ident=call.ident, dimension=call.dimension, create=call.params.endpoint("create").name)
        assert not hasattr(call, "part") and not hasattr(call, "ctx")  # only what steps use
        return call.request("steps")

    monkeypatch.setitem(steps.STEPS, "behavior_run", fake_behavior_run)
    backend = Backend({"/openapi/behavior/steps": {"steps": []}})
    assert pipeline(backend, tmp_path, "brm", "run", "group").process("G1") == {"steps": []}
    assert seen == {"ident": "G1", "dimension": "group", "create": "behavior_create"}
    assert backend.requests == [("GET", "/openapi/behavior/steps", {"group_id": "G1"}, None)]


def test_an_element_composed_of_selected_parts(tmp_path):
    backend = Backend({"/groups/G1/summary": {"pass_rate": 0.5}, "/groups/G1/note": {"note": "n"}})
    element = small(backend, tmp_path, "notes", "get", "group", scope="summary").process("G1")
    assert element == {"group_id": "G1", "summary": {"pass_rate": 0.5}}
    assert [r[1] for r in backend.requests] == ["/groups/G1/summary"]
    both = small(backend, tmp_path, "notes", "get", "group").process("G1")  # scope all: both, in order
    assert both == {"group_id": "G1", "note": {"note": "n"}, "summary": {"pass_rate": 0.5}}


# ---------------------------------------------------------------- outcomes
def test_exit_codes_follow_from_the_outcomes():
    ok, bad = Outcome("a", value=1), Outcome("b", failures=[Failure("b", "boom", False)])
    net = Outcome("c", failures=[Failure("c", "network: reset", True)])
    assert exit_code([ok]) == 0
    assert exit_code([ok, bad]) == 1
    assert exit_code([net]) == 4 and exit_code([ok, net]) == 1
    assert exit_code([Outcome("d", value=1, failures=[Failure("d:x", "reset", True)])]) == 1  # partly done


def test_any_exception_of_one_id_becomes_its_failure_but_usage_errors_stay():
    assert str(as_error(KeyError("x"))) == "KeyError: 'x'"
    assert "nested too deeply" in str(as_error(RecursionError()))
    assert str(as_error(PermissionError(13, "Permission denied", "/x"))) == "cannot write /x: permission denied"
    with pytest.raises(UsageError):
        as_error(UsageError("bad flag"))


# ------------------------------------------------------------------ workers
def test_the_pool_keeps_input_order_and_bounds_concurrency():
    running, peak, lock = [0], [0], threading.Lock()

    def work(ident: str) -> str:
        from benchloop.transport.slots import current_slots

        gate = current_slots()
        if gate is not None:
            gate.acquire()
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        if gate is not None:
            gate.release()
        return ident.upper()

    ids = [f"j{n}" for n in range(12)]
    outcomes = run_pool(ids, work, 3, lambda: None)
    assert [o.failures for o in outcomes] == [[]] * len(ids)
    assert [o.value for o in outcomes] == [i.upper() for i in ids]
    assert 1 <= peak[0] <= 3


def test_a_401_cancels_the_rest_and_is_raised_after_the_others_ended():
    cancelled = threading.Event()

    def work(ident: str) -> str:
        if ident == "j0":
            raise AuthError("authentication failed (HTTP 401)")
        cancelled.wait(2)
        return ident

    with pytest.raises(AuthError):
        run_pool(["j0", "j1", "j2"], work, 2, cancelled.set)
    assert cancelled.is_set()


def test_a_multi_failure_keeps_the_partial_value():
    def work(ident: str) -> Any:
        raise MultiFailure([Failure(f"{ident}:a", "gone", False)], value=["kept"])

    (outcome,) = run_pool(["x"], work, 1, lambda: None)
    assert outcome.value == ["kept"] and outcome.failures[0].ident == "x:a"


# ------------------------------------------------------------------ formats
def test_the_output_choices_are_the_registered_formats():
    output = load_model().options["output"]
    assert set(output.choices) == set(formats.FORMATS)
    assert sorted(name for name, f in formats.FORMATS.items() if f.streams) == ["jsonl", "text"]


@pytest.mark.parametrize("name", sorted(formats.FORMATS))
def test_every_format_renders_a_result(name):
    if name == "parquet":  # binary: written to the bytes under the text stream
        pytest.importorskip("duckdb")
        raw = io.BytesIO()
        text = io.TextIOWrapper(raw, encoding="utf-8")
        formats.emit(text, [{"job_id": "J1", "status": "failed"}], name, pretty=False)
        assert raw.getvalue().startswith(b"PAR1") and b"J1" in raw.getvalue()
        return
    out = io.StringIO()
    formats.emit(out, [{"job_id": "J1", "status": "failed"}], name, pretty=False)
    assert "J1" in out.getvalue()
    if name in ("json", "jsonl"):
        assert json.loads(out.getvalue().splitlines()[0]) in ([{"job_id": "J1", "status": "failed"}],
                                                             {"job_id": "J1", "status": "failed"})


def test_csv_is_rfc4180_with_the_rows_and_columns_of_the_table():
    import csv as csvlib

    out = io.StringIO()
    pages = [{"group_id": "G1", "jobs": [{"job_id": "J1", "score": 0.5}, {"job_id": "J2", "note": "a,b\n\"c\""}]}]
    formats.emit(out, pages, "csv", pretty=False)
    text = out.getvalue()
    assert text.endswith("\r\n")  # RFC 4180 line ends
    assert list(csvlib.reader(io.StringIO(text))) == [
        ["group_id", "job_id", "score", "note"], ["G1", "J1", "0.5", ""], ["G1", "J2", "", "a,b\n\"c\""]]


def test_csv_cells_cannot_run_as_formulas_and_keep_their_types():
    from benchloop.engine.formats.csvdoc import cell

    for text in ("=HYPERLINK(\"x\")", "+1", "-1", "@SUM(A1)", "\tx", "\rx"):
        assert cell(text) == "'" + text
    assert (cell(-1), cell(-0.5), cell(2), cell(None), cell(True), cell(False)) == ("-1", "-0.5", "2", "", "true",
                                                                                 "false")
    assert cell({"a": [1, "x"]}) == '{"a":[1,"x"]}' and cell([1]) == "[1]"
    assert cell("a\x1b[31mb\u202e") == "a\\x1b[31mb\\u202e" and cell("two\nlines") == "two\nlines"


def test_markdown_cells_cannot_break_the_table_or_become_markup():
    out = io.StringIO()
    formats.emit(out, [{"name": "a|b *c* <img> [x](y)\nz", "n": 12.5}, {"name": "`q`", "n": -1}], "markdown",
                 pretty=False)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["| name | n |", "| --- | ---: |"]
    assert lines[2] == "| a\\|b \\*c\\* &lt;img> \\[x\\](y) z | 12.5 |"
    assert lines[3] == "| \\`q\\` | -1 |"


# ------------------------------------------------------------------ combines
def paged(items: list[dict], key: str):
    def page(query: dict) -> dict:
        skip, limit = int(query["skip"]), int(query["limit"])
        return {"total": len(items), key: items[skip:skip + limit]}
    return page


def test_the_job_rows_step_scans_two_enumerations_by_pages_and_joins_them(tmp_path):
    jobs = [{"job_id": f"J{n}", "created_at": 100 - n, "instance_id": f"i{n % 3}", "status": "succeeded"}
            for n in range(2500)]
    metrics = [{"job_id": f"J{n}", "metrics": [{"type": "eval", "data": {"task_score": n % 2}}],
                "run_metrics": [{"duration_s": str(n)}]} for n in range(2500) if n != 7]
    backend = Backend({"/openapi/jobs": paged(jobs, "jobs"), "/openapi/metrics": paged(metrics, "metrics")})
    rows = pipeline(backend, tmp_path, "jobs", "table", "group", fields=["job_id,instance", "score",
                                                                         "pass,duration_s"]).process("G1")
    assert len(rows) == 2500 and rows[1] == {"job_id": "J1", "instance": "i1", "score": 1.0, "pass": True,
                                             "duration_s": 1}
    assert rows[7] == {"job_id": "J7", "instance": "i1", "score": None, "pass": None, "duration_s": None}
    # whole pages of 1,000 of both listings (the job list steps back one item over ties on
    # created_at), never one request per job
    assert sorted((r[1], r[2]["skip"], r[2]["limit"]) for r in backend.requests) == [
        ("/openapi/jobs", 0, 1000), ("/openapi/jobs", 999, 1000), ("/openapi/jobs", 1998, 1000),
        ("/openapi/metrics", 0, 1000), ("/openapi/metrics", 1000, 1000), ("/openapi/metrics", 2000, 1000)]


def test_an_unknown_field_is_a_usage_error_before_any_request(tmp_path):
    backend = Backend({})
    with pytest.raises(UsageError, match="--fields: unknown column 'nope'; the columns are: group_id, job_id"):
        pipeline(backend, tmp_path, "jobs", "table", "group", fields=["job_id,nope"]).process("G1")
    assert backend.requests == []


def test_a_combine_gets_every_value_and_its_renderings_and_files_are_used(tmp_path, monkeypatch):
    from benchloop.engine import combining
    from benchloop.engine.combinecall import Combined
    from benchloop.engine.combines import COMBINES

    seen = {}

    def fake(call):
        seen.update(ids=call.ids, values=call.values, failed=call.failed, costs=call.params.texts("costs"))
        return Combined([{"n": len(call.values)}], {"table": lambda: "summary\n"},
                        {str(tmp_path / "r.html"): lambda: "<p>page</p>", str(tmp_path): lambda: "a directory"})

    monkeypatch.setitem(COMBINES, "compare", fake)
    action = load_model().action("compare", "compare")
    outcomes = [Outcome("A", value=[1]), Outcome("B", failures=[Failure("B", "gone", False)]), Outcome("C", value=[2])]
    log = Log(quiet=True, stream=io.StringIO())
    result = combining.combine_outcomes(action, action.defaults, outcomes, log)
    # The costs the table's YAML gives the combine (read from the compiled table, not the model).
    costs = tuple(load_spec()["resources"]["compare"]["actions"]["compare"]["combine"]["with"]["costs"])
    assert costs and seen == {"ids": ["A", "B", "C"], "values": [("A", [1]), ("C", [2])], "failed": ["B"],
                              "costs": costs}
    out = io.StringIO()
    combining.print_combined(out, log, result, "table", False, None)
    assert out.getvalue() == "summary\n"  # its own rendering
    out = io.StringIO()
    combining.print_combined(out, log, result, "table", False, formats.compile_query("[0]"))
    assert out.getvalue().split() == ["n", "-", "2"]  # reshaped by --query: the generic table
    failed = combining.write_files(log, result)
    assert (tmp_path / "r.html").read_text() == "<p>page</p>"
    assert failed == [(str(tmp_path), f"cannot write {tmp_path}: it is a directory")]


def test_concat_flattens_every_ids_rows_in_order():
    from benchloop.engine import combining

    action = load_model().action("jobs", "table")
    outcomes = [Outcome("G2", value=[{"r": 1}, {"r": 2}]), Outcome("G9", failures=[Failure("G9", "x", False)]),
                Outcome("G1", value=[{"r": 3}])]
    result = combining.combine_outcomes(action, action.defaults, outcomes, Log(quiet=True, stream=io.StringIO()))
    assert result.elements == [{"r": 1}, {"r": 2}, {"r": 3}] and not result.renderings and not result.files


# ------------------------------------------------------- the identity of an answer (render.py)
def _identity(path: str, want: Any) -> Any:
    from types import SimpleNamespace

    from benchloop.engine.render import identity_check

    endpoint = SimpleNamespace(response=SimpleNamespace(identity=[(tuple(path.split(".")), "group")]))
    return identity_check(endpoint, SimpleNamespace(lookup=lambda _var: want))  # type: ignore[arg-type]


def test_a_page_naming_its_group_on_every_job_passes_and_one_other_group_fails():
    from benchloop.base.errors import IdentityMismatch, IdentityUnverified

    check = _identity("jobs.*.group_id", "G")
    page = {"jobs": [{"job_id": f"J{i}", "group_id": "G"} for i in range(1000)], "total": 1000}
    check(page, True)
    _identity("jobs.*.group_id", 5)({"jobs": [{"group_id": 5}, {"group_id": "5"}]}, True)  # the same text
    page["jobs"][500]["group_id"] = "OTHER"
    with pytest.raises(IdentityMismatch, match="names 'OTHER'"):
        check(page, False)
    page["jobs"][500]["group_id"] = None  # a job without it: accepted on a new connection only
    check(page, False)
    with pytest.raises(IdentityUnverified):
        check(page, True)
    with pytest.raises(IdentityUnverified):
        check({"jobs": []}, True)  # nothing named on a used connection
    check({"jobs": "not a list", "x": [{"group_id": "OTHER"}]}, False)
    with pytest.raises(IdentityMismatch):
        check({"jobs": [{"group_id": ["G"]}]}, False)  # a list is not the id's text
