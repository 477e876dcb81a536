"""``--output parquet``: the rows of ``--output csv`` as a typed Parquet file, streamed in row groups.

Why DuckDB, not pyarrow: the ``data`` extra (``pip install 'benchloop-client[data]'``) is
DuckDB alone, which the local dataset's SQL needs anyway - a 21 MB wheel (70 MB
installed) where pyarrow is 50 MB (170 MB installed).  Not for its memory: DuckDB costs
more than pyarrow's writer (~62 MB), see below.  DuckDB has no row appender in its 1.x
Python API, so the rows reach it as CSV text: through a named pipe, one ``COPY`` reading
it (its thread parses and writes row groups while this one makes the rows), the columns'
types given, never guessed; where there is no ``os.mkfifo`` (Windows), ``BATCH`` rows at a
time as a CSV file in a private temporary folder, each read into one Parquet part, the
parts copied in order into the one file at the end.  Memory holds a row group; the folder
is removed whatever happens.

Memory, measured at 10^6 jobs (``bl jobs table -g GSCALE``, the sandbox's
``--scale-jobs 1000000``, ``/usr/bin/time -v``; docs/benchmarks.md): ``--output jsonl``
peaks at 59 MB (``python -c pass``: 9 MB), and DuckDB in that same process costs 51 MB
before a row is written: ``import duckdb`` 15 MB, ``connect()`` 26 MB more (its catalog:
29 MB of its 69 MB library become resident), its first CSV-to-Parquet ``COPY`` 10 MB more
(the code of the CSV reader and the Parquet writer).  So the floor is 110 MB (105 MiB),
above the 100 MiB the row formats aim at, whatever is done with the rows: the target
cannot be met with DuckDB in the process.  Above the floor, DuckDB keeps the pipe's CSV
buffers up to its memory limit (``pool``: 16 MB for narrow rows), and the whole command
peaks at 137 MB (146 MB before this design: 32 MB pool, 5,000-row parts merged).  One
thread (two are ~25 MB more).  The parts, at the same pool, peak 5 MB higher and take a third
more CPU (87 s against 65 s of user time at 10^6 rows).

The columns are those ``csv`` prints (``streamed.py``): the declared ones, then any other
field of the first rows, and ``extra`` (JSON text) when the output is longer than them.
Their types come from the table's declared row schema: ``boolean`` is a nullable BOOLEAN,
``integer`` BIGINT, ``number`` DOUBLE, ``string`` VARCHAR - and TIMESTAMP when every value
of the first rows is an ISO 8601 date-time (``created_at``; a later value that is not one
is null) - and anything else (lists, objects, mixed types) VARCHAR holding compact JSON.
A column nothing declares is typed from the first rows' values the same way.  A value
that is not of its column's type is null (the table format's converters do the same).

The format's name, where it goes and the install hint are ``columnar.py`` (this module
needs the ``data`` extra).  Where it goes: ``-o FILE.parquet`` (written atomically: a temporary file beside it, renamed
when complete, so a failed page leaves no half file), else stdout when it is not a
terminal (``> out.parquet``, ``| duckdb``); on a terminal it is refused.
"""

from __future__ import annotations

import csv
import errno
import json
import math
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...table.outputs import Output

ROW_GROUP = 10_000  # rows per row group of the file at most ...
ROW_GROUP_BYTES = "2MB"  # ... and about this much data (wide rows: fewer rows a group)
# One thread (two are ~25 MB more); the rows' order kept.  The buffer pool's limit is most of
# what DuckDB holds beyond its fixed cost (module docstring): it keeps the pipe's CSV buffers
# up to it.  16 MB where the first rows are narrow (a jobs table's: ~300 bytes of CSV), more
# for wider rows, which need it for a row group (``pool``: 16 MB fails rows of ~3 kB of
# distinct text, 32 MB holds 50 kB).
CONFIG: dict[str, Any] = {"threads": 1, "preserve_insertion_order": True}
POOLS = ((1_000, "16MB"), (10_000, "32MB"))  # (widest first row up to, in characters: pool); else:
WIDE_POOL = "64MB"
TUNING = {"write_buffer_row_group_count": "1"}  # a row group written as soon as it is full
CSV_BUFFER = 1 << 22  # bytes DuckDB reads at a time (a row must fit in half of it: 2 MB)
PIPE_BUFFER = 1 << 16  # characters written to the pipe at a time
BATCH = 5_000  # rows of a part where there are no named pipes (``_parts``)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")


# ------------------------------------------------------------------ types
def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "json"


def _declared(output: Output | None) -> dict[str, list[str]]:
    if output is None:
        return {}
    return {c.name: [t for t in c.types if t != "null"] for c in output.columns}


def column_types(columns: list[str], head: list[dict[str, Any]], output: Output | None) -> dict[str, str]:
    """Each column's kind: boolean, integer, number, timestamp, string or json."""
    declared = _declared(output)
    out = {}
    for name in columns:
        values = [row[name] for row in head if row.get(name) is not None]
        types = declared.get(name) or sorted({_kind_of(v) for v in values})
        if types == ["integer", "number"]:
            types = ["number"]
        kind = types[0] if len(types) == 1 and types[0] in ("boolean", "integer", "number", "string") else "json"
        if kind == "string" and values and all(isinstance(v, str) and _ISO.fullmatch(v) for v in values):
            kind = "timestamp"
        out[name] = kind
    return out


_SQL = {"boolean": "BOOLEAN", "integer": "DOUBLE", "number": "DOUBLE", "timestamp": "VARCHAR",
        "string": "VARCHAR", "json": "VARCHAR"}  # what the JSON of a batch holds


def _cast(name: str, kind: str) -> str:
    quoted = '"' + name.replace('"', '""') + '"'
    if kind == "integer":
        return f"TRY_CAST({quoted} AS BIGINT) AS {quoted}"
    if kind == "timestamp":
        return f"TRY_CAST({quoted} AS TIMESTAMP) AS {quoted}"
    return quoted


# The cells as the csv module writes them with QUOTE_NONNUMERIC: a float bare (its repr), a
# text quoted, and a null as the bare float ``nan`` - which DuckDB reads as null (``nullstr``)
# only unquoted (``allow_quoted_nulls = false``): no text ("nan", "\\N", "") is taken for one.
NULL = math.nan
_LIMIT = float(2**1023)  # an integer at least this large is not a finite DOUBLE's (null)


def _text_cell(value: Any) -> Any:
    if type(value) is str:
        return value
    if value is None:
        return NULL
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _bool_cell(value: Any) -> Any:
    return ("true" if value else "false") if isinstance(value, bool) else NULL


def _number_cell(value: Any) -> float:
    kind = type(value)  # the common cases first: exactly a float or an int (not a bool)
    if kind is float:
        return value if value - value == 0.0 else NULL  # inf - inf and nan - nan are nan
    if kind is int:
        return float(value) if -_LIMIT < value < _LIMIT else NULL
    typed = _typed(value, "number")
    return NULL if typed is None else float(typed)


_CELL = {"boolean": _bool_cell, "integer": _number_cell, "number": _number_cell, "timestamp": _text_cell,
         "string": _text_cell, "json": _text_cell}


def _typed(value: Any, kind: str) -> Any:
    """``value`` as its column's JSON holds it (None when it is not of the column's type)."""
    if value is None:
        return None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        number = float(value) if isinstance(value, int) and abs(value) < 2**1023 else value
        return number if isinstance(number, float) and math.isfinite(number) else None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ------------------------------------------------------------------ write
def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def write(target: str | None, stdout: Any, columns: list[str], rows: Iterator[list[Any]],
          head: list[dict[str, Any]], output: Output | None) -> int:
    """Write the rows (lists of values in ``columns`` order) to ``target`` (None: stdout's bytes);
    the number of rows written.  ``head`` are the first rows (as dicts) the types come from."""
    import duckdb

    kinds = column_types(columns, head, output)
    folder = tempfile.mkdtemp(prefix=".bl-parquet-", dir=os.path.dirname(os.path.abspath(target)) if target else None)
    con = duckdb.connect(config={**CONFIG, "memory_limit": pool(head)})
    try:
        con.execute(f"SET temp_directory = {_literal(os.path.join(folder, 'spill'))}")
        _tune(con)
        spec = "{" + ", ".join(f"{_literal(c)}: {_literal(_SQL[kinds[c]])}" for c in columns) + "}"
        select = ", ".join(_cast(c, kinds[c]) for c in columns)

        def source(path: str) -> str:
            return (f"SELECT {select} FROM read_csv({_literal(path)}, header = false, auto_detect = false, "
                    f"nullstr = 'nan', allow_quoted_nulls = false, quote = '\"', escape = '\"', columns = {spec}, "
                    f"parallel = false, buffer_size = {CSV_BUFFER})")

        typed = [_CELL[kinds[c]] for c in columns]
        lines = ([cell(v) for cell, v in zip(typed, values, strict=True)] for values in rows)
        final = os.path.join(folder, "all.parquet")
        if not columns:
            count = 0
        elif hasattr(os, "mkfifo"):
            count = _piped(con, folder, source, lines, final)
        else:
            count = _parts(con, folder, source, lines, final)
        if not count:  # no rows: the columns, typed, and none of them
            empty = ", ".join(f"CAST(NULL AS {_final_sql(kinds[c])}) AS " + '"' + c.replace('"', '""') + '"'
                              for c in columns) or "CAST(NULL AS VARCHAR) AS value"
            con.execute(f"COPY (SELECT {empty} LIMIT 0) TO {_literal(final)} (FORMAT parquet)")
        con.close()
        if target is not None:
            os.replace(final, target)
        else:
            sink = getattr(stdout, "buffer", stdout)
            stdout.flush()
            with open(final, "rb") as source_file:
                shutil.copyfileobj(source_file, sink, 1 << 20)
            sink.flush()
        return count
    finally:
        try:
            con.close()
        except Exception:  # noqa: BLE001 - closed already
            pass
        shutil.rmtree(folder, ignore_errors=True)


def pool(head: list[dict[str, Any]]) -> str:
    """DuckDB's memory limit for rows as wide as the widest of ``head`` (``POOLS``)."""
    widest = max((sum(len(v) if isinstance(v, str) else 8 if isinstance(v, (int, float)) or v is None
                      else len(json.dumps(v, ensure_ascii=False, default=str)) for v in row.values())
                  for row in head), default=0)
    return next((limit for width, limit in POOLS if widest <= width), WIDE_POOL)


def _tune(con: Any) -> None:
    """The settings of ``TUNING`` this DuckDB knows (an older one lacks some: left at its default),
    and its ``type_pushdown`` optimizer off: it moves the ``TRY_CAST`` of a column (BIGINT,
    TIMESTAMP) into the CSV reader, where a value that does not convert (``1.5``, ``1e+308``,
    ``not a time``) fails the whole ``COPY`` instead of being null (DuckDB 2.0)."""
    con.execute("SET enable_progress_bar = false")  # DuckDB draws it on stdout: into `> out.parquet`
    known = {name for (name,) in con.execute("SELECT name FROM duckdb_settings()").fetchall()}
    for name, value in TUNING.items():
        if name in known:
            con.execute(f"SET {name} = {value}")
    optimizers = {name for (name, *_rest) in con.execute("SELECT * FROM duckdb_optimizers()").fetchall()}
    if "type_pushdown" in optimizers:
        con.execute("SET disabled_optimizers = 'type_pushdown'")


def _row_groups() -> str:
    return f"FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP}, ROW_GROUP_SIZE_BYTES {_literal(ROW_GROUP_BYTES)}"


def _piped(con: Any, folder: str, source: Callable[[str], str], lines: Iterator[list[Any]], final: str) -> int:
    """One ``COPY`` reading the rows from a named pipe as they are written to it: DuckDB parses
    and writes the row groups in its thread while this one makes the rows (module docstring)."""
    pipe = os.path.join(folder, "rows.csv")
    os.mkfifo(pipe, 0o600)
    failed: list[BaseException] = []

    def copy() -> None:
        try:
            con.execute(f"COPY ({source(pipe)}) TO {_literal(final)} ({_row_groups()})")
        except BaseException as exc:  # noqa: BLE001 - raised in the writing thread (below)
            failed.append(exc)

    worker = threading.Thread(target=copy, name="bl-parquet", daemon=True)
    worker.start()
    count = 0
    try:
        fd = _open_writing(pipe, worker)
        if fd is None:  # DuckDB stopped before it opened the pipe
            worker.join()
            raise failed[0] if failed else RuntimeError("DuckDB did not read the rows")
        try:
            with open(fd, "w", encoding="utf-8", newline="", buffering=PIPE_BUFFER) as out:
                writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
                for line in lines:
                    writer.writerow(line)
                    count += 1
        except BrokenPipeError:  # DuckDB stopped reading: its own error says why
            worker.join()
            raise failed[0] if failed else RuntimeError("DuckDB stopped reading the rows") from None
    except BaseException:
        con.interrupt()
        worker.join(timeout=10)
        raise
    worker.join()
    if failed:
        raise failed[0]
    return count


def _open_writing(pipe: str, worker: threading.Thread) -> int | None:
    """The pipe opened for writing once DuckDB has it open for reading (None if it stopped first):
    a plain ``open`` would wait for a reader that never comes when the ``COPY`` failed at once."""
    while True:
        try:
            fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            if not worker.is_alive():
                return None
            worker.join(0.002)
            continue
        os.set_blocking(fd, True)
        return fd


def _parts(con: Any, folder: str, source: Callable[[str], str], lines: Iterator[list[Any]], final: str) -> int:
    """Without named pipes (Windows): ``BATCH`` rows at a time as a CSV file, each read by DuckDB
    into one Parquet part, and at the end the parts, in order, copied into the one file."""
    parts: list[str] = []
    count = 0
    for batch in _batches(lines, BATCH):
        chunk = os.path.join(folder, f"batch-{len(parts):06d}.csv")
        with open(chunk, "w", encoding="utf-8", newline="") as out:
            csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC).writerows(batch)
        part = os.path.join(folder, f"part-{len(parts):06d}.parquet")
        con.execute(f"COPY ({source(chunk)}) TO {_literal(part)} (FORMAT parquet, ROW_GROUP_SIZE {BATCH})")
        os.remove(chunk)
        parts.append(part)
        count += len(batch)
    if parts:
        listed = "[" + ", ".join(_literal(p) for p in parts) + "]"
        con.execute(f"COPY (SELECT * FROM read_parquet({listed})) TO {_literal(final)} ({_row_groups()})")
    return count


def _final_sql(kind: str) -> str:
    return {"integer": "BIGINT", "timestamp": "TIMESTAMP", "number": "DOUBLE", "boolean": "BOOLEAN"}.get(kind, "VARCHAR")


def _batches(rows: Iterable[list[Any]], size: int) -> Iterator[list[list[Any]]]:
    batch: list[list[Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
