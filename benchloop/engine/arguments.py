"""Check a command's arguments and pick its dimension, before any request.

The command line (``commands.py``) and every other front end hand the values
they parsed to :func:`bind`, which applies the table's rules in the order the
contract fixes (docs/contract.md 1.4): ids are read (``-`` reads stdin, commas
split), integer lists and minimums are checked, the dimension is chosen from
the ids given (with the contract's messages), then choices and the id limit.
Every problem is a ``UsageError`` (exit 2) and nothing has been requested yet.
This module imports no command-line framework.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import UsageError
from ..base.ids import check_task_id, expand_ids
from ..table.model import Action, Option

DIMENSION_FLAGS = {"group": "-g/--group", "job": "-j/--job", "task": "--task-id"}
STDIN = "-"


def bind(action: Action, values: dict[str, Any], stdin_token: str = STDIN) -> tuple[str, list[str], dict[str, Any]]:
    """``(dimension, ids, options)`` of a call; ``values`` maps option names to what was given
    (missing names take the table's defaults; id options may be lists or one string)."""
    values = dict(values)
    for name, default in action.defaults.items():
        values.setdefault(name, default)
    if action.positional is not None:
        return _bind_positional(action, values, stdin_token)
    from_stdin = [name for name in ("group", "job") if stdin_token in _listed(values.get(name))]
    given = _given_ids(values, stdin_token)
    _check_values(action, values, stdin_token)
    try:
        dim = _dimension(action, given)
    except UsageError as exc:
        empty = [DIMENSION_FLAGS[name] for name in from_stdin if not given.get(name)]
        if empty and str(exc).startswith("at least one"):
            flag = empty[0].split("/")[0]
            raise UsageError(f"no ids on stdin: '{flag} -' read an empty input; pipe ids in, e.g. "
                             f"echo ID1 ID2 | bl {' '.join(action.words)} {flag} -") from None
        raise
    for opt in action.options:
        if opt.type == "choice" and values.get(opt.name) not in opt.choices:
            raise UsageError(f"{opt.flag} must be one of {', '.join(opt.choices)}")
    if action.max_ids and len(given[dim]) > action.max_ids:
        raise UsageError(action.max_ids_message or f"at most {action.max_ids} id(s) allowed")
    return dim, given[dim], values


def _bind_positional(action: Action, values: dict[str, Any], stdin_token: str
                     ) -> tuple[str, list[str], dict[str, Any]]:
    """A one-id command whose id is given by position (``ap-cmd GROUP_ID[@CLUSTER]``): taken
    verbatim (no comma splitting, no stdin), then the minimums and choices."""
    opt = action.positional
    raw = values.pop(opt.name, None)
    if isinstance(raw, (list, tuple)):
        raw = raw[0] if raw else None
    if raw is None or raw == "":
        raise UsageError(opt.message("required", f"Missing argument '{opt.metavar}'."))
    ident = "-" if raw == stdin_token else str(raw)
    _check_values(action, values, stdin_token)
    for other in action.options:
        if other.type == "choice" and values.get(other.name) not in other.choices:
            raise UsageError(f"{other.flag} must be one of {', '.join(other.choices)}")
    values.setdefault("extra_args", [])
    (dim,) = action.dimensions
    return dim, [ident], values


def _listed(values: Any) -> list[Any]:
    if isinstance(values, (list, tuple)):
        return list(values)
    return [] if values is None else [values]


def _stdin(values: Any, token: str) -> list[str]:
    if isinstance(values, str):
        values = [values]
    return ["-" if v == token else v for v in values or ()]


def _ints(opt: Option, values: Any, stdin_token: str) -> list[int]:
    """An integer list option: commas, repeats and stdin like ids; unique values."""
    if isinstance(values, int) and not isinstance(values, bool):
        values = [values]
    out: list[int] = []
    for token in expand_ids(_stdin([str(v) for v in values or ()], stdin_token), dedupe=False):
        try:
            number = int(token)
        except ValueError:
            raise UsageError(opt.message("invalid", "invalid {flag} value: {value}")
                             .format(flag=opt.flag, value=token)) from None
        if number in out:
            raise UsageError(opt.message("duplicate", f"duplicate {opt.flag} value: {number}"))
        out.append(number)
    return out


def _dimension(action: Action, given: dict[str, list[str]]) -> str:
    """Pick the dimension from the ids given, with the contract's usage messages."""
    dims = action.dimensions
    if given.get("group") and given.get("job"):
        raise UsageError("-g/--group and -j/--job are mutually exclusive")
    if "task" in dims:
        if given.get("task") and (given.get("group") or given.get("job")):
            raise UsageError("--task-id, -g/--group and -j/--job are mutually exclusive")
        if given.get("task"):
            return "task"
        if not (given.get("group") or given.get("job")):
            if dims["task"].option is not None and dims["task"].option.type == "ids":
                raise UsageError("at least one --task-id is required")
            if set(dims) == {"task"} and "task" not in given:
                raise UsageError("Missing option '--task-id'.")
            raise UsageError("at least one -g/--group, -j/--job or --task-id is required")
    for name in ("job", "group"):
        if given.get(name) and name not in dims:
            takes = [d for d in ("group", "job", "task") if d in dims]
            kinds = " or ".join(f"{d} ids ({DIMENSION_FLAGS[d]})" for d in takes) or "other ids"
            raise UsageError(f"{action.resource} takes {kinds}, not {DIMENSION_FLAGS[name]}")
    for name in ("group", "job"):
        if given.get(name):
            return name
    if set(dims) == {"task"}:
        raise UsageError("at least one --task-id is required")
    if action.option("job") is None:
        raise UsageError("at least one -g/--group is required")
    if "job" in dims or "group" in dims:
        raise UsageError("at least one -g/--group or -j/--job is required")
    raise UsageError("no dimension given")


def _given_ids(kwargs: dict[str, Any], stdin_token: str) -> dict[str, list[str]]:
    """Pop the id options from ``kwargs``: {dimension: ids} (stdin read, commas split)."""
    given = {}
    for dim in ("group", "job"):
        if dim in kwargs:
            given[dim] = expand_ids(_stdin(kwargs.pop(dim), stdin_token))
    if "task_id" in kwargs:
        raw = kwargs.pop("task_id")
        if isinstance(raw, (list, tuple)):  # a list of task ids (brm)
            given["task"] = [check_task_id(t) for t in expand_ids(_stdin(list(raw), stdin_token))]
        elif raw is not None:
            task = raw.strip()
            given["task"] = [check_task_id(task)] if task else []
    return given


def _check_values(action: Action, kwargs: dict[str, Any], stdin_token: str) -> None:
    """Integer lists and minimums, before the ids are checked (the contract's order)."""
    for opt in action.options:
        value = kwargs.get(opt.name)
        if opt.type == "ints":
            kwargs[opt.name] = _ints(opt, value, stdin_token)
        elif opt.type == "int" and opt.min is not None and value is not None and value < opt.min:
            raise UsageError(opt.message("min", f"{opt.flag} must be at least {opt.min}"))
