"""``--output yaml``: the whole result as one YAML document (block style, keys in order).

On a terminal, a string that holds a bidi, zero-width or other hiding character outside
ASCII (``hiding.hides``; PyYAML escapes the controls itself) is written double-quoted with
every character outside ASCII as a YAML escape (``"bidi\\u202Eexe.md"``): the document is
still YAML holding the same strings, and nothing reorders or hides part of a line.  To a
pipe or a file the document is PyYAML's, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from ...base.hiding import hides, is_terminal
from ...table.outputs import Output
from .base import FORMATS, Refuse


def _terminal_dumper() -> type:
    import yaml

    class TerminalDumper(yaml.SafeDumper):
        def represent_str(self, data: str) -> Any:
            node = super().represent_str(data)
            if hides(data):
                node.style = '"'  # the only style with escapes
            return node

        def write_double_quoted(self, text: str, split: bool = True) -> None:
            if not hides(text):
                return super().write_double_quoted(text, split)
            keep, self.allow_unicode = self.allow_unicode, False  # every non-ASCII character escaped
            try:
                super().write_double_quoted(text, split)
            finally:
                self.allow_unicode = keep

    TerminalDumper.add_representer(str, TerminalDumper.represent_str)
    return TerminalDumper


@FORMATS.register("yaml")
class YamlDocument:
    streams = False

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None, refuse: Refuse | None = None) -> None:
        import yaml

        dumper = _terminal_dumper() if is_terminal(stream) else yaml.SafeDumper
        stream.write(yaml.dump(result, Dumper=dumper, allow_unicode=True, sort_keys=False,
                               default_flow_style=False))
