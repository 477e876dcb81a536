"""The steps of a trial as rows (``--output json``, ``table``...; the MCP tool
``trajectory_steps``) and as a readable listing (``bl view --output text``, for a terminal
over SSH).

A row is compact on purpose: the step's number, role, tool and tokens, the first line of
its content cut to ``width`` characters (with the full length beside it), the arguments
of its call as JSON in their own order (cut to ``ARGS_WIDTH`` characters, ending in
``...`` then: a row diff of two trials finds the step
where they call a tool on another file) and the names of its other fields, so that an agent reads why a job failed within its output budget and
asks for a step's whole content with ``trajectory get`` and a query.  The listing says the
same with the first lines of every step, every character a terminal could run shown as an
escape (``compare.display.terminal_text``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..base.masking import scrub
from ..compare.display import terminal_text
from . import numeric
from . import trials as t
from .trajectory import Step, Trajectory, align, arguments, difference, first_difference, note, read

WIDTH = 160  # characters of a row's text
ARGS_WIDTH = 240  # characters of a row's arguments (its call's, as JSON)
LINES = 3  # lines of content a listing shows per step


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def step_text(step: Step) -> str:
    """What a step said, as text: its content, else the JSON of a content (or step) that is no text."""
    if not step.is_object:
        return _json(step.raw)
    if step.content is not None:
        return step.content
    if "content" in step.fields:
        return _json(step.fields["content"])
    return ""


def clip(text: str, width: int) -> str:
    line = text.strip().split("\n", 1)[0]
    more = len(line) > width or "\n" in text.strip()
    return (line[:width - 3] + "...") if len(line) > width else (line + " ..." if more else line)


def rows(trajectory: Trajectory, width: int = WIDTH, marked: int | None = None) -> list[dict[str, Any]]:
    """One compact row per step."""
    out = []
    for s in trajectory.steps:
        text = step_text(s)
        row: dict[str, Any] = {"step": s.key, "role": s.role, "tool": s.tool, "tokens": s.tokens,
                               "text": clip(text, width), "chars": len(text),
                               "fields": sorted(k for k in s.fields if k != "content") if s.is_object else []}
        if marked is not None:
            row["first_difference"] = s.key == marked
        given = arguments(s)
        args = _json(given) if given else None
        row["args"] = args if args is None or len(args) <= ARGS_WIDTH else args[:ARGS_WIDTH - 3] + "..."
        out.append(row)
    return out


def element(trial: dict[str, Any], width: int = WIDTH, marked: int | None = None) -> dict[str, Any]:
    """One printed element of a trial: its outcome, its fail reason and its step rows."""
    trajectory = read(trial.get("trajectory"), trial.get("job_id"))
    return {**t.outcome(trial), "steps": rows(trajectory, width, marked)}


def steps_element(job_id: str, answer: Any, width: int = WIDTH) -> dict[str, Any]:
    """``bl trajectory steps``: a job's step rows, from its trajectory answer alone."""
    trajectory = read(answer, job_id)
    return {"job_id": job_id, "total": len(trajectory.steps), "steps": rows(trajectory, width)}


def header_lines(trial: dict[str, Any]) -> list[str]:
    o = t.outcome(trial)
    score = "n/a" if o["score"] is None else f"{o['score']:g}"
    lines = [f"job {o['job_id']}  group {o['group_id'] or '-'}  instance {o['instance_id'] or '-'}  "
             f"template {o['template'] or '-'}",
             f"status {o['status'] or '-'}  score {score} ({t.verdict(o['pass'])})  "
             f"duration {numeric.shown(o['duration_s'])} s  tokens sent {numeric.shown(o['tokens_sent'])}"]
    if o["fail_reason"]:
        lines.append(f"fail reason: {o['fail_reason']}" + (f" ({o['sub_fail_reason']})" if o["sub_fail_reason"] else ""))
    for problem in trial.get("problems") or ():
        lines.append(f"note: {problem}")
    others = trial.get("trials") or []
    if len(others) > 1:
        lines.append("trials of the instance: " + ", ".join(
            f"{x.get('job_id')} ({t.verdict(x.get('pass'))})" for x in others))
    return lines


def step_lines(step: Step, lines: int = LINES, width: int = WIDTH) -> list[str]:
    head = f"#{step.key}"
    head += f" {step.role}" if step.role else ""
    head += f" [{step.tool}]" if step.tool else ""
    head += f" ({numeric.shown(step.tokens)} tokens)" if step.tokens is not None else ""
    out = [head]
    text = step_text(step).strip("\n")
    shown = text.split("\n")
    for line in shown[:lines]:
        out.append("    " + (line if len(line) <= width else line[:width - 3] + "..."))
    if len(shown) > lines:
        out.append(f"    ... ({len(shown) - lines} more lines)")
    for key, value in (step.fields.items() if step.is_object else ()):
        if key == "content":
            continue
        text = value if isinstance(value, str) else _json(value)
        first = text.split("\n", 1)[0]
        out.append(f"    + {key}: " + (first if len(first) <= width else first[:width - 3] + "...")
                   + (" ..." if "\n" in text else ""))
    return out


def text(trials: Sequence[dict[str, Any]], secrets: tuple[str, ...] = (), lines: int = LINES) -> str:
    """The readable listing of one trial, or of two (each in turn, and where they first differ)."""
    read_trials = [read(x.get("trajectory"), x.get("job_id")) for x in trials]
    out: list[str] = []
    marked = None
    if len(trials) == 2:
        table = align(*read_trials)
        marked = first_difference(table)
        if marked is None:
            out.append("The two trials take the same actions at every step.")
        else:
            out.append(f"First difference at step {marked}: "
                       + note(difference(marked, *next(c for k, c in table if k == marked))))
        out.append("")
    for trial, trajectory in zip(trials, read_trials, strict=True):
        out += header_lines(trial)
        if trajectory.fields:
            out.append("trajectory fields: " + _json(trajectory.fields)[:WIDTH * 2])
        out.append(f"{len(trajectory.steps)} steps")
        for step in trajectory.steps:
            lines_of = step_lines(step, lines)
            if step.key == marked:
                lines_of[0] += "   <== first difference"
            out += lines_of
        out.append("")
    return "".join(terminal_text(scrub(line, secrets)) + "\n" for line in out)
