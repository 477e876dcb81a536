"""The registry of named steps, as data: what the model and the lints need to know of them.

``STEPS`` maps a step name to its ``module:function`` (imported only when the
step runs).  ``ENDPOINT_PARAMS`` lists which ``with:`` keys name endpoints,
``OPTIONAL_ENDPOINT_PARAMS`` those that name one when given, and
``STEP_BINDS`` the variables a step binds itself, so the table lints can check
every request a step makes.  ``WRITTEN`` is what a step returns when it wrote
its file itself.  Apart from ``steps/`` so that reading the table never
imports a step.
"""

from __future__ import annotations

WRITTEN = object()

STEPS: dict[str, str] = {
    "trace_export": "benchloop.engine.steps.trace_export:trace_export",
    "trace_media": "benchloop.engine.steps.trace_media:trace_media",
    "artifacts": "benchloop.engine.steps.artifacts:artifacts",
    "behavior_run": "benchloop.engine.steps.behavior_run:behavior_run",
    "ap_command": "benchloop.engine.steps.ap_command:ap_command",
}

ENDPOINT_PARAMS: dict[str, tuple[str, ...]] = {
    "trace_export": ("job_ids",),
    "trace_media": ("request",),
    "artifacts": ("listing", "download"),
    "behavior_run": ("steps", "create"),
    "ap_command": ("group", "profile", "template", "jobs", "job", "dataset", "lookup"),
}

# ``with:`` keys that name an endpoint when they are given (artifacts: task mode only).
OPTIONAL_ENDPOINT_PARAMS: dict[str, tuple[str, ...]] = {
    "artifacts": ("task",),
}

# Variables a step binds itself, by ``with:`` key, on top of what the part has bound
# (the dimension id, an archive's job, earlier parts): the endpoint named under that
# key may use them in its path or query, the template under that key in its braces.
# Keys not listed bind nothing more.
STEP_BINDS: dict[str, dict[str, tuple[str, ...]]] = {
    "trace_media": {"request": ("oss_uri", "mime")},          # each media reference's query
    "artifacts": {"listing": ("job",), "download": ("job", "name"),  # every job, each artifact's name
                  "layout": ("job", "name")},                 # ... and each artifact's name
    # ap-cmd: every AgentPlatform request names its cluster; each endpoint its own values.
    "ap_command": {"group": ("cluster",), "profile": ("cluster", "profile", "version"),
                   "template": ("cluster", "template", "revision"), "jobs": ("cluster",),
                   "job": ("cluster", "job"), "dataset": ("cluster", "dataset")},
}

# The ``with:`` key naming what a step's ``items:`` select from: an endpoint (whose answer it
# is) or an earlier part of the dimension (whose request's answer it is); the lints check the
# fields ``items:`` reads against that answer.  A part with a ``request`` selects from its own.
ITEMS_FROM: dict[str, str] = {
    "artifacts": "listing",
    "trace_media": "source",
}
