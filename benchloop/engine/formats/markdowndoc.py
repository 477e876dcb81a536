"""``--output markdown``: the rows of ``--output table`` as a markdown (GitHub) table.

For pasting into a pull request or an issue: the same rows and columns as the table
format (``tabular.tabulate``), every cell on one line, rendered as itself.  A cell cannot
break the table or become markup: ``|`` and the characters of inline markup (backslash,
backticks, ``*``, ``_``, ``[``, ``]``, ``~``) are backslash-escaped, ``<`` and ``&`` are
HTML entities (no tags), line breaks are spaces, control and bidi characters are escapes.
Numbers are written as JSON writes them and right-aligned.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TextIO

from ...base.hiding import EscapeTable
from ...table.outputs import Output
from .base import FORMATS, Refuse
from .tabular import display_number, rounded, table_hint, tabulate

_TEXT = EscapeTable({0x0A: " ", 0x0D: " ", **{ord(c): "\\" + c for c in "\\`*_[]|~"},
                     ord("<"): "&lt;", ord("&"): "&amp;"})


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return display_number(value)
    if isinstance(value, (bool, int)):
        return json.dumps(value)
    if not isinstance(value, str):
        value = json.dumps(rounded(value), ensure_ascii=False, separators=(",", ":"))
    return value.translate(_TEXT)


def _numeric(values: list[Any]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present)


@FORMATS.register("markdown")
class Markdown:
    """``--output markdown``: a header row, the alignment row, one line per row."""

    streams = False

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None, refuse: Refuse | None = None) -> None:
        table = tabulate(result, output)
        rows, columns = table.rows, table.columns
        if not rows:
            stream.write("(no results)\n")
            return
        right = [_numeric([row.get(c) for row in rows]) for c in columns]
        lines = ["| " + " | ".join(cell(c) for c in columns) + " |",
                 "| " + " | ".join("---:" if r else "---" for r in right) + " |"]
        lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
        stream.write("\n".join(lines) + "\n")
        hint = table_hint(table)
        if hint and note is not None:
            note(hint)
