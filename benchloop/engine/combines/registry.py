"""The registry of named combines: each module registers its function with :func:`combine`.

The table declares every combine and the types of its ``with:`` values (``combines:`` in
``spec/benchloop.yaml``); this registry holds their implementations, and a test checks
that the two name the same combines.
"""

from __future__ import annotations

from collections.abc import Callable

from ...base.registry import Registry
from ..combinecall import CombineCall, Combined

Combiner = Callable[[CombineCall], Combined]
# Imported when a command first uses a combine (``base.registry.Registry``).
COMBINES: Registry[Combiner] = Registry(__name__.rsplit(".", 1)[0])
# The combines that only put the ids' rows together, in order (a listing read page by page stays
# one: its rows are printed as they arrive, ``formats.streamed``); every other combine gets lists.
STREAMING_COMBINES = frozenset({"concat"})


def combine(name: str) -> Callable[[Combiner], Combiner]:
    """Register ``function`` as the implementation of the table's combine ``name``."""
    return COMBINES.register(name)
