"""``--output table``: for people.

One row per element, one column per top-level key;
when every element holds one list of objects (the jobs of a page, the tasks
of a group), the rows are those objects instead, with the element's ids in
front.  Columns fit the terminal's width in display columns (CJK text counts
twice), control characters are escaped, and when nested values remain, one
``[info]`` line on stderr names a ``--query`` that gives a flat table.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from typing import Any, TextIO

from ...base import textwidth
from ...base.hiding import EscapeTable

# Controls, bidi and zero-width characters escaped (``base/hiding.py``); a line feed is a space.
_CONTROL = EscapeTable({0x0A: " "})


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value.translate(_CONTROL)  # server text never drives the terminal


def _collection(rows: list[dict]) -> str | None:
    """The one key under which every row holds a list of objects (and at least one holds some)."""
    keys = [k for k in rows[0] if isinstance(rows[0][k], list)]
    found = [k for k in keys
             if all(isinstance(r.get(k), list) and all(isinstance(i, dict) for i in r[k]) for r in rows)
             and any(r[k] for r in rows)]
    lists = {k for r in rows for k, v in r.items() if isinstance(v, list) and v and isinstance(v[0], dict)}
    return found[0] if len(found) == 1 and lists == set(found) else None


def flatten(rows: list[Any]) -> list[Any]:
    """The natural rows of a table: the objects of the elements' one collection, ids in front."""
    if not rows or not all(isinstance(row, dict) for row in rows):
        return rows
    key = _collection(rows)
    if key is None:
        return rows
    out = []
    for row in rows:
        ids = {k: v for k, v in row.items() if k.endswith("_id") and isinstance(v, str)}
        out += [{**{k: v for k, v in ids.items() if k not in item}, **item} for item in row[key]]
    return out


def _nested_path(value: Any, path: str = "[]") -> str | None:
    """A JMESPath to the first list of objects inside ``value`` (for the --query hint)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if not key.isidentifier():
                continue
            if isinstance(inner, list) and inner and isinstance(inner[0], dict):
                return f"{path}.{key}[]"
            if isinstance(inner, dict):
                found = _nested_path(inner, f"{path}.{key}")
                if found:
                    return found
    return None


def table_hint(rows: list[Any]) -> str | None:
    """One line naming a --query that gives a flat table, when nested values remain."""
    if not any(isinstance(row, dict) and any(isinstance(v, (dict, list)) for v in row.values()) for row in rows):
        return None
    path = next((p for p in map(_nested_path, rows) if p), None)
    query = f"--query '{path}'" if path else "--query '[].{id: ..., field: ...}'"
    return f"nested values are shown as JSON; for a flat table select them, e.g. {query}"


def _widths(natural: list[int], width: int) -> list[int]:
    """Column widths within ``width`` (two spaces between columns): the widest shrink first."""
    room = width - 2 * (len(natural) - 1)
    if sum(natural) <= room:
        return natural
    low, high = 1, max(natural)
    while low < high:  # the largest cap that fits
        cap = (low + high + 1) // 2
        if sum(min(n, cap) for n in natural) <= room:
            low = cap
        else:
            high = cap - 1
    return [max(min(n, low), min(n, 4)) for n in natural]


def columns_of(rows: list[dict]) -> list[str]:
    """The columns of a table of rows: every key, in the order keys first appear."""
    columns: dict[str, None] = {}
    for row in rows:
        for key in row:
            columns.setdefault(key, None)
    return list(columns)


def render_table(rows: list[Any], width: int | None = None) -> str:
    width = width or shutil.get_terminal_size((120, 24)).columns
    rows = flatten(rows)
    if not rows:
        return "(no results)\n"
    if not all(isinstance(row, dict) for row in rows):
        rows = [{"value": row} for row in rows]
    columns = columns_of(rows)
    cells = [[_cell(row.get(col)) for col in columns] for row in rows]
    header = [_cell(col) for col in columns]
    natural = [max(textwidth.width(header[i]), *(textwidth.width(r[i]) for r in cells)) for i in range(len(columns))]
    sizes = _widths(natural, width)

    def line(values: list[str]) -> str:
        return "  ".join(textwidth.pad(textwidth.cut(v, s, "…"), s)
                         for v, s in zip(values, sizes, strict=True)).rstrip()

    lines = [line(header), "  ".join("-" * s for s in sizes)] + [line(r) for r in cells]
    return "\n".join(lines) + "\n"


class Table:
    """``--output table``: for people, one row per element (see the module docstring)."""

    name = "table"
    streams = False

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None) -> None:
        rows = result if isinstance(result, list) else [result]
        stream.write(render_table(rows))
        hint = table_hint(flatten(rows))
        if hint and note is not None:
            note(hint)

    def line(self, element: Any) -> str:
        raise NotImplementedError("the table waits for every element")
