"""Pagination modes against adversarial page sequences (no server needed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchloop.engine.pagination import PaginationError, single_page, task_scan, unique_scan


def backend(items, *, total="exact", collection="jobs", shift=None):
    """A fake page source over ``items``; records (skip, limit) calls.

    ``total``: "exact", "missing", an int, or a callable(call_index) -> total.
    ``shift``: callable(call_index) -> items list to serve for that call
    (to simulate data changing between pages).
    """
    calls = []

    def fetch(skip, limit):
        index = len(calls)
        calls.append((skip, limit))
        data = shift(index) if shift else items
        body = {collection: data[skip : skip + limit]}
        if total == "exact":
            body["total"] = len(data)
        elif callable(total):
            body["total"] = total(index)
        elif total != "missing":
            body["total"] = total
        return body

    return fetch, calls


def jobs(n, tie_every=1):
    return [{"job_id": f"J{i}", "created_at": f"t{i // tie_every:05d}"} for i in range(n)]


def test_single_page_skip_and_limit():
    fetch, calls = backend(jobs(10))
    body = single_page(fetch, page=3, page_size=4)
    assert calls == [(8, 4)]
    assert [j["job_id"] for j in body["jobs"]] == ["J8", "J9"]
    single_page(fetch, page=0, page_size=4)
    assert calls[-1] == (0, 4)


def test_unique_scan_walks_every_page_in_order():
    fetch, calls = backend(jobs(2001))
    scan = unique_scan(fetch, page_size=1000, collection="jobs", id_keys=["job_id"])
    assert scan.total == 2001
    assert [j["job_id"] for j in scan.items] == [f"J{i}" for i in range(2001)]
    assert calls == [(0, 1000), (1000, 1000), (2000, 1000)]


def test_unique_scan_duplicates_across_pages_are_dropped():
    data = jobs(5)
    data = data[:3] + data[2:3] + data[3:]  # J2 twice
    fetch, _ = backend(data, total=5)
    scan = unique_scan(fetch, page_size=3, collection="jobs", id_keys=["job_id"])
    assert [j["job_id"] for j in scan.items] == ["J0", "J1", "J2", "J3", "J4"]


def test_unique_scan_tie_overlap_rereads_boundary_run():
    data = jobs(9, tie_every=3)  # created_at runs of 3
    fetch, calls = backend(data)
    lines = []
    scan = unique_scan(fetch, page_size=4, collection="jobs", id_keys=["job_id"], tie_key="created_at",
                       label="group G", debug=lines.append)
    assert len(scan.items) == 9
    assert calls[0] == (0, 4) and calls[1] == (3, 4)  # stepped back over the run J3
    assert any("boundary overlap" in line for line in lines)


def test_unique_scan_whole_page_one_tie_value_falls_back_to_larger_pages():
    data = [{"job_id": f"J{i}", "created_at": "same"} for i in range(6)]
    fetch, calls = backend(data)
    lines = []
    scan = unique_scan(fetch, page_size=3, collection="jobs", id_keys=["job_id"], tie_key="created_at",
                       label="group G", debug=lines.append)
    assert len(scan.items) == 6
    assert any("cannot advance" in line for line in lines)
    assert (0, 1000) in calls


def test_unique_scan_short_page_without_total_finishes():
    fetch, calls = backend(jobs(7), total="missing")
    scan = unique_scan(fetch, page_size=5, collection="jobs", id_keys=["job_id"])
    assert scan.total == 7 and len(scan.items) == 7
    assert calls == [(0, 5), (5, 5)]


def test_unique_scan_total_not_reached_fails_after_all_scans():
    fetch, calls = backend(jobs(3), total=5)
    with pytest.raises(PaginationError, match="collected 3 of 5 unique jobs after 4 scans"):
        unique_scan(fetch, page_size=2, collection="jobs", id_keys=["job_id"], label="group G")
    assert {limit for _, limit in calls} == {2, 1000, 999, 500}


def test_unique_scan_total_changing_between_pages_keeps_first_integer():
    totals = iter([None, 4, 99, 99, 99])
    fetch, _ = backend(jobs(4), total=lambda i: next(totals))
    scan = unique_scan(fetch, page_size=2, collection="jobs", id_keys=["job_id"])
    assert scan.total == 4 and len(scan.items) == 4


def test_unique_scan_string_total_is_unknown_not_a_crash():
    fetch, _ = backend(jobs(3), total="3")
    scan = unique_scan(fetch, page_size=2, collection="jobs", id_keys=["job_id"])
    assert scan.total == 3 and len(scan.items) == 3


@pytest.mark.parametrize("body", [[], {"jobs": "x"}, {"jobs": [{"no_id": 1}]}, {"jobs": [1]}])
def test_unique_scan_malformed_pages_fail(body):
    with pytest.raises(PaginationError):
        unique_scan(lambda s, n: body, page_size=2, collection="jobs", id_keys=["job_id"])


def test_unique_scan_id_fallback_and_keep_first():
    pages = [{"metrics": [{"id": "A"}], "total": 2, "extra": None},
             {"metrics": [{"id": "B"}], "total": 2, "extra": {"k": 1}}]
    scan = unique_scan(lambda s, n: pages[min(s, 1)], page_size=1, collection="metrics",
                       id_keys=["job_id", "id"], keep_first=["extra"])
    assert [m["id"] for m in scan.items] == ["A", "B"]
    assert scan.first == {"extra": {"k": 1}}


def test_unique_scan_rejects_page_size_below_one():
    with pytest.raises(PaginationError):
        unique_scan(lambda s, n: {}, page_size=0, collection="jobs", id_keys=["job_id"])


def test_task_scan_dedups_and_keeps_items_without_ids():
    data = [{"task_id": "T1"}, {"task_id": "T1"}, {"x": 1}, {"id": "T2"}]
    fetch, calls = backend(data, total=3, collection="tasks")
    scan = task_scan(fetch, page_size=2, collection="tasks", id_keys=["task_id", "id"])
    assert scan.items == [{"task_id": "T1"}, {"x": 1}, {"id": "T2"}]
    assert calls == [(0, 2), (2, 2)]


def test_task_scan_ended_short_of_total():
    fetch, _ = backend([{"task_id": "T1"}], total=3, collection="tasks")
    with pytest.raises(PaginationError, match="pagination ended at 1 of 3 tasks"):
        task_scan(fetch, page_size=1, collection="tasks", id_keys=["task_id"], label="group G")


def test_task_scan_no_progress_is_an_error():
    fetch = lambda s, n: {"tasks": [{"task_id": "T1"}], "total": 5}  # noqa: E731
    with pytest.raises(PaginationError, match="made no progress"):
        task_scan(fetch, page_size=1, collection="tasks", id_keys=["task_id"], label="group G")


def test_task_scan_short_page_without_total():
    fetch, calls = backend([{"task_id": f"T{i}"} for i in range(3)], total="missing", collection="tasks")
    scan = task_scan(fetch, page_size=2, collection="tasks", id_keys=["task_id"])
    assert scan.total == 3 and calls == [(0, 2), (2, 2)]


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 60), tie=st.integers(1, 8), page=st.integers(1, 25))
def test_unique_scan_property_collects_each_item_once(n, tie, page):
    data = jobs(n, tie_every=tie)
    fetch, _ = backend(data)
    scan = unique_scan(fetch, page_size=page, collection="jobs", id_keys=["job_id"], tie_key="created_at")
    assert [j["job_id"] for j in scan.items] == [j["job_id"] for j in data]
    assert scan.total == n
