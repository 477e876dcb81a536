"""Writing one partition: rows -> a Parquet file, through DuckDB, replaced atomically.

Why DuckDB and not pyarrow: the dataset is queried through DuckDB anyway (``bl dataset
sql``, ``bl compare --dataset``), so one optional dependency does both; its wheel has no
dependency of its own (pyarrow is about twice its size and brings numpy), and its
``COPY ... TO (FORMAT parquet)`` streams: the rows go to a JSON Lines file beside the
partition as they come (one row in memory at a time), DuckDB reads that file with the
declared column types (``read_json(columns=...)``: never guessed from the values, so an
all-empty column is still a DOUBLE) and writes row groups as it goes, in bounded memory.

Atomicity: the Parquet file is written to a hidden temp file in the partition's own
folder (``base.files.replacing``), then renamed over ``part-0.parquet``; a reader sees
the old file or the new one, never half of one.  A process killed mid-write leaves only
temp files, which the next write into that folder removes (their lock is free).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from ..base.errors import UsageError
from . import INSTALL

# The declared column types of the table (``columns`` of a step: number, string, boolean,
# json) and the dataset's own (integer, timestamp), as DuckDB types.
TYPES = {"string": "VARCHAR", "number": "DOUBLE", "boolean": "BOOLEAN", "json": "VARCHAR",
         "integer": "BIGINT", "timestamp": "TIMESTAMP"}


def duckdb() -> Any:
    """The ``duckdb`` module, or a usage error (exit 2) with the one-line install hint."""
    try:
        import duckdb as module
    except ImportError:
        raise UsageError(f"the dataset needs DuckDB, an optional extra: {INSTALL}") from None
    return module


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def write(path: str, columns: Sequence[tuple[str, str]], rows: Iterable[dict[str, Any]]) -> int:
    """Write ``rows`` (each a dict; missing keys are NULL, ``json`` columns any JSON value)
    as the Parquet file ``path`` with ``columns`` ((name, declared type) pairs, in order),
    atomically.  The number of rows written."""
    from ..base.files import replacing, temp_beside

    db = duckdb()
    kinds = {name: kind for name, kind in columns}
    fd, staged = temp_beside(path, ".jsonl")
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n", closefd=False) as handle:
            for row in rows:
                record = {name: (json.dumps(row.get(name), ensure_ascii=False, sort_keys=True)
                                 if kinds[name] == "json" and row.get(name) is not None else row.get(name))
                          for name in kinds}
                handle.write(json.dumps(record, ensure_ascii=False, allow_nan=False, default=str))
                handle.write("\n")
                count += 1
        types = ", ".join(f"{_literal(name)}: {_literal(TYPES[kind])}" for name, kind in columns)
        select = ", ".join(_quote(name) for name, _ in columns)
        with replacing(path, suffix=".parquet") as (_out, tmp):
            connection = db.connect()
            try:
                if count:
                    source = (f"read_json({_literal(staged)}, format='newline_delimited', "
                              f"columns={{{types}}}, timestampformat='%Y-%m-%dT%H:%M:%S.%fZ')")
                else:  # read_json needs a row to read: an empty partition with the same columns
                    source = "(SELECT " + ", ".join(f"CAST(NULL AS {TYPES[kind]}) AS {_quote(name)}"
                                                    for name, kind in columns) + " WHERE false)"
                connection.execute(f"COPY (SELECT {select} FROM {source}) TO {_literal(tmp)} "
                                   "(FORMAT parquet, COMPRESSION zstd)")
            finally:
                connection.close()
    finally:
        os.close(fd)
        try:
            os.unlink(staged)
        except OSError:
            pass
        from ..base import files

        with files._live_lock:
            files._live.discard(staged)
    return count
