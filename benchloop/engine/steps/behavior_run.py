"""``brm run``: start a behaviour analysis of one group (docs/contract.md 1.5).

The mode comes from the backend's step detection: the table's ``mode`` expression
(``samplingMode``, or ``sampling_mode``) when it is a non-empty string, else its
``has_step`` expression, else whether any step is available.  Checks that need the
available steps are usage errors (exit 2) after that one GET, in the table's words;
every check that needs no network (integer, unique, positive values; exactly one
group) already ran before any request.  The POST is not retried after the request may
have reached the server (``transport``), so a task is never created twice.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import StepError, UsageError
from ..stepcall import StepCall
from .registry import step as register


def available_steps(body: dict[str, Any], expression: Any) -> list[int]:
    """The whole-number steps the ``available`` expression finds."""
    found = expression(body) or []
    return [int(s) for s in found if isinstance(s, (int, float)) and not isinstance(s, bool) and float(s).is_integer()]


def step_mode(body: dict[str, Any], available: list[int], mode: Any, has_step: Any) -> bool:
    value = mode(body)
    if isinstance(value, str) and value.strip():
        return value.strip() == "step"
    flag = has_step(body)
    if isinstance(flag, bool):
        return flag
    return bool(available)


@register("behavior_run")
def behavior_run(call: StepCall) -> Any:
    """Detect the group's mode, check --steps against it, then create the task (one POST)."""
    params = call.params
    steps: list[int] = call.options.get("steps") or []
    info = call.request("steps")
    if not isinstance(info, dict):
        raise StepError("behavior steps response must be a JSON object")
    available = available_steps(info, params.expression("available"))
    variables: dict[str, Any]
    if step_mode(info, available, params.expression("mode"), params.expression("has_step")):
        check_steps(call, steps, available)
        mode, variables = "step", {"steps": steps}
    else:
        if steps:
            raise UsageError(params.text("no_steps_mode"))
        # No sample size in all-jobs mode: the body field is left out.
        mode, variables = "all_jobs", {"steps": [], "sample_size": None}
    result = call.request("create", **variables)
    element = dict(result) if isinstance(result, dict) else {"result": result}
    element.setdefault("group_id", call.ident)
    element.setdefault("samplingMode", mode)
    if "task_id" not in element and "uid" in element:
        element["task_id"] = element["uid"]
    shown = element.get("uid") or element.get("task_id") or "(unknown)"
    call.log.info(f"brm task submitted: {shown} (group={call.ident}, mode={mode})")
    return element


def check_steps(call: StepCall, steps: list[int], available: list[int]) -> None:
    params = call.params
    most = params.integer("max_steps")
    listed = ", ".join(map(str, available))
    if not steps:
        raise UsageError(params.text("steps_required").format(max=most, available=listed or "(none)"))
    if len(steps) > most:
        raise UsageError(params.text("too_many_steps").format(max=most))
    for one in steps:
        if one not in available:
            raise UsageError(params.text("unknown_step").format(step=one, available=listed))
