"""What an output format is: a name, whether it streams, and how it renders.

Printing commands write their elements in the format ``--output`` names (the
option's choices in the table are the registry's names: a test keeps them equal).
A format that ``streams`` prints each element as soon as it and every id before it
have finished (``line``); every other format waits for every element and renders
the whole result at once (``render``), after ``--query``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TextIO

from ...table.outputs import Output


class Format(Protocol):
    name: str
    streams: bool  # each element may be printed as soon as it is known

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None) -> None:
        """Write the whole result (the elements, or what ``--query`` made of them); ``note``
        gets advice for people (one ``[info]`` line), if any; ``output`` is what one element
        of the printed dimension is (None after a ``--query``): the flat formats take their
        rows and columns from it."""
        ...

    def line(self, element: Any) -> str:
        """One element, for a streaming format."""
        ...


class LineFormat:
    """A streaming format: the whole result is its elements' lines, one after another (what
    ``--query`` made of them is one element when it is not a list)."""

    name: str
    streams = True

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None) -> None:
        for item in result if isinstance(result, list) else [result]:
            stream.write(self.line(item))

    def line(self, element: Any) -> str:
        raise NotImplementedError
