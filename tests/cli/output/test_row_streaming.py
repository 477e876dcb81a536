"""Rows written as their pages arrive (``formats.streamed``, ``pagination.LazyScan``).

``jobs get --all`` and ``jobs table`` print each row as its page comes, in every row format:
``json`` keeps the bytes ``json.dumps`` gives of the whole result, ``jsonl`` is one listed item
per line, ``csv``/``table``/``markdown`` choose their columns from the first rows (the whole
output when it is short: the same bytes as before), and a page that fails after rows were
printed ends with an ``[error]`` line and exit 1.  Memory holds about a page.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import time
import tracemalloc
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import run_inprocess

from benchloop.base import jsontext
from benchloop.base.errors import ApiError
from benchloop.engine import formats
from benchloop.engine.formats import streamed
from benchloop.engine.pagination import LazyScan, lazy_scan, unique_scan
from benchloop.sandbox.scripted import json_reply, start_scripted
from benchloop.table.load import load_model


def jobs_get_output():
    return load_model().resources["jobs"].actions["get"].dimensions["group"].output


def make_jobs(n: int, prefix: str = "J") -> list[dict]:
    return [{"job_id": f"{prefix}{i:06d}", "group_id": "G", "created_at": f"2026-01-01T00:00:{i % 60:02d}",
             "status": "failed" if i % 3 else "succeeded", "score": i / 7} for i in range(n)]


def lazy_of(jobs: list[dict], size: int, seen: list[int] | None = None, fail_at: int | None = None) -> LazyScan:
    def fetch(skip: int, limit: int):
        if seen is not None:
            seen.append(skip)
        if fail_at is not None and skip >= fail_at:
            raise ApiError(500, "backend error (HTTP 500)")
        return {"jobs": json.loads(json.dumps(jobs[skip:skip + limit])), "total": len(jobs)}

    return lazy_scan("unique_scan", fetch, page_size=size, collection="jobs", id_keys=["job_id"])


def written(pairs, name: str, pretty: bool = True, output=None) -> tuple[str, list]:
    out, errors = io.StringIO(), []
    streamed.write(out, pairs, name, pretty, output, on_error=lambda ident, exc: errors.append((ident, str(exc))))
    return out.getvalue(), errors


# ------------------------------------------------------------------- json
small_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=60, deadline=None)
@given(items=st.lists(st.dictionaries(st.sampled_from(["job_id", "a", "b"]), small_values, max_size=3),
                      max_size=30),
       extra=st.dictionaries(st.text(max_size=4), small_values, max_size=2), pretty=st.booleans(),
       size=st.integers(1, 7))
def test_json_written_piece_by_piece_is_json_dumps_text(items, extra, pretty, size):
    """For any listing, page size and surrounding keys: the bytes json.dumps gives of the whole
    result (contract 3.1), nested listings and flattened ones alike."""
    jobs = [{**item, "job_id": f"J{n}"} for n, item in enumerate(items)]
    whole = [{"group_id": "G", **{k: v for k, v in extra.items() if k not in ("group_id", "jobs")},
              "jobs": jobs}, {"x": 1}]
    expected = json.dumps(whole, indent=2 if pretty else None, ensure_ascii=False,
                          separators=None if pretty else (",", ":")) + "\n"
    lazy = {**whole[0], "jobs": lazy_of(jobs, size)}
    assert written([("G", lazy), ("H", {"x": 1})], "json", pretty)[0] == expected
    flat = json.dumps(jobs, indent=2 if pretty else None, ensure_ascii=False,
                      separators=None if pretty else (",", ":")) + "\n"
    assert written([("G", lazy_of(jobs, size))], "json", pretty)[0] == flat  # rows as the elements


def test_the_first_pages_rows_are_out_while_the_last_page_is_on_its_way():
    """The last page's answer waits until the first page's rows are on the stream: a printer that
    waited for every page would never get them there (the wait would end at its deadline)."""
    jobs = make_jobs(250)
    out = io.StringIO()
    lines_when_answered = {}

    def fetch(skip, limit):
        deadline = time.monotonic() + 5
        while skip >= 200 and out.getvalue().count("\n") < 100 and time.monotonic() < deadline:
            time.sleep(0.005)
        lines_when_answered[skip] = out.getvalue().count("\n")
        return {"jobs": jobs[skip:skip + limit], "total": len(jobs)}

    lazy = lazy_scan("unique_scan", fetch, page_size=100, collection="jobs", id_keys=["job_id"])
    streamed.write(out, [("G", {"group_id": "G", "total": 250, "jobs": lazy})], "jsonl", False, jobs_get_output())
    assert lines_when_answered[0] == 0
    assert lines_when_answered[200] >= 100  # the first page's rows were written and flushed
    assert out.getvalue().count("\n") == 250


@pytest.mark.parametrize("name", ["csv", "jsonl", "json"])
def test_a_long_listing_s_first_page_is_out_before_the_next_one_is_answered(name):
    """The first page's rows reach the stream as soon as that page is in, never after the next
    page's answer: csv too, which chooses its columns from the first BUFFER rows (a listing that
    says it has more than those needs no row of the next page to know that its output is long)."""
    jobs = make_jobs(streamed.BUFFER * 2)
    out = io.StringIO()
    lines_when_answered = {}

    def fetch(skip, limit):
        deadline = time.monotonic() + 5
        while skip and out.getvalue().count("\n") < streamed.BUFFER and time.monotonic() < deadline:
            time.sleep(0.005)
        lines_when_answered[skip] = out.getvalue().count("\n")
        return {"jobs": jobs[skip:skip + limit], "total": len(jobs)}

    lazy = lazy_scan("unique_scan", fetch, page_size=streamed.BUFFER, collection="jobs", id_keys=["job_id"])
    streamed.write(out, [("G", {"group_id": "G", "total": len(jobs), "jobs": lazy})], name, True, jobs_get_output())
    assert lines_when_answered[streamed.BUFFER] >= streamed.BUFFER  # the first page, written and flushed
    if name == "csv":
        rows = list(csv.DictReader(io.StringIO(out.getvalue())))
        assert len(rows) == len(jobs) and list(rows[0])[-1] == "extra"


def test_a_long_listing_is_printed_in_about_a_page_of_memory():
    jobs = make_jobs(20_000)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        sink = _Sink()
        streamed.write(sink, [("G", {"group_id": "G", "total": 20_000, "jobs": lazy_of(jobs, 500)})], "jsonl",
                       False, jobs_get_output())
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert sink.lines == 20_000
    # a page of 500 jobs decoded is ~0.4 MB (a few in flight); the listing would be ~16 MB
    assert peak < 4_000_000, f"peak {peak / 1e6:.1f} MB"


class _Sink:
    def __init__(self):
        self.lines = 0

    def write(self, text):
        self.lines += text.count("\n")

    def flush(self):
        pass


class _Digest:
    """A text sink that keeps only a digest and the size of what was written."""

    def __init__(self):
        self.sha, self.size = hashlib.sha256(), 0

    def write(self, text):
        self.sha.update(text.encode("utf-8", "surrogatepass"))
        self.size += len(text)

    def flush(self):
        pass


def _peak_of_printing(jobs, pretty, lazy):
    """(traced peak in bytes above the page source, digest sink) of ``jobs`` walked 50 a page
    and printed as one JSON document, as ``jobs get --all`` prints it: read as its rows are
    written (``lazy``), or collected into a list first (what ``--query`` does)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()

        def fetch(skip, limit):  # fresh objects per page, as a decoded response is
            return {"jobs": json.loads(json.dumps(jobs[skip:skip + limit])), "total": len(jobs)}

        sink = _Digest()
        if lazy:
            walk = lazy_scan("unique_scan", fetch, page_size=50, collection="jobs", id_keys=["job_id"])
            streamed.write(sink, [("G", {"group_id": "G", "total": walk.total, "jobs": walk})], "json", pretty)
        else:
            scan = unique_scan(fetch, page_size=50, collection="jobs", id_keys=["job_id"])
            jsontext.write(sink, [{"group_id": "G", "total": scan.total, "jobs": scan.items}], pretty, whole=True)
        return tracemalloc.get_traced_memory()[1] - base, sink
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("pretty", [True, False])
def test_a_20000_job_listing_is_printed_as_one_json_document_in_little_memory(pretty):
    """The whole document's bytes (json.dumps's), in a bounded peak: the rows are written as
    their pages arrive and the ids seen past 2,000 wait on disk."""
    jobs = [{"job_id": f"job-{i:08d}-5f0c2a9e-41d3-4b6e-9a55", "status": "succeeded", "score": i / 7,
             "created_at": f"2026-11-30T12:{i % 60:02d}:00Z", "tags": ["benchmark", f"t{i % 13}"]}
            for i in range(20_000)]
    expected = _Digest()
    expected.write(json.dumps([{"group_id": "G", "total": 20_000, "jobs": jobs}], indent=2 if pretty else None,
                              ensure_ascii=False, separators=None if pretty else (",", ":")) + "\n")
    peak, sink = _peak_of_printing(jobs, pretty, lazy=True)
    assert sink.size == expected.size and sink.sha.hexdigest() == expected.sha.hexdigest()
    assert peak < 3_000_000, f"peak {peak / 1e6:.1f} MB above the page source"
    kept, collected = _peak_of_printing(jobs, pretty, lazy=False)
    assert collected.sha.hexdigest() == expected.sha.hexdigest()
    assert kept > 4 * peak, f"kept in a list: {kept / 1e6:.1f} MB"  # the measure tells the two apart


# ------------------------------------------------------------------- rows
def test_jsonl_is_one_listed_item_per_line_with_the_element_ids():
    jobs = [{"job_id": "J1", "status": "ok"}, {"job_id": "J2", "group_id": "OTHER"}]
    text, _ = written([("G", {"group_id": "G", "total": 2, "jobs": lazy_of(jobs, 1)})], "jsonl", False,
                      jobs_get_output())
    assert [json.loads(line) for line in text.splitlines()] == [
        {"group_id": "G", "job_id": "J1", "status": "ok"}, {"job_id": "J2", "group_id": "OTHER"}]


def test_a_short_table_is_what_it_was():
    """Within the first rows (BUFFER) the flat formats print exactly what the whole-result
    formats print (every existing output of them is unchanged)."""
    jobs = make_jobs(40)
    jobs[5]["new_field"] = "x"
    output = jobs_get_output()
    element = {"group_id": "G", "total": 40, "jobs": jobs}
    for name in ("csv", "table", "markdown", "text", "json"):
        expected = io.StringIO()
        formats.emit(expected, [element], name, True, output=output)
        lazy = {**element, "jobs": lazy_of(jobs, 7)}
        assert written([("G", lazy)], name, True, output)[0] == expected.getvalue(), name


def test_a_long_csv_keeps_its_header_and_puts_later_fields_in_extra():
    jobs = make_jobs(streamed.BUFFER + 300)
    jobs[-1]["surprise"] = {"a": 1}  # a field no row of the first BUFFER has
    text, errors = written([("G", {"group_id": "G", "total": len(jobs), "jobs": lazy_of(jobs, 100)})], "csv",
                           True, jobs_get_output())
    rows = list(csv.DictReader(io.StringIO(text)))
    assert not errors and len(rows) == len(jobs)
    assert list(rows[0])[-1] == "extra" and "surprise" not in rows[0]
    declared = [c for c in jobs_get_output().column_names]
    assert set(declared) <= set(rows[0])  # every declared column, present in the first rows or not
    assert json.loads(rows[-1]["extra"]) == {"surprise.a": 1} and rows[0]["extra"] == ""
    assert [r["job_id"] for r in rows] == [j["job_id"] for j in jobs]


def test_a_page_failing_after_rows_ends_the_listing_with_an_error():
    jobs = make_jobs(30)
    for name in ("jsonl", "csv", "text"):
        text, errors = written([("G", {"group_id": "G", "total": 30, "jobs": lazy_of(jobs, 10, fail_at=20)}),
                                ("H", {"group_id": "H", "total": 1, "jobs": [{"job_id": "H1"}]})],
                               name, False, jobs_get_output())
        assert errors == [("G", "API error 500: backend error (HTTP 500)")], name
        assert "J000019" in text and "J000020" not in text and "H1" in text, name  # the next group prints
    text, errors = written([("G", {"group_id": "G", "total": 30, "jobs": lazy_of(jobs, 10, fail_at=20)})],
                           "json", True)
    assert errors and "J000019" in text
    with pytest.raises(json.JSONDecodeError):  # left unterminated: never mistaken for the whole listing
        json.loads(text)


def test_the_scan_itself_is_the_unique_scan():
    """A LazyScan yields what unique_scan collects, overlapping pages and all."""
    jobs = [{"job_id": f"J{i}", "created_at": f"t{i // 3}"} for i in range(47)]

    def fetch(skip, limit):
        return {"jobs": jobs[skip:skip + limit], "total": len(jobs)}

    whole = unique_scan(fetch, page_size=5, collection="jobs", id_keys=["job_id"], tie_key="created_at")
    lazy = lazy_scan("unique_scan", fetch, page_size=5, collection="jobs", id_keys=["job_id"],
                     tie_key="created_at")
    assert lazy.total == whole.total and list(lazy) == list(whole.items)


# ------------------------------------------------------------ the command line
@pytest.fixture(scope="module")
def scaled(make_sandbox):
    return make_sandbox(seed=7, groups=1, jobs_per_group=5, compare_jobs=0, live_jobs=0, scale_jobs=2500)


def bl(sb, *args):
    return run_inprocess("--host", sb.url, "--api-key", sb.api_key, "--retry", "0", *args)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "text", "table", "markdown"])
def test_jobs_get_all_streams_the_same_rows_a_query_collects(scaled, fmt):
    """Every row of a 2,500-job group in every row format, equal to the rows of the whole listing
    (``--query '@'`` collects it); jsonl has one job per line."""
    streamed_run = bl(scaled, "jobs", "get", "-g", "GSCALE", "--all", "--page-size", "300", "--output", fmt)
    assert streamed_run.code == 0, streamed_run.err
    whole = json.loads(bl(scaled, "jobs", "get", "-g", "GSCALE", "--all", "--page-size", "1000").out)
    ids = [j["job_id"] for j in whole[0]["jobs"]]
    assert len(ids) == 2500
    if fmt == "jsonl":
        assert [json.loads(line)["job_id"] for line in streamed_run.out.splitlines()] == ids
    else:
        found = [i for i in ids if i in streamed_run.out]
        assert found == ids


def test_jobs_table_streams_what_it_collects(scaled):
    for fmt in ("json", "jsonl", "csv"):
        lazy = bl(scaled, "jobs", "table", "-g", "GSCALE,GSCALE2", "--output", fmt)
        kept = bl(scaled, "jobs", "table", "-g", "GSCALE,GSCALE2", "--output", "csv" if fmt == "csv" else "json",
                  "--query", "@")  # a --query needs every row: collected as before
        assert lazy.code == 0 and kept.code == 0, lazy.err + kept.err
        if fmt == "csv":  # longer than the first rows: the streamed header has its extra column
            streamed_rows = list(csv.DictReader(io.StringIO(lazy.out)))
            kept_rows = list(csv.DictReader(io.StringIO(kept.out)))
            assert [{k: v for k, v in r.items() if k != "extra"} for r in streamed_rows] == kept_rows
        elif fmt == "json":
            assert lazy.out == kept.out
        else:
            assert [json.loads(x) for x in lazy.out.splitlines()] == json.loads(kept.out)


def test_a_page_failing_mid_listing_prints_the_rows_before_it_and_exits_1():
    jobs = make_jobs(25)

    def page(seen):
        skip = int(parse_qs(urlsplit(seen.target).query).get("skip", ["0"])[0])
        if skip >= 15:  # the third page (the scan steps back one job over each page's last created_at)
            return json_reply({"error": "boom"}, status=500)
        return json_reply({"jobs": jobs[skip:skip + 10], "total": 25})

    with start_scripted({"/openapi/jobs": page}) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", "k", "--retry", "0", "jobs", "get", "-g", "G",
                               "--all", "--page-size", "10", "--output", "jsonl")
    assert result.code == 1
    assert [json.loads(line)["job_id"] for line in result.out.splitlines()] == [j["job_id"] for j in jobs[:19]]
    assert "[error] G:" in result.err and "the rows before it were printed" in result.err


@pytest.mark.parametrize("args", [
    ("jobs", "get", "-g", "G1,G2", "--all", "--page-size", "7"),
    ("--no-pretty", "jobs", "get", "-g", "G2", "--all", "--page-size", "9"),
    ("tasks", "get", "-g", "G1", "--all", "--page-size", "4"),
])
def test_a_printed_listing_streams_the_bytes_a_collected_one_has(api, args):
    """json read page by page is the document the whole listing gives (a --query collects it)."""
    streamed_run, kept = api(*args), api(*args, "--query", "@")
    assert streamed_run.code == 0 and kept.code == 0, streamed_run.err
    assert streamed_run.out == kept.out and json.loads(streamed_run.out)


# ------------------------------------------------------- a listing written to a file
def test_a_written_listing_is_the_printed_document(api, tmp_path):
    """``jobs download`` writes job_list.json as its pages arrive: the bytes of the document
    ``jobs get --all`` prints for that group when it collects it (``--query``)."""
    result = api("jobs", "download", "-g", "G1", "--page-size", "6", "-o", str(tmp_path))
    assert result.code == 0, result.err
    written = (tmp_path / "G1" / "job_list.json").read_text()
    printed = api("jobs", "get", "-g", "G1", "--all", "--page-size", "6", "--query", "[0]")
    assert written == printed.out
    assert len(json.loads(written)["jobs"]) == 40 and "(40 jobs)" in result.err


def test_a_pull_section_that_writes_a_listing_writes_all_of_it(api, tmp_path):
    result = api("pull", "-g", "G2", "--with", "jobs,tasks", "-o", str(tmp_path))
    assert result.code == 0, result.err
    written = json.loads((tmp_path / "G2" / "job_list.json").read_text())
    assert [j["job_id"] for j in written["jobs"]][:3] and len(written["jobs"]) == written["total"] == 40


def test_a_page_failing_mid_walk_writes_no_listing_file(tmp_path):
    """Nothing half-written: a listing whose later page fails leaves no job_list.json (and no
    temporary file) behind, and the command exits 1 naming the group."""
    jobs = make_jobs(25)

    def page(seen):
        skip = int(parse_qs(urlsplit(seen.target).query).get("skip", ["0"])[0])
        if skip >= 15:
            return json_reply({"error": "boom"}, status=500)
        return json_reply({"jobs": jobs[skip:skip + 10], "total": 25})

    with start_scripted({"/openapi/jobs": page}) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", "k", "--retry", "0", "-o", str(tmp_path),
                               "jobs", "download", "-g", "G", "--page-size", "10")
        asked = [parse_qs(urlsplit(s.target).query).get("skip", ["0"])[0] for s in srv.seen]
    assert result.code == 1 and "- G: API error 500" in result.err, result.err
    assert asked == ["0", "9", "18"]  # two pages kept (19 jobs), the third failed
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def _paged_jobs(jobs, fail_from=None):
    """A scripted /openapi/jobs answering ``jobs`` by skip/limit; a 500 from skip ``fail_from``."""
    def page(seen):
        query = parse_qs(urlsplit(seen.target).query)
        skip, limit = int(query.get("skip", ["0"])[0]), int(query.get("limit", ["50"])[0])
        if fail_from is not None and skip >= fail_from:
            return json_reply({"error": "boom"}, status=500)
        return json_reply({"jobs": jobs[skip:skip + limit], "total": len(jobs)})

    return {"/openapi/jobs": page}


def test_a_page_failing_mid_walk_leaves_the_earlier_listing_file_as_it_was(tmp_path):
    """The staged file is renamed into place only when the walk ended: a walk whose third page
    fails leaves the job_list.json of the run before byte for byte, and no temporary file."""
    jobs = make_jobs(25)
    with start_scripted(_paged_jobs(jobs)) as srv:
        first = run_inprocess("--host", srv.url, "--api-key", "k", "--retry", "0", "-o", str(tmp_path),
                              "jobs", "download", "-g", "G", "--page-size", "10")
    assert first.code == 0, first.err
    listing = tmp_path / "G" / "job_list.json"
    before = listing.read_bytes()
    assert len(json.loads(before)["jobs"]) == 25 and "(25 jobs)" in first.err
    with start_scripted(_paged_jobs(make_jobs(25, prefix="K"), fail_from=15)) as srv:
        failed = run_inprocess("--host", srv.url, "--api-key", "k", "--retry", "0", "-o", str(tmp_path),
                               "jobs", "download", "-g", "G", "--page-size", "10")
    assert failed.code == 1 and "- G: API error 500" in failed.err, failed.err
    assert listing.read_bytes() == before
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["job_list.json"]


def test_a_listing_file_is_written_in_about_a_page_of_memory(tmp_path):
    """``jobs download`` of 20,000 jobs, 200 a page: the file holds json.dumps's bytes of the
    whole listing, and the command's traced peak stays far below what the listing takes
    in memory (what reading the file back costs: 12 MB, collected 14 MB; streamed ~2 MB, a MB of it
    the file's write buffer), since it is written as its pages arrive."""
    jobs = [{"job_id": f"job-{i:08d}-5f0c2a9e", "status": "succeeded", "score": i / 7,
             "created_at": f"2026-11-30T12:{i % 60:02d}:{i % 59:02d}Z", "tags": ["benchmark", f"t{i % 13}"]}
            for i in range(20_000)]
    args = ("--api-key", "k", "--retry", "0", "-q", "jobs", "download", "-g", "G", "--page-size", "200")
    with start_scripted(_paged_jobs(jobs)) as srv:
        warm = run_inprocess("--host", srv.url, *args, "-o", str(tmp_path / "warm"))  # imports done
        assert warm.code == 0, warm.err
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            result = run_inprocess("--host", srv.url, *args, "-o", str(tmp_path / "out"))
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    assert result.code == 0, result.err
    text = (tmp_path / "out" / "G" / "job_list.json").read_text(encoding="utf-8")
    assert text == json.dumps({"group_id": "G", "total": 20_000, "jobs": jobs}, indent=2, ensure_ascii=False) + "\n"
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        loaded = json.loads(text)
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(loaded["jobs"]) == 20_000
    assert peak * 3 < held, f"peak {peak / 1e6:.1f} MB, the listing in memory {held / 1e6:.1f} MB"


@pytest.mark.parametrize(("resource", "route", "message"), [
    # 30 jobs where 35 are announced: every pass of the scan is written, then it fails
    ("jobs", lambda q: {"jobs": make_jobs(30)[int(q["skip"][0]):int(q["skip"][0]) + int(q["limit"][0])],
                        "total": 35}, "pagination collected 30 of 35 unique jobs"),
    # the same full page of tasks without ids and no total: the second page is no progress
    ("tasks", lambda q: {"tasks": [{"name": f"task {i}"} for i in range(int(q["limit"][0]))]},
     "tasks pagination made no progress"),
], ids=["jobs-short-total", "tasks-no-progress"])
def test_a_walk_that_cannot_finish_writes_no_listing_file(tmp_path, resource, route, message):
    """The walk's own failure (not a request's) after rows went into the staged file: exit 1
    with its message, no listing file and no temporary file."""
    part = load_model().resources[resource].actions["download"].dimensions["group"].parts["all"]
    path = part.request.path.replace("{group}", "G")
    with start_scripted({path: lambda seen: json_reply(route(parse_qs(urlsplit(seen.target).query)))}) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", "k", "--retry", "0", "-o", str(tmp_path),
                               resource, "download", "-g", "G", "--page-size", "10")
    assert result.code == 1 and message in result.err, result.err
    assert "Traceback" not in result.err
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
