"""The flat formats' fast paths give the bytes of their slow paths.

``csvdoc.row_cells`` leaves to the ``csv`` module the values it writes as ``cell`` would
(None, ints, finite floats, printable text that starts no formula), and ``tabular.flat_row``
hands back a row that is flat already instead of copying it: for any row, the CSV text and
the flattened row must be what ``cell`` and ``flat`` give.  The page-at-a-time checks of the
streamed rows (``csvdoc.plain_rows``, ``tabular.flat_rows``) say yes only where the per-row
paths leave every value as it is.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchloop.base.hiding import LINE
from benchloop.engine.formats.csvdoc import _HIDING, cell, plain_rows, row_cells
from benchloop.engine.formats.tabular import flat, flat_row, flat_rows

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


_PLAIN_TEXT = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("=+-@\t\r\n\x1b\u202e\x85 ,\"ab"),
                      max_size=6)
_CELL = st.none() | st.booleans() | st.integers() | st.floats() | _PLAIN_TEXT | st.just([1])


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(_CELL, min_size=n, max_size=n), max_size=6)),
       st.sampled_from([_HIDING, LINE]))
def test_plain_rows_only_when_row_cells_change_nothing(rows: list[list[Any]], hiding: Any) -> None:
    unchanged = all(cells == values and list(map(type, cells)) == list(map(type, values))
                    for values, cells in ((v, row_cells(v, hiding)) for v in rows))
    if plain_rows(rows):
        assert unchanged
        assert _csv(rows) == _csv([[cell(v, hiding) for v in r] for r in rows])


def test_plain_rows_of_a_job_page_and_what_turns_them_down() -> None:
    page = [("G-J1", "swe-bench", None, 3, 0.5), ("G-J2", "", "x", -1, 2.0)]
    assert plain_rows(page)
    for odd in ("=1+1", "-x", "@a", "+1", "\tx", "a\rb", "a\nb", "\x1b[31m", "a\u202eb", True, float("inf"), [1]):
        assert not plain_rows([*page, ("G-J3", odd, None, 1, 1.0)]), odd
    assert not plain_rows([*page, ("G-J3", "x", "=cmd", 1, 1.0)])  # a formula in a column with None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(_TEXT, _VALUE, max_size=4) | _SCALAR, max_size=5))
def test_flat_rows_are_the_flat_row_of_each(rows: list[Any]) -> None:
    expected = [flat_row(r) if isinstance(r, dict) else {"value": r} for r in rows]
    got = flat_rows(rows)
    assert got == expected and [list(r) for r in got] == [list(r) for r in expected]


def test_flat_rows_hand_back_a_flat_page_itself() -> None:
    page = [{"a": 1, "b": "x"}, {"a": None, "c": 0.5}]
    assert flat_rows(page) is page
    assert flat_rows([*page, {"d": {"e": 1}}])[-1] == {"d.e": 1}
    assert flat_rows([{1: "x"}]) == [flat_row({1: "x"})]  # a key that is no text: row by row


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abcde"), st.integers(0, 3), max_size=5), max_size=6),
       st.permutations("abcde"), st.integers(0, 5))
def test_page_cells_are_the_cells_of_each_row(page: list[dict[str, Any]], order: list[str], count: int) -> None:
    from benchloop.engine.formats.streamed import _page_cells

    columns = list(order[:count])
    known = set(columns)

    def cells(row: dict[str, Any]) -> list[Any]:
        rest = {k: v for k, v in row.items() if k not in known}
        return [*map(row.get, columns), repr(rest) if rest else None]

    assert [list(r) for r in _page_cells(page, columns, known, cells)] == [cells(r) for r in page]


@settings(max_examples=400, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(_CELL, min_size=n, max_size=n), max_size=6)),
       st.sampled_from([_HIDING, LINE]))
def test_page_cells_write_the_bytes_of_row_cells(rows: list[list[Any]], hiding: Any) -> None:
    from benchloop.engine.formats.csvdoc import page_cells

    assert _csv(list(page_cells(rows, hiding))) == _csv([row_cells(r, hiding) for r in rows])


def test_page_cells_make_only_the_odd_columns_cell_by_cell() -> None:
    from benchloop.engine.formats.csvdoc import page_cells

    rows = [("J1", True, 0.5, None, 2**80), ("J2", None, 1.5, "=x", 3)]
    assert page_cells(rows) == [("J1", "true", 0.5, None, 2**80), ("J2", None, 1.5, "'=x", 3)]
    plain = [("J1", 1, 0.5), ("J2", None, 2.0)]
    assert page_cells(plain) is plain
