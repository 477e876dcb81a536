"""``--output csv``: the rows of ``--output table`` as RFC 4180 CSV, for spreadsheets and data frames.

The rows and the columns are the table format's (``tabular.tabulate``: the declared rows
of the printed dimension with the element's ids in front, or one row per element; the
declared columns, nested objects as dotted names, then any other field), written by the standard library's ``csv``
module: one header row, fields quoted when they hold a comma, a quote or a line break,
lines ending in CRLF as RFC 4180 says.

Cells: null is empty, ``true``/``false`` are JSON's, numbers as JSON writes them, a list
or an object is its compact JSON.  Text is server data, so two things are done to it:

* a cell a spreadsheet would run as a formula - text starting with ``=``, ``+``, ``-``,
  ``@``, a tab or a carriage return - gets a leading ``'`` (the OWASP advice against CSV
  injection: ``=HYPERLINK(...)`` shows as text).  Numbers are never changed (``-1`` is a
  number), so only text can start that way;
* control, bidi and other hiding characters are written as escapes (``\\x1b``), as on
  the terminal: a CSV is read on terminals too.  To a pipe or a file, line feeds, carriage
  returns and tabs stay (quoted); on a terminal only the tab stays, as on stderr
  (``hiding.LINE``): a carriage return would move the cursor back over the line, and a
  line feed would make one row look like two.
"""

from __future__ import annotations

import csv
import functools
import json
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ...base.hiding import LINE, EscapeTable, is_terminal
from ...table.outputs import Output
from .base import FORMATS, Refuse
from .tabular import table_hint, tabulate

# Hiding characters escaped; a line feed, a tab and a carriage return stay as they are (the
# csv module quotes the field).
_HIDING = EscapeTable({0x0A: "\n", 0x09: "\t", 0x0D: "\r"})
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any, hiding: EscapeTable = _HIDING) -> str:
    """One CSV field (see the module docstring); ``hiding``: ``LINE`` on a terminal."""
    kind = type(value)
    if kind is str:
        text = value.translate(hiding)
        return "'" + text if text.startswith(FORMULA_STARTS) else text
    if value is None:
        return ""
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)  # as JSON writes it (a subclass, an IntEnum, would not be)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)  # as JSON writes it: 0.5, 1e+100
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    return cell(json.dumps(value, ensure_ascii=False, separators=(",", ":")), hiding)


def row_cells(values: Sequence[Any], hiding: EscapeTable = _HIDING) -> list[Any]:
    """:func:`cell` of each value, leaving as they are the values the ``csv`` module writes
    the same way itself (the common case, and the cost of a big table): ``None`` (empty),
    an ``int`` or a finite ``float`` (``str`` of them is their JSON text), and text that is
    printable (``str.isprintable``: no hiding character, no line break or tab, so
    ``hiding`` leaves it as it is) and starts no formula."""
    out: list[Any] = []
    add = out.append
    for value in values:
        kind = type(value)
        if kind is str:
            add(value if value.isprintable() and not value.startswith(FORMULA_STARTS) else cell(value, hiding))
        elif value is None or kind is int or (kind is float and value - value == 0):
            add(value)
        else:
            add(cell(value, hiding))
    return out


_NONE = type(None)
_WHOLE = frozenset({int, _NONE})  # written by csv as JSON writes them, whatever the value
_SCALAR = frozenset({str, int, float, _NONE})
_PRINTABLE = bytes(range(0x20, 0x7F))  # the printable ASCII characters (str.isprintable, a byte at a time)
_FORMULAS = [start for start in FORMULA_STARTS if start.isprintable()]  # a tab or a CR is not
_FIRST = operator.itemgetter(slice(0, 1))  # a text's first character ("" for "")


def plain_rows(rows: Sequence[Sequence[Any]]) -> bool:
    """Whether :func:`row_cells` leaves every value of ``rows`` as it is (rows of one length)."""
    return all(map(_plain, zip(*rows, strict=True)))


def page_cells(rows: Sequence[Sequence[Any]], hiding: EscapeTable = _HIDING) -> Sequence[Sequence[Any]]:
    """:func:`row_cells` of each row (rows of one length), a column at a time: a column whose
    values it leaves as they are (:func:`_plain`) is checked in C, and only the others are
    made cell by cell.  A page of a big table is mostly so (``jobs table``: all but ``pass``)."""
    if not rows:
        return rows
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
    odd = [n for n, column in enumerate(columns) if not _plain(column)]
    if not odd:
        return rows
    for n in odd:
        columns[n] = row_cells(columns[n], hiding)
    return list(zip(*columns, strict=True))


_NOT_NONE = functools.partial(operator.is_not, None)


def _plain(column: Sequence[Any]) -> bool:
    """Whether :func:`row_cells` leaves every value of ``column`` as it is, found in C: its
    types, its text joined (printable), the first characters of its texts (no formula), its
    numbers finite."""
    kinds = set(map(type, column))
    if kinds <= _WHOLE:
        return True
    if not kinds <= _SCALAR:
        return False  # a bool, a list, an object, a subclass: cell by cell
    if str in kinds:
        texts = column if len(kinds) == 1 else [v for v in column if type(v) is str]
        text = "".join(texts)
        if not (text.encode().translate(None, _PRINTABLE) == b"" if text.isascii() else text.isprintable()):
            return False
        starts = "".join(map(_FIRST, texts))
        if any(start in starts for start in _FORMULAS):
            return False
    if float in kinds:
        if str in kinds:
            return all(map(math.isfinite, [v for v in column if type(v) is float]))
        try:  # the ints and floats of the column (an int too big for a float: cell by cell)
            return all(map(math.isfinite, filter(_NOT_NONE, column)))
        except OverflowError:
            return False
    return True


@FORMATS.register("csv")
class Csv:
    """``--output csv``: one header row, then one line per row of the table format."""

    streams = False

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None, refuse: Refuse | None = None) -> None:
        table = tabulate(result, output)
        writer = csv.writer(stream)
        hiding = LINE if is_terminal(stream) else _HIDING
        if table.columns:
            writer.writerow([cell(c, hiding) for c in table.columns])
        columns = table.columns
        writer.writerows(row_cells(list(map(row.get, columns)), hiding) for row in table.rows)
        hint = table_hint(table)
        if hint and note is not None:
            note(hint)
