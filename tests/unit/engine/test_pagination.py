"""Pagination modes against adversarial page sequences, and the ids a walk has seen (no server needed)."""

from __future__ import annotations

import math
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchloop.base import seen_ids
from benchloop.base.seen_ids import SeenIds
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


# ------------------------------------------------- the ids seen (base/seen_ids.py)
# A walk remembers every id it has seen, in bounded memory: past KEEP_IDS the string ids move
# to a temporary SQLite table.  On disk as in memory they follow Python's set equality, and a
# disk that fails (no temporary directory, full, unreadable) costs memory, never an id.
POOL = ["a", "b", "1", "\ud800", "é", "\x00x", "", 1, 1.0, True, 0, False, 2.5, 2**70, b"x", b"a", math.inf]


def _reference(pages):
    seen, out = set(), []
    for page in pages:
        flags = []
        for iid in page:
            flags.append(iid not in seen)
            seen.add(iid)
        out.append(flags)
    return out


def _as_python_sets(pages, keep):
    """SeenIds (spilling to disk past ``keep`` ids) says which ids of each page are new as a
    Python set would, and counts the distinct ids."""
    ids = SeenIds(keep=keep)
    try:
        assert [ids.fresh(page) for page in pages] == _reference(pages)
        assert len(ids) == len({iid for page in pages for iid in page})
    finally:
        ids.close()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(POOL) | st.text(max_size=3), max_size=8), max_size=8),
       st.integers(0, 6))
def test_seen_ids_follow_python_set_equality_in_memory_and_on_disk(pages, keep):
    _as_python_sets(pages, keep)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "é", "\x00", "\x00x", "\\", '"', "\n", "\u2028", "\U0001f600", "\ud800"])
                         | st.text(max_size=3), max_size=8), max_size=8), st.integers(0, 4))
def test_pages_of_text_ids_on_disk_are_looked_up_as_one_json_array(pages, keep):
    """Text ids go to SQLite a page at a time as a JSON array: every character comes back as it
    was (escapes, NUL and lone surrogates, which take the id by id way, included)."""
    _as_python_sets(pages, keep)


def test_a_page_of_text_ids_costs_two_statements():
    ids = SeenIds(keep=2)
    try:
        ids.fresh(["a", "b", "c"])
        statements = []
        ids._db.set_trace_callback(statements.append)
        assert ids.fresh(["b", "d", "e", "d"]) == [False, True, True, False]
        assert len(statements) == 2 and all("json_each" in s for s in statements), statements
    finally:
        ids.close()


def test_seen_ids_move_to_disk_past_keep():
    ids = SeenIds(keep=3)
    assert ids.fresh(["a", "b", 1]) == [True, True, True]
    assert ids._db is None
    assert ids.fresh(["c", "a", 1.0]) == [True, False, False]
    assert ids._db is not None  # past keep: the strings went to disk, the number stayed
    assert ids.fresh(["c", "d", "d", True]) == [False, True, False, False]
    ids.close()


def test_a_really_full_disk_keeps_the_ids_stored_before_it():
    # SQLite's own "database or disk is full" (a page limit), not a stand-in: only the
    # failing page's inserts are taken back, every id stored before stays known.
    pages = [[f"id-{n:05d}-" + "x" * 40 for n in range(start, start + 60)] for start in range(0, 3000, 50)]
    pages += pages[:3]  # the first pages again, after the disk filled up: nothing new
    ids = SeenIds(keep=100)
    try:
        flags = [ids.fresh(pages[0]), ids.fresh(pages[1]), ids.fresh(pages[2])]
        assert ids._db is not None
        (used,) = ids._db.execute("PRAGMA page_count").fetchone()
        ids._db.execute(f"PRAGMA max_page_count = {used + 2}")
        flags += [ids.fresh(page) for page in pages[3:]]
        assert ids._db is None  # the disk filled up: the ids went back into memory
        assert flags == _reference(pages)
    finally:
        ids.close()


def test_no_temporary_directory_keeps_the_ids_in_memory(monkeypatch):
    def refuse(*_a, **_k):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", refuse)
    ids = SeenIds(keep=1)
    assert ids.fresh(["a", "b", "a"]) == [True, True, False]
    assert ids.fresh(["b", "c"]) == [False, True] and ids._db is None


class _UnreadablePages:
    """A connection whose per-page lookups fail (an I/O error); the whole table still reads."""

    def __init__(self, db):
        self.db = db

    def execute(self, sql, *args):
        if " IN (" in sql:
            raise sqlite3.OperationalError("disk I/O error")
        return self.db.execute(sql, *args)

    def close(self):
        self.db.close()


def test_a_lookup_the_disk_cannot_answer_takes_the_ids_back_into_memory():
    ids = SeenIds(keep=2)
    assert ids.fresh(["a", "b", "c"]) == [True, True, True] and ids._db is not None
    ids._db = _UnreadablePages(ids._db)
    assert ids.fresh(["a", "d", "d"]) == [False, True, False]
    assert ids._db is None and ids.fresh(["b", "c", "d", "e"]) == [False, False, False, True]


@pytest.mark.parametrize("scan", [unique_scan, task_scan])
def test_a_walk_past_the_ids_kept_in_memory_collects_what_a_small_one_does(scan, monkeypatch):
    data = jobs(57)
    served = data[:20] + data[15:25] + data[20:]  # repeats across pages
    total = 57 if scan is unique_scan else "missing"  # a task scan stops at skip >= total
    small = scan(backend(served, total=total)[0], page_size=7, collection="jobs", id_keys=["job_id"])
    monkeypatch.setattr(seen_ids, "KEEP_IDS", 4)  # the ids go to disk after the first page
    on_disk = scan(backend(served, total=total)[0], page_size=7, collection="jobs", id_keys=["job_id"])
    assert on_disk.total == small.total and on_disk.items == small.items
    assert [i["job_id"] for i in small.items] == [f"J{i}" for i in range(57)]


def test_a_failed_page_after_the_ids_went_to_disk_raises_and_closes_their_database(monkeypatch):
    fetch, _ = backend(jobs(40))

    def failing(skip, limit):
        if skip >= 30:
            raise ConnectionResetError("page 4 failed")
        return fetch(skip, limit)

    monkeypatch.setattr(seen_ids, "KEEP_IDS", 5)
    closed = []
    real_close = SeenIds.close

    def close(self):
        closed.append(self._db is not None)  # the ids had gone to disk
        real_close(self)

    monkeypatch.setattr(SeenIds, "close", close)
    with pytest.raises(ConnectionResetError):
        unique_scan(failing, page_size=10, collection="jobs", id_keys=["job_id"])
    assert closed == [True]  # the walk closed its database on the way out


@pytest.mark.parametrize("scan", [unique_scan, task_scan])
def test_a_walk_without_a_usable_temporary_directory_keeps_every_item_once(scan, monkeypatch):
    """Hostile: no temporary directory for the ids seen (SQLite cannot open its file) costs
    memory, never an item, and no item comes twice."""
    data = jobs(57)
    served = data[:20] + data[15:25] + data[20:]
    total = 57 if scan is unique_scan else "missing"
    monkeypatch.setattr(seen_ids, "KEEP_IDS", 4)

    def refuse(*_a, **_k):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", refuse)
    walked = scan(backend(served, total=total)[0], page_size=7, collection="jobs", id_keys=["job_id"])
    assert [i["job_id"] for i in walked.items] == [f"J{i}" for i in range(57)]


def test_a_walk_whose_disk_fills_up_midway_keeps_every_item_once(monkeypatch):
    """Hostile: the ids went to disk, then the disk filled up (a page's inserts refused): the ids
    come back into memory and the walk goes on, every item once."""
    data = jobs(57)
    served = data[:20] + data[15:25] + data[20:]
    monkeypatch.setattr(seen_ids, "KEEP_IDS", 4)
    calls, real_insert = [], seen_ids._insert

    def insert(db, rows):
        calls.append(len(rows))
        if len(calls) == 3:  # the move to disk and one page went in; the next page does not
            raise sqlite3.OperationalError("database or disk is full")
        real_insert(db, rows)

    monkeypatch.setattr(seen_ids, "_insert", insert)
    walked = unique_scan(backend(served, total=57)[0], page_size=7, collection="jobs", id_keys=["job_id"])
    assert len(calls) == 3  # after the refusal the ids stayed in memory
    assert [i["job_id"] for i in walked.items] == [f"J{i}" for i in range(57)]
