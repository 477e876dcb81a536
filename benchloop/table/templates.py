"""Templates of the endpoint table, and the variables they are rendered from.

The table writes every value that depends on a command's input as a template:
``{group}``, ``{job}`` and ``{task}`` are the id of the current dimension,
``{skip}``/``{limit}`` come from pagination, ``{parts.NAME.FIELD}`` reads a
field of an earlier part's answer, and any other ``{name}`` is the value of
the option (or of a variable a step binds) of that name.  This module holds
the one definition of that syntax and the four ways a template is rendered:

* ``render_value``: query and body values; a template that is exactly one
  ``{var}`` keeps the variable's type (a flag stays a boolean in a JSON body);
* ``render_path``: URL paths, each value one percent-encoded path segment;
* ``render_file``: local paths, each value one safe file-name component;
* ``render_label``: progress labels and failure ids, values as they are.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from typing import Any

VAR = re.compile(r"\{([^{}]+)\}")
FULL = re.compile(r"^\{([^{}]+)\}$")
PAGE_VARS = ("skip", "limit")


def template_vars(*templates: Any) -> list[str]:
    """Variables named by the templates (strings, or mappings/lists of them), in order, once each."""
    found: list[str] = []
    for value in templates:
        if isinstance(value, dict):
            found += template_vars(*value.values())
        elif isinstance(value, (list, tuple)):
            found += template_vars(*value)
        elif isinstance(value, str):
            found += VAR.findall(value)
    return list(dict.fromkeys(found))


def lone_var(template: Any) -> str | None:
    """The variable of a template that is exactly one ``{var}``, else None."""
    match = FULL.match(template) if isinstance(template, str) else None
    return match.group(1) if match else None


def quote_segment(value: str) -> str:
    """One URL path segment: every reserved character encoded, and '.'/'..' too
    (they would otherwise be removed as dot segments and change the path)."""
    if value in (".", ".."):
        return value.replace(".", "%2E")
    return quote(value, safe="")


class Context:
    """Variables visible to templates while one id is processed.

    A plain class (no dataclass): the model imports this module on every start, ``--help``
    included, and the dataclasses module would bring in ``inspect`` and more."""

    __slots__ = ("parts", "vars")

    def __init__(self, vars: dict[str, Any], parts: dict[str, Any] | None = None) -> None:
        self.vars = vars
        self.parts: dict[str, Any] = {} if parts is None else parts

    def __repr__(self) -> str:
        return f"Context(vars={self.vars!r}, parts={self.parts!r})"

    def lookup(self, name: str) -> Any:
        if name.startswith("parts."):
            _, part, *fields = name.split(".")
            value = self.parts.get(part)
            for key in fields:
                value = value.get(key) if isinstance(value, dict) else None
            return value
        return self.vars.get(name)

    def child(self, **extra: Any) -> Context:
        return Context({**self.vars, **extra}, dict(self.parts))


def render_value(template: Any, ctx: Context) -> Any:
    """Query/body values: a lone ``{var}`` keeps its type; otherwise string substitution."""
    if not isinstance(template, str):
        return template
    name = lone_var(template)
    if name is not None:
        return ctx.lookup(name)
    return VAR.sub(lambda m: "" if ctx.lookup(m.group(1)) is None else str(ctx.lookup(m.group(1))), template)


def render_path(template: str, ctx: Context) -> str:
    return VAR.sub(lambda m: quote_segment(str(ctx.lookup(m.group(1)))), template)


def render_file(template: str, ctx: Context) -> str:
    from ..base.files import safe_component

    return VAR.sub(lambda m: safe_component(str(ctx.lookup(m.group(1)))), template)


def entry_component(job: str) -> str:
    """A job id as one archive or file name component: percent-quoted (docs/contract.md 2.8),
    length-capped; task archives and task-mode artifacts name their files this way."""
    from ..base.files import safe_component

    return safe_component(quote(job, safe="-_."), encode=False)


def render_label(template: str, ctx: Context) -> str:
    return VAR.sub(lambda m: str(ctx.lookup(m.group(1))), template)
