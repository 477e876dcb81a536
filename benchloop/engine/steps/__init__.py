"""Named steps: behaviour that no generic part can express, referenced by ``step:``.

Each step is a function ``step(call) -> value`` taking a
``pipeline.StepCall``: its part, the id, the template context, and the
pipeline's request, download, sleep and pool functions (never the pipeline
itself).  ``call.dest`` is the final file path when the action writes files
(the step then writes it itself and returns ``WRITTEN``), or ``None`` when the
value is to be printed.  Steps are imported lazily by name so the CLI never loads code it
does not run.  Their registry (names, the ``with:`` keys that name endpoints,
the variables each binds) is data in ``benchloop/stepdefs.py``, which the
model and the lints read without importing any step.
"""

from __future__ import annotations

import importlib
from typing import Any

from ...table.stepdefs import (  # noqa: F401 - the registry, re-exported for the steps and tests
    ENDPOINT_PARAMS,
    OPTIONAL_ENDPOINT_PARAMS,
    STEP_BINDS,
    STEPS,
    WRITTEN,
)


def run(name: str, *args: Any, **kwargs: Any) -> Any:
    module, attr = STEPS[name].split(":")
    return getattr(importlib.import_module(module), attr)(*args, **kwargs)
