"""What a tool returns: the CLI's JSON, cut to a budget at an element boundary.

A result's text is the compact JSON that ``bl --no-pretty ...`` prints.  When
it is longer than the budget (``--max-chars``, 60,000 by default) the result
is cut where an element ends: the first elements of the array that fit are
kept.  When not even one element fits, the cut goes inside the first element
(its largest member, recursively), and a string is cut as a last resort.  Each
cut is noted - where, how many elements were kept of how many - with a
``query`` that asks for the rest (a JMESPath slice), so an agent can page
through any result with the tool it already called.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_CHARS = 60_000
MIN_MAX_CHARS = 1_000
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def dumps(value: Any) -> str:
    """Compact JSON, as ``bl --no-pretty`` prints it (without the final newline)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _key(path: str, key: str) -> str:
    step = key if _IDENTIFIER.match(key) else json.dumps(key, ensure_ascii=False)
    return f"{path}.{step}" if path else step


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

    def describe(self, query: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path or "@", "kind": self.kind, "shown": self.shown,
                               "total": self.total, "left_out": self.left_out}
        if self.left_out_keys:
            out["left_out_keys"] = self.left_out_keys
        rest = self.rest_query(query)
        if rest:
            out["rest_query"] = rest
        return out

    def sentence(self, query: str | None) -> str:
        where = f"at {self.path}" if self.path else "the result"
        unit = {"elements": "elements", "members": "members", "characters": "characters"}[self.kind]
        text = f"{where}: {self.shown} of {self.total} {unit} shown, {self.left_out} left out"
        rest = self.rest_query(query)
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
    used, kept = 2, {}
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


def truncation(cuts: list[Cut], size: int, budget: int, query: str | None, pages: bool) -> tuple[dict, str]:
    """The structured note and the sentence of a cut result."""
    note = {"characters": size, "budget": budget, "cuts": [c.describe(query) for c in cuts]}
    text = (f"[truncated] the result is {size:,} characters of JSON, over the {budget:,} budget: "
            + "; ".join(c.sentence(query) for c in cuts) + ".")
    if pages:
        text += " Or ask for one page at a time (page, page_size)."
    return note, text


def mask(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
