"""Numbers a server sent, read and shown without ever overflowing.

A backend's JSON may hold any integer (a 400-digit ``tokens``), a float that is no
number (``NaN``, ``Infinity``), or a number written as text of any length.  Python's own
operations each fail on one of them: ``math.isfinite`` and ``float()`` raise
``OverflowError`` on an integer above ~1.8e308, ``int()`` of a text over 4,300 digits
raises ``ValueError`` (the conversion limit), and so does ``str()`` of such an integer.
Every number the viewer reads or shows from a trajectory, a job or its metrics goes
through these three functions, which never raise:

* :func:`value` - the number a field holds (a bool, NaN or infinity is none);
* :func:`whole` - the integer a field holds (a step number);
* :func:`shown` - a number as text (thousands separated; an integer too long to be read is
  shown by its first digits and its count of digits, never converted).
"""

from __future__ import annotations

import math
from typing import Any

DIGITS = 40  # an integer longer than this is shown as its first digits and its length
MAX_TEXT = 64  # a number written as text longer than this is read as no number (no float parse of a novel)
_LIMIT_BITS = 4000 * 3  # below this many bits str() of an int always stays under the conversion limit


def value(raw: Any, text: bool = False) -> int | float | None:
    """The finite number ``raw`` holds (an ``int`` of any size stays exact), else None; with
    ``text``, a number written as a string too (``"12"``, ``"0.5"``)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return raw if math.isfinite(raw) else None
    if text and isinstance(raw, str):
        stripped = raw.strip()
        if not stripped or len(stripped) > MAX_TEXT or not stripped.isascii():
            return None
        if stripped.lstrip("+-").isdigit():
            return int(stripped)
        try:
            number = float(stripped)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def whole(raw: Any) -> int | None:
    """The integer ``raw`` holds (an int, a float without a fraction, or ASCII digits of at most
    ``MAX_TEXT`` characters), else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return int(raw) if math.isfinite(raw) and raw.is_integer() else None
    if isinstance(raw, str):
        stripped = raw.strip()
        if stripped.isascii() and stripped.isdecimal() and len(stripped) <= MAX_TEXT:
            return int(stripped)
    return None


def shown(number: Any, decimals: int = 3, fixed: bool = False) -> str:
    """``number`` as text: ``1,234``, ``12.5`` (at most ``decimals`` decimals; exactly that many
    with ``fixed``), an integer of more than ``DIGITS`` digits as ``9.9999e+399 (400 digits)``;
    ``n/a`` for what is no number."""
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        return "n/a"
    if isinstance(number, float):
        if not math.isfinite(number):
            return "n/a"
        if number.is_integer() and abs(number) < 1e21:
            return f"{int(number):,}"
        if abs(number) >= 1e21:
            return f"{number:.4e}"
        text = f"{number:,.{decimals}f}"
        return text if fixed else text.rstrip("0").rstrip(".")
    if number.bit_length() > _LIMIT_BITS:  # str() would raise: say its size from its bits
        return f"an integer of about {int(number.bit_length() * math.log10(2)):,} digits"
    digits = str(abs(number))
    if len(digits) <= DIGITS:
        return f"{number:,}"
    sign = "-" if number < 0 else ""
    return f"{sign}{digits[0]}.{digits[1:5]}e+{len(digits) - 1} ({len(digits):,} digits)"
