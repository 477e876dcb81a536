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
from typing import Annotated, Any, Literal

from cyclopts import App, Parameter, validators

from .errors import UsageError
from .ids import check_task_id, expand_ids
from .specload import load_spec

STDIN_TOKEN = "\x00stdin"
DIMENSION_FLAGS = {"group": "-g/--group", "job": "-j/--job", "task": "--task-id"}


def _hint(opt: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    kind = opt["type"]
    extra: dict[str, Any] = {}
    if kind in ("ids", "list"):
        return list[str] | None, {"negative": ""}
    if kind == "flag":
        return bool, {"negative": "", "show_default": False}
    if kind == "choice":
        return Literal[tuple(opt["choices"])], extra  # type: ignore[misc]
    if kind == "int":
        if "min" in opt:
            extra["validator"] = validators.Number(gte=opt["min"])
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
            if set(dims) == {"task"} and "task" not in given:
                raise UsageError("Missing option '--task-id'.")
            raise UsageError("at least one -g/--group, -j/--job or --task-id is required")
    for name in ("job", "group"):
        if given.get(name) and name not in dims:
            raise UsageError(f"{resource} does not support {DIMENSION_FLAGS[name]} ({name} dimension)")
    for name in ("group", "job"):
        if given.get(name):
            return name
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
            if raw is not None:
                task = raw.strip()
                given["task"] = [check_task_id(task)] if task else []
        dim = _dimension(resource, action, given)
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
