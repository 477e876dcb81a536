"""``--output parquet`` (``formats/columnar.py``, ``formats/parquet.py``): typed, streamed, readable.

The file is read back by two independent readers, DuckDB and Polars, and every value is
compared with the same command's ``--output json`` (the JSON recomputation): the declared
booleans are nullable booleans, the numbers doubles, ``created_at`` a timestamp, and a table
longer than the first rows streams with its ``extra`` column.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import subprocess
import sys

import pytest
from support import run_inprocess

duckdb = pytest.importorskip("duckdb")
polars = pytest.importorskip("polars")


@pytest.fixture(scope="module")
def sb(make_sandbox):
    return make_sandbox(seed=7, groups=1, jobs_per_group=5, compare_jobs=160, live_jobs=0, scale_jobs=1300)


def bl(sb, *args):
    return run_inprocess("--host", sb.url, "--api-key", sb.api_key, "--retry", "0", *args)


def as_json_value(value):
    """A Parquet value as the JSON output has it (timestamps as ISO text)."""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    return value


def same(parquet_value, json_value) -> bool:
    if isinstance(json_value, bool) or json_value is None:
        return parquet_value == json_value
    if isinstance(json_value, (int, float)):
        return parquet_value == pytest.approx(float(json_value), rel=0, abs=0)
    return as_json_value(parquet_value) == json_value


@pytest.mark.parametrize("groups", [["BASE", "CAND"], ["GSCALE"]])  # within the first rows; streamed past them
def test_jobs_table_parquet_holds_the_json_rows_typed(sb, tmp_path, groups):
    path = tmp_path / "jobs.parquet"
    args = ["jobs", "table", *[a for g in groups for a in ("-g", g)]]
    written = bl(sb, *args, "--output", "parquet", "-o", str(path))
    assert written.code == 0, written.err
    assert written.out == ""  # the file is the output
    rows = json.loads(bl(sb, "--no-pretty", *args).out)
    types = {r[0]: r[1] for r in duckdb.sql(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()}
    assert types["pass"] == "BOOLEAN" and types["score"] == "DOUBLE" and types["created_at"] == "TIMESTAMP"
    assert types["num_turns"] == "DOUBLE" and types["job_id"] == "VARCHAR"
    columns = list(rows[0])
    assert [c for c in types if c != "extra"] == columns  # the table's columns, in order
    assert ("extra" in types) == (len(rows) > 1000)
    by_duckdb = duckdb.sql(f"SELECT {', '.join(chr(34) + c + chr(34) for c in columns)} "
                           f"FROM read_parquet('{path}')").fetchall()
    by_polars = polars.read_parquet(path).select(columns).rows()
    assert len(by_duckdb) == len(by_polars) == len(rows)
    for row, a, b in zip(rows, by_duckdb, by_polars, strict=True):
        for c, x, y in zip(columns, a, b, strict=True):
            assert same(x, row[c]) and same(y, row[c]), (c, x, y, row[c])
    assert any(r["pass"] is None for r in rows)  # nullable booleans are tested, not assumed
    # One aggregate recomputed from the JSON: the pass rate per group.
    rate = {g: sum(r["pass"] is True for r in rows if r["group_id"] == g) /
            sum(r["pass"] is not None for r in rows if r["group_id"] == g) for g in groups}
    got = dict(duckdb.sql(f"SELECT group_id, avg(pass::INT) FROM read_parquet('{path}') WHERE pass IS NOT NULL "
                          "GROUP BY group_id").fetchall())
    assert got == pytest.approx(rate)


def test_per_instance_rows_as_parquet(sb, tmp_path):
    path = tmp_path / "pairs.parquet"
    args = ["compare", "-g", "BASE", "-g", "CAND2", "--per-instance"]
    assert bl(sb, *args, "--output", "parquet", "-o", str(path)).code == 0
    rows = json.loads(bl(sb, "--no-pretty", *args).out)
    frame = polars.read_parquet(path)
    assert frame.height == len(rows) and frame.columns == list(rows[0])
    for row, got in zip(rows, frame.rows(named=True), strict=True):
        assert all(same(got[c], row[c]) for c in row), row


def test_parquet_to_a_redirected_stdout(sb, tmp_path):
    path = tmp_path / "out.parquet"
    with open(path, "wb") as out:
        done = subprocess.run([sys.executable, "-m", "benchloop", "--host", sb.url, "--api-key", sb.api_key,
                               "jobs", "table", "-g", "BASE", "--output", "parquet"], stdout=out,
                              stderr=subprocess.PIPE, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}')").fetchall() == [(160,)]


def test_without_duckdb_the_hint_comes_before_any_request(sb, monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "duckdb" else real(name, *a))
    before = sb.app.state.counters["requests"]
    result = bl(sb, "jobs", "table", "-g", "BASE", "--output", "parquet", "-o", str(tmp_path / "x.parquet"))
    assert result.code == 2
    assert "pip install 'benchloop-client[data]'" in result.err
    assert not os.path.exists(tmp_path / "x.parquet")
    assert sb.app.state.counters["requests"] == before  # refused before any request
