"""A trajectory answer read into steps, two trials aligned, and where they first differ.

Trajectories are free-form (docs/contract.md; the table's ``TrajectoryStep``): the steps
come as ``trajectory``, ``steps`` or ``messages`` of the answer (or of an object under one
of those names), or as the answer itself; a step is
usually an object with ``step``, ``role``, ``tool``, ``tokens`` and ``content``, and
anything else.  The viewer shows those five where it knows them and **every other field
as it came** (:attr:`Step.fields`), a step that is no object as its JSON, and every field
of the answer besides its steps (:attr:`Trajectory.fields`): nothing is dropped, so a page
can always be checked against the answer it came from.

Two trials are aligned by step number (a step without a usable number takes its
position); the first step where they differ is the first number at which one trial has a
step the other lacks, or their steps take another action: another role, another tool, or
other arguments of the call (the fields of :data:`ACTION_FIELDS`, call ids left out).
What a tool answered and what the model said are not actions: they differ between any
two runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import numeric

# The fields shown in a step's header and body; every other field is shown as it came.
KNOWN = ("step", "role", "tool", "tokens", "content")
# Where a step says which action it takes (the call, its arguments, a command).
ACTION_FIELDS = ("tool_calls", "tool_call", "function_call", "action", "command", "arguments", "args",
                 "tool_input", "code")
# Keys that name one call (random per run): not part of the action.
CALL_IDS = frozenset({"id", "call_id", "tool_call_id"})
STEP_KEYS = ("trajectory", "steps", "messages")  # where an answer holds its steps, in this order
MAX_DEPTH = 64  # how deep media references are looked for


@dataclass
class Step:
    index: int  # position in the trajectory (0-based)
    number: int | None  # the step's own number, when it has a usable one
    role: str | None = None
    tool: str | None = None  # the tool of a tool step, or the tools an assistant step calls
    tokens: float | int | None = None
    content: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)  # every other field, as it came
    raw: Any = None  # the step itself when it is no object
    is_object: bool = True

    @property
    def key(self) -> int:
        """Where the step goes when two trials are aligned: its number, else its position."""
        return self.number if self.number is not None else self.index

    @property
    def action(self) -> tuple[Any, ...]:
        """What the step does, for finding where two trials part: role, tool, the call's arguments."""
        if not self.is_object:
            return ("value", canonical(self.raw))
        acted = {k: without_ids(self.fields[k]) for k in ACTION_FIELDS if k in self.fields}
        return (self.role, self.tool, canonical(acted) if acted else None)


@dataclass
class Trajectory:
    steps: list[Step]
    fields: dict[str, Any]  # the answer's other fields (its job id excepted), as they came
    key: str | None  # where the steps were (``trajectory``, ``steps``, ``messages``, ``trajectory.steps``...;
    # None: the answer is the list, or has none)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def without_ids(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: without_ids(v, depth + 1) for k, v in value.items() if k not in CALL_IDS}
    if isinstance(value, list):
        return [without_ids(v, depth + 1) for v in value]
    return value


def _is_number(value: Any) -> bool:
    """A number the header shows as it is (a longer integer is kept as a field, exactly)."""
    number = numeric.value(value)
    return number is not None and not (isinstance(number, int) and abs(number) >= 10 ** numeric.DIGITS)


def called_tools(value: Any) -> list[str]:
    """The names of the tools a step's calls name (``tool_calls[].name``, ``[].function.name``)."""
    calls = value if isinstance(value, list) else [value]
    names = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        name = call.get("name")
        if not isinstance(name, str) and isinstance(call.get("function"), dict):
            name = call["function"].get("name")
        if isinstance(name, str) and name:
            names.append(name)
    return names


def read_step(index: int, item: Any) -> Step:
    if not isinstance(item, dict):
        return Step(index, None, raw=item, is_object=False)
    step = Step(index, numeric.whole(item.get("step")))
    kept: dict[str, Any] = {}
    for key, value in item.items():
        if key == "step" and step.number is not None and (not isinstance(value, str) or value == str(step.number)):
            continue  # shown as the step's number (a number, or its exact text)
        if key == "role" and isinstance(value, str):
            step.role = value
        elif key == "tool" and isinstance(value, str):
            step.tool = value
        elif key == "tokens" and _is_number(value):
            step.tokens = value
        elif key == "content" and isinstance(value, str):
            step.content = value
        else:
            kept[str(key)] = value  # the viewer does not know it, or not in this form: shown as it came
    step.fields = kept
    if step.tool is None:
        for key in ("tool_calls", "tool_call", "function_call"):
            names = called_tools(kept.get(key))
            if names:
                step.tool = ", ".join(names)
                break
    return step


def read(answer: Any, job_id: str | None = None) -> Trajectory:
    """The steps and the other fields of a trajectory answer (a job's ``job_id`` is the page's
    header; any other value under that name is kept)."""
    if isinstance(answer, list):
        return Trajectory([read_step(i, s) for i, s in enumerate(answer)], {}, None)
    if not isinstance(answer, dict):
        return Trajectory([], {} if answer is None else {"answer": answer}, None)
    rest = {str(k): v for k, v in answer.items() if not (k == "job_id" and (job_id is None or v == job_id))}
    key = next((k for k in STEP_KEYS if isinstance(answer.get(k), list)), None)
    if key is not None:
        del rest[key]
        return Trajectory([read_step(i, s) for i, s in enumerate(answer[key])], rest, key)
    for outer in STEP_KEYS:  # one level down: {"trajectory": {"steps": [...], ...}}
        inner = answer.get(outer)
        key = next((k for k in STEP_KEYS if isinstance(inner, dict) and isinstance(inner.get(k), list)), None)
        if key is not None:
            assert isinstance(inner, dict)
            rest[outer] = {k: v for k, v in inner.items() if k != key}
            if not rest[outer]:
                del rest[outer]
            return Trajectory([read_step(i, s) for i, s in enumerate(inner[key])], rest, f"{outer}.{key}")
    return Trajectory([], rest, None)


# ------------------------------------------------------------------ media
def media_refs(value: Any, depth: int = 0) -> Iterator[tuple[str, str]]:
    """Every ``trace_media`` reference under ``value``: ``(oss_uri, mime_type)``."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        ref = value.get("trace_media")
        if isinstance(ref, dict) and isinstance(ref.get("oss_uri"), str) and ref["oss_uri"]:
            mime = ref.get("mime_type")
            yield ref["oss_uri"], mime if isinstance(mime, str) else ""
        for item in value.values():
            yield from media_refs(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from media_refs(item, depth + 1)


def step_media(step: Step) -> list[tuple[str, str]]:
    return list(dict.fromkeys(media_refs(step.fields if step.is_object else step.raw)))


# ------------------------------------------------------------ alignment
def align(*trajectories: Trajectory) -> list[tuple[int, list[list[Step]]]]:
    """Rows of aligned steps: ``(key, [steps of trial 1 with that key, steps of trial 2, ...])``,
    in order of the keys (numbers ascending when every step has one; else as they first come)."""
    keys: dict[int, None] = {}
    for t in trajectories:
        for s in t.steps:
            keys.setdefault(s.key, None)
    order = sorted(keys) if all(s.number is not None for t in trajectories for s in t.steps) else list(keys)
    cells: dict[int, list[list[Step]]] = {k: [[] for _ in trajectories] for k in order}
    for i, t in enumerate(trajectories):
        for s in t.steps:
            cells[s.key][i].append(s)
    return [(k, cells[k]) for k in order]


def first_difference(rows: list[tuple[int, list[list[Step]]]]) -> int | None:
    """The key of the first row where two trials differ (a step on one side only, or another
    action), or None when they take the same actions throughout."""
    for key, (left, right) in ((k, c) for k, c in rows if len(c) == 2):
        if [s.action for s in left] != [s.action for s in right]:
            return key
    return None


def describe_action(steps: list[Step]) -> str:
    """A few words for what the steps of one side of a row do (the first-difference note)."""
    if not steps:
        return "no step"
    words = []
    for s in steps:
        if not s.is_object:
            words.append("a step that is no object")
            continue
        call = next((s.fields[k] for k in ACTION_FIELDS if k in s.fields), None)
        detail = ""
        if call is not None:
            args = without_ids(call)
            if isinstance(args, list) and len(args) == 1:
                args = args[0]
            if isinstance(args, dict) and isinstance(args.get("arguments"), Mapping):
                args = args["arguments"]
            detail = " " + canonical(args)
            detail = detail if len(detail) <= 120 else detail[:117] + "..."
        words.append(" ".join(w for w in (s.role or "(no role)", s.tool or "") if w) + detail)
    return "; ".join(words)


# ------------------------------------------------------------ what differs
NONE = "(none)"  # how an argument one side does not give is shown
VALUE_CHARS = 60  # a value shown in the first-difference note is cut to about this many characters
SHOWN_CHANGES = 4  # differing arguments named in the note (the others counted)


def arguments(step: Step) -> dict[str, Any]:
    """The arguments of a step's action as flat ``name -> value`` pairs: the arguments of its one
    call (``tool_calls[0].arguments``, ``function.arguments``, also when sent as JSON text) by
    name, each call's as ``call 2 path`` when there are several, and the other action fields
    (``command``, ``code``...) under their own names; nested objects as dotted names."""
    out: dict[str, Any] = {}
    if not step.is_object:
        return out
    for key in ACTION_FIELDS:
        if key not in step.fields:
            continue
        value = without_ids(step.fields[key])
        if key in ("tool_calls", "tool_call", "function_call"):
            calls = value if isinstance(value, list) else [value]
            for i, call in enumerate(calls):
                prefix = f"call {i + 1} " if len(calls) > 1 else ""
                _flatten(out, prefix, _call_arguments(call))
        elif isinstance(value, dict):
            _flatten(out, f"{key}.", value)
        else:
            out.setdefault(key, value)
    return out


def _call_arguments(call: Any) -> Any:
    if not isinstance(call, dict):
        return {"call": call}
    function = call.get("function")
    inner: dict[str, Any] = function if isinstance(function, dict) else call
    args = inner.get("arguments", inner.get("args", inner.get("input")))
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        args = parsed if isinstance(parsed, dict) else args
    rest = {k: v for k, v in inner.items() if k not in ("name", "arguments", "args", "input", "type")}
    if isinstance(args, dict):
        return {**rest, **args}
    return {**rest, **({} if args is None else {"arguments": args})}


def _flatten(out: dict[str, Any], prefix: str, value: Any, depth: int = 0) -> None:
    if isinstance(value, dict) and value and depth < 4:
        for k, v in value.items():
            _flatten(out, f"{prefix}{k}." if isinstance(v, dict) and v and depth < 3 else f"{prefix}{k}", v, depth + 1)
    else:
        out[prefix.rstrip(".") or "value"] = value


@dataclass
class Difference:
    """Where two trials first part, as data: the step, what changed (``(name, left, right)``:
    the role, the tool, then the arguments whose values differ, those given on both sides
    first), and what the two sides share (``(name, value)``); ``kind`` says which of
    ``"one side only"``, ``"another tool"``, ``"other arguments"``, ``"another role"``,
    ``"other steps"`` (several steps under one number, or no object)."""

    key: int
    kind: str
    changed: list[tuple[str, Any, Any]]
    same: list[tuple[str, Any]]
    left: str  # each side's action in a few words (describe_action)
    right: str

    @property
    def names(self) -> list[str]:
        """The differing argument names (the role and tool left out)."""
        return [n for n, _, _ in self.changed if n not in ("role", "tool")]


_MISSING = object()


def difference(key: int, left: list[Step], right: list[Step]) -> Difference:
    """What differs between the two sides of the row ``key`` (:func:`first_difference`)."""
    words = (describe_action(left), describe_action(right))
    if not left or not right:
        return Difference(key, "one side only", [], [], *words)
    if len(left) != 1 or len(right) != 1 or not left[0].is_object or not right[0].is_object:
        return Difference(key, "other steps", [], [], *words)
    a, b = left[0], right[0]
    changed: list[tuple[str, Any, Any]] = []
    same: list[tuple[str, Any]] = []
    for name, x, y in (("role", a.role, b.role), ("tool", a.tool, b.tool)):
        if x == y:
            if x is not None:
                same.append((name, x))
        else:
            changed.append((name, NONE if x is None else x, NONE if y is None else y))
    args_a, args_b = arguments(a), arguments(b)
    both, one = [], []
    for name in list(args_a) + [n for n in args_b if n not in args_a]:
        x, y = args_a.get(name, _MISSING), args_b.get(name, _MISSING)
        if x is _MISSING or y is _MISSING:
            one.append((name, NONE if x is _MISSING else x, NONE if y is _MISSING else y))
        elif canonical(x) == canonical(y):
            same.append((name, x))
        else:
            both.append((name, x, y))
    changed += both + one
    kind = ("another tool" if any(n == "tool" for n, _, _ in changed) else
            "another role" if any(n == "role" for n, _, _ in changed) else "other arguments")
    return Difference(key, kind, changed, same, *words)


def value_text(value: Any, other: Any = None, chars: int = VALUE_CHARS) -> str:
    """A value of the note, cut to about ``chars`` characters; beside ``other`` (the other side's
    value) the cut keeps where the two begin to differ in sight."""
    text = value if isinstance(value, str) else canonical(value)
    text = " ".join(text.split("\n"))
    start = 0
    if isinstance(other, (str, int, float, list, dict)) and other is not None:
        theirs = " ".join((other if isinstance(other, str) else canonical(other)).split("\n"))
        common = next((i for i, (p, q) in enumerate(zip(text, theirs, strict=False)) if p != q),
                      min(len(text), len(theirs)))
        start = max(0, common - chars // 3) if common > chars - 10 else 0
    shown = text[start:start + chars]
    return ("..." if start else "") + shown + ("..." if start + chars < len(text) else "")


def change_text(name: str, left: Any, right: Any) -> str:
    """``path: requests/utils.py -> requests/models.py``"""
    return f"{name}: {value_text(left, right)} -> {value_text(right, left)}"


def note(diff: Difference) -> str:
    """The first-difference line: what changed first (both values), then what the sides share."""
    if diff.kind == "one side only":
        return f"only one trial has this step: {diff.left} | {diff.right}"
    if not diff.changed:
        return f"{diff.left} | {diff.right}"
    shown = [change_text(*c) for c in diff.changed[:SHOWN_CHANGES]]
    more = len(diff.changed) - SHOWN_CHANGES
    text = "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
    if diff.same:
        alike = ", ".join(f"{n} {value_text(v, chars=40)}" for n, v in diff.same)
        text += f" (alike: {alike if len(alike) <= 160 else alike[:157] + '...'})"
    return text
