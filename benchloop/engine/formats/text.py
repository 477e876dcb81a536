"""``--output text``: values one per line, for the next command of a pipe (like ``jq -r``).

A string is printed as it is (no quotes), any other scalar as JSON (``12``, ``true``,
``null``), one element (one item of the output array, or of what ``--query`` made of it)
per line: a list of scalars (``[].jobs[].[job_id, status]``) and an object are one line of
their values separated by tabs (nested values as compact JSON); an element that holds
lists of objects (a page of jobs) gives one line per object.  So
``bl jobs get -g G1 --query '[].jobs[].job_id' --output text`` prints one job id per
line, ready for ``bl trajectory download -j -``.  It streams: each id's lines are
printed as soon as it and every id before it have finished.
"""

from __future__ import annotations

import json
from typing import Any

from .base import LineFormat


def _word(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _scalars(value: Any) -> bool:
    return isinstance(value, list) and not any(isinstance(item, (list, dict)) for item in value)


def lines(value: Any) -> list[str]:
    """The lines of one element."""
    if _scalars(value) or (isinstance(value, dict) and not any(isinstance(v, (list, dict)) for v in value.values())):
        return ["\t".join(_word(item) for item in (value.values() if isinstance(value, dict) else value))]
    if isinstance(value, list):
        return [line for item in value for line in lines(item)]
    if isinstance(value, dict):
        nested = [v for v in value.values() if isinstance(v, list) and v and all(isinstance(i, dict) for i in v)]
        if len(nested) == 1:  # a page: one line per row
            return [line for item in nested[0] for line in lines(item)]
        return ["\t".join(_word(item) for item in value.values())]
    return [_word(value)]


class Text(LineFormat):
    name = "text"

    def line(self, element: Any) -> str:
        return "".join(f"{line}\n" for line in lines(element))
