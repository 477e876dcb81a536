"""A group's job rows read back from the dataset: ``bl compare --dataset`` (step ``job_rows``).

The rows are the ones ``bl jobs table`` gave when the group was synced, in the same order
and with the same values: the Parquet columns are typed as the table declares them
(numbers are DOUBLE), so a whole number comes back as an int, as the JSON it was read from
had it (every integer of a job row is far below 2**53, where a DOUBLE holds it exactly).
The figures are therefore the backend's to the last digit, and no request is made.

What the rows cannot say is refused instead of guessed: a group the dataset does not
hold, or scored with another ``--metric``, ``--unit`` or ``--pass-threshold`` than the
comparison asks for (the score and pass are columns computed at sync time) is a usage
error (exit 2) naming the ``bl dataset sync`` to run.  ``--status`` and ``--template`` select
stored rows exactly as the backend's job list does (equal values); a group synced with
filters of its own is said on stderr.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

from ..base.errors import UsageError
from . import parquet, store

EXACT = 2 ** 53


def _number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < EXACT:
        return int(value)
    return value


BATCH = 2_000  # rows fetched from DuckDB at a time


def job_rows(dataset: str, group: str, columns: list[str], options: dict[str, Any],
             warn: Callable[[str], None]) -> list[dict[str, Any]]:
    """The stored rows of ``group`` with ``columns`` (and ``slice`` with ``--by``), as a list."""
    return list(stream_rows(dataset, group, columns, options, warn))


def stream_rows(dataset: str, group: str, columns: list[str], options: dict[str, Any],
                warn: Callable[[str], None]) -> Iterator[dict[str, Any]]:
    """The stored rows of ``group`` with ``columns`` (and ``slice`` with ``--by``), read from
    DuckDB ``BATCH`` rows at a time as they are iterated (``bl compare --dataset`` gathers
    them by instance as they come: ``compare.groups``).  What the rows cannot say is refused
    here, before the first row (module docstring)."""
    root = store.location(dataset if dataset not in ("", "default") else None)
    if store.read_manifest(root) is None:
        raise UsageError(f"--dataset {root}: no dataset there (bl dataset sync --dataset {root} -g ...)")
    path = store.partition(root, "jobs", group)
    runs = store.partition(root, "runs", group)
    if not os.path.isfile(path) or not os.path.isfile(runs):
        raise UsageError(f"--dataset {root} holds no group {group}: bl dataset sync -g {group} first")
    connection = parquet.connect(threads=1)
    try:
        relation = connection.execute("SELECT metric, unit, pass_threshold, filters FROM read_parquet(?, "
                                      "hive_partitioning=false)", [runs])
        metric, unit, threshold, filters = relation.fetchone()
        names = [d[0] for d in connection.execute("SELECT * FROM read_parquet(?, hive_partitioning=false) LIMIT 0",
                                                  [path]).description]
        asked = {"metric": options.get("metric"), "unit": options.get("unit"),
                 "pass_threshold": float(options["pass_threshold"]) if options.get("pass_threshold") is not None
                 else None}
        synced = {"metric": metric, "unit": unit, "pass_threshold": threshold}
        for name, value in asked.items():
            if synced[name] is not None and value is not None and synced[name] != value:
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"--dataset: {group} was synced with {flag} {synced[name]}, not {value}: "
                                 f"bl dataset sync -g {group} {flag} {value} (or compare with {flag} {synced[name]})")
        if filters and json.loads(filters):
            warn(f"--dataset: {group} was synced with {json.loads(filters)}: only those jobs are compared")
        missing = [c for c in columns if c not in names]
        if missing:
            raise UsageError(f"--dataset {root}: {group} has no column {', '.join(missing)} (sync it again)")
        read_by = None
        if options.get("by") is not None:
            from ..compare.rows import compile_expression

            read_by = compile_expression(options["by"], "--by")
        # Only the columns asked for and the filters' (a row group of every column decoded is
        # ~40 MB at 10^6 jobs); --by's expression may read any column of the row.
        needed = set(columns) | {"status", "template"}
        names = names if read_by is not None else [n for n in names if n in needed]
        listed = ", ".join(parquet.quoted(n) for n in names)
        relation = connection.execute(f"SELECT {listed} FROM read_parquet(?, hive_partitioning=false)", [path])
    except BaseException:
        connection.close()
        raise
    return _rows(connection, relation, names, columns, options, read_by)


def _rows(connection: Any, relation: Any, names: list[str], columns: list[str], options: dict[str, Any],
          read_by: Any) -> Iterator[dict[str, Any]]:
    from ..compare.rows import instance_key

    wanted = [(name, options[name]) for name in ("status", "template") if options.get(name) is not None]
    try:
        while True:
            batch = relation.fetchmany(BATCH)
            if not batch:
                return
            for values in batch:
                row = dict(zip(names, values, strict=True))
                if any(row.get(name) != value for name, value in wanted):
                    continue
                made = {c: _number(row[c]) for c in columns}
                if read_by is not None:
                    made["slice"] = instance_key(read_by(row))
                yield made
    finally:
        connection.close()
