"""``--output table``: for people.

The rows and columns of ``tabular.tabulate``: the printed dimension's declared rows
(the jobs of a page, the tasks of a group, with the element's ids in front) or one row
per element, nested objects as dotted columns.  Columns fit the terminal's width in
display columns (CJK text counts twice), control characters are escaped, and when a
list of objects remains as JSON, one ``[info]`` line on stderr names a ``--query`` that
gives a table of it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from typing import Any, TextIO

from ...base import textwidth
from ...base.hiding import EscapeTable
from ...table.outputs import Output
from .base import FORMATS, Refuse
from .tabular import Tabular, display_number, rounded, table_hint, tabulate

# Controls, bidi and zero-width characters escaped (``base/hiding.py``); a line feed is a space.
_CONTROL = EscapeTable({0x0A: " "})


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return display_number(value)
    if not isinstance(value, str):
        value = json.dumps(rounded(value), ensure_ascii=False, separators=(",", ":"))
    return value.translate(_CONTROL)  # server text never drives the terminal


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


def render_table(result: Any, width: int | None = None, output: Output | None = None) -> str:
    """The table of a result: the rows and columns of ``tabular.tabulate``, fit to ``width``."""
    width = width or shutil.get_terminal_size((120, 24)).columns
    table = result if isinstance(result, Tabular) else tabulate(result, output)
    if not table.rows:
        return "(no results)\n"
    columns = table.columns
    cells = [[_cell(row.get(col)) for col in columns] for row in table.rows]
    header = [_cell(col) for col in columns]
    natural = [max(textwidth.width(header[i]), *(textwidth.width(r[i]) for r in cells)) for i in range(len(columns))]
    sizes = _widths(natural, width)

    def line(values: list[str]) -> str:
        return "  ".join(textwidth.pad(textwidth.cut(v, s, "…"), s)
                         for v, s in zip(values, sizes, strict=True)).rstrip()

    lines = [line(header), "  ".join("-" * s for s in sizes)] + [line(r) for r in cells]
    return "\n".join(lines) + "\n"


@FORMATS.register("table")
class Table:
    """``--output table``: for people, one row per element (see the module docstring)."""

    streams = False

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None, refuse: Refuse | None = None) -> None:
        table = tabulate(result, output)
        stream.write(render_table(table))
        hint = table_hint(table)
        if hint and note is not None:
            note(hint)
