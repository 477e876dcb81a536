"""``job_rows``: one flat row per job of a group (``bl jobs table``, the input of ``bl compare``).

The rows join two whole listings of the group, the job list (which jobs there are, in
its order) and the paged detail metrics (each job's metrics element): both are the
enumerations the part's ``with:`` names, scanned at the same time, every page through
the engine (1,000 items per request: a group of 20,000 jobs costs about 40 requests,
never one per job).  The columns are the table's (``with.columns``), chosen by
``with.keep`` or else by ``--fields``; the instance key, the score and pass come from
``--unit``, ``--metric`` and ``--pass-threshold`` (``benchloop.compare.rows``); with ``--by``
(``bl compare``) each row also carries the job's ``slice``.  A number too big for a float
(a 400-digit integer is valid JSON) is no score and no number: left out, with a ``[warn]``.

Printed as it is read (``call.streams``: ``bl jobs table``, no ``--query``), the rows are a
``RowStream``: both listings walked side by side page by page, each row made when its
job's metrics have arrived, so a group of 10^6 jobs is printed in about a page of memory.
With ``into: instances`` (``bl compare``) the same stream is gathered by instance as it is
read (``benchloop.compare.groups.gather``): the value is the group's per-instance aggregates,
not its rows.  A watch (``--watch``) keeps the rows: its waiter reads every job's status.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from ...base.errors import StepError, UsageError
from ..pagination import Streamed
from ..stepcall import StepCall
from .registry import step


def fields(given: Any) -> list[str] | None:
    """``--fields``: repeated or comma-separated column names, in order (None: every column)."""
    if not given:
        return None
    return [name.strip() for value in given for name in str(value).split(",") if name.strip()]


@step("job_rows")
def job_rows(call: StepCall) -> list[dict[str, Any]]:
    from ...compare import rows

    options = call.options
    columns = [{"name": c.name, "from": c.source, "type": c.type} for c in call.params.columns("columns")]
    keep = call.params.optional_texts("keep")
    try:  # before the first request: a wrong --fields name costs nothing
        chosen = rows.select_columns(columns, list(keep) if keep is not None else fields(options.get("fields")))
    except rows.ColumnError as exc:
        raise UsageError(str(exc).replace("unknown field", "--fields: unknown column")) from None
    if call.params.text("into") == "instances" and not options.get("watch"):
        return _gathered(call, chosen)
    if options.get("dataset") is not None:  # bl compare --dataset: the synced rows, no request
        from ...dataset.rows import job_rows as stored

        return stored(options["dataset"], call.ident, [c["name"] for c in chosen], options, call.log.warn)
    if call.streams:  # printed as it is read: the rows page by page
        return RowStream(call, chosen)  # type: ignore[return-value]
    found: dict[str, list[dict[str, Any]]] = {}

    def scan(key: str) -> None:
        found[key] = call.scan(key)

    for outcome in call.map(["jobs", "metrics"], scan):
        for failure in outcome.failures:
            raise StepError(failure.message, network=failure.network)
    too_big: Counter[str] = Counter()
    made = _rows(call, chosen, found["jobs"], found["metrics"], too_big)
    _warn_too_big(call, too_big)
    return made


def _gathered(call: StepCall, chosen: list[dict[str, str]]) -> Any:
    """``into: instances``: the group's rows gathered by instance as they are read (a
    ``RowStream``, or the dataset's rows), so only the per-instance aggregates are held."""
    from ...compare.groups import gather

    options = call.options
    costs = [c["name"] for c in chosen if c["type"] == "number" and c["name"] != "score"]
    if options.get("dataset") is not None:
        from ...dataset.rows import stream_rows

        rows: Any = stream_rows(options["dataset"], call.ident, [c["name"] for c in chosen], options, call.log.warn)
    else:
        rows = RowStream(call, chosen, ahead=1)  # read, not printed: one page on its way is enough
    return gather(call.ident, rows, costs, options.get("by") is not None)


def _rows(call: StepCall, chosen: list[dict[str, str]], jobs: Any, metrics: Any,
          too_big: Counter[str]) -> list[dict[str, Any]]:
    from ...compare import rows

    options = call.options
    return rows.job_rows(call.ident, jobs, metrics, columns=chosen, unit=options["unit"],
                         metric=options["metric"], pass_threshold=float(options["pass_threshold"]),
                         object_sections=call.params.texts("sections"), by=options.get("by"),
                         too_big_values=too_big)


def _warn_too_big(call: StepCall, too_big: Counter[str]) -> None:
    for column, count in too_big.items():  # counted, not scored: never an OverflowError later
        what = "score" if column == "score" else f"value of {column}"
        call.log.warn(f"{call.ident}: {count} job(s) have a {what} that does not fit a float "
                      f"(beyond ±1.8e308): {'not scored' if column == 'score' else 'left empty'}")


BATCH = 1000  # jobs made into rows together


class RowStream(Streamed):
    """A group's rows read as they are printed: the job list and the detail metrics walked side
    by side, page by page (both first pages asked at once, so a group that cannot be read
    fails before anything is printed).  A job's row is made when its metrics element has
    arrived, or when the metrics are read to their end (a job without one: unscored), in the
    job list's order; when both listings come in the same order (they do from the backend)
    about one page of each is held."""

    def __init__(self, call: StepCall, chosen: list[dict[str, str]], ahead: int | None = None):
        self.ident = call.ident
        self._call, self._chosen = call, chosen
        self._jobs, self._metrics = call.iterate("jobs"), call.iterate("metrics")
        if ahead is not None:  # pages read ahead of the reader (LazyScan.AHEAD)
            for listing in (self._jobs, self._metrics):
                listing.AHEAD = ahead  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for page in self.pages():
            yield from page

    def announced(self) -> int | None:
        """The job list's total: one row per job."""
        announced = getattr(self._jobs, "announced", None)
        return announced() if announced is not None else None

    def pages(self) -> Iterator[list[dict[str, Any]]]:
        """The rows ``BATCH`` jobs at a time, each list as soon as its jobs' metrics are in."""
        for listing in (self._jobs, self._metrics):
            listing.before_fetch = self._flush  # type: ignore[attr-defined]
        too_big: Counter[str] = Counter()
        batch: list[Any] = []
        found: dict[str, Any] = {}
        for job, element in _joined(iter(self._jobs), iter(self._metrics)):
            batch.append(job)
            if element is not None:
                found[job["job_id"]] = element
            if len(batch) >= BATCH:
                yield _rows(self._call, self._chosen, batch, found, too_big)
                batch, found = [], {}
        if batch:
            yield _rows(self._call, self._chosen, batch, found, too_big)
        _warn_too_big(self._call, too_big)

    def _flush(self) -> None:
        self.before_fetch()


def _joined(jobs: Iterator[Any], metrics: Iterator[Any]) -> Iterator[tuple[Any, Any]]:
    """Each job with its detail-metrics element (the first one of its ``job_id``) or None."""
    ahead: dict[str, Any] = {}  # metrics elements read before their job
    done = False
    for job in jobs:
        ident = job.get("job_id") if isinstance(job, dict) else None
        if not isinstance(ident, str):
            yield job, None
            continue
        while ident not in ahead and not done:
            element = next(metrics, None)
            if element is None:
                done = True
            elif isinstance(element, dict) and isinstance(element.get("job_id"), str):
                ahead.setdefault(element["job_id"], element)
        yield job, ahead.pop(ident, None)
