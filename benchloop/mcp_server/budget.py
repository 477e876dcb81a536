"""What a tool returns: the CLI's JSON, cut to a budget at an element boundary.

A result's text is the compact JSON that ``bl --no-pretty ...`` prints.  When
it is longer than the budget (``--max-chars``, 60,000 by default) the result
is cut where an element ends: the first elements of the array that fit are
kept.  When not even one element fits, the cut goes inside the first element
(its largest member, recursively), and a string is cut as a last resort.  Each
cut is noted - where, how many elements were kept of how many - with a
``query`` that asks for the rest (a JMESPath slice), so an agent can page
through any result with the tool it already called.

The budget covers *everything* a tool returns, not just the data: the text
blocks together (the JSON, the truncation note, the failure summary) fit it,
and so does the structured content on its own.  The notes are made to fit
first (:func:`failure_summary`, :func:`truncation` shorten themselves), the
data gets the rest (:func:`compose`); an error text is cut like a string
(:func:`fit_text`).  Both channels carry the same data, so a client that shows
either one to a model shows at most the budget.

Masking is the one policy of ``base/masking.py`` (``scrub``, ``scrub_value``):
every occurrence of a secret, in strings and in object keys, becomes ``***``.
See docs/mcp.md, "The key is never shown".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_CHARS = 60_000
MIN_MAX_CHARS = 1_000
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# How much of one id and of one message a shortened failure summary keeps.
ID_CLIP, MESSAGE_CLIP = 120, 400
# How many left-out keys a shortened truncation note still names, and how much of each.
NOTE_KEYS, KEY_CLIP, PATH_CLIP = 10, 40, 80


def dumps(value: Any) -> str:
    """Compact JSON, as ``bl --no-pretty`` prints it (without the final newline)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _key(path: str, key: str) -> str:
    step = key if _IDENTIFIER.match(key) else json.dumps(key, ensure_ascii=False)
    return f"{path}.{step}" if path else step


def clip(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[:max(limit - 1, 0)] + "…"


def fit_text(text: str, budget: int) -> str:
    """A message in at most ``budget`` characters, saying how much was left out."""
    if len(text) <= budget:
        return text
    keep = budget
    for _ in range(3):  # the note's own length depends on the number in it
        note = f" … [{len(text) - keep:,} characters left out]"
        keep = max(budget - len(note), 0)
    return text[:keep] + note


# ------------------------------------------------------------------- cuts
@dataclass
class Cut:
    """One place where a result was cut."""

    path: str  # JMESPath of the cut array / object / string inside the result ("" = the result itself)
    kind: str  # "elements", "members" or "characters"
    shown: int
    total: int
    left_out_keys: list[str] = field(default_factory=list)

    @property
    def left_out(self) -> int:
        return self.total - self.shown

    def rest_query(self, query: str | None) -> str | None:
        """A query for what this cut left out (None for a cut string)."""
        if self.kind == "elements":
            rest = f"{self.path}[{self.shown}:]"
        elif self.kind == "members" and self.left_out_keys:
            rest = _key(self.path, self.left_out_keys[0])
        else:
            return None
        return f"{query} | {rest}" if query else rest

    def describe(self, query: str | None, short: int = 0) -> dict[str, Any]:
        """The cut as data; ``short`` > 0 shortens it (1: a few keys, 2: no keys, no query, short path)."""
        path = self.path or "@"
        out: dict[str, Any] = {"path": clip(path, PATH_CLIP) if short >= 2 else path, "kind": self.kind,
                               "shown": self.shown, "total": self.total, "left_out": self.left_out}
        if self.left_out_keys and short < 2:
            keys = self.left_out_keys if not short else [clip(k, KEY_CLIP) for k in self.left_out_keys[:NOTE_KEYS]]
            out["left_out_keys"] = keys
        rest = self.rest_query(query) if short < 2 else None
        if rest:
            out["rest_query"] = rest
        return out

    def sentence(self, query: str | None, short: int = 0) -> str:
        path = clip(self.path, PATH_CLIP) if short >= 2 else self.path
        where = f"at {path}" if path else "the result"
        text = f"{where}: {self.shown} of {self.total} {self.kind} shown, {self.left_out} left out"
        rest = self.rest_query(query) if short < 2 else None
        if rest:
            text += f"; ask for the rest with query {rest!r}"
        return text


def cut(value: Any, budget: int) -> tuple[Any, list[Cut]]:
    """``value`` with at most ``budget`` characters of compact JSON, and the cuts made (none: unchanged)."""
    if len(dumps(value)) <= budget:
        return value, []
    return _cut(value, budget, "")


def _cut(value: Any, budget: int, path: str) -> tuple[Any, list[Cut]]:
    if isinstance(value, list):
        return _cut_list(value, budget, path)
    if isinstance(value, dict):
        return _cut_dict(value, budget, path)
    if isinstance(value, str):
        return _cut_string(value, budget, path)
    return None, [Cut(path, "characters", 0, len(dumps(value)))]  # a number longer than the budget


def _cut_list(value: list[Any], budget: int, path: str) -> tuple[Any, list[Cut]]:
    used, kept = 2, 0  # "[" and "]"
    for element in value:
        size = len(dumps(element)) + (1 if kept else 0)
        if used + size > budget:
            break
        used += size
        kept += 1
    if kept or not value:
        return value[:kept], [Cut(path, "elements", kept, len(value))]
    # Not even the first element fits: cut inside it.
    inner, cuts = _cut(value[0], budget - 2, f"{path}[0]")
    if len(value) > 1:
        cuts.insert(0, Cut(path, "elements", 1, len(value)))
    return [inner], cuts


def _cut_dict(value: dict[str, Any], budget: int, path: str) -> tuple[Any, list[Cut]]:
    sizes = {k: len(dumps(k)) + 1 + len(dumps(v)) for k, v in value.items()}
    total = 2 + sum(sizes.values()) + max(len(sizes) - 1, 0)
    largest = max(sizes, key=lambda k: sizes[k]) if sizes else None
    if largest is not None and isinstance(value[largest], (list, dict, str)):
        room = budget - (total - len(dumps(value[largest])))
        if room >= 64:
            inner, cuts = _cut(value[largest], room, _key(path, largest))
            return {k: (inner if k == largest else v) for k, v in value.items()}, cuts
    # Keep the members that fit, in order.
    used, kept = 2, {}  # type: tuple[int, dict[str, Any]]
    for key, size in sizes.items():
        size += 1 if kept else 0
        if used + size <= budget:
            kept[key] = value[key]
            used += size
    left = [k for k in value if k not in kept]
    return kept, [Cut(path, "members", len(kept), len(value), left)]


def _cut_string(value: str, budget: int, path: str) -> tuple[Any, list[Cut]]:
    low, high = 0, len(value)
    while low < high:  # the longest prefix whose JSON fits
        middle = (low + high + 1) // 2
        if len(dumps(value[:middle])) <= budget:
            low = middle
        else:
            high = middle - 1
    return value[:low], [Cut(path, "characters", low, len(value))]




# ------------------------------------------------------------------ notes
def truncation(cuts: list[Cut], size: int, budget: int, query: str | None, pages: bool,
               cap: int | None = None) -> tuple[dict[str, Any], str]:
    """The structured note and the sentence of a cut result, each in at most ``cap`` characters.

    A note that does not fit is shortened step by step: a few left-out keys
    instead of all, then only the innermost cut (the one whose rest query
    pages on), then no keys, no rest query and a short path, then just the
    sizes."""
    cap = budget if cap is None else cap
    lead = f"[truncated] the result is {size:,} characters of JSON, over the {budget:,} budget"
    page_hint = " Or ask for one page at a time (page, page_size)." if pages else ""
    for short, shown in ((0, cuts), (1, cuts), (1, cuts[-1:]), (2, cuts[-1:])):
        note: dict[str, Any] = {"characters": size, "budget": budget,
                                "cuts": [c.describe(query, short) for c in shown]}
        text = lead + ": " + "; ".join(c.sentence(query, short) for c in shown)
        if len(shown) < len(cuts):
            note["other_cuts"] = len(cuts) - len(shown)
            text += f" (and {len(cuts) - len(shown)} cut(s) further out)"
        text += "." + page_hint
        if len(text) <= cap and len(dumps(note)) <= cap:
            return note, text
    return {"characters": size, "budget": budget}, fit_text(lead + "." + page_hint, cap)


@dataclass
class Failures:
    """The failure summary of a call: the CLI's lines and the same as data, made to fit a cap."""

    text: str
    items: list[dict[str, str]]
    left_out: int = 0

    def structured(self) -> dict[str, Any]:
        out: dict[str, Any] = {"failures": self.items}
        if self.left_out:
            out["failures_left_out"] = self.left_out
        return out


def failure_summary(failures: list[tuple[str, str]], noun: str, cap: int) -> Failures:
    """``[error] N id(s) failed:`` and one line per id, as the CLI prints it, in at most ``cap``
    characters (the text, and the structured list on its own).  When the whole summary does not
    fit, each id and message is shortened and the ids that still do not fit are counted, not
    listed."""
    real = [(i, m) for i, m in failures if i]
    general = [f"[error] {m}" for i, m in failures if not i]
    head = f"[error] {len(real)} {noun} failed:"
    lines = [f"[error]   - {i}: {m}" for i, m in real]
    items = [{"id": i, "message": m} for i, m in real]
    full = Failures("\n".join([head, *lines, *general]), items)
    if len(full.text) <= cap and len(dumps(full.structured())) <= cap:
        return full
    general = [fit_text(line, max(cap // 4, 40)) for line in general]
    more = f"[error]   ... and {len(real):,} more {noun} not shown (give fewer ids per call to see them)"
    text_used = len(head) + sum(len(g) + 1 for g in general) + len(more) + 1
    data_used = len(dumps({"failures": [], "failures_left_out": len(real)}))
    kept_lines, kept_items = [], []
    for ident, message in real:
        ident, message = clip(ident, ID_CLIP), clip(message, MESSAGE_CLIP)
        line, item = f"[error]   - {ident}: {message}", {"id": ident, "message": message}
        line_size, item_size = len(line) + 1, len(dumps(item)) + 1
        if text_used + line_size > cap or data_used + item_size > cap:
            break
        kept_lines.append(line)
        kept_items.append(item)
        text_used += line_size
        data_used += item_size
    left = len(real) - len(kept_items)
    tail = [f"[error]   ... and {left:,} more {noun} not shown (give fewer ids per call to see them)"] if left else []
    text = fit_text("\n".join([head, *kept_lines, *tail, *general]), cap)
    return Failures(text, kept_items, left)


# ------------------------------------------------------------------ reply
def channel_sizes(texts: list[str], structured: dict[str, Any] | None) -> tuple[int, int]:
    """Characters of the text blocks together, and of the structured content as compact JSON."""
    return sum(len(t) for t in texts), len(dumps(structured)) if structured is not None else 0


def compose(value: Any, failures: list[tuple[str, str]], noun: str, budget: int, query: str | None,
            pages: bool) -> tuple[list[str], dict[str, Any]]:
    """The text blocks and the structured content of a result, each channel within ``budget``.

    The failure summary gets what the data leaves, at least a third of the budget; a cut
    result's note gets a fifth; the data gets the rest, cut at an element boundary."""
    size = len(dumps(value))
    summary = None
    if failures:
        summary = failure_summary(failures, noun, max(budget // 3, budget - size - 100))
    extra_texts = [summary.text] if summary else []
    extra = summary.structured() if summary else {}
    texts = [dumps(value), *extra_texts]
    structured = {"result": value, **extra}
    if max(channel_sizes(texts, structured)) <= budget:
        return texts, structured
    note_cap = max(budget // 5, 120)
    taken = max(channel_sizes(extra_texts, extra)) + 2
    room = budget - taken - note_cap
    for _ in range(8):
        kept, cuts = cut(value, max(room, 2))
        note, sentence = truncation(cuts, size, budget, query, pages, note_cap)
        texts = [dumps(kept), sentence, *extra_texts]
        structured = {"result": kept, "truncated": note, **extra}
        over = max(channel_sizes(texts, structured)) - budget
        if over <= 0:
            return texts, structured
        room -= over + 8
    # Not reachable with the caps above; never return more than the budget all the same.
    texts = [fit_text(" ".join(texts), budget)]
    return texts, {"result": None, "truncated": {"characters": size, "budget": budget}}
