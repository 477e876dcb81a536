"""Reading the dataset: DuckDB views ``jobs``, ``steps``, ``runs``, ``bl dataset sql`` and ``info``.

Each view is ``read_parquet('DIR/<table>/*/*.parquet', hive_partitioning=true)`` with
``union_by_name`` (a partition written by an older schema version still reads); a table
with no partition yet is an empty view with the columns it would have, so a query naming
``steps`` works before any ``--with steps``.  The connection is in memory: nothing is
ever written by a query (``bl dataset sql`` cannot change the dataset; a ``COPY ... TO``
of the user's own writes only where the user says).
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
from typing import Any

from . import parquet, steps, store


def _columns(table: str) -> tuple[tuple[str, str], ...]:
    from .sync import RUNS_COLUMNS, job_columns

    if table == "jobs":
        return tuple(job_columns())
    if table == "steps":
        return steps.COLUMNS
    return RUNS_COLUMNS


def connect(root: str) -> Any:
    """An in-memory DuckDB connection with the dataset's views (the schema version checked)."""
    store.read_manifest(root)
    connection = parquet.connect()
    for table in store.TABLES:
        if store.groups(root, table):
            pattern = os.path.join(root, table, "*", store.PART).replace("'", "''")
            source = f"read_parquet('{pattern}', hive_partitioning=true, union_by_name=true)"
        else:
            source = "(SELECT " + ", ".join(f'CAST(NULL AS {parquet.TYPES[kind]}) AS "{name}"'
                                            for name, kind in _columns(table)) + " WHERE false)"
        connection.execute(f'CREATE VIEW "{table}" AS SELECT * FROM {source}')
    return connection


def plain(value: Any) -> Any:
    """A DuckDB value as JSON would have it: times as ISO text, decimals as numbers."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and value != value:  # NaN: no JSON number
        return None
    return value


def sql(root: str, query: str) -> list[dict[str, Any]]:
    """The rows of ``query`` over the dataset at ``root``, each a dict by column name."""
    from ..base.errors import UsageError

    db = parquet.duckdb()
    connection = connect(root)
    try:
        try:
            relation = connection.execute(query)
        except db.Error as exc:
            raise UsageError(f"dataset sql: {exc}") from None
        if relation.description is None:
            return []
        names = [d[0] for d in relation.description]
        return [dict(zip(names, (plain(v) for v in values), strict=True)) for values in relation.fetchall()]
    finally:
        connection.close()


def info(root: str) -> dict[str, Any]:
    """Where the dataset is and what it holds: schema version, groups, rows per table."""
    manifest = store.read_manifest(root)
    found: dict[str, Any] = {"dataset": root, "exists": manifest is not None,
                             "schema_version": manifest.get("schema_version") if manifest else None,
                             "tool_schema_version": store.SCHEMA_VERSION,
                             "written_by": manifest.get("written_by") if manifest else None}
    tables: dict[str, Any] = {}
    runs: list[dict[str, Any]] = []
    if manifest is not None:
        connection = connect(root)
        try:
            for table in store.TABLES:
                (count,) = connection.execute(f'SELECT count(*) FROM "{table}"').fetchone()
                tables[table] = {"groups": len(store.groups(root, table)), "rows": int(count)}
            relation = connection.execute(
                "SELECT group_id, synced_at, finished, jobs, final_jobs, status_counts, steps FROM runs "
                "ORDER BY group_id")
            names = [d[0] for d in relation.description]
            for values in relation.fetchall():
                run = dict(zip(names, (plain(v) for v in values), strict=True))
                run["status_counts"] = json.loads(run["status_counts"]) if run["status_counts"] else {}
                runs.append(run)
        finally:
            connection.close()
    found["tables"] = tables
    found["groups"] = runs
    return found
