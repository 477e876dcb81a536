"""What the Python client's methods are, from the model: names, keywords, checks, signatures.

Each action of the table is a method whose keywords are the action's options (the
stdout-only ones excepted); ``values_for`` checks and converts what a caller passes as
the CLI's parser would, and ``bind_call`` applies the table's rules (``engine.arguments``)
before any request.  The stubs (``codegen/stubs.py``) and the MCP server use the same
functions, so the three agree.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

from ..base import errors as internal
from ..table.model import (
    OPTION_DIMENSIONS,
    STDOUT_OPTIONS,
    Action,
    Dimension,
    Option,
    PagedPart,
    Resource,
)
from .errors import UnknownArgument, UsageError


def attribute(name: str) -> str:
    """The Python name of a resource or action (``job-meta`` -> ``job_meta``)."""
    return name.replace("-", "_")


def sdk_options(action: Action) -> list[Option]:
    """The keywords of an action's method, in the table's order: the options its help shows (no
    id option of a dimension the action lacks: ``jobs.get`` takes ``group``, not ``job``), the
    stdout-only ones and those of a watch (``bl compare --watch``, a command-line mode) left out."""
    return [o for o in action.visible_options if o.name not in STDOUT_OPTIONS and o.name not in action.watch_options]


# ------------------------------------------------------------------ iter
def walking_part(dim: Dimension) -> PagedPart | None:
    """The part of a dimension that walks every page of a collection, if any."""
    for part in dim.parts.values():
        if isinstance(part, PagedPart) and part.pagination.walks:
            return part
    return None


def iter_target(resource: Resource) -> tuple[Action, dict[str, PagedPart]] | None:
    """The action whose pages ``iter`` walks (printing actions first) and its walking part per dimension."""
    actions = sorted(resource.actions.values(), key=lambda a: a.writer != "stdout")
    for action in actions:
        parts = {name: part for name, dim in action.dimensions.items() if (part := walking_part(dim))}
        if parts:
            return action, parts
    return None


def iter_options(action: Action, parts: dict[str, PagedPart]) -> list[Option]:
    """``iter``'s keywords: the ids of the walking dimensions and the options its requests use."""
    from ..table.model import DIMENSION_KINDS

    used: set[str] = set()
    for part in parts.values():
        used.update(part.request.variables)
        if isinstance(part.pagination.page_size, str):
            from ..table.templates import template_vars

            used.update(template_vars(part.pagination.page_size))
    ids = {DIMENSION_KINDS[d].option for d in parts}
    return [o for o in action.options if o.name in ids or (o.name not in STDOUT_OPTIONS and o.name in used)]


# --------------------------------------------------------------- values
def _usage(message: str) -> UsageError:
    return UsageError(message)


def _number(opt: Option, value: Any) -> Any:
    kind = opt.kind.item
    if isinstance(value, bool) or not isinstance(value, (int, str) if kind is int else (int, float, str)):
        raise _usage(f'Invalid value for {opt.flag}: unable to convert "{value}" into {kind.__name__}.')
    try:
        return kind(value)
    except ValueError:
        raise _usage(f'Invalid value for {opt.flag}: unable to convert "{value}" into {kind.__name__}.') from None


def _values(opt: Option, value: Any) -> list[str]:
    """A list option's values as the command line would give them (strings)."""
    items = [value] if isinstance(value, (str, int)) and not isinstance(value, bool) else value
    if isinstance(items, (set, frozenset, dict)) or not hasattr(items, "__iter__"):
        raise _usage(f"{opt.flag} takes a value or a list of values, not {type(value).__name__}")
    items = list(items)
    allowed = (int, str) if opt.kind.item is int else (str,)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, allowed):
            raise _usage(f"{opt.flag} takes {'integers' if opt.kind.item is int else 'strings'}, not {item!r}")
    text = [str(v) for v in items]
    if any(t.strip() == "-" for v in text for t in v.split(",")):
        # '-' reads stdin on the command line; a library never reads stdin.
        raise _usage(f"{opt.flag}: '-' (read stdin) is a command-line form; pass the values instead")
    return text


def _normalize(opt: Option, value: Any) -> Any:
    """A Python value for ``opt`` as the CLI's parser would hand it to ``bind``."""
    kind = opt.kind
    if kind.is_flag:
        if not isinstance(value, bool):
            raise _usage(f"{opt.flag} takes True or False, not {value!r}")
        return value
    if kind.item in (int, float) and not kind.many:
        return _number(opt, value)
    if kind.many:
        return _values(opt, value)
    if opt.name in OPTION_DIMENSIONS and isinstance(value, (list, tuple)):  # one download-task id
        if len(value) != 1 or not isinstance(value[0], str):
            raise _usage(f"{opt.flag} takes one download-task id")
        return value[0]
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise _usage(f"{opt.flag} takes a string, not {value!r}")
    return value


def values_for(where: str, options: list[Option], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` checked against ``options`` and converted; None means "not given"."""
    known = {o.name: o for o in options}
    unknown = [k for k in kwargs if k not in known]
    if unknown:
        raise UnknownArgument(f"{where}() got an unexpected keyword argument {unknown[0]!r} "
                              f"(takes {', '.join(known)})")
    return {name: _normalize(known[name], value) for name, value in kwargs.items() if value is not None}


def bind_call(action: Action, values: dict[str, Any]) -> tuple[str, list[str], dict[str, Any]]:
    from ..engine.arguments import bind

    try:
        return bind(action, values)
    except internal.UsageError as exc:
        raise UsageError(str(exc)) from None


# ------------------------------------------------------------ signatures
def keyword_default(opt: Option) -> Any:
    """The default of an option's keyword: None for lists and ids (not given), else the table's."""
    return None if opt.kind.many or opt.name in OPTION_DIMENSIONS else opt.default_value


def keyword_annotation(opt: Option) -> str:
    """The annotation of an option's keyword, as the stubs (``codegen/stubs.py``) and the runtime
    signatures show it: ``Literal`` for choices and known values, ``str | Sequence[str]`` for ids
    and lists."""
    kind = opt.kind
    if opt.name in OPTION_DIMENSIONS and not kind.many:  # one download-task id, also as a one-item list
        return "str | Sequence[str] | None"
    if opt.path:
        return "str | os.PathLike[str] | None"
    # choices, and the known values of an option that takes others too (``values:``: a type
    # checker flags ``status="FAILED"``; the runtime still sends any text, with a warning)
    return kind.annotation(opt.choices if kind.choices else opt.values,
                           optional=keyword_default(opt) is None and not kind.is_flag)


def signature(options: list[Option]) -> inspect.Signature:
    """The runtime signature of a method, annotated as the stubs are."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    for opt in options:
        params.append(inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, default=keyword_default(opt),
                                        annotation=keyword_annotation(opt)))
    return inspect.Signature(params)


def docstring(help_text: str, options: list[Option], returns: str) -> str:
    lines = [help_text, "", "Keyword arguments:"]
    for opt in options:
        extra = f" One of {', '.join(opt.choices)}." if opt.choices else ""
        default = "" if opt.default_value in (None, False) else f" Default: {opt.default_value!r}."
        lines.append(f"    {opt.name} ({opt.flag}): {opt.help}{extra}{default}")
    lines += ["", f"Returns: {returns}"]
    return "\n".join(lines)


def returns(action: Action) -> str:
    """What a method returns, in words (its docstring and the reference)."""
    if action.writer == "stdout" and action.combine is not None:
        return (f"`list`: the elements of the CLI's JSON array, as Python values (made of every id's value "
                f"together by the combine `{action.combine.name}`).")
    if action.writer == "stdout":
        return "`list`: the elements of the CLI's JSON array, as Python values."
    if action.combine is not None:
        return (f"`str`: the path of the file the combine `{action.combine.name}` wrote (a page that cannot "
                "be written is a `PartialFailure`).")
    text = "`DownloadResult` (`paths`, `skipped`, `failures`)."
    if action.stdout_when:
        text += f" With `{action.stdout_when}=True`: the listing, a `list` (the CLI's JSON array)."
    return text


# --------------------------------------------------------------- methods
