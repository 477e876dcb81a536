"""The flat formats' fast paths give the bytes of their slow paths.

``csvdoc.row_cells`` leaves to the ``csv`` module the values it writes as ``cell`` would
(None, ints, finite floats, printable text that starts no formula), and ``tabular.flat_row``
hands back a row that is flat already instead of copying it: for any row, the CSV text and
the flattened row must be what ``cell`` and ``flat`` give.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchloop.base.hiding import LINE
from benchloop.engine.formats.csvdoc import _HIDING, cell, row_cells
from benchloop.engine.formats.tabular import flat, flat_row

_TEXT = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("=+-@\t\r\n\x1b\u202e\x85 ,\""), max_size=12)
_SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | _TEXT
_VALUE = st.recursive(_SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                      max_leaves=6)


def _csv(rows: list[list[Any]]) -> str:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue()


@settings(max_examples=400, deadline=None)
@given(st.lists(_VALUE, max_size=8), st.sampled_from([_HIDING, LINE]))
def test_row_cells_write_the_bytes_of_cell(values: list[Any], hiding: Any) -> None:
    assert _csv([row_cells(values, hiding)]) == _csv([[cell(v, hiding) for v in values]])


def test_row_cells_pass_plain_values_and_guard_the_rest() -> None:
    values = ["plain", "=SUM(A1)", "a\x1bb", None, 3, 0.5, float("nan"), True, [1], {"a": 1}]
    cells = row_cells(values)
    assert cells[:6] == ["plain", "'=SUM(A1)", "a\\x1bb", None, 3, 0.5]
    assert cells[6:] == ["NaN", "true", "[1]", '{"a":1}']


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_TEXT, _VALUE, max_size=6))
def test_flat_row_is_flat(row: dict[str, Any]) -> None:
    got = flat_row(row)
    assert got == flat(row)
    assert list(got) == list(flat(row))


def test_flat_row_copies_only_when_it_flattens() -> None:
    plain = {"a": 1, "b": "x", "c": None}
    assert flat_row(plain) is plain
    nested = {"a": {"b": 1}, "c": [{"d": 2}]}
    assert flat_row(nested) == {"a.b": 1, "c.d": 2}
