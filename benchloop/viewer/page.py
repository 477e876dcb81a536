"""The self-contained HTML page of ``bl view``: one trial, or two side by side.

Made as :mod:`benchloop.compare.html_report` makes its report: no network and no script
(a Content-Security-Policy of ``default-src 'none'`` says so to the browser; it allows
inline style, and images from ``data:`` URIs only: ``img-src data:`` is needed, since
``default-src 'none'`` alone blocks those too).  The markup is the template
``templates/view.html`` (Jinja2, autoescaped: :mod:`benchloop.base.templating`), which
masks the call's API key and escapes every value it outputs; this module only says what
the page shows, as plain data.  Links are fragments within the page (``#step-12``), so the page works from
``file://``, from an archive and as a mail attachment.

The page leads with each trial's header: job, group, instance, template, status, score and
pass, duration and tokens, the fail reason of the job's report (and the report, folded),
what could not be fetched, and in ``--instance`` mode every trial of the instance with its
outcome.  Two trials are aligned by step number in rows; the first row where they differ
(:func:`.trajectory.first_difference`) is marked and linked from the top.  A step is a card:
its number, role, tool and tokens, its content (a tool's output and code in monospace), every
other field as it came (text as text, anything else as pretty JSON) and its images.

Big trajectories (thousands of steps, tens of MB): a content or field longer than
``PREVIEW_CHARS`` (or ``PREVIEW_LINES`` lines) shows its beginning, with the whole text in a
folded ``<details>``; cards outside the window are not laid out
(``content-visibility: auto``); and the page is generated piece by piece (the rows and
cards are made as the template reaches them), so that it is written to its file without
ever being one string.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from . import numeric
from . import trials as t
from .media import data_uri
from .trajectory import (
    Step,
    Trajectory,
    align,
    describe_action,
    first_difference,
    media_refs,
    read,
    step_media,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"  # (the template's, for tests and docs)
PREVIEW_CHARS = 1200
PREVIEW_LINES = 16


def long_text(text: str, css: str) -> dict[str, Any]:
    """A text of any length in a ``<pre>`` (``css="pre"``) or prose: its beginning, and the
    whole folded when it is long."""
    lines = text.count("\n") + 1
    short = len(text) <= PREVIEW_CHARS and lines <= PREVIEW_LINES
    head = text
    if not short:
        head = text[:PREVIEW_CHARS]
        if head.count("\n") >= PREVIEW_LINES:
            head = "\n".join(head.split("\n")[:PREVIEW_LINES])
    return {"pre": css == "pre", "short": short, "head": head, "text": text,
            "shown": f"{len(head):,}", "chars": f"{len(text):,}", "lines": f"{lines:,}"}


def value_text(value: Any) -> dict[str, Any]:
    """A field's value: text as text (a diff reads as a diff), anything else as pretty JSON."""
    if isinstance(value, str):
        return long_text(value, "pre")
    return long_text(json.dumps(value, indent=2, ensure_ascii=False, default=str), "pre")


def fields(values: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(key, value_text(value)) for key, value in values.items()]


def images(refs: list[tuple[str, str]], media: dict[str, Any]) -> list[dict[str, Any]]:
    """Each image reference: its ``data:`` URI when it was fetched and is a real image, else why not."""
    out = []
    for uri, mime in refs:
        entry = media.get(uri) or {}
        out.append({"uri": uri, "mime": mime, "src": data_uri(entry),
                    "why": entry.get("problem") or "not fetched"})
    return out


def card(step: Step, media: dict[str, Any], marked: bool = False, anchor: str | None = None) -> dict[str, Any]:
    """What the card of a step shows."""
    shown: dict[str, Any] = {"key": step.key, "anchor": anchor, "odd": not step.is_object,
                             "images": images(step_media(step), media)}
    if not step.is_object:
        shown["raw"] = long_text(json.dumps(step.raw, indent=2, ensure_ascii=False, default=str), "pre")
        return shown
    role = step.role or ""
    shown.update(role=step.role, tool=step.tool, marked=marked, fields=fields(step.fields),
                 tokens=None if step.tokens is None else numeric.shown(step.tokens, 2, fixed=True),
                 css="assistant" if role == "assistant" else "other",
                 body=None if step.content is None else long_text(
                     step.content, "prose" if role in ("assistant", "user", "system") else "pre"))
    return shown


def _count(value: Any) -> str | None:
    return None if value is None else numeric.shown(value, 2, fixed=True)


def header(trial: dict[str, Any], trajectory: Trajectory, media: dict[str, Any]) -> dict[str, Any]:
    """What a trial's header shows: its facts, fail reason, problems, the instance's trials, its
    reports and the trajectory's other fields."""
    o = t.outcome(trial)
    score = "n/a" if o["score"] is None else f"{o['score']:g}"
    duration, sent = _count(o["duration_s"]), _count(o["tokens_sent"])
    facts: list[tuple[str, str]] = [
        ("job", o["job_id"]), ("group", o["group_id"] or "-"), ("instance", o["instance_id"] or "-"),
        ("template", o["template"] or "-"), ("status", o["status"] or "-"), ("score", score),
        ("duration", "n/a" if duration is None else f"{duration} s"), ("tokens sent", "n/a" if sent is None else sent)]
    for label, key in (("output tokens", "output_tokens"), ("turns", "num_turns")):
        if o[key] is not None:
            facts.append((label, _count(o[key]) or ""))
    if o["model"]:
        facts.append(("model", o["model"]))
    facts.append(("steps", f"{len(trajectory.steps):,}"))
    reports = [(i, r["content"]) for i, r in enumerate(t.reports(trial))
               if isinstance(r.get("content"), str) and r["content"]]
    return {"job_id": o["job_id"], "facts": facts, "pass": o["pass"], "fail_reason": o["fail_reason"],
            "sub_fail_reason": o["sub_fail_reason"], "problems": trial.get("problems") or [],
            "group": trial.get("group") or "-",
            "others": [{"job_id": x.get("job_id"), "pass": x.get("pass"), "shown": x.get("job_id") == o["job_id"]}
                       for x in trial.get("trials") or []],
            "reports": reports, "fields": fields(trajectory.fields),
            "images": images(list(dict.fromkeys(media_refs(trajectory.fields))), media)}


def title_of(trials: Sequence[dict[str, Any]]) -> str:
    names = [str(x.get("job_id")) for x in trials]
    return "bl view: " + " vs ".join(names)


def render(trials: Sequence[dict[str, Any]], secrets: tuple[str, ...] = ()) -> Iterator[str]:
    """The page of one trial, or of two side by side, piece by piece."""
    from ..base.templating import generate

    media: dict[str, Any] = {}
    for trial in trials:
        media.update(trial.get("media") or {})
    trajectories = [read(x.get("trajectory"), x.get("job_id")) for x in trials]
    context: dict[str, Any] = {
        "title": title_of(trials), "count": len(trials),
        "headers": [header(x, tr, media) for x, tr in zip(trials, trajectories, strict=True)],
        "pair": len(trials) == 2, "difference": None, "rows": (), "cards": (), "empty": False}
    if len(trials) == 2:
        rows = align(*trajectories)
        marked = first_difference(rows)
        context.update(rows=_rows(rows, marked, media), empty=not rows, same=marked is None and bool(rows),
                       names=[x.get("job_id") for x in trials])
        if marked is not None:
            left, right = next(c for k, c in rows if k == marked)
            context["difference"] = {"key": marked, "left": describe_action(left), "right": describe_action(right)}
    else:
        trajectory = trajectories[0] if trajectories else Trajectory([], {}, None)
        context.update(cards=_cards(trajectory, media), empty=not trajectory.steps)
    return generate("viewer", "view.html", secrets, **context)


def _cards(trajectory: Trajectory, media: dict[str, Any]) -> Iterator[dict[str, Any]]:
    seen: set[int] = set()
    for step in trajectory.steps:
        anchor = f"step-{step.key}" if step.key not in seen else None
        seen.add(step.key)
        yield card(step, media, anchor=anchor)


def _rows(rows: list[tuple[int, list[list[Step]]]], marked: int | None,
          media: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for key, sides in rows:
        diff = key == marked
        yield {"key": key, "diff": diff, "cells": [[card(s, media, marked=diff) for s in side] for side in sides]}
