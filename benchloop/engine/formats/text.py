"""``--output text``: values one per line, for the next command of a pipe (like ``jq -r``).

A string is printed as it is (no quotes), any other scalar as JSON (``12``, ``true``,
``null``), one element (one item of the output array, or of what ``--query`` made of it)
per line: a list of scalars (``[].jobs[].[job_id, status]``) and an object are one line of
their values separated by tabs (nested values as compact JSON); an element that holds
lists of objects (a page of jobs) gives one line per object.  So
``bl jobs get -g G1 --query '[].jobs[].job_id' --output text`` prints one job id per
line, ready for ``bl trajectory download -j -``.  It streams: each id's lines are
printed as soon as it and every id before it have finished.

A line is one record and a tab separates its values, so a value must not hold either.
To a pipe or a file, a line with a value that holds a line break, a tab or another
control character (``hiding.BREAKS_LINES``: C0, DEL, C1, U+2028/U+2029, or a lone
surrogate, which has no UTF-8 form) is left out and reported (``refuse``: one
``[error]`` line at the end, exit 1): the next command never gets a value cut in two
or changed.  ``--output jsonl`` prints every value exactly.  On a terminal a person
reads: every hiding character of a value is shown as an escape (``hiding.VALUE``: the
tab and the line feed too, ``a\\x0ab``), as on stderr.
"""

from __future__ import annotations

import json
from typing import Any

from ...base.hiding import BREAKS_LINES, VALUE
from .base import FORMATS, LineFormat, Refuse, refused


def _word(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _scalars(value: Any) -> bool:
    return isinstance(value, list) and not any(isinstance(item, (list, dict)) for item in value)


def rows(value: Any) -> list[list[str]]:
    """The lines of one element, each as its values (the words between the tabs)."""
    if _scalars(value) or (isinstance(value, dict) and not any(isinstance(v, (list, dict)) for v in value.values())):
        return [[_word(item) for item in (value.values() if isinstance(value, dict) else value)]]
    if isinstance(value, list):
        return [row for item in value for row in rows(item)]
    if isinstance(value, dict):
        nested = [v for v in value.values() if isinstance(v, list) and v and all(isinstance(i, dict) for i in v)]
        if len(nested) == 1:  # a page: one line per row
            return [row for item in nested[0] for row in rows(item)]
        return [[_word(item) for item in value.values()]]
    return [[_word(value)]]


@FORMATS.register("text")
class Text(LineFormat):

    def line(self, element: Any, terminal: bool, refuse: Refuse | None) -> str:
        out = []
        for words in rows(element):
            if terminal:
                words = [word.translate(VALUE) for word in words]
            elif not "".join(words).isprintable():  # one quick pass: true for text of any script
                bad = next((word for word in words if BREAKS_LINES.search(word)), None)
                if bad is not None:
                    refused(refuse, bad)
                    continue
            out.append("\t".join(words) + "\n")
        return "".join(out)
