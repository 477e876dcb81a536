"""What counts as a number, a boolean and a score in a job's metrics.

The backend sends run metrics as strings of numbers (``"12.5"``), scores as
numbers or strings, flags as booleans or ``"true"``.  Everything ``bl compare``
computes is a float, so a value is a number here only when it is finite *as a
float*: ``NaN``, infinities and numbers too big for a float (a 400-digit
integer is valid JSON; ``float()`` of it raises ``OverflowError``) are not
numbers.  Such a job is counted but not scored, and :func:`too_big` lets the
caller say so (a ``[warn]`` line) rather than fail.
"""

from __future__ import annotations

import math
from typing import Any


def _fits(value: int) -> bool:
    try:
        float(value)
    except OverflowError:
        return False
    return True


def as_number(value: Any) -> float | int | None:
    """A finite number from a JSON value: numbers, strings of numbers, else None.

    Booleans are not numbers here (see :func:`score_and_pass`); a one-element
    list is read as its element (``metrics[?type=='eval'].data.task_score``
    gives ``[0.85]``).  A string is a number when it is one in JSON's sense,
    give or take spaces around it: ``"12.5"`` -> 12.5, ``"100"`` -> 100 (an int),
    ``"1e3"`` -> 1000.0; ``"nan"``, ``"inf"``, ``"1_000"`` and ``"0x10"`` are not.
    An integer beyond a float's range (about 1.8e308) is not a number either.
    """
    kind = type(value)
    if kind is list and len(value) == 1:
        value = value[0]
        kind = type(value)
    if kind is int:
        return value if _fits(value) else None
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is not str:
        return None
    text = value.strip()
    if "_" in text:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):  # also a string of a number too big for a float
        return None
    if text.isdecimal() or (text[:1] in "+-" and text[1:].isdecimal()):
        return int(text)
    return number


def too_big(value: Any) -> bool:
    """Whether ``value`` is a number that :func:`as_number` refused for its size: an integer or
    a string of a number beyond a float's range, or an infinity (JSON's ``1e400`` reads as one)."""
    if type(value) is list and len(value) == 1:
        value = value[0]
    kind = type(value)
    if kind is int:
        return not _fits(value)
    if kind is float:
        return math.isinf(value)
    if kind is str:
        text = value.strip()
        try:
            return "_" not in text and math.isinf(float(text)) and text.lower().lstrip("+-") not in (
                "inf", "infinity")
        except ValueError:
            return False
    return False


def as_boolean(value: Any) -> bool | None:
    """``True``/``False`` from a boolean or the strings ``"true"``/``"false"``; else None."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def score_and_pass(value: Any, threshold: float) -> tuple[float | None, bool | None]:
    """(score, pass) of one job from its metric value; (None, None) when it is not scored.

    A boolean metric passes when true, and scores 1.0 or 0.0 (so ``mean_i`` is
    its rate); a number (or a string of one) passes when ``score >= threshold``.
    """
    flag = as_boolean(value)
    if flag is not None:
        return (1.0 if flag else 0.0), flag
    number = as_number(value)
    if number is None:
        return None, None
    score = float(number)
    return score, score >= threshold
