"""Turn the table's resources into Cyclopts commands.

Every action gets the same generic handler; only its signature differs.  The
signature is built from the table's option definitions (``__signature__`` of
keyword-only parameters annotated with ``cyclopts.Parameter``), so help text,
choices, defaults and validation all come from the YAML.

Resources are built lazily: ``cli.py`` registers ``benchloop.commands:res__NAME``
for each resource and this module's ``__getattr__`` builds the sub-App on first
use, so ``bl metrics get`` never builds the other resources' commands.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from cyclopts import App, Parameter

from .errors import UsageError
from .ids import check_task_id, expand_ids
from .model import Action, Option, load_model

STDIN_TOKEN = "\x00stdin"
DIMENSION_FLAGS = {"group": "-g/--group", "job": "-j/--job", "task": "--task-id"}


def _hint(opt: Option) -> tuple[Any, dict[str, Any]]:
    kind = opt.type
    if opt.repeatable:
        return list[str] | None, {"negative": ""}
    if kind == "flag":
        return bool, {"negative": "", "show_default": False}
    if kind == "choice":  # validated by the handler, after the ids (docs/contract.md 1.4 order)
        return str, {}
    if kind == "int":  # minimums are checked by the handler, with the table's message
        return int, {}
    return str | None, {}


def build_parameter(opt: Option) -> inspect.Parameter:
    hint, extra = _hint(opt)
    param = Parameter(name=list(opt.flags), help=opt.help, **extra)
    return inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, default=opt.default_value,
                             annotation=Annotated[hint, param])


def _stdin(values: list[str] | None) -> list[str]:
    return ["-" if v == STDIN_TOKEN else v for v in values or ()]


def _ints(opt: Option, values: list[str] | None) -> list[int]:
    """An integer list option: commas, repeats and stdin like ids; unique values."""
    out: list[int] = []
    for token in expand_ids(_stdin(values), dedupe=False):
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
            raise UsageError(f"{action.resource} does not support {DIMENSION_FLAGS[name]} ({name} dimension)")
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


def _given_ids(kwargs: dict[str, Any]) -> dict[str, list[str]]:
    """Pop the id options from ``kwargs``: {dimension: ids} (stdin read, commas split)."""
    given = {}
    for dim in ("group", "job"):
        if dim in kwargs:
            given[dim] = expand_ids(_stdin(kwargs.pop(dim)))
    if "task_id" in kwargs:
        raw = kwargs.pop("task_id")
        if isinstance(raw, list):  # a list of task ids (brm)
            given["task"] = [check_task_id(t) for t in expand_ids(_stdin(raw))]
        elif raw is not None:
            task = raw.strip()
            given["task"] = [check_task_id(task)] if task else []
    return given


def _check_values(action: Action, kwargs: dict[str, Any]) -> None:
    """Integer lists and minimums, before the ids are checked (the contract's order)."""
    for opt in action.options:
        value = kwargs.get(opt.name)
        if opt.type == "ints":
            kwargs[opt.name] = _ints(opt, value)
        elif opt.type == "int" and opt.min is not None and value is not None and value < opt.min:
            raise UsageError(opt.message("min", f"{opt.flag} must be at least {opt.min}"))


def make_handler(action: Action):
    def handler(**kwargs):  # annotations come from __signature__
        ctx = kwargs.pop("ctx")
        for name, default in action.defaults.items():
            kwargs.setdefault(name, default)
        given = _given_ids(kwargs)
        _check_values(action, kwargs)
        dim = _dimension(action, given)
        for opt in action.options:
            if opt.type == "choice" and kwargs.get(opt.name) not in opt.choices:
                raise UsageError(f"{opt.flag} must be one of {', '.join(opt.choices)}")
        if action.max_ids and len(given[dim]) > action.max_ids:
            raise UsageError(action.max_ids_message or f"at most {action.max_ids} id(s) allowed")
        return ctx.run(action, dim, given[dim], kwargs)

    params = [build_parameter(opt) for opt in action.options]
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY,
                                    annotation=Annotated[Any, Parameter(parse=False)]))
    handler.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    handler.__name__ = "_".join(action.words).replace("-", "_")
    return handler


def build_resource(name: str) -> Any:
    resource = load_model().resources[name]
    if resource.command:
        # A one-action resource is a command of its own (`bl pull ...`).
        (action,) = resource.actions.values()
        return make_handler(action)
    sub = App(name=name, help=resource.help, help_format="plaintext")
    for index, action in enumerate(resource.actions.values()):
        sub.command(make_handler(action), name=action.name, help=action.help, sort_key=index)

    @sub.default
    def _no_action() -> int:
        sub.help_print([name])
        return 2

    return sub


def __getattr__(attr: str) -> App:
    if attr.startswith("res__"):
        name = attr[5:].replace("_", "-")
        if name in load_model().resources:
            built = build_resource(name)
            globals()[attr] = built
            return built
    raise AttributeError(attr)
