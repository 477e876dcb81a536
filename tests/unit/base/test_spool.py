"""Listings that leave memory while they are paged: Spool, SeenIds, and their JSON text.

A spooled listing must give back exactly what went in, in order, whatever
happens to the temporary directory; the ids seen must follow Python's set
semantics on disk as in memory; and the text written from a spooled or long
listing must be json.dumps's bytes.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import math
import os
import sqlite3
import tracemalloc
from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchloop.base import jsontext, spool
from benchloop.base.spool import SeenIds, Spool
from benchloop.engine.pagination import task_scan, unique_scan

ODD_VALUES = [0.1, -0.0, 1e308, 2**70, -(2**63), "é\u202e", "\ud800", "", None, True, False, {"": []}]


def _items(n):
    return [{"job_id": f"J{i}", "n": i, "odd": ODD_VALUES[i % len(ODD_VALUES)], "nested": {"k": [i, str(i)]}}
            for i in range(n)]


def _same(a, b):
    """Equal as values and as JSON text (the text tells -0.0 from 0.0 and keeps key order)."""
    return a == b and json.dumps(a) == json.dumps(b)


# ------------------------------------------------------------------- Spool
def test_a_spool_gives_back_every_item_in_order_from_memory_and_disk():
    items = _items(23)
    store = Spool(keep=4)
    store.extend(items[:10])
    for item in items[10:]:
        store.append(item)
    assert len(store) == 23 and bool(store)
    assert "batches on disk" in repr(store) and not repr(store).startswith("Spool(23 items, 0 ")
    assert _same(list(store), items)
    assert _same(list(store), items)  # read again: the file is read by offset, not consumed
    first = iter(store)
    assert next(first) == items[0]
    store.append({"job_id": "late"})  # an iterator already started sees what was there
    assert _same([items[0], *first], items)
    assert list(store)[-1] == {"job_id": "late"}


def _open_descriptors():
    return len(os.listdir("/proc/self/fd"))


def test_every_spool_writes_to_one_shared_file_closed_with_the_last_of_them(monkeypatch):
    monkeypatch.setattr(spool, "_SHARED", spool._SharedFile())
    before = _open_descriptors()
    stores = []
    for n in range(60):
        store = Spool(keep=2)
        store.extend(_items(5 + n % 3))
        stores.append(store)
    assert _open_descriptors() <= before + 1  # one descriptor for 60 spilled listings
    del stores[::2]  # half of them gone: the others still read back whole
    assert all(_same(list(store), _items(len(store))) for store in stores)
    del store
    stores.clear()
    assert _open_descriptors() == before and spool._SHARED.fd is None


def test_an_empty_spool_is_false_and_empty():
    store = Spool(keep=1)
    assert not store and len(store) == 0 and list(store) == []


def test_a_full_disk_keeps_every_item_in_memory_after_the_batches_on_disk(monkeypatch):
    real_pwrite, calls = spool.os.pwrite, []

    def pwrite(fd, data, offset):
        calls.append(offset)
        if len(calls) > 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        if len(calls) == 1:  # a short write first: the loop writes the rest
            return real_pwrite(fd, data[: len(data) // 2], offset)
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(spool.os, "pwrite", pwrite)
    monkeypatch.setattr(spool, "_SHARED", spool._SharedFile())
    items = _items(40)
    store = Spool(keep=5)
    store.extend(items)
    assert "40 items, 2 batches on disk" in repr(store)  # two batches written, then the disk refused
    assert _same(list(store), items)
    assert len(calls) == 4  # a refused write is not tried again: the rest stays in memory


def test_without_positional_io_a_spool_stays_in_memory(monkeypatch):
    monkeypatch.setattr(spool, "_POSITIONAL_IO", False)  # Windows has no os.pwrite/os.pread
    items = _items(9)
    store = Spool(keep=2)
    store.extend(items)
    assert _same(list(store), items) and "0 batches on disk" in repr(store)


def test_no_temporary_directory_keeps_the_spool_in_memory(monkeypatch):
    def refuse(*_a, **_k):
        raise FileNotFoundError(errno.ENOENT, "No usable temporary directory found")

    monkeypatch.setattr(spool.tempfile, "TemporaryFile", refuse)
    monkeypatch.setattr(spool, "_SHARED", spool._SharedFile())  # none open yet
    items = _items(12)
    store = Spool(keep=2)
    store.extend(items)
    assert _same(list(store), items) and "0 batches on disk" in repr(store)


def test_an_item_marshal_cannot_write_stays_in_memory():
    store = Spool(keep=2)
    items = [{"a": 1}, {"b": object()}, {"c": 3}]
    store.extend(items)
    assert list(store) == items


# ----------------------------------------------------------------- SeenIds
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


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(POOL) | st.text(max_size=3), max_size=8), max_size=8),
       st.integers(0, 6))
def test_seen_ids_follow_python_set_equality_in_memory_and_on_disk(pages, keep):
    ids = SeenIds(keep=keep)
    try:
        assert [ids.fresh(page) for page in pages] == _reference(pages)
        assert len(ids) == len({iid for page in pages for iid in page})
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


# ---------------------------------------------------------------- JSON text
@contextmanager
def _small_limits():
    """Spill and write piecewise at a few items, so small examples take every path."""
    with mock.patch.object(jsontext, "LONG", 2), mock.patch.object(jsontext, "_ITEMS", 2), \
            mock.patch.object(jsontext, "_BATCH", 8), mock.patch.object(spool, "KEEP", 2):
        yield


def _spooled(value, choose):
    """``value`` with some of its lists (``choose`` decides which) turned into Spools."""
    if isinstance(value, dict):
        return {k: _spooled(v, choose) for k, v in value.items()}
    if isinstance(value, list):
        items = [_spooled(v, choose) for v in value]
        if choose():
            store = Spool()
            store.extend(items)
            return store
        return items
    return value


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, Spool)):
        return [_plain(v) for v in value]
    return value


any_text = st.text(st.characters(exclude_categories=()), max_size=4)  # lone surrogates included
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
        any_text | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False), inner, max_size=4),
    max_leaves=25)


def _escaped(text):
    """json.dumps's text with each lone surrogate written as its escape (what bl writes)."""
    return "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans(), st.booleans(), st.randoms(use_true_random=False))
def test_the_text_of_spooled_and_long_listings_is_json_dumps_text(value, pretty, whole, rnd):
    with _small_limits():
        doc = _spooled(value, lambda: rnd.random() < 0.5)
        if whole and not isinstance(doc, list):
            doc = [doc]
        out = io.StringIO()
        jsontext.write(out, doc, pretty, whole=whole)
    expected = _escaped(json.dumps(_plain(doc), indent=2 if pretty else None, ensure_ascii=False,
                                   separators=None if pretty else (",", ":"))) + "\n"
    assert out.getvalue() == expected
    assert jsontext.dumps(doc, pretty) == expected  # the one-shot path reads a Spool too


def test_an_element_holding_a_spooled_listing_two_levels_down_is_written_piecewise():
    store = Spool(keep=2)
    store.extend(_items(5))
    element = {"group_id": "G", "detail": {"total": 5, "metrics": store}}
    assert jsontext.is_big(element) and not jsontext.is_big({"a": {"b": {"c": store}}})
    pieces = list(jsontext.chunks([element], True, whole=True))
    assert len(pieces) > 5  # piece by piece, not one string
    assert "".join(pieces) == json.dumps([_plain(element)], indent=2, ensure_ascii=False)


# ---------------------------------------------------------- scans that spill
def _pages(items, total=None):
    """Pages of ``items``; ``total``: announced (default: their number), or "missing"."""
    def fetch(skip, limit):
        body = {"jobs": items[skip:skip + limit]}
        if total != "missing":
            body["total"] = len(items) if total is None else total
        return body

    return fetch


@pytest.mark.parametrize("scan", [unique_scan, task_scan])
def test_a_spilled_scan_collects_what_a_kept_one_does(scan, monkeypatch):
    monkeypatch.setattr(spool, "KEEP", 3)
    monkeypatch.setattr(spool, "KEEP_IDS", 4)
    items = _items(57)
    items = items[:20] + items[15:25] + items[20:]  # repeats across pages
    total = 57 if scan is unique_scan else "missing"  # a task scan stops at skip >= total
    kept = scan(_pages(items, total), page_size=7, collection="jobs", id_keys=["job_id"])
    spilled = scan(_pages(items, total), page_size=7, collection="jobs", id_keys=["job_id"], spill=True)
    assert isinstance(spilled.items, Spool) and isinstance(kept.items, list)
    assert spilled.total == kept.total and _same(list(spilled.items), kept.items)
    assert [i["job_id"] for i in kept.items] == [f"J{i}" for i in range(57)]


def test_a_failed_page_after_spilling_raises_and_leaves_nothing(monkeypatch):
    monkeypatch.setattr(spool, "KEEP", 3)
    items = _items(40)
    pages = _pages(items)

    def fetch(skip, limit):
        if skip >= 30:
            raise ConnectionResetError("page 4 failed")
        return pages(skip, limit)

    monkeypatch.setattr(spool, "KEEP_IDS", 5)
    closed = []
    real_close = SeenIds.close

    def close(self):
        closed.append(self._db is not None)  # the ids had gone to disk
        real_close(self)

    monkeypatch.setattr(SeenIds, "close", close)
    with pytest.raises(ConnectionResetError):
        unique_scan(fetch, page_size=10, collection="jobs", id_keys=["job_id"], spill=True)
    assert closed == [True]  # the walk closed its database on the way out


class _Digest:
    """A text sink that keeps only a digest and the size of what was written."""

    def __init__(self):
        self.sha, self.size = hashlib.sha256(), 0

    def write(self, text):
        self.sha.update(text.encode("utf-8", "surrogatepass"))
        self.size += len(text)


def _peak_of_paging_and_printing(jobs, pretty, spill):
    """(traced peak in bytes above the page source, digest sink) of a unique scan of ``jobs``
    50 a page, printed as ``jobs get --all`` prints it."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()

        def fetch(skip, limit):  # fresh objects per page, as a decoded response is
            return {"jobs": json.loads(json.dumps(jobs[skip:skip + limit])), "total": len(jobs)}

        scan = unique_scan(fetch, page_size=50, collection="jobs", id_keys=["job_id"], spill=spill)
        sink = _Digest()
        jsontext.write(sink, [{"group_id": "G", "total": scan.total, "jobs": scan.items}], pretty, whole=True)
        return tracemalloc.get_traced_memory()[1] - base, sink
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("pretty", [True, False])
def test_a_20000_job_listing_is_paged_and_printed_in_little_memory(pretty):
    jobs = [{"job_id": f"job-{i:08d}-5f0c2a9e-41d3-4b6e-9a55", "status": "succeeded", "score": i / 7,
             "created_at": f"2026-11-30T12:{i % 60:02d}:00Z", "tags": ["benchmark", f"t{i % 13}"]}
            for i in range(20_000)]
    expected = _Digest()
    expected.write(json.dumps([{"group_id": "G", "total": 20_000, "jobs": jobs}], indent=2 if pretty else None,
                              ensure_ascii=False, separators=None if pretty else (",", ":")) + "\n")
    peak, sink = _peak_of_paging_and_printing(jobs, pretty, spill=True)
    assert sink.size == expected.size and sink.sha.hexdigest() == expected.sha.hexdigest()
    assert peak < 3_000_000, f"peak {peak / 1e6:.1f} MB above the page source"
    kept, _ = _peak_of_paging_and_printing(jobs, pretty, spill=False)
    assert kept > 4 * peak, f"kept in a list: {kept / 1e6:.1f} MB"  # the measure tells the two apart


# ------------------------------------------------------------ through the CLI
@pytest.fixture
def spied(monkeypatch):
    """Spill at a few items, and count the Spools the command makes."""
    monkeypatch.setattr(spool, "KEEP", 3)
    monkeypatch.setattr(spool, "KEEP_IDS", 4)
    made = []
    real_init = Spool.__init__

    def init(self, keep=None):
        made.append(self)
        real_init(self, keep)

    monkeypatch.setattr(Spool, "__init__", init)
    return made


def test_a_written_listing_spills_and_is_the_printed_document(api, spied, tmp_path):
    result = api("jobs", "download", "-g", "G1", "--page-size", "6", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert any(len(s) > 3 for s in spied)
    written = (tmp_path / "G1" / "job_list.json").read_text()
    printed = api("jobs", "get", "-g", "G1", "--all", "--page-size", "6", "--query", "[0]")
    assert written == printed.out
    assert len(json.loads(written)["jobs"]) == 40 and "(40 jobs)" in result.err


def test_a_pull_section_that_writes_a_listing_spills_too(api, spied, tmp_path):
    result = api("pull", "-g", "G2", "--with", "jobs,tasks", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert any(len(s) > 3 for s in spied)
    written = json.loads((tmp_path / "G2" / "job_list.json").read_text())
    assert [j["job_id"] for j in written["jobs"]][:3] and len(written["jobs"]) == written["total"] == 40


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
