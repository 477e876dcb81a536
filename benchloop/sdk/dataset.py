"""``client.dataset``: the local dataset of runs from Python (``bl dataset sync|sql|info``).

``sync`` fetches through this client's own resources (``client.jobs.table``,
``client.trajectory.get``: the engine, the requests of the CLI), ``sql`` answers rows as
dicts, ``path`` is the folder whose ``jobs``, ``steps`` and ``runs`` sub-folders pandas,
Polars or Spark read as hive-partitioned Parquet.  Needs the ``data`` extra
(``pip install 'benchloop-client[data]'``); its modules are imported on first use.
"""

from __future__ import annotations

import os
from typing import Any

from .errors import NetworkError, PartialFailure, UsageError


class _Fetcher:
    """``dataset.sync.Fetcher`` over a client: what succeeded and each failure."""

    def __init__(self, client: Any):
        self.client = client

    @staticmethod
    def _partial(call: Any, **kwargs: Any) -> tuple[Any, list[tuple[str, str]]]:
        try:
            return call(**kwargs), []
        except (PartialFailure, NetworkError) as exc:
            return exc.results or [], list(exc.failures)

    def table(self, groups: list[str], **options: Any) -> tuple[Any, list[tuple[str, str]]]:
        """``jobs table``'s rows as their pages arrive (never the whole group in memory)."""
        from .methods import sdk_options, values_for

        action = self.client._rt.spec.resources["jobs"].actions["table"]
        values = values_for("jobs.table", sdk_options(action), {"group": groups, **options})
        rows, failures = self.client._rows(action, values)
        return _failing_as_ours(rows), failures

    def trajectories(self, job_ids: list[str]) -> tuple[Any, list[tuple[str, str]]]:
        return self._partial(self.client.trajectory.get, job=job_ids)


def _failing_as_ours(rows: Any) -> Any:
    """The rows; a page that fails after some is a ``BenchloopError`` (what the sync catches)."""
    from ..base.errors import BenchloopError
    from ..engine.pagination import PaginationError

    try:
        yield from rows
    except PaginationError as exc:
        raise BenchloopError(str(exc)) from None


def _internal(call: Any) -> Any:
    from ..base import errors

    try:
        return call()
    except errors.UsageError as exc:  # a newer schema, no DuckDB, a bad query: the client's error
        raise UsageError(str(exc)) from None


class Dataset:
    """The local dataset of runs (docs/dataset.md), at ``dataset`` or else ``BENCHLOOP_DATASET``,
    else the per-user data directory."""

    def __init__(self, client: Any, dataset: str | os.PathLike[str] | None = None):
        self._client = client
        self._given = dataset

    def _root(self, dataset: str | os.PathLike[str] | None) -> str:
        from ..dataset import store

        return store.location(dataset if dataset is not None else self._given)

    def path(self, table: str | None = None, dataset: str | os.PathLike[str] | None = None) -> str:
        """The dataset's folder, or the folder of one table (``jobs``, ``steps``, ``runs``):
        ``polars.read_parquet(client.dataset.path("jobs"), hive_partitioning=True)``."""
        from ..dataset import store

        root = self._root(dataset)
        if table is None:
            return root
        if table not in store.TABLES:
            raise UsageError(f"no table {table!r}: the tables are {', '.join(store.TABLES)}")
        return os.path.join(root, table)

    def sync(self, group: str | list[str], *, with_steps: bool = False,
             dataset: str | os.PathLike[str] | None = None, status: str | None = None,
             template: str | None = None, instance_id: str | None = None, metric: str | None = None,
             unit: str | None = None, pass_threshold: float | None = None) -> list[dict[str, Any]]:
        """Fetch ``group`` (one id or several) into the dataset, as ``bl dataset sync`` does; one
        dict per group synced.  A group or job that failed raises :class:`PartialFailure` after
        the rest is written (its ``results`` are the groups synced)."""
        from ..dataset import sync

        groups = [group] if isinstance(group, str) else list(group)
        if not groups:
            raise UsageError("dataset.sync needs at least one group")
        root = self._root(dataset)
        report = _internal(lambda: sync.sync(
            _Fetcher(self._client), root, groups, with_steps=with_steps,
            filters={"status": status, "template": template, "instance_id": instance_id},
            scoring={"metric": metric, "unit": unit, "pass_threshold": pass_threshold},
            concurrency=self._client.concurrency))
        synced = [{"dataset": root, **entry} for entry in report.groups]
        if report.failures:
            raise PartialFailure(report.failures, synced)
        return synced

    def sql(self, query: str, dataset: str | os.PathLike[str] | None = None) -> list[dict[str, Any]]:
        """The rows of one DuckDB query over the views ``jobs``, ``steps`` and ``runs``."""
        from ..dataset import query as queries
        from ..dataset import store

        root = self._root(dataset)
        if _internal(lambda: store.read_manifest(root)) is None:
            raise UsageError(f"no dataset at {root}: dataset.sync(...) first")
        return _internal(lambda: queries.sql(root, query))

    def info(self, dataset: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """Where the dataset is and what it holds (``bl dataset info``)."""
        from ..dataset import query as queries

        return _internal(lambda: queries.info(self._root(dataset)))
