"""Output formats of printing commands (``--output``) and ``--query``.

Each format is one module implementing ``base.Format`` and registering it by name with
``@FORMATS.register`` (``base.registry.Registry``, as every extension point).  Adding a
format is a module, its import here, and a choice of the ``output`` option in the table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from ...table.outputs import Output
from . import columnar, csvdoc, jsondoc, markdowndoc, table, text, yamldoc  # noqa: F401 - each registers its format
from .base import FORMATS, Format, Refuse, Unprintable
from .query import compile_query

__all__ = ["FORMATS", "Format", "Refuse", "Unprintable", "compile_query", "emit"]


def emit(stream: TextIO, elements: list[Any], name: str, pretty: bool, query: Any = None,
         note: Callable[[str], None] | None = None, output: Output | None = None,
         refuse: Refuse | None = None) -> None:
    """Print the whole result in format ``name`` (every format, streamed ones included, when
    the output waits for all ids); ``note`` gets the format's advice, if any; ``output`` is
    what one element is (a ``--query`` makes other elements: then it is not passed on);
    ``refuse`` gets each value left out (``Format.render``)."""
    result: Any = elements if query is None else query.search(elements)
    FORMATS[name]().render(stream, result, pretty, note, output if query is None else None, refuse)
    stream.flush()
