"""``engine/formats/parquet.py`` called directly: the named pipe, its fallback, and failures.

The rows go to DuckDB through a named pipe (one ``COPY``); without ``os.mkfifo`` (Windows)
they go as CSV parts merged at the end.  Both must give the same typed rows, in order, with
the cells' fast paths (floats, ints, bools, text equal to the null marker, JSON values)
typed as the slow path types them; a DuckDB failure in the middle of the rows (a row too
long for its buffer) is raised as DuckDB's own error, never a hang, and leaves no file.
"""

from __future__ import annotations

import io
import math
import os
import threading

import pytest

from benchloop.engine.formats import parquet

duckdb = pytest.importorskip("duckdb")

COLUMNS = ["id", "score", "n", "ok", "text", "blob", "created_at"]
HEAD = [{"id": "a", "score": 1.5, "n": 3, "ok": True, "text": "x", "blob": [1], "created_at": "2026-01-01T00:00:00"}]


def _rows(count: int) -> list[list]:
    odd = [math.nan, math.inf, -0.0, 1e308, 2 ** 1024, True, "7", None, 10 ** 20, -(2 ** 1023), 5]
    return [[f"j{i}", odd[i % len(odd)], odd[(i + 3) % len(odd)], [True, False, None, 1][i % 4],
             ["\\N", "", "é,\"q\"\n", None, 3][i % 5], [{"k": [i]}, None, "s", 1.25][i % 4],
             ["2026-01-02T03:04:05", "not a time", None][i % 3]] for i in range(count)]


def _expected(rows: list[list]) -> list[tuple]:
    kinds = parquet.column_types(COLUMNS, HEAD, None)

    def typed(value, kind):
        got = parquet._typed(value, kind)
        if kind == "integer" and got is not None:
            return round(got) if abs(got) < 2 ** 63 else None
        return got

    out = []
    for row in rows:
        cells = [typed(v, kinds[c]) for c, v in zip(COLUMNS, row, strict=True)]
        cells[-1] = cells[-1] if cells[-1] != "not a time" else None
        out.append(tuple(cells))
    return out


def _read(path) -> list[tuple]:
    got = duckdb.sql(f"SELECT id, score, n, ok, text, blob, strftime(created_at, '%Y-%m-%dT%H:%M:%S') "
                     f"FROM read_parquet('{path}')").fetchall()
    return [tuple(None if isinstance(v, float) and v != v else v for v in row) for row in got]


@pytest.mark.parametrize("pipe", [True, False])
def test_the_pipe_and_the_parts_write_the_same_typed_rows(tmp_path, monkeypatch, pipe):
    if not pipe:
        monkeypatch.delattr(os, "mkfifo", raising=False)
    monkeypatch.setattr(parquet, "BATCH", 700)
    rows = _rows(2500)
    path = tmp_path / "out.parquet"
    assert parquet.write(str(path), io.StringIO(), COLUMNS, iter(rows), HEAD, None) == 2500
    assert _read(path) == _expected(rows)
    assert os.listdir(tmp_path) == ["out.parquet"]  # the temporary folder is gone


def test_a_duckdb_failure_midway_is_raised_not_waited_for(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "CSV_BUFFER", 1 << 16)
    rows = _rows(3000)
    rows[2000][4] = "x" * (1 << 18)  # longer than DuckDB's buffer: it stops reading the pipe
    path = tmp_path / "out.parquet"
    before = threading.active_count()
    with pytest.raises(duckdb.Error):
        parquet.write(str(path), io.StringIO(), COLUMNS, iter(rows), HEAD, None)
    assert not path.exists() and os.listdir(tmp_path) == []
    assert threading.active_count() == before


def test_a_failure_of_the_rows_stops_duckdb(tmp_path):
    def rows():
        yield from _rows(1500)
        raise OSError("the page could not be read")

    before = threading.active_count()
    with pytest.raises(OSError, match="could not be read"):
        parquet.write(str(tmp_path / "out.parquet"), io.StringIO(), COLUMNS, rows(), HEAD, None)
    assert os.listdir(tmp_path) == [] and threading.active_count() == before


def test_no_rows_is_the_typed_columns(tmp_path):
    path = tmp_path / "out.parquet"
    assert parquet.write(str(path), io.StringIO(), COLUMNS, iter([]), HEAD, None) == 0
    types = dict(duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()[i][:2] for i in range(7))
    assert types["n"] == "BIGINT" and types["ok"] == "BOOLEAN" and types["created_at"] == "TIMESTAMP"


@pytest.mark.parametrize("width", [3_000, 30_000])
def test_wide_rows_get_the_pool_they_need(tmp_path, width):
    """Rows of distinct text too wide for the narrow rows' pool (16 MB fails them) are written."""
    rows = [[f"j{i}", 1.0, i, True, os.urandom(width // 2).hex(), None, None] for i in range(20_000_000 // width)]
    head = [dict(zip(COLUMNS, r, strict=True)) for r in rows[:1000]]
    assert parquet.pool(head) != parquet.pool(HEAD) == "16MB"
    path = tmp_path / "out.parquet"
    assert parquet.write(str(path), io.StringIO(), COLUMNS, iter(rows), head, None) == len(rows)
    assert duckdb.sql(f"SELECT count(*), min(length(text)) FROM read_parquet('{path}')").fetchall() == [
        (len(rows), width)]
