"""``brm run``: start a behaviour analysis of one group (docs/contract.md 1.5).

The mode comes from the backend's step detection: ``samplingMode`` (or
``sampling_mode``) when it is a non-empty string, else ``hasStep``/``has_step``,
else whether any step is available.  Checks that need the available steps
are usage errors (exit 2) after that one GET; every check that needs no
network (integer, unique, positive values; exactly one group) already ran
before any request.  The POST is not retried after the request may have
reached the server (see ``http.py``), so a task is never created twice.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import StepError, UsageError
from ..stepcall import StepCall
from .registry import step as register

MAX_STEPS = 20


def available_steps(body: dict[str, Any]) -> list[int]:
    out = []
    for item in body.get("steps") or []:
        if isinstance(item, dict):
            item = item.get("step")
        if isinstance(item, bool):
            continue
        if isinstance(item, int) or (isinstance(item, float) and item.is_integer()):
            out.append(int(item))
    return out


def step_mode(body: dict[str, Any], available: list[int]) -> bool:
    mode = body.get("samplingMode", body.get("sampling_mode"))
    if isinstance(mode, str) and mode.strip():
        return mode.strip() == "step"
    flag = body.get("hasStep", body.get("has_step"))
    if isinstance(flag, bool):
        return flag
    return bool(available)


@register("behavior_run")
def behavior_run(call: StepCall) -> Any:
    """Detect the group's mode, check --steps against it, then create the task (one POST)."""
    steps: list[int] = call.options.get("steps") or []
    info = call.request("steps")
    if not isinstance(info, dict):
        raise StepError("behavior steps response must be a JSON object")
    available = available_steps(info)
    if step_mode(info, available):
        check_steps(steps, available)
        variables: dict[str, Any] = {"steps": steps}
        mode = "step"
    else:
        if steps:
            raise UsageError("当前 Group 没有 Step 信息，无需选择 Step（do not pass --steps）")
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


def check_steps(steps: list[int], available: list[int]) -> None:
    if not steps:
        listed = ", ".join(map(str, available)) or "(none)"
        raise UsageError(f"group has steps; pass --steps (1~{MAX_STEPS} values from available steps: {listed})")
    if len(steps) > MAX_STEPS:
        raise UsageError(f"steps 数量必须在 1~{MAX_STEPS} 之间")
    for step in steps:
        if step not in available:
            raise UsageError(f"step 不属于当前 group: {step} (available: {', '.join(map(str, available))})")
