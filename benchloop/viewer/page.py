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
    ACTION_FIELDS,
    SHOWN_CHANGES,
    Difference,
    Step,
    Trajectory,
    align,
    difference,
    first_difference,
    media_refs,
    read,
    step_media,
    value_text,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"  # (the template's, for tests and docs)
PREVIEW_CHARS = 1200
PREVIEW_LINES = 16


def long_text(text: str, css: str, marks: frozenset[int] = frozenset()) -> dict[str, Any]:
    """A text of any length in a ``<pre>`` (``css="pre"``) or prose: its beginning, and the
    whole folded when it is long.  ``marks``: the lines (0-based) to highlight, as pieces
    ``(text, marked)`` of the beginning and of the whole."""
    lines = text.count("\n") + 1
    short = len(text) <= PREVIEW_CHARS and lines <= PREVIEW_LINES
    head = text
    if not short:
        head = text[:PREVIEW_CHARS]
        if head.count("\n") >= PREVIEW_LINES:
            head = "\n".join(head.split("\n")[:PREVIEW_LINES])
    shown = {"pre": css == "pre", "short": short, "head": head, "text": text,
             "shown": f"{len(head):,}", "chars": f"{len(text):,}", "lines": f"{lines:,}", "marked": None}
    if marks:
        shown["marked"] = {"head": _pieces(head, marks), "text": _pieces(text, marks)}
    return shown


def _pieces(text: str, marks: frozenset[int]) -> list[tuple[str, bool]]:
    """``text`` as pieces: each marked line alone, the lines between in runs (every line keeps
    its line feed)."""
    out: list[tuple[str, bool]] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        line = line + "\n" if i < len(lines) - 1 else line
        marked = i in marks
        if out and not marked and not out[-1][1]:
            out[-1] = (out[-1][0] + line, marked)
        else:
            out.append((line, marked))
    return out


def field_text(value: Any, differing: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A field's value: text as text (a diff reads as a diff), anything else as pretty JSON;
    ``differing``: the names of arguments whose lines are highlighted (a text is one)."""
    if isinstance(value, str):
        return long_text(value, "pre", frozenset({0}) if differing else frozenset())
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if not differing:
        return long_text(text, "pre")
    marks = frozenset(i for i, line in enumerate(text.split("\n")) if _key_of(line) in differing)
    return long_text(text, "pre", marks)


def _key_of(line: str) -> str | None:
    """The key a line of pretty JSON sets (``  "path": ...`` -> ``path``), or None."""
    stripped = line.lstrip()
    if not stripped.startswith('"'):
        return None
    try:
        key, _ = json.JSONDecoder().raw_decode(stripped)
    except ValueError:
        return None
    return key if isinstance(key, str) and stripped[len(json.dumps(key, ensure_ascii=False)):].startswith(":") else None


def fields(values: dict[str, Any], differing: frozenset[str] = frozenset()) -> list[tuple[str, dict[str, Any]]]:
    """Each field's value to show; the action fields (``tool_calls``, ``command``...) with the lines
    of the ``differing`` arguments marked."""
    return [(key, field_text(value, _differing_in(key, differing) if key in ACTION_FIELDS and differing
                             else frozenset()))
            for key, value in values.items()]


def _differing_in(field: str, names: frozenset[str]) -> frozenset[str]:
    """The keys to mark in an action field for the differing argument names (``call 2 path`` and
    ``action.path`` are ``path``; a field that is itself the argument, ``command``: all of it)."""
    if field in names:
        return frozenset({field})
    return frozenset(n.split(" ")[-1].split(".")[-1] for n in names)


def images(refs: list[tuple[str, str]], media: dict[str, Any]) -> list[dict[str, Any]]:
    """Each image reference: its ``data:`` URI when it was fetched and is a real image, else why not."""
    out = []
    for uri, mime in refs:
        entry = media.get(uri) or {}
        out.append({"uri": uri, "mime": mime, "src": data_uri(entry),
                    "why": entry.get("problem") or "not fetched"})
    return out


def card(step: Step, media: dict[str, Any], marked: bool = False, anchor: str | None = None,
         diff: Difference | None = None, side: int = 0) -> dict[str, Any]:
    """What the card of a step shows; in the row of the first difference (``diff``), which of its
    arguments differ from the other side's (``side``: 0 left, 1 right), with this side's value."""
    shown: dict[str, Any] = {"key": step.key, "anchor": anchor, "odd": not step.is_object,
                             "images": images(step_media(step), media), "differs": []}
    if not step.is_object:
        shown["raw"] = long_text(json.dumps(step.raw, indent=2, ensure_ascii=False, default=str), "pre")
        return shown
    role = step.role or ""
    names = frozenset() if diff is None else frozenset(
        diff.names + (["name"] if any(n == "tool" for n, _, _ in diff.changed) else []))
    if diff is not None:
        shown["differs"] = [(name, value_text(values[side], values[1 - side]))
                            for name, *values in diff.changed]
    shown.update(role=step.role, tool=step.tool, marked=marked, fields=fields(step.fields, names),
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
        diff = None if marked is None else difference(marked, *next(c for k, c in rows if k == marked))
        context.update(rows=_rows(rows, marked, media, diff), empty=not rows, same=marked is None and bool(rows),
                       names=[x.get("job_id") for x in trials], difference=None if diff is None else _banner(diff))
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


def _rows(rows: list[tuple[int, list[list[Step]]]], marked: int | None, media: dict[str, Any],
          diff: Difference | None) -> Iterator[dict[str, Any]]:
    for key, sides in rows:
        here = key == marked
        shown = diff if here and diff is not None and diff.changed else None
        yield {"key": key, "diff": here,
               "cells": [[card(s, media, marked=here, diff=shown, side=i) for s in steps]
                         for i, steps in enumerate(sides)]}


def _banner(diff: Difference) -> dict[str, Any]:
    """The first-difference note: the differing role, tool and arguments first, each with both
    values, then what the two sides share (or, when no step pair compares, each side's action)."""
    return {"key": diff.key, "kind": diff.kind, "left": diff.left, "right": diff.right,
            "changed": [(name, value_text(a, b), value_text(b, a)) for name, a, b in diff.changed[:SHOWN_CHANGES]],
            "more": max(0, len(diff.changed) - SHOWN_CHANGES),
            "same": [(name, value_text(v, chars=40)) for name, v in diff.same]}
