"""``--output parquet``: the rows of ``--output csv`` as a typed Parquet file, streamed in row groups.

Why DuckDB, not pyarrow: the ``data`` extra (``pip install 'benchloop-client[data]'``) is
DuckDB alone, which the local dataset's SQL needs anyway - a 21 MB wheel (70 MB
installed) where pyarrow is 50 MB (170 MB installed), and importing DuckDB costs ~40 MB
of memory where pyarrow's Parquet writer costs ~90 MB (the row commands must stay under
100 MB at 10^6 rows).  DuckDB has no row appender in Python, so the rows go to it a batch
at a time: ``BATCH`` rows as newline-delimited JSON into a private temporary folder, each
read by DuckDB with the columns' types given (never guessed) into one Parquet part, and
at the end the parts, in order, are copied into the one file (row groups of
``ROW_GROUP`` rows).  Memory holds one batch; the temporary folder holds compressed parts
(a 10^6-job table: a few MB) and is removed, whatever happens.

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
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from ...table.outputs import Output

BATCH = 5_000  # rows handed to DuckDB at a time (a part of one row group)
ROW_GROUP = 20_000  # rows per row group of the file
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


NULL = "\\N"  # a null cell of a batch (a text cell that is exactly this is written quoted: no clash)


def _text_cell(value: Any) -> Any:
    if value is None:
        return NULL
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _Quoted(text) if text == NULL else text


class _Quoted(str):
    """A text cell equal to the null marker: csv quotes it only if asked, so it is made to need it."""


def _bool_cell(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else NULL


def _number_cell(value: Any) -> str:
    typed = _typed(value, "number")
    return NULL if typed is None else float.__repr__(typed)


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
    # One thread (two are ~25 MB more), a small buffer pool; the rows' order kept.
    con = duckdb.connect(config={"threads": 1, "memory_limit": "32MB", "preserve_insertion_order": True})
    try:
        con.execute(f"SET temp_directory = {_literal(os.path.join(folder, 'spill'))}")
        spec = "{" + ", ".join(f"{_literal(c)}: {_literal(_SQL[kinds[c]])}" for c in columns) + "}"
        select = ", ".join(_cast(c, kinds[c]) for c in columns)
        parts: list[str] = []
        count = 0
        for batch in _batches(rows, BATCH):
            chunk = os.path.join(folder, f"batch-{len(parts):06d}.csv")
            with open(chunk, "w", encoding="utf-8", newline="") as out:
                writer = csv.writer(out, lineterminator="\n")
                typed = [(_CELL[kinds[c]]) for c in columns]
                for values in batch:
                    writer.writerow([cell(v) for cell, v in zip(typed, values, strict=True)])
            part = os.path.join(folder, f"part-{len(parts):06d}.parquet")
            con.execute(f"COPY (SELECT {select} FROM read_csv({_literal(chunk)}, header = false, "
                        f"nullstr = {_literal(NULL)}, quote = '\"', escape = '\"', columns = {spec}, "
                        f"parallel = false, buffer_size = 4194304)) TO {_literal(part)} (FORMAT parquet, ROW_GROUP_SIZE {BATCH})")
            os.remove(chunk)
            parts.append(part)
            count += len(batch)
        final = os.path.join(folder, "all.parquet")
        if parts:
            listed = "[" + ", ".join(_literal(p) for p in parts) + "]"
            con.execute(f"COPY (SELECT * FROM read_parquet({listed})) TO {_literal(final)} "
                        f"(FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP})")
        else:  # no rows: the columns, typed, and none of them
            empty = ", ".join(f"CAST(NULL AS {_final_sql(kinds[c])}) AS " + '"' + c.replace('"', '""') + '"'
                              for c in columns) or "CAST(NULL AS VARCHAR) AS value"
            con.execute(f"COPY (SELECT {empty} LIMIT 0) TO {_literal(final)} (FORMAT parquet)")
        con.close()
        if target is not None:
            os.replace(final, target)
        else:
            sink = getattr(stdout, "buffer", stdout)
            stdout.flush()
            with open(final, "rb") as source:
                shutil.copyfileobj(source, sink, 1 << 20)
            sink.flush()
        return count
    finally:
        try:
            con.close()
        except Exception:  # noqa: BLE001 - closed already
            pass
        shutil.rmtree(folder, ignore_errors=True)


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
