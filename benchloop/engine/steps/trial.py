"""``trial``: what ``bl view`` needs of one trial - the job, its trajectory, its report, its
metrics and the images its trajectory references - fetched through the engine.

For a job id (``-j``) it is that job.  For a group id (``-g`` with ``--instance``) it is the
trial that stands for the group on that instance (:func:`benchloop.viewer.trials.representative`:
its most common outcome there, a failing one on a tie), chosen among the group's jobs of
that instance (the enumeration ``jobs``, filtered by ``--instance`` through the job list's
``instance_id``), each scored from its metrics; the value then lists every trial with its
outcome.

The trajectory is what the page is about: when it cannot be fetched the id fails.  The
job, the report and the metrics are asked for at the same time; one that cannot be
fetched is named in ``problems`` and the page shows what there is.  Media are fetched
once per URI, only those the trajectory declares as one of ``media_types``, at most
``max_media`` of them and ``max_media_bytes`` each (a longer answer is cut off, not read);
the bytes must really be such an image (:mod:`benchloop.viewer.media`), and a media that
cannot be had (a login page, a 404, a video) is named on the page instead.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from ...base import expressions
from ...base.errors import BenchloopError, StepError, UsageError
from ..stepcall import StepCall
from .registry import step


class TooBig(StepError):
    """A media answer longer than ``max_media_bytes``: cut off."""


def _scored(call: StepCall, metrics: Any) -> tuple[float | None, bool | None]:
    from ...compare.scores import score_and_pass
    from ..transforms import job_metrics

    if not isinstance(metrics, dict):
        return None, None
    value = expressions.compile_expression(call.options["metric"], "--metric")(job_metrics(metrics, ""))
    return score_and_pass(value, float(call.options["pass_threshold"]))


def _media(call: StepCall, trajectory: Any, problems: list[str]) -> dict[str, Any]:
    from ...viewer.media import embedded
    from ...viewer.trajectory import media_refs

    allowed = call.params.texts("media_types")
    cap, most = call.params.integer("max_media_bytes"), call.params.integer("max_media")
    refs = list(dict.fromkeys(media_refs(trajectory)))
    found: dict[str, Any] = {}
    wanted: list[tuple[str, str]] = []
    for uri, mime in refs:
        kind = mime.split(";")[0].strip().lower()
        if kind not in allowed:
            found[uri] = {"problem": f"not embedded: {mime or 'no media type'} is not one of {', '.join(allowed)}"}
        elif len(wanted) >= most:
            found[uri] = {"problem": f"not fetched: a page embeds at most {most} images"}
        else:
            wanted.append((uri, mime))
    if not wanted:
        return found
    with tempfile.TemporaryDirectory(prefix="bl-view-") as work:
        def fetch(index: str) -> dict[str, Any]:
            uri, mime = wanted[int(index)]
            dest = os.path.join(work, index)
            seen = [0]

            def counted(count: int) -> None:
                seen[0] += count
                if seen[0] > cap:
                    raise TooBig(f"not embedded: larger than {cap:,} bytes")

            try:
                call.fetch_file("media", dest, on_bytes=counted, oss_uri=uri, mime=mime)
            except BenchloopError as exc:  # a login page, a 404, too big: named on the page
                return {"problem": str(exc)}
            with open(dest, "rb") as handle:
                return embedded(handle.read(cap + 1), allowed)

        for outcome in call.map([str(i) for i in range(len(wanted))], fetch):
            uri = wanted[int(outcome.ident)][0]
            found[uri] = outcome.value if not outcome.failures else {"problem": outcome.failures[0].message}
    return found


def fetch_trial(call: StepCall, job: str) -> dict[str, Any]:
    """Everything a page shows of one job."""
    answers: dict[str, Any] = {}

    def ask(key: str) -> None:
        answers[key] = call.request(key, job=job)

    problems: list[str] = []
    for outcome in call.map(["trajectory", "job", "report", "metrics"], ask):
        for failure in outcome.failures:
            if outcome.ident == "trajectory":
                raise StepError(f"trajectory: {failure.message}", network=failure.network)
            problems.append(f"{outcome.ident}: {failure.message}")
    score, passed = _scored(call, answers.get("metrics"))
    trajectory = answers["trajectory"]
    return {"job_id": job, "job": answers.get("job"), "trajectory": trajectory, "report": answers.get("report"),
            "metrics": answers.get("metrics"), "score": score, "pass": passed,
            "media": _media(call, trajectory, problems), "problems": problems}


def _trials_of(call: StepCall, instance: str) -> list[dict[str, Any]]:
    """Every trial of the instance in this group, in the group's order, scored."""
    entries = [e for e in call.scan("jobs") if isinstance(e, dict) and e.get("instance_id") == instance]
    if not entries:
        raise StepError(f"group {call.ident} has no job of instance {instance}")
    scored: dict[str, tuple[float | None, bool | None]] = {}

    def score(job: str) -> None:
        scored[job] = _scored(call, call.request("metrics", job=job))

    ids = [str(e.get("job_id")) for e in entries]
    call.map(ids, score)  # a trial whose metrics cannot be had counts as not scored
    return [{"job_id": j, "status": e.get("status"), "score": scored.get(j, (None, None))[0],
             "pass": scored.get(j, (None, None))[1]} for j, e in zip(ids, entries, strict=True)]


@step("trial")
def trial(call: StepCall) -> dict[str, Any]:
    from ...viewer.trials import representative

    if call.dimension != "group":
        return fetch_trial(call, call.ident)
    instance = call.options.get("instance_id")
    if not instance:
        raise UsageError(call.params.text("instance_required"))
    trials = _trials_of(call, str(instance))
    chosen = representative(trials)
    found = fetch_trial(call, str(chosen["job_id"]))
    return {**found, "group": call.ident, "instance": instance, "trials": trials}
