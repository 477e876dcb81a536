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
from .specload import load_spec

STDIN_TOKEN = "\x00stdin"
DIMENSION_FLAGS = {"group": "-g/--group", "job": "-j/--job", "task": "--task-id"}


def _hint(opt: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    kind = opt["type"]
    extra: dict[str, Any] = {}
    if kind in ("ids", "list", "ints"):
        return list[str] | None, {"negative": ""}
    if kind == "flag":
        return bool, {"negative": "", "show_default": False}
    if kind == "choice":  # validated by the handler, after the ids (CONTRACT 1.4 order)
        return str, extra
    if kind == "int":  # minimums are checked by the handler, with the table's message
        return int, extra
    return str | None, extra


def build_parameter(opt: dict[str, Any]) -> inspect.Parameter:
    hint, extra = _hint(opt)
    param = Parameter(name=opt["flags"], help=opt["help"], **extra)
    default = opt.get("default")
    if opt["type"] == "flag":
        default = bool(default)
    return inspect.Parameter(opt["name"], inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[hint, param])


def _ints(opt: dict[str, Any], values: list[str] | None) -> list[int]:
    """An integer list option: commas, repeats and stdin like ids; unique values."""
    messages = opt.get("messages") or {}
    out: list[int] = []
    for token in expand_ids(["-" if v == STDIN_TOKEN else v for v in values or ()], dedupe=False):
        try:
            number = int(token)
        except ValueError:
            raise UsageError((messages.get("invalid") or "invalid {flag} value: {value}")
                             .format(flag=opt["flags"][0], value=token)) from None
        if number in out:
            raise UsageError(messages.get("duplicate") or f"duplicate {opt['flags'][0]} value: {number}")
        out.append(number)
    return out


def _dimension(resource: str, action: dict[str, Any], given: dict[str, list[str]]) -> str:
    """Pick the dimension from the ids given, with the contract's usage messages."""
    dims = action["dimensions"]
    if given.get("group") and given.get("job"):
        raise UsageError("-g/--group and -j/--job are mutually exclusive")
    if "task" in dims:
        if given.get("task") and (given.get("group") or given.get("job")):
            raise UsageError("--task-id, -g/--group and -j/--job are mutually exclusive")
        if given.get("task"):
            return "task"
        if not (given.get("group") or given.get("job")):
            task_opt = next((o for o in action["options"] if o["name"] == "task_id"), {})
            if task_opt.get("type") == "ids":
                raise UsageError("at least one --task-id is required")
            if set(dims) == {"task"} and "task" not in given:
                raise UsageError("Missing option '--task-id'.")
            raise UsageError("at least one -g/--group, -j/--job or --task-id is required")
    for name in ("job", "group"):
        if given.get(name) and name not in dims:
            raise UsageError(f"{resource} does not support {DIMENSION_FLAGS[name]} ({name} dimension)")
    for name in ("group", "job"):
        if given.get(name):
            return name
    if set(dims) == {"task"}:
        raise UsageError("at least one --task-id is required")
    if "job" not in {o["name"] for o in action["options"]}:
        raise UsageError("at least one -g/--group is required")
    if "job" in dims or "group" in dims:
        raise UsageError("at least one -g/--group or -j/--job is required")
    raise UsageError("no dimension given")


def make_handler(resource: str, action_name: str, action: dict[str, Any]):
    def handler(**kwargs):  # annotations come from __signature__
        ctx = kwargs.pop("ctx")
        for opt in action["options"]:
            kwargs.setdefault(opt["name"], bool(opt.get("default")) if opt["type"] == "flag" else opt.get("default"))
        given = {}
        for dim in ("group", "job"):
            if dim in kwargs:
                values = ["-" if v == STDIN_TOKEN else v for v in kwargs.pop(dim) or ()]
                given[dim] = expand_ids(values)
        if "task_id" in kwargs:
            raw = kwargs.pop("task_id")
            if isinstance(raw, list):  # a list of task ids (brm)
                values = ["-" if v == STDIN_TOKEN else v for v in raw]
                given["task"] = [check_task_id(t) for t in expand_ids(values)]
            elif raw is not None:
                task = raw.strip()
                given["task"] = [check_task_id(task)] if task else []
        for opt in action["options"]:
            if opt["type"] == "ints":
                kwargs[opt["name"]] = _ints(opt, kwargs.get(opt["name"]))
            elif opt["type"] == "int" and "min" in opt and kwargs.get(opt["name"]) is not None:
                if kwargs[opt["name"]] < opt["min"]:
                    message = (opt.get("messages") or {}).get("min")
                    raise UsageError(message or f"{opt['flags'][0]} must be at least {opt['min']}")
        dim = _dimension(resource, action, given)
        for opt in action["options"]:
            if opt["type"] == "choice" and kwargs.get(opt["name"]) not in opt["choices"]:
                raise UsageError(f"{opt['flags'][0]} must be one of {', '.join(opt['choices'])}")
        limit = action.get("max_ids")
        if limit and len(given[dim]) > limit:
            raise UsageError(action.get("max_ids_message") or f"at most {limit} id(s) allowed")
        return ctx.run(resource, action, dim, given[dim], kwargs)

    params = [build_parameter(opt) for opt in action["options"]]
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY,
                                    annotation=Annotated[Any, Parameter(parse=False)]))
    handler.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    handler.__name__ = f"{resource}_{action_name}".replace("-", "_")
    return handler


def build_resource(name: str) -> Any:
    spec = load_spec()
    resource = spec["resources"][name]
    if resource.get("command"):
        # A one-action resource is a command of its own (`bl pull ...`).
        (action_name, action), = resource["actions"].items()
        return make_handler(name, action_name, action)
    sub = App(name=name, help=resource["help"], help_format="plaintext")
    for index, (action_name, action) in enumerate(resource["actions"].items()):
        sub.command(make_handler(name, action_name, action), name=action_name, help=action["help"],
                    sort_key=index)

    @sub.default
    def _no_action() -> int:
        sub.help_print([name])
        return 2

    return sub


def __getattr__(attr: str) -> App:
    if attr.startswith("res__"):
        name = attr[5:].replace("_", "-")
        if name in load_spec()["resources"]:
            built = build_resource(name)
            globals()[attr] = built
            return built
    raise AttributeError(attr)
