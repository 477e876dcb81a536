"""Named steps: behaviour that no generic part can express, referenced by ``step:``.

Each step is a function ``step(call) -> value`` taking a ``stepcall.StepCall``: its
part's typed ``with:`` values, the id, the options, and functions that make requests
through the engine with the endpoints its ``with:`` names (never the pipeline, the
template context or the HTTP client).  ``call.dest`` is the final file path when the
action writes files (the step then writes it itself and returns ``WRITTEN``), or
``None`` when the value is to be printed.  Each module registers its step with
``registry.step``; a step's module is named after it and imported when a command first
uses the step (``STEPS`` is a ``base.registry.Registry``), so a command pays only for its own.
"""

from __future__ import annotations

from .registry import STEPS, WRITTEN, step

__all__ = ["STEPS", "WRITTEN", "step"]
