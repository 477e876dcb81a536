"""Numbers in the tables made for people (``--output table`` and ``markdown``, ``--query`` ones too).

A float is shown with at most six significant digits, a difference left by rounding
(``1.1102230246251566e-17``) as 0, and floats inside a list or an object in one cell the same
way; whole numbers, huge ones and the data formats (json, csv) keep what JSON writes.
"""

from __future__ import annotations

import io
import json

from benchloop.engine.formats.markdowndoc import cell
from benchloop.engine.formats.table import render_table
from benchloop.engine.formats.tabular import display_number, rounded


def test_floats_show_six_significant_digits_and_tiny_ones_zero():
    assert display_number(0.06578947368421052) == "0.0657895"
    assert display_number(1.1102230246251566e-17) == "0"
    assert display_number(-2.7755575615628914e-17) == "0"
    assert display_number(12.5) == "12.5" and display_number(12.0) == "12.0"
    assert display_number(1234567.891) == "1234567.9"  # never fewer digits than the integer part
    assert display_number(1e20) == json.dumps(1e20)
    assert display_number(-0.0001234567) == "-0.000123457"
    assert display_number(float("nan")) == "NaN"


def test_cells_round_nested_floats_too():
    assert rounded({"ci": [0.06578947368421052, 1.1102230246251566e-17], "n": 3}) == {"ci": [0.0657895, 0.0], "n": 3}
    assert cell(0.06578947368421052) == "0.0657895" and cell(5) == "5" and cell(True) == "true"
    text = render_table([{"d": 1.1102230246251566e-17, "ci": [0.06578947368421052, 0.5]}], width=200)
    assert "1.11" not in text and "0.06578947368421052" not in text
    assert "[0.0657895,0.5]" in text
    out = io.StringIO()
    out.write(text)
    assert out.getvalue().splitlines()[2].split()[0] == "0"
