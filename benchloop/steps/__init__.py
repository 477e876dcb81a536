"""Named steps: behaviour that no generic part can express, referenced by ``step:``.

Each step is a function ``step(pipeline, part, ctx, ident, dest) -> value``.
``dest`` is the final file path when the action writes files (the step then
writes it itself and returns ``WRITTEN``), or ``None`` when the value is to be
printed.  Steps are imported lazily by name so the CLI never loads code it
does not run.  ``ENDPOINT_PARAMS`` lists which ``with:`` keys name endpoints,
so the table lints can check them.
"""

from __future__ import annotations

import importlib
from typing import Any

WRITTEN = object()

STEPS: dict[str, str] = {
    "trace_export": "benchloop.steps.trace_export:trace_export",
    "trace_media": "benchloop.steps.trace_media:trace_media",
    "artifacts": "benchloop.steps.artifacts:artifacts",
    "behavior_run": "benchloop.steps.behavior_run:behavior_run",
}

ENDPOINT_PARAMS: dict[str, tuple[str, ...]] = {
    "trace_export": ("create", "poll", "job_ids"),
    "trace_media": ("request",),
    "artifacts": ("listing", "download"),
    "behavior_run": ("steps", "create"),
}


def run(name: str, *args: Any, **kwargs: Any) -> Any:
    module, attr = STEPS[name].split(":")
    return getattr(importlib.import_module(module), attr)(*args, **kwargs)
