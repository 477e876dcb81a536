"""Named combines: what the values of every id of a command become together (``combine:``).

Each combine is a function ``combine(call) -> Combined`` taking a
``combinecall.CombineCall`` (the ids' values, the options, its typed ``with:`` values).
Each module registers its combine with ``registry.combine``; importing this package
imports them all (only commands that name a combine import it).
"""

from __future__ import annotations

from . import comparison, concat  # noqa: F401 - they register
from .registry import COMBINES, combine

__all__ = ["COMBINES", "combine"]
