"""``bl dataset sync``: the groups' jobs (and steps) into the dataset, incrementally and safely.

Every request goes through the engine, by way of the Python client (``benchloop.sdk.dataset``
hands this module a :class:`Fetcher` over a ``Client``):
the jobs are ``bl jobs table``'s rows (action ``jobs table``: its job list and detail
metrics, paged, 1,000 jobs a request, the groups fanned out within ``--concurrency``),
written into the group's partition as their pages arrive (a group of 10^6 jobs never is in
memory: per job, only a digest of its row and whether it is final), the
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
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..base.errors import BenchloopError
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


def _digest(text: str) -> str:
    """What the state keeps of a row's fingerprint: 32 hex digits (the row itself, kept by the
    state of earlier versions, is ~10x that per job; both are understood)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class _Group:
    """What a sync keeps of a group's rows as they stream into its partition: per job, its
    row's digest and whether its status is final, and the count per status."""

    before: dict[str, Any] | None  # the state's jobs of the last sync (id -> {row, final}); None: no steps
    final: set[str]
    jobs: dict[str, tuple[str, bool, bool]] = field(default_factory=dict)  # id -> (digest, final, kept)
    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def tap(self, rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for row in rows:
            status = row.get("status")
            self.counts[str(status)] = self.counts.get(str(status), 0) + 1
            self.total += 1
            if self.before is not None:  # what the steps need of the job (nothing else is kept)
                job_id, text = str(row.get("job_id")), _fingerprint(row)
                digest, prev = _digest(text), self.before.get(job_id)
                kept = isinstance(prev, dict) and bool(prev.get("final")) and prev.get("row") in (digest, text)
                self.jobs[job_id] = (digest, status in self.final, kept)
            yield row


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Fetcher(Protocol):
    """What a sync asks of the backend (``benchloop.sdk.dataset`` answers through the engine):
    each call gives what succeeded and the ``(id, message)`` of each failure."""

    def table(self, groups: list[str], **options: Any) -> tuple[Iterable[dict[str, Any]], list[tuple[str, str]]]:
        """``bl jobs table -g ...`` with these options: its rows as they arrive (a page that
        fails later raises a ``BenchloopError`` from the iterator), and the failures before."""

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
         filters: dict[str, Any] | None = None, scoring: dict[str, Any] | None = None, concurrency: int = 1,
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
    columns = job_columns()
    final = set(final_statuses())
    def one(group: str) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
        """One group's rows streamed into its partition as they arrive (then its steps, state
        and run): its report line, or None when it failed, and its failures."""
        rows, failures = client.table([group], **filters, **scoring)
        if failures:
            return None, list(failures)
        seen = _Group(store.read_state(root, group).get("jobs", {}) if with_steps else None, final)
        try:
            parquet.write(store.partition(root, "jobs", group), columns,
                          (r for r in seen.tap(rows) if str(r.get("group_id")) == group), store.staging(root))
        except BenchloopError as exc:  # a page failed after rows: the group's previous partitions stay
            return None, [(group, str(exc))]
        stored, problems = _sync_steps(client, root, group, seen, note) if with_steps else (None, [])
        counts, jobs = seen.counts, seen.total
        finals = sum(n for status, n in counts.items() if status in final)
        run = {"group_id": group, "synced_at": _now(), "finished": bool(jobs) and finals == jobs,
               "jobs": jobs, "final_jobs": finals, "status_counts": counts, "with_steps": with_steps,
               "steps": stored, "filters": filters, "metric": scoring.get("metric"), "unit": scoring.get("unit"),
               "pass_threshold": scoring.get("pass_threshold"), "schema_version": store.SCHEMA_VERSION}
        if not with_steps:  # the steps stored before (if any) stay, and runs says how many
            run["with_steps"], run["steps"] = _previous_steps(root, group)
        parquet.write(store.partition(root, "runs", group), RUNS_COLUMNS, [run], store.staging(root))
        return ({"group_id": group, "jobs": jobs, "finished": run["finished"], "steps": run["steps"],
                 "status_counts": counts}, problems)

    # The groups fan out within the client's concurrency, each in about a page of memory.
    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(groups)))) as pool:
        for line, problems in pool.map(one, groups):
            report.failures += problems
            if line is not None:
                report.groups.append(line)
    return report


def _previous_steps(root: str, group: str) -> tuple[bool, int | None]:
    state = store.read_state(root, group)
    if not state:
        return False, None
    return True, int(state.get("steps", 0))


def _sync_steps(client: Fetcher, root: str, group: str, seen: _Group,
                note: Callable[[str], None]) -> tuple[int, list[tuple[str, str]]]:
    now = seen.jobs
    keep = {job_id for job_id, (_, _, kept) in now.items() if kept}
    wanted = [job_id for job_id in now if job_id not in keep]
    note(f"{group}: {len(now)} job(s); steps of {len(keep)} kept, {len(wanted)} to fetch")
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
    store.write_state(root, group, {"steps": count, "jobs": {
        job_id: {"row": now[job_id][0], "final": now[job_id][1]}
        for job_id in now if job_id in keep or job_id in fresh}})
    return count, problems
