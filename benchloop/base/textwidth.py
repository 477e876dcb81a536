"""Display width of text on a terminal: wide (CJK) characters take two columns.

Used by the live progress line (``log.py``), ``--output table``
(``engine/formats/table.py``) and ``bl compare``'s terminal tables, which must fit the
terminal however the text is written.  The widths are ``rich.cells``' (Unicode's East
Asian widths, zero-width and combining characters, emoji sequences joined by U+200D as one
cluster); rich comes with Cyclopts.  ASCII text, almost every cell of a table, is measured
and cut here without it, and rich.cells is imported at the first text that is not ASCII
(~3 ms), never on a start that prints none.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType

_cells: ModuleType | None = None
# What joins characters into one cluster (an emoji sequence): rich measures such text as a whole.
_JOINERS = ("\u200d", "\ufe0f")


def _rich() -> ModuleType:
    global _cells
    if _cells is None:
        import rich.cells

        _cells = rich.cells
    return _cells


def width(text: str) -> int:
    """Columns ``text`` takes on a terminal."""
    if text.isascii():
        return len(text)
    return (_cells or _rich()).cell_len(text)


def cut(text: str, columns: int, ellipsis: str = "") -> str:
    """``text`` cut to at most ``columns`` display columns (ending with ``ellipsis`` when cut);
    a wide character or a cluster that would straddle the edge is left out whole."""
    if width(text) <= columns:
        return text
    tail = width(ellipsis)
    room = max(columns - tail, 0)
    return _prefix(text, room) + (ellipsis if columns >= tail else "")


def _prefix(text: str, room: int) -> str:
    """The longest start of ``text`` that fits ``room`` columns."""
    if text.isascii():  # one column per character (the common case: a table of 40,000 rows)
        return text[:room]
    cells = _cells or _rich()
    if room <= 0:
        return ""
    if any(j in text for j in _JOINERS):
        return cells.chop_cells(text, room)[0]
    # As rich's cell_len measures such text: character by character (stopping at the edge).
    size, used = cells.get_character_cell_size, 0
    for index, char in enumerate(text):
        used += size(char)
        if used > room:
            return text[:index]
    return text


def pad(text: str, columns: int) -> str:
    """``text`` padded with spaces to ``columns`` display columns."""
    return text + " " * max(columns - width(text), 0)


def terminal_columns(stream=None, fallback: int = 80) -> int:
    """The width of the terminal behind ``stream`` (else $COLUMNS, else ``fallback``)."""
    if stream is not None:
        try:
            return os.get_terminal_size(stream.fileno()).columns or fallback
        except (AttributeError, OSError, ValueError):
            pass
    return shutil.get_terminal_size((fallback, 24)).columns
