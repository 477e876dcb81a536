"""``--output json`` (the default) and ``jsonl``.

``json`` keeps the reference client's bytes exactly (docs/contract.md 3.1): one array,
indented unless ``--no-pretty``.  ``jsonl`` prints one compact row per line - a listing's
items (a page of jobs: one job per line, its ``group_id`` in front when it lacks one), else
the element - each as soon as it and every id before it have finished (a listing read page
by page: as its pages arrive, ``streamed.py``).

On a terminal, a person reads: the controls JSON leaves raw (DEL, C1 such as the 8-bit CSI
U+009B), bidi and zero-width characters and U+2028/U+2029 are written as JSON's own
escapes (``hiding.JSON_TEXT``: ``\\u009b``, ``\\u202e``), so nothing drives the terminal
or reorders a line and the text is still JSON holding the same strings.  To a pipe or a
file the bytes are json.dumps's, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO, cast

from ...base.hiding import JsonTerminal, is_terminal
from ...base.hiding import json_for_terminal as for_terminal
from ...base.jsontext import dumps, encode, write_json_array
from ...table.outputs import Output
from .base import FORMATS, LineFormat, Refuse
from .streamed import element_rows


@FORMATS.register("json")
class JsonArray:
    streams = False

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None, refuse: Refuse | None = None) -> None:
        if is_terminal(stream):
            stream = cast(TextIO, JsonTerminal(stream))
        if isinstance(result, list):
            write_json_array(stream, result, pretty)
        else:
            stream.write(dumps(result, pretty))


@FORMATS.register("jsonl")
class JsonLines(LineFormat):
    """One row per line: a listing's items (the element's ids in front), else the element."""

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None, refuse: Refuse | None = None) -> None:
        if output is not None and output.rows is not None and isinstance(result, list):
            result = [row for element in result for row in element_rows(element, output)]
        super().render(stream, result, pretty, note, output, refuse)

    def line(self, element: Any, terminal: bool, refuse: Refuse | None) -> str:
        text = encode(element, False) + "\n"
        return for_terminal(text) if terminal else text
