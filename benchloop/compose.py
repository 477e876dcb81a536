"""Composite commands (``bl pull``): other commands' definitions run together.

A ``compose`` action names sections, each an existing resource action of the
table (with option overrides).  For every id, the selected sections that
support the id's dimension run *concurrently* over the shared HTTP client,
each through the ordinary pipeline, so their files, paths and behaviour are
exactly those of the commands they come from.  Failures are labelled
``<id>:<section>``; a 401 still exits 3 and an all-network failure exits 4
(the reference client folded both into exit 1).
"""

from __future__ import annotations

from typing import Any

from .engine import (
    EXIT_AUTH,
    Failure,
    MultiFailure,
    Outcome,
    Pipeline,
    Runtime,
    run_pool,
    summarize,
)
from .errors import AuthError, UsageError


def sections_for(action: dict[str, Any], dim: str, chosen: list[str], spec: dict[str, Any]) -> list[str]:
    compose = action["compose"]
    return [name for name in chosen
            if dim in spec["resources"][compose["sections"][name]["resource"]]["actions"]
            [compose["sections"][name]["action"]]["dimensions"]]


def chosen_sections(action: dict[str, Any], value: list[str] | None) -> list[str]:
    compose = action["compose"]
    allowed = list(compose["sections"])
    raw = value if value is not None else compose["default"]
    picked = []
    for item in raw:
        for token in item.split(","):
            token = token.strip()
            if token and token not in picked:
                picked.append(token)
    unknown = [t for t in picked if t not in allowed]
    if unknown:
        option = next(o for o in action["options"] if o["name"] == compose["option"])
        raise UsageError(f"{option['flags'][0]} has unsupported value(s): "
                         f"{', '.join(unknown)}; choose from {', '.join(allowed)}")
    return picked


def section_options(spec: dict[str, Any], section: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
    target = spec["resources"][section["resource"]]["actions"][section["action"]]
    merged = {o["name"]: (bool(o.get("default")) if o["type"] == "flag" else o.get("default"))
              for o in target["options"]}
    merged.update({k: v for k, v in opts.items() if k in merged and v is not None})
    merged.update(section.get("options") or {})
    return merged


def run_compose(rt: Runtime, action: dict[str, Any], dim: str, ids: list[str], opts: dict[str, Any]) -> int:
    spec = rt.spec
    compose = action["compose"]
    chosen = chosen_sections(action, opts.get(compose["option"]))
    names = sections_for(action, dim, chosen, spec)
    work = [(ident, name) for ident in ids for name in names]
    rt.pool = rt.concurrency * max(len(names), 1)  # sections run side by side, each with its own pool
    labels = [f"{ident}:{name}" for ident, name in work]

    def one(label: str) -> Any:
        ident, name = work[labels.index(label)]
        section = compose["sections"][name]
        target = spec["resources"][section["resource"]]["actions"][section["action"]]
        pipeline = Pipeline(rt, section["resource"], target, dim, section_options(spec, section, opts))
        try:
            return pipeline.process(ident)
        except MultiFailure as exc:
            raise MultiFailure([Failure(f"{label}:{f.ident}", f.message, f.network) for f in exc.failures],
                               exc.value) from None

    try:
        outcomes: list[Outcome] = run_pool(labels, one, max(len(names), 1), rt)
    except AuthError as exc:
        rt.log.error(f"authentication error: {exc}")
        return EXIT_AUTH
    return summarize(rt.log, outcomes, noun="pull step(s)")
