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

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from ..base.errors import UsageError
from ..table.model import Action, Compose, Section, Spec
from ..table.responses import plain_json
from .outcomes import MultiFailure, Outcome
from .pipeline import Pipeline
from .runtime import Runtime


def sections_for(spec: Spec, compose: Compose, dim: str, chosen: list[str]) -> list[str]:
    return [name for name in chosen if dim in spec.section_action(compose.sections[name]).dimensions]


def chosen_sections(action: Action, compose: Compose, value: list[str] | None) -> list[str]:
    allowed = list(compose.sections)
    picked: list[str] = []
    for item in value if value is not None else compose.default:
        for token in item.split(","):
            token = token.strip()
            if token and token not in picked:
                picked.append(token)
    unknown = [t for t in picked if t not in allowed]
    if unknown:
        raise UsageError(f"{action.flag_of(compose.option)} has unsupported value(s): "
                         f"{', '.join(unknown)}; choose from {', '.join(allowed)}")
    return picked


def section_options(target: Action, section: Section, opts: dict[str, Any]) -> dict[str, Any]:
    merged = target.defaults
    merged.update({k: v for k, v in opts.items() if k in merged and v is not None})
    merged.update(plain_json(section.options))
    return merged


def run_compose(rt: Runtime, action: Action, dim: str, ids: list[str], opts: dict[str, Any],
                process: Callable[[Pipeline, str], Any]) -> list[Outcome]:
    """The outcome of every ``<id>:<section>``, sections of one id side by side; a 401 raises."""
    spec = rt.spec
    compose = action.compose
    assert compose is not None
    names = sections_for(spec, compose, dim, chosen_sections(action, compose, opts.get(compose.option)))
    work = {f"{ident}:{name}": (ident, name) for ident in ids for name in names}
    rt.pool = rt.concurrency * max(len(names), 1)  # sections run side by side, each with its own pool

    def one(label: str) -> Any:
        ident, name = work[label]
        section = compose.sections[name]
        target = spec.section_action(section)
        pipeline = Pipeline(rt, target, dim, section_options(target, section, opts))
        try:
            return process(pipeline, ident)
        except MultiFailure as exc:
            raise MultiFailure([replace(f, ident=f"{label}:{f.ident}") for f in exc.failures],
                               exc.value) from None

    return rt.map(list(work), one, max(len(names), 1))
