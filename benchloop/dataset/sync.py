"""``bl dataset sync``: the groups' jobs (and steps) into the dataset, incrementally and safely.

Every request goes through the engine, by way of the Python client (``benchloop.sdk.dataset``
hands this module a :class:`Fetcher` over a ``Client``):
the jobs are ``bl jobs table``'s rows (action ``jobs table``: its job list and detail
metrics, paged, 1,000 jobs a request, the groups fanned out within ``--concurrency``), the
steps ``bl trajectory get``'s answers (``-j`` ids, in batches), read by
``dataset.steps``.  No query is built here.

Incremental: with ``--with steps`` a job's trajectory is fetched only when the dataset
has no steps of it, or its row changed since they were stored, or it was not finished
then (a job of a final status whose row is the same is never fetched again: its stored
steps are kept).  ``state/group_id=G.json`` records, per job, the row its steps were
taken from; it is written after the steps partition, so a sync killed between the two
fetches those jobs again next time, never keeps steps it does not have.

Safe: each partition is written whole to a temp file in its own folder and renamed over
the old one (``dataset.parquet``, staged in ``DIR/.staging``), in the order jobs, steps, state, runs; a sync killed
at any point leaves every partition either as it was or as it is now, all readable, and
the next sync completes the rest.  A group that failed keeps its previous partitions
(exit 1, said on stderr).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import parquet, steps, store

TRAJECTORY_BATCH = 100  # job ids per `trajectory get` call (each job is one request either way)

RUNS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("group_id", "string"), ("synced_at", "timestamp"), ("finished", "boolean"), ("jobs", "integer"),
    ("final_jobs", "integer"), ("status_counts", "json"), ("with_steps", "boolean"), ("steps", "integer"),
    ("filters", "json"), ("metric", "string"), ("unit", "string"), ("pass_threshold", "number"),
    ("schema_version", "integer"),
)


@dataclass
class Report:
    """What one sync did, per group (printed by ``bl dataset sync``)."""

    groups: list[dict[str, Any]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)


def job_columns() -> list[tuple[str, str]]:
    """The ``bl jobs table`` columns, as the table declares them (name, type)."""
    from ..table.load import load_model

    action = load_model().resources["jobs"].actions["table"]
    part = next(iter(action.dimensions["group"].parts.values()))
    return [(c.name, c.type) for c in part.params.columns("columns")]  # type: ignore[union-attr]


def scoring_defaults() -> dict[str, Any]:
    """``--metric``, ``--unit`` and ``--pass-threshold`` as the table defaults them."""
    from ..table.load import load_model

    options = load_model().options
    return {name: options[name].default for name in ("metric", "unit", "pass_threshold")}


def final_statuses() -> tuple[str, ...]:
    from ..table.load import load_model

    return tuple(load_model().statuses["job"].final)


def _fingerprint(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Fetcher(Protocol):
    """What a sync asks of the backend (``benchloop.sdk.dataset`` answers through the engine):
    each call gives what succeeded and the ``(id, message)`` of each failure."""

    def table(self, groups: list[str], **options: Any) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        """``bl jobs table -g ...`` with these options: its rows."""

    def trajectories(self, job_ids: list[str]) -> tuple[list[Any], list[tuple[str, str]]]:
        """``bl trajectory get -j ...``: one element per id that answered, in their order."""


def stored_steps(root: str, group: str, keep: set[str]) -> Iterator[dict[str, Any]]:
    """The stored step rows of ``group`` whose job is in ``keep``, in their stored order, read
    a thousand at a time (the partition is replaced only after the new one is written)."""
    import os

    path = store.partition(root, "steps", group)
    if not keep or not os.path.isfile(path):
        return
    names = [name for name, _ in steps.COLUMNS]
    with parquet.connect() as connection:
        relation = connection.execute(
            "SELECT " + ", ".join(f'"{n}"' for n in names) + " FROM read_parquet(?, hive_partitioning=false)",
            [path])
        while True:
            chunk = relation.fetchmany(1000)
            if not chunk:
                return
            for values in chunk:
                row = dict(zip(names, values, strict=True))
                if row["job_id"] in keep:
                    if row["arguments"] is not None:
                        row["arguments"] = json.loads(row["arguments"])
                    yield row


def sync(client: Fetcher, root: str, groups: list[str], *, with_steps: bool = False,
         filters: dict[str, Any] | None = None, scoring: dict[str, Any] | None = None,
         note: Callable[[str], None] = lambda _line: None) -> Report:
    """Sync ``groups`` into the dataset at ``root`` through ``client``.

    ``filters``: ``status``, ``template``, ``instance_id`` (the jobs table's options);
    ``scoring``: ``metric``, ``unit``, ``pass_threshold`` (how a job is scored, kept in
    ``runs`` so that ``bl compare --dataset`` uses the same)."""
    store.ensure(root)
    filters = {k: v for k, v in (filters or {}).items() if v is not None}
    scoring = {**scoring_defaults(), **{k: v for k, v in (scoring or {}).items() if v is not None}}
    scoring["pass_threshold"] = float(scoring["pass_threshold"])
    report = Report()
    groups = list(dict.fromkeys(groups))
    rows, failures = client.table(groups, **filters, **scoring)
    report.failures += failures
    failed = {ident for ident, _ in failures}
    by_group: dict[str, list[dict[str, Any]]] = {g: [] for g in groups}
    for row in rows or []:
        by_group.setdefault(str(row.get("group_id")), []).append(row)
    columns = job_columns()
    final = final_statuses()
    for group in groups:
        if group in failed:
            continue
        jobs = by_group.get(group, [])
        parquet.write(store.partition(root, "jobs", group), columns, jobs, store.staging(root))
        stored = None
        if with_steps:
            stored, problems = _sync_steps(client, root, group, jobs, final, note)
            report.failures += problems
        counts: dict[str, int] = {}
        for job in jobs:
            counts[str(job.get("status"))] = counts.get(str(job.get("status")), 0) + 1
        finals = sum(n for status, n in counts.items() if status in final)
        run = {"group_id": group, "synced_at": _now(), "finished": bool(jobs) and finals == len(jobs),
               "jobs": len(jobs), "final_jobs": finals, "status_counts": counts, "with_steps": with_steps,
               "steps": stored, "filters": filters, "metric": scoring.get("metric"), "unit": scoring.get("unit"),
               "pass_threshold": scoring.get("pass_threshold"), "schema_version": store.SCHEMA_VERSION}
        if not with_steps:  # the steps stored before (if any) stay, and runs says how many
            run["with_steps"], run["steps"] = _previous_steps(root, group)
        parquet.write(store.partition(root, "runs", group), RUNS_COLUMNS, [run], store.staging(root))
        report.groups.append({"group_id": group, "jobs": len(jobs), "finished": run["finished"],
                              "steps": run["steps"], "status_counts": counts})
    return report


def _previous_steps(root: str, group: str) -> tuple[bool, int | None]:
    state = store.read_state(root, group)
    if not state:
        return False, None
    return True, int(state.get("steps", 0))


def _sync_steps(client: Fetcher, root: str, group: str, jobs: list[dict[str, Any]], final: Iterable[str],
                note: Callable[[str], None]) -> tuple[int, list[tuple[str, str]]]:
    final = set(final)
    before = store.read_state(root, group).get("jobs", {})
    now = {str(job.get("job_id")): _fingerprint(job) for job in jobs}
    keep = {job_id for job_id, fp in now.items()
            if isinstance(before.get(job_id), dict) and before[job_id].get("row") == fp
            and before[job_id].get("final")}
    wanted = [job_id for job_id in now if job_id not in keep]
    note(f"{group}: {len(jobs)} job(s); steps of {len(keep)} kept, {len(wanted)} to fetch")
    fresh: set[str] = set()
    problems: list[tuple[str, str]] = []

    def produce() -> Iterator[dict[str, Any]]:
        """The kept jobs' stored rows, then each fetched job's, as each batch answers: one batch
        of trajectories in memory at a time, whatever the group's size."""
        yield from stored_steps(root, group, keep)
        for start in range(0, len(wanted), TRAJECTORY_BATCH):
            batch = wanted[start:start + TRAJECTORY_BATCH]
            answers, failed = client.trajectories(batch)
            problems.extend(failed)
            gone = {ident for ident, _ in failed}
            # One element per id that answered ({job_id, trajectory}), in the order of the ids.
            answered = [j for j in batch if j not in gone]
            for index, answer in enumerate(answers or []):
                job_id = answer.get("job_id") if isinstance(answer, dict) else None
                if job_id not in now and index < len(answered):
                    job_id = answered[index]
                if job_id in now and job_id not in fresh:
                    fresh.add(str(job_id))
                    yield from steps.rows(group, str(job_id), answer)

    count = parquet.write(store.partition(root, "steps", group), steps.COLUMNS, produce(), store.staging(root))
    status = {str(job.get("job_id")): job.get("status") for job in jobs}
    store.write_state(root, group, {"steps": count, "jobs": {
        job_id: {"row": now[job_id], "final": status[job_id] in final}
        for job_id in now if job_id in keep or job_id in fresh}})
    return count, problems
