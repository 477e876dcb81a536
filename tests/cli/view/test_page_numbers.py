"""Numbers a hostile backend sends to ``bl view``: every page, listing and row is made, whatever
the size of a number.

A stand-in backend on loopback answers one job whose trajectory, job and metrics carry an
integer no float holds (400 digits) in ``tokens``, ``duration_s``, ``tokens_sent`` and
``num_turns``, and step numbers written as text of over 4,300 digits (Python's limit for
converting text to an integer).  The page, the text listing and the JSON rows are each
made (exit 0), every number shown one way or another (a huge integer by its first digits
and its count of digits, or, where the viewer keeps it as a field, exactly as it came).
The helper itself (:mod:`benchloop.viewer.numeric`) is checked on every kind of value.
"""

from __future__ import annotations

import json
import math

import pytest
from html_tree import parse
from hypothesis import given
from hypothesis import strategies as st
from support import API_KEY, NOT_FOUND, js

from benchloop.viewer import numeric

HUGE = int("9" * 400)
LONG_STEP = "7" * 4400  # over the int conversion limit of 4,300 digits


def hostile(where: str):
    """A backend whose jobs X and Y have a 400-digit integer in ``where`` (a metric, or a step's tokens),
    and whose trajectory's second step number is text of 4,400 digits."""
    run = {"duration_s": 12.5, "tokens_sent": 1000, "num_turns": 3}
    if where in run:
        run[where] = HUGE
    steps = [{"step": 0, "role": "user", "content": "fix it"},
             {"step": LONG_STEP, "role": "assistant", "tool": "bash",
              "tokens": HUGE if where == "tokens" else 7, "content": "ls"}]

    def answer(path: str, query: dict[str, str]):
        job = path.split("/")[3] if path.count("/") >= 3 else ""
        if job not in ("X", "Y"):
            return NOT_FOUND
        if path == f"/openapi/jobs/{job}/trajectory":
            return js({"job_id": job, "trajectory": steps})
        if path == f"/openapi/jobs/{job}":
            return js({"job_id": job, "group_id": "G", "instance_id": "I", "status": "succeeded"})
        if path == f"/openapi/metrics/{job}":
            return js({"job_id": job, "metrics": [{"type": "eval", "data": {"task_score": 1}}],
                       "run_metrics": [run], "tokenized_metrics": [{"tokenizer_output_total": HUGE}]})
        return NOT_FOUND

    return answer


FIELDS = ["tokens", "duration_s", "tokens_sent", "num_turns"]


@pytest.mark.parametrize("where", FIELDS)
def test_a_page_shows_a_number_no_float_holds(bl, origins, tmp_path, where):
    origin = origins(hostile(where))
    target = tmp_path / "x.html"
    result = bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "view", "-j", "X", "-o", str(target))
    assert result.code == 0, result.err
    _, root = parse(target.read_text(encoding="utf-8"))
    text = root.all_text()
    assert "9.9999e+399 (400 digits)" in text  # the output tokens, and the metric when it is the hostile one
    if where == "tokens":
        assert str(HUGE) in text  # a step's huge tokens: kept as a field, exactly as it came
    assert LONG_STEP in text  # the unusable step number: shown as the field it is
    assert len(root.find_all("article", "step")) == 2


@pytest.mark.parametrize("where", FIELDS)
@pytest.mark.parametrize("output", ["text", "json", "table", "csv"])
def test_the_listing_and_rows_show_a_number_no_float_holds(bl, origins, where, output):
    origin = origins(hostile(where))
    result = bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "view", "-j", "X", "--output", output)
    assert result.code == 0, result.err
    assert "unexpected error" not in result.err
    if output == "json":
        [trial] = json.loads(result.out)
        assert [s["step"] for s in trial["steps"]] == [0, 1]  # the long number: its position
        assert trial["num_turns"] == (HUGE if where == "num_turns" else 3)


def test_two_trials_with_hostile_numbers_align(bl, origins, tmp_path):
    origin = origins(hostile("tokens"))
    target = tmp_path / "pair.html"
    result = bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "view", "-j", "X", "-j", "Y",
                "-o", str(target))
    assert result.code == 0, result.err
    assert "same actions at every step" in target.read_text(encoding="utf-8")


# ------------------------------------------------------------------ the helper
@given(st.one_of(st.integers(), st.integers(min_value=10**300, max_value=10**1200), st.floats(),
                 st.booleans(), st.none(), st.text(max_size=80), st.just("9" * 5000), st.just("1e999")))
def test_the_helper_never_raises(raw):
    for text in (False, True):
        number = numeric.value(raw, text)
        assert number is None or (isinstance(number, (int, float)) and not isinstance(number, bool))
        if isinstance(number, float):
            assert math.isfinite(number)
        assert isinstance(numeric.shown(number), str)
    assert numeric.whole(raw) is None or isinstance(numeric.whole(raw), int)
    assert isinstance(numeric.shown(raw), str) and isinstance(numeric.shown(raw, 2, fixed=True), str)


@pytest.mark.parametrize(("raw", "text"), [  # (ids by position: a 20,000-digit id cannot be printed)
    (1234, "1,234"), (12.5, "12.5"), (2.0, "2"), (-3, "-3"), (HUGE, "9.9999e+399 (400 digits)"),
    (-HUGE, "-9.9999e+399 (400 digits)"), (10**39, f"{10**39:,}"), (10**40, "1.0000e+40 (41 digits)"),
    (1e300, "1.0000e+300"), (float("nan"), "n/a"), (True, "n/a"), ("12", "n/a"), (None, "n/a"),
    (10**20000, "an integer of about 20,000 digits"),
], ids=lambda value: None if not isinstance(value, int) or abs(value) < 10**60 else "huge")
def test_the_helper_shows_numbers(raw, text):
    assert numeric.shown(raw) == text


def test_the_helper_reads_numbers_written_as_text():
    assert numeric.value("12", text=True) == 12 and numeric.value(" 0.5 ", text=True) == 0.5
    assert numeric.value("12") is None  # text only when asked
    for bad in ("nan", "inf", "1e999", "9" * 5000, "", "١٢"):
        assert numeric.value(bad, text=True) is None, bad
    assert numeric.whole("12") == 12 and numeric.whole(3.0) == 3 and numeric.whole(3.5) is None
    assert numeric.whole(LONG_STEP) is None and numeric.whole(float("inf")) is None and numeric.whole(True) is None
