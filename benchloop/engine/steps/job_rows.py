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
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...base.errors import StepError, UsageError
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
    if options.get("dataset") is not None:  # bl compare --dataset: the synced rows, no request
        from ...dataset.rows import job_rows as stored

        return stored(options["dataset"], call.ident, [c["name"] for c in chosen], options, call.log.warn)
    found: dict[str, list[dict[str, Any]]] = {}

    def scan(key: str) -> None:
        found[key] = call.scan(key)

    for outcome in call.map(["jobs", "metrics"], scan):
        for failure in outcome.failures:
            raise StepError(failure.message, network=failure.network)
    too_big: Counter[str] = Counter()
    made = rows.job_rows(call.ident, found["jobs"], found["metrics"], columns=chosen, unit=options["unit"],
                         metric=options["metric"], pass_threshold=float(options["pass_threshold"]),
                         object_sections=call.params.texts("sections"), by=options.get("by"),
                         too_big_values=too_big)
    for column, count in too_big.items():  # counted, not scored: never an OverflowError later
        what = "score" if column == "score" else f"value of {column}"
        call.log.warn(f"{call.ident}: {count} job(s) have a {what} that does not fit a float "
                      f"(beyond ±1.8e308): {'not scored' if column == 'score' else 'left empty'}")
    return made
