"""Named combines: what the values of every id of a command become together (``combine:``).

Each combine is a function ``combine(call) -> Combined`` taking a
``combinecall.CombineCall`` (the ids' values, the options, its typed ``with:`` values).
Each module registers its combine with ``registry.combine``; a module is imported when a
command first uses a combine (``COMBINES`` is a ``base.registry.Registry``).
"""

from __future__ import annotations

from .registry import COMBINES, combine

__all__ = ["COMBINES", "combine"]
