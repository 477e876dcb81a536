"""Writing one partition: rows -> a Parquet file, through DuckDB, replaced atomically.

Why DuckDB and not pyarrow: the dataset is queried through DuckDB anyway (``bl dataset
sql``, ``bl compare --dataset``), so one optional dependency does both; its wheel has no
dependency of its own (pyarrow is about twice its size and brings numpy), and its
``COPY ... TO (FORMAT parquet)`` streams: the rows go to a JSON Lines file beside the
partition as they come (one row in memory at a time), DuckDB reads that file with the
declared column types (``read_json(columns=...)``: never guessed from the values, so an
all-empty column is still a DOUBLE) and writes row groups as it goes, in bounded memory.

Atomicity: the Parquet file is written to a temp file in the dataset's own ``.staging``
folder (``base.files.temp_beside``: same file system), then renamed over the partition's
``part-0.parquet``; a reader sees the old file or the new one, never half of one.  Never
in the partition's folder: a process killed mid-write leaves its temp files where no
reader of ``DIR/jobs`` looks (Polars reads every file of a folder it is given), and the
next write into ``.staging`` removes them (their lock is free).
"""

from __future__ import annotations

import json
import os
import threading
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


def connect(**config: Any) -> Any:
    """A DuckDB connection (in memory) with ``config``, and never DuckDB's progress bar: it
    draws it on stdout (the process's, not Python's ``sys.stdout``), in the middle of a JSON
    answer or a Parquet file redirected there, once a query runs for more than two seconds."""
    connection = duckdb().connect(config=config)
    connection.execute("SET enable_progress_bar = false")  # a setting of the connection, not of the database
    return connection


def quoted(name: str) -> str:
    """``name`` as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


_quote = quoted


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _discard(tmp: str) -> None:
    from ..base import files

    try:
        os.unlink(tmp)
    except OSError:
        pass
    with files._live_lock:  # no longer ours to clean up at a forced exit
        files._live.discard(tmp)


def write(path: str, columns: Sequence[tuple[str, str]], rows: Iterable[dict[str, Any]], staging: str) -> int:
    """Write ``rows`` (each a dict; missing keys are NULL, ``json`` columns any JSON value)
    as the Parquet file ``path`` with ``columns`` ((name, declared type) pairs, in order),
    atomically: staged in ``staging`` (a folder of the dataset, on its file system), then
    renamed to ``path``.  The number of rows written."""
    from ..base.files import local_error, temp_beside

    duckdb()  # the install hint before any row is read
    kinds = {name: kind for name, kind in columns}
    try:
        fd, staged = temp_beside(os.path.join(staging, "rows.jsonl"))
    except OSError as exc:
        raise local_error(exc, staging) from None
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
        out, tmp = temp_beside(os.path.join(staging, "part.parquet"))
        try:
            _copy(staged, tmp, columns, count)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.replace(tmp, path)  # a reader sees the old file or this one
        except OSError as exc:
            raise local_error(exc, path) from None
        finally:
            os.close(out)
            _discard(tmp)
    finally:
        os.close(fd)
        _discard(staged)
    return count


# DuckDB's own settings for the copy: one thread and a bounded pool, and one copy at a time
# (the groups a sync fans out take turns: a copy is seconds where fetching is minutes), keep a
# partition of any size in about 160 MB (by default DuckDB's read_json holds more the longer the file: 554 MB
# for 10^6 narrow rows, 132 MB like this); rows too wide for the pool are copied again with
# DuckDB's defaults (as much memory as they need) rather than failing the sync.
BOUNDED = {"threads": 1, "memory_limit": "128MB"}
_ONE_COPY = threading.Lock()


def _copy(staged: str, tmp: str, columns: Sequence[tuple[str, str]], count: int) -> None:
    """The staged JSON Lines rows as the Parquet file ``tmp`` (typed by ``columns``)."""
    types = ", ".join(f"{_literal(name)}: {_literal(TYPES[kind])}" for name, kind in columns)
    select = ", ".join(_quote(name) for name, _ in columns)
    if count:
        source = (f"read_json({_literal(staged)}, format='newline_delimited', "
                  f"columns={{{types}}}, timestampformat='%Y-%m-%dT%H:%M:%S.%fZ')")
    else:  # read_json needs a row to read: an empty partition with the same columns
        source = "(SELECT " + ", ".join(f"CAST(NULL AS {TYPES[kind]}) AS {_quote(name)}"
                                        for name, kind in columns) + " WHERE false)"
    # USE_TMP_FILE false: ``tmp`` is already our temp file, swept after a kill; DuckDB's own
    # ``tmp_`` copy beside it would be left behind by a SIGKILL during the COPY.
    copy = (f"COPY (SELECT {select} FROM {source}) TO {_literal(tmp)} "
            "(FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false)")
    with _ONE_COPY:
        for config in (BOUNDED, {}):
            connection = connect(**config)
            try:
                connection.execute(copy)
                return
            except duckdb().OutOfMemoryException:
                if not config:
                    raise
            finally:
                connection.close()
