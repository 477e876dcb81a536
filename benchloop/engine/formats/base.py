"""What an output format is: a name, whether it streams, and how it renders.

Printing commands write their elements in the format ``--output`` names (the
option's choices in the table are the registry's names: a test keeps them equal).
A format that ``streams`` may print each element as soon as it and every id before it
have finished (its ``render`` is called with those elements); every other format waits
for every element and renders the whole result at once, after ``--query``.

Where the text goes decides how server strings are written (``base/hiding.py``): on a
terminal a person reads, and no character may drive the terminal or hide part of a line;
to a pipe or a file a program reads, and the bytes of JSON and YAML stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TextIO

from ...base.hiding import is_terminal
from ...base.registry import Registry
from ...table.outputs import Output

Refuse = Callable[[str], None]


class Format(Protocol):
    streams: bool  # each element may be printed as soon as it is known

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None, refuse: Refuse | None = None) -> None:
        """Write the whole result (the elements, or what ``--query`` made of them); ``note``
        gets advice for people (one ``[info]`` line), if any; ``output`` is what one element
        of the printed dimension is (None after a ``--query``): the flat formats take their
        rows and columns from it; ``refuse`` gets each value the format left out because it
        cannot write it as it is (``--output text`` to a pipe), and without it such a value
        raises ``Unprintable``."""
        ...


# ``--output NAME`` -> the format's class; each module registers its own (``@FORMATS.register``).
FORMATS: Registry[type[Format]] = Registry()


class Unprintable(ValueError):
    """A value the format cannot write as it is, and no ``refuse`` to report it to."""


def refused(refuse: Refuse | None, value: str) -> None:
    if refuse is None:
        raise Unprintable(value)
    refuse(value)


class LineFormat:
    """A streaming format: the whole result is its elements' lines, one after another (what
    ``--query`` made of them is one element when it is not a list)."""

    streams = True

    def render(self, stream: TextIO, result: Any, pretty: bool, note: Callable[[str], None] | None = None,
               output: Output | None = None, refuse: Refuse | None = None) -> None:
        terminal = is_terminal(stream)
        for item in result if isinstance(result, list) else [result]:
            stream.write(self.line(item, terminal, refuse))

    def line(self, element: Any, terminal: bool, refuse: Refuse | None) -> str:
        """One element's text (its lines); ``terminal``: a person reads it."""
        raise NotImplementedError
