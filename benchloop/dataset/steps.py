"""A trajectory answer as step rows of the dataset (``steps/group_id=G/part-0.parquet``).

Trajectories are free-form; ``viewer.trajectory.read`` finds the steps whatever the
answer's shape (``trajectory``, ``steps``, ``messages``, one level down, or the answer
itself), and this module makes one row of each, as many rows as the trajectory has steps:
its number (its own, else its position), role, tool, the arguments of its call as JSON
text (one call's arguments, a list of them for several calls, else the step's other
action fields such as ``command``), the size of its text in characters, its tokens, an
error flag, and its text cut at :data:`TEXT_CHARS` characters (``text_truncated`` says so).
"""

from __future__ import annotations

import json
from typing import Any

TEXT_CHARS = 4000  # the most characters of a step's text kept in the dataset

COLUMNS: tuple[tuple[str, str], ...] = (
    ("group_id", "string"), ("job_id", "string"), ("step", "integer"), ("position", "integer"),
    ("role", "string"), ("tool", "string"), ("arguments", "json"), ("result_chars", "integer"),
    ("tokens", "number"), ("error", "boolean"), ("text", "string"), ("text_truncated", "boolean"),
)

_CALLS = ("tool_calls", "tool_call", "function_call")
_ERROR_FIELDS = ("error", "is_error", "isError")


def _arguments(step: Any) -> Any:
    from ..viewer.trajectory import ACTION_FIELDS, _call_arguments, without_ids

    for key in _CALLS:
        if key in step.fields:
            value = without_ids(step.fields[key])
            calls = value if isinstance(value, list) else [value]
            found = [_call_arguments(call) for call in calls]
            return found[0] if len(found) == 1 else found
    others = {k: step.fields[k] for k in ACTION_FIELDS if k in step.fields}
    return others or None


def _error(step: Any) -> bool:
    """A step that says it failed: a true ``error``/``is_error`` field (or an error text), a
    non-zero ``exit_code``, or a ``status`` of error/failed."""
    for key in _ERROR_FIELDS:
        value = step.fields.get(key)
        if value not in (None, False, "", 0, [], {}):
            return True
    code = step.fields.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return True
    status = step.fields.get("status")
    return isinstance(status, str) and status.lower() in ("error", "failed", "failure")


def rows(group: str, job_id: str, answer: Any) -> list[dict[str, Any]]:
    """The step rows of one job's trajectory answer."""
    from ..viewer.trajectory import canonical, read

    made = []
    for step in read(answer, job_id).steps:
        if step.is_object:
            text = step.content
            if text is None:
                rest = {k: v for k, v in step.fields.items() if k not in _CALLS}
                text = canonical(rest) if rest else None
        else:
            text = step.raw if isinstance(step.raw, str) else json.dumps(step.raw, ensure_ascii=False, default=str)
        tokens = step.tokens if isinstance(step.tokens, (int, float)) and not isinstance(step.tokens, bool) else None
        made.append({
            "group_id": group, "job_id": job_id, "step": step.key, "position": step.index,
            "role": step.role, "tool": step.tool,
            "arguments": _arguments(step) if step.is_object else None,
            "result_chars": len(text) if text is not None else None,
            "tokens": float(tokens) if tokens is not None else None,
            "error": _error(step) if step.is_object else False,
            "text": text[:TEXT_CHARS] if text is not None else None,
            "text_truncated": text is not None and len(text) > TEXT_CHARS,
        })
    return made
