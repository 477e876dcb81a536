"""The registry of named steps: each step module registers its function with :func:`step`.

The table declares every step and the types of its ``with:`` values (``steps:`` in
``spec/benchloop.yaml``; the lints check each part against that declaration); this
registry holds their implementations, each module imported when its step is first used.
A test checks that the two name the same steps.
``WRITTEN`` is what a step returns when it wrote its file itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...base.registry import Registry
from ..stepcall import StepCall

Step = Callable[[StepCall], Any]
# A step is implemented in the module of its name (``trace_export.py``), imported when a command
# first uses it (``base.registry.Registry``).
STEPS: Registry[Step] = Registry(__name__.rsplit(".", 1)[0])
WRITTEN = object()


def step(name: str) -> Callable[[Step], Step]:
    """Register ``function`` as the implementation of the table's step ``name``."""
    return STEPS.register(name)
