"""A trial (one job's run of an instance): its outcome, why it failed, and which trial of an
instance stands for a group.

The step ``trial`` (``engine/steps/trial.py``) fetches a trial as one value::

    {"job_id": ..., "job": <the job>, "trajectory": <its answer>, "report": <the job's
     report>, "metrics": <its metrics>, "score": ..., "pass": ..., "media": {uri: ...},
     "problems": [what could not be fetched], "group": <-g>, "instance": <--instance>,
     "trials": [every trial of the instance in that group: job_id, status, score, pass]}

(``job``, ``report`` and ``metrics`` may be null: a page still shows the trajectory, and
``problems`` says what is missing and why.)  :func:`outcome` is what the page's header,
the listing and the rows say about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import numeric


def _one(value: Any) -> Any:
    """A section sent as an object or as a list of one (``run_metrics``): the object."""
    if isinstance(value, list) and value:
        return value[0]
    return value


def _number(value: Any) -> float | int | None:
    """A metric's number (sent as a number or as its text), never raising on one too large."""
    return numeric.value(value, text=True)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def reports(trial: dict[str, Any]) -> list[dict[str, Any]]:
    report = trial.get("report")
    found = report.get("reports") if isinstance(report, dict) else None
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def outcome(trial: dict[str, Any]) -> dict[str, Any]:
    """The facts of a trial the header shows (None where the backend gave nothing)."""
    job = _object(trial.get("job"))
    metrics = _object(trial.get("metrics"))
    run = _object(_one(metrics.get("run_metrics")))
    tokenized = _object(_one(metrics.get("tokenized_metrics")))
    first: dict[str, Any] = next((r for r in reports(trial) if r.get("fail_reason") is not None), {})
    return {
        "job_id": trial.get("job_id"),
        "group_id": _text(job.get("group_id")) or trial.get("group"),
        "instance_id": _text(job.get("instance_id")) or trial.get("instance"),
        "template": _text(job.get("template")),
        "status": _text(job.get("status")),
        "model": _text(job.get("model")),
        "score": trial.get("score"),
        "pass": trial.get("pass"),
        "duration_s": _number(run.get("duration_s")),
        "tokens_sent": _number(run.get("tokens_sent")),
        "output_tokens": _number(tokenized.get("tokenizer_output_total")),
        "num_turns": _number(run.get("num_turns")),
        "fail_reason": _text(first.get("fail_reason")),
        "sub_fail_reason": _text(first.get("sub_fail_reason")),
    }


def verdict(passed: Any) -> str:
    return "pass" if passed is True else "fail" if passed is False else "not scored"


def representative(trials: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The trial that stands for a group on an instance: the first (in the group's order) whose
    outcome is the group's most common one there; a tie goes to the failing trials (what went
    wrong is what a page is for), and unscored trials count only when no trial was scored."""
    scored = [t for t in trials if t.get("pass") is not None]
    if not scored:
        return trials[0]
    passing = sum(1 for t in scored if t["pass"])
    wanted = passing > len(scored) - passing
    return next(t for t in scored if bool(t["pass"]) == wanted)
