"""The registry of named steps: each step module registers its function with :func:`step`.

The table declares every step and the types of its ``with:`` values (``steps:`` in
``spec/benchloop.yaml``; the lints check each part against that declaration); this
registry holds their implementations.  A test checks that the two name the same steps.
``WRITTEN`` is what a step returns when it wrote its file itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..stepcall import StepCall

Step = Callable[[StepCall], Any]
STEPS: dict[str, Step] = {}
WRITTEN = object()


def step(name: str) -> Callable[[Step], Step]:
    """Register ``function`` as the implementation of the table's step ``name``."""

    def register(function: Step) -> Step:
        STEPS[name] = function
        return function

    return register
