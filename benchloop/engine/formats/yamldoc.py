"""``--output yaml``: the whole result as one YAML document (block style, keys in order)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from ...table.outputs import Output


class YamlDocument:
    name = "yaml"
    streams = False

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None) -> None:
        import yaml

        stream.write(yaml.safe_dump(result, allow_unicode=True, sort_keys=False, default_flow_style=False))

    def line(self, element: Any) -> str:
        raise NotImplementedError("yaml prints one document")
