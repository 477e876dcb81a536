"""``--output json`` (the default) and ``jsonl``.

``json`` keeps the reference client's bytes exactly (docs/contract.md 3.1): one array,
indented unless ``--no-pretty``.  ``jsonl`` prints one compact element per line, each as
soon as it and every id before it have finished.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from ...base.jsontext import dumps, encode, write_json_array
from ...table.outputs import Output
from .base import LineFormat


class JsonArray:
    name = "json"
    streams = False

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None) -> None:
        if isinstance(result, list):
            write_json_array(stream, result, pretty)
        else:
            stream.write(dumps(result, pretty))

    def line(self, element: Any) -> str:
        raise NotImplementedError("json prints one array")


class JsonLines(LineFormat):
    name = "jsonl"

    def line(self, element: Any) -> str:
        return encode(element, False) + "\n"
