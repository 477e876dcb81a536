"""Display width of text on a terminal: wide (CJK) characters take two columns.

Used by the live progress line (``log.py``) and ``--output table``
(``engine/formats/table.py``), which must fit the terminal however the text is written.
"""

from __future__ import annotations

import functools
import os
import shutil
import unicodedata


@functools.lru_cache(maxsize=4096)  # a table cuts a million cells: ask the database once per character
def char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def width(text: str) -> int:
    """Columns ``text`` takes on a terminal."""
    if text.isascii():
        return len(text)
    return sum(char_width(c) for c in text)


def cut(text: str, columns: int, ellipsis: str = "") -> str:
    """``text`` cut to at most ``columns`` display columns (ending with ``ellipsis`` when cut)."""
    if width(text) <= columns:
        return text
    tail = width(ellipsis)
    room = max(columns - tail, 0)
    if text.isascii():  # one column per character (the common case: a table of 40,000 rows)
        return text[:room] + (ellipsis if columns >= tail else "")
    out, used = [], 0
    for char in text:
        size = char_width(char)
        if used + size > room:
            break
        out.append(char)
        used += size
    return "".join(out) + (ellipsis if columns >= width(ellipsis) else "")


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
