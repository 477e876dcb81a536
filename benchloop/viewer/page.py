"""The self-contained HTML page of ``bl view``: one trial, or two side by side.

Made as :mod:`benchloop.compare.html_report` makes its report: no network and no script
(a Content-Security-Policy of ``default-src 'none'`` says so to the browser; it allows
inline style, and images from ``data:`` URIs only: ``img-src data:`` is needed, since
``default-src 'none'`` alone blocks those too), every string from the server escaped
(``compare.display.html_text`` and, keeping line breaks, ``html_block``) and the call's API
key masked.  Links are fragments within the page (``#step-12``), so the page works from
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
(``content-visibility: auto``); and the page is yielded piece by piece, so that it is
written to its file without ever being one string.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..base.masking import scrub
from ..compare.display import html_block, html_text
from . import numbers
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

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
PREVIEW_CHARS = 1200
PREVIEW_LINES = 16
MONO = "ui-monospace,SFMono-Regular,Menlo,Consolas,monospace"

STYLE = f"""
body{{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#111827;margin:0;padding:12px 20px}}
h1{{font-size:20px;margin:4px 0 10px;overflow-wrap:anywhere}}h2{{font-size:16px;margin:16px 0 6px}}
.trials{{display:grid;gap:14px;margin-bottom:10px}}.trials.n2{{grid-template-columns:minmax(0,1fr) minmax(0,1fr)}}
.trial{{border:1px solid #e5e7eb;border-radius:6px;padding:8px 12px;min-width:0}}
.trial h2{{margin:2px 0 6px;overflow-wrap:anywhere}}
dl.facts{{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 12px;margin:4px 0}}
dl.facts dt{{color:#4b5563}}dl.facts dd{{margin:0;overflow-wrap:anywhere;min-width:0}}
.pass{{color:#15803d;font-weight:600}}.fail{{color:#b91c1c;font-weight:600}}.unscored{{color:#6b7280}}
.reason{{padding:6px 10px;border-left:4px solid #b91c1c;background:#fef2f2;margin:6px 0;overflow-wrap:anywhere}}
.problems{{color:#92400e;margin:4px 0;padding-left:20px;overflow-wrap:anywhere}}
.others{{margin:4px 0;overflow-wrap:anywhere}}.others .shown{{font-weight:700}}
.firstdiff{{padding:6px 10px;border-left:4px solid #d97706;background:#fffbeb;margin:8px 0;overflow-wrap:anywhere}}
.same{{padding:6px 10px;border-left:4px solid #9ca3af;background:#f9fafb;margin:8px 0}}
.steps.pair .row{{display:grid;grid-template-columns:3.2em minmax(0,1fr) minmax(0,1fr);gap:8px;margin:0 0 8px}}
.steps .row,.steps.single>.step{{content-visibility:auto;contain-intrinsic-size:auto 180px}}
.row.diff{{outline:3px solid #d97706;outline-offset:3px;border-radius:4px}}
.row .num{{font:12px/1.4 {MONO};color:#6b7280;text-align:right;padding-top:7px;overflow-wrap:anywhere;min-width:0}}
.row.diff .num{{color:#b45309;font-weight:700}}
.cell{{min-width:0}}.cell.none{{color:#9ca3af;font-style:italic;padding-top:7px}}
.step{{border:1px solid #e5e7eb;border-radius:6px;padding:6px 10px;margin:0 0 8px;min-width:0;background:#fff}}
.step.assistant{{background:#f8fafc}}.step.odd{{border-style:dashed}}
.head{{display:flex;flex-wrap:wrap;gap:2px 10px;font-size:12px;color:#374151;min-width:0}}
.head span{{overflow-wrap:anywhere;min-width:0}}.head .n{{font-weight:700}}.head .tool{{font-family:{MONO}}}
.mark{{color:#b45309;font-weight:700}}
pre{{font:12px/1.4 {MONO};white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0;background:#f3f4f6;
padding:6px 8px;border-radius:4px;min-width:0}}
.prose{{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0;min-width:0}}
.field{{margin:4px 0;min-width:0}}.field .key{{font:12px/1.4 {MONO};color:#4b5563;overflow-wrap:anywhere}}
details.full>summary{{cursor:pointer;color:#1d4ed8;font-size:12px}}
.clipped{{color:#6b7280;font-size:12px}}
figure{{margin:6px 0}}img.media{{max-width:100%;height:auto;border:1px solid #d1d5db;display:block}}
figcaption,.media-note{{color:#4b5563;font-size:12px;overflow-wrap:anywhere}}
.empty{{color:#9ca3af;font-style:italic}}
"""


class Writer:
    """Escapes (after masking the call's keys) every string that came from the server."""

    def __init__(self, secrets: tuple[str, ...], media: dict[str, Any] | None = None):
        self.secrets = secrets
        self.media = media or {}

    def text(self, value: Any) -> str:
        return html_text(scrub(str(value), self.secrets))

    def block(self, value: Any) -> str:
        return html_block(scrub(str(value), self.secrets))

    def long_text(self, text: str, css: str) -> str:
        """A text of any length in a ``<pre>`` (or prose): its beginning, and the whole folded when long."""
        tag = "pre" if css == "pre" else "div"
        cls = "" if tag == "pre" else ' class="prose"'
        lines = text.count("\n") + 1
        if len(text) <= PREVIEW_CHARS and lines <= PREVIEW_LINES:
            return f"<{tag}{cls}>{self.block(text)}</{tag}>"
        head = text[:PREVIEW_CHARS]
        if head.count("\n") >= PREVIEW_LINES:
            head = "\n".join(head.split("\n")[:PREVIEW_LINES])
        return (f"<{tag}{cls}>{self.block(head)}</{tag}>"
                f'<div class="clipped">(showing {len(head):,} of {len(text):,} characters, {lines:,} lines)</div>'
                f'<details class="full"><summary>the whole text ({len(text):,} characters)</summary>'
                f"<pre>{self.block(text)}</pre></details>")

    def value(self, value: Any) -> str:
        """A field's value: text as text (a diff reads as a diff), anything else as pretty JSON."""
        if isinstance(value, str):
            return self.long_text(value, "pre")
        return self.long_text(json.dumps(value, indent=2, ensure_ascii=False, default=str), "pre")

    def fields(self, fields: dict[str, Any]) -> str:
        return "".join(f'<div class="field"><div class="key">{self.text(k)}</div>{self.value(v)}</div>'
                       for k, v in fields.items())

    def images(self, refs: list[tuple[str, str]]) -> str:
        out = []
        for uri, mime in refs:
            entry = self.media.get(uri) or {}
            src = data_uri(entry)
            name = self.text(uri) + (f" ({self.text(mime)})" if mime else "")
            if src is not None:
                out.append(f'<figure><img class="media" src="{src}" alt="{self.text(uri)}">'
                           f"<figcaption>{name}</figcaption></figure>")
            else:
                why = entry.get("problem") or "not fetched"
                out.append(f'<div class="media-note">media {name}: {self.text(why)}</div>')
        return "".join(out)

    def card(self, step: Step, marked: bool = False, anchor: str | None = None) -> str:
        ident = f' id="{anchor}"' if anchor else ""
        if not step.is_object:
            return (f'<article class="step odd"{ident}><div class="head"><span class="n">#{step.key}</span>'
                    f"<span>a step that is no object</span></div>"
                    f"{self.long_text(json.dumps(step.raw, indent=2, ensure_ascii=False, default=str), 'pre')}"
                    f"{self.images(step_media(step))}</article>")
        role = step.role or ""
        head = [f'<span class="n">#{step.key}</span>']
        if step.role is not None:
            head.append(f'<span class="role">{self.text(step.role)}</span>')
        if step.tool is not None:
            head.append(f'<span class="tool">{self.text(step.tool)}</span>')
        if step.tokens is not None:
            head.append(f'<span class="tokens">{self.text(_count(step.tokens))} tokens</span>')
        if marked:
            head.append('<span class="mark">first difference</span>')
        body = ""
        if step.content is not None:
            body = self.long_text(step.content, "prose" if role in ("assistant", "user", "system") else "pre")
        css = "assistant" if role == "assistant" else "other"
        return (f'<article class="step {css}"{ident}><div class="head">{"".join(head)}</div>{body}'
                f"{self.fields(step.fields)}{self.images(step_media(step))}</article>")


def _count(value: Any) -> str:
    return numbers.shown(value, 2, fixed=True)


def _verdict(passed: Any) -> str:
    css = "pass" if passed is True else "fail" if passed is False else "unscored"
    return f'<span class="{css}">{t.verdict(passed)}</span>'


def header(w: Writer, trial: dict[str, Any], trajectory: Trajectory) -> str:
    o = t.outcome(trial)
    score = "n/a" if o["score"] is None else f"{o['score']:g}"
    facts = [("job", w.text(o["job_id"])), ("group", w.text(o["group_id"] or "-")),
             ("instance", w.text(o["instance_id"] or "-")), ("template", w.text(o["template"] or "-")),
             ("status", w.text(o["status"] or "-")), ("score", f"{w.text(score)} {_verdict(o['pass'])}"),
             ("duration", "n/a" if o["duration_s"] is None else f"{w.text(_count(o['duration_s']))} s"),
             ("tokens sent", "n/a" if o["tokens_sent"] is None else w.text(_count(o["tokens_sent"])))]
    if o["output_tokens"] is not None:
        facts.append(("output tokens", w.text(_count(o["output_tokens"]))))
    if o["num_turns"] is not None:
        facts.append(("turns", w.text(_count(o["num_turns"]))))
    if o["model"]:
        facts.append(("model", w.text(o["model"])))
    facts.append(("steps", f"{len(trajectory.steps):,}"))
    parts = [f'<section class="trial"><h2>{w.text(o["job_id"])}</h2><dl class="facts">'
             + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"]
    if o["fail_reason"]:
        sub = f" ({w.text(o['sub_fail_reason'])})" if o["sub_fail_reason"] else ""
        parts.append(f'<p class="reason">Fail reason (the job\'s report): <b>{w.text(o["fail_reason"])}</b>{sub}</p>')
    problems = trial.get("problems") or []
    if problems:
        parts.append('<ul class="problems">' + "".join(f"<li>{w.text(p)}</li>" for p in problems) + "</ul>")
    others = trial.get("trials") or []
    if others:
        shown = [f'<span class="{"shown" if x.get("job_id") == o["job_id"] else ""}">{w.text(x.get("job_id"))}'
                 f" {_verdict(x.get('pass'))}</span>" for x in others]
        parts.append(f'<p class="others">Trials of the instance in {w.text(trial.get("group") or "-")} '
                     f"({len(others)}; the one shown in bold): {', '.join(shown)}</p>")
    for i, report in enumerate(t.reports(trial)):
        content = report.get("content")
        if isinstance(content, str) and content:
            parts.append(f'<details class="full"><summary>the job\'s report{f" {i + 1}" if i else ""}</summary>'
                         f"<pre>{w.block(content)}</pre></details>")
    if trajectory.fields:
        parts.append('<details class="full"><summary>other fields of the trajectory</summary>'
                     f"{w.fields(trajectory.fields)}{w.images(list(dict.fromkeys(media_refs(trajectory.fields))))}"
                     "</details>")
    parts.append("</section>")
    return "".join(parts)


def title_of(trials: Sequence[dict[str, Any]]) -> str:
    names = [str(x.get("job_id")) for x in trials]
    return "bl view: " + " vs ".join(names)


def render(trials: Sequence[dict[str, Any]], secrets: tuple[str, ...] = ()) -> Iterator[str]:
    """The page of one trial, or of two side by side, piece by piece."""
    media: dict[str, Any] = {}
    for trial in trials:
        media.update(trial.get("media") or {})
    w = Writer(secrets, media)
    trajectories = [read(x.get("trajectory"), x.get("job_id")) for x in trials]
    title = w.text(title_of(trials))
    yield ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
           '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
           f"<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n")
    yield (f'<div class="trials n{len(trials)}">'
           + "".join(header(w, x, tr) for x, tr in zip(trials, trajectories, strict=True)) + "</div>\n")
    if len(trials) == 2:
        yield from _pair(w, trials, trajectories)
    else:
        yield from _single(w, trajectories[0] if trajectories else Trajectory([], {}, None))
    yield "</body>\n</html>\n"


def _single(w: Writer, trajectory: Trajectory) -> Iterator[str]:
    if not trajectory.steps:
        yield '<p class="empty">This trajectory has no steps.</p>\n'
        return
    yield '<main class="steps single">\n'
    seen: set[int] = set()
    for step in trajectory.steps:
        anchor = f"step-{step.key}" if step.key not in seen else None
        seen.add(step.key)
        yield w.card(step, anchor=anchor) + "\n"
    yield "</main>\n"


def _pair(w: Writer, trials: Sequence[dict[str, Any]], trajectories: list[Trajectory]) -> Iterator[str]:
    rows = align(*trajectories)
    marked = first_difference(rows)
    names = [w.text(x.get("job_id")) for x in trials]
    if marked is not None:
        left, right = next(c for k, c in rows if k == marked)
        yield (f'<p class="firstdiff">The trials first differ at <a href="#step-{marked}">step {marked}</a>: '
               f"{names[0]}: {w.text(describe_action(left))}; {names[1]}: {w.text(describe_action(right))}.</p>\n")
    elif rows:
        yield '<p class="same">The two trials take the same actions at every step.</p>\n'
    if not rows:
        yield '<p class="empty">Neither trajectory has steps.</p>\n'
        return
    yield '<main class="steps pair">\n'
    for key, (left, right) in rows:
        diff = key == marked
        cells = []
        for side in (left, right):
            if side:
                cells.append('<div class="cell">' + "".join(w.card(s, marked=diff) for s in side) + "</div>")
            else:
                cells.append('<div class="cell none">no step</div>')
        yield (f'<div class="row{" diff" if diff else ""}" id="step-{key}"><div class="num">{key}</div>'
               f"{''.join(cells)}</div>\n")
    yield "</main>\n"
