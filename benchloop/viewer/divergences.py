"""Where the changed instances of a comparison part, as data, and what kinds of parting recur.

``bl view`` finds the first step where one passing and one failing trial differ; the
question after a verdict is about the whole run: *what kind* of mistake the candidate
makes, how often, and whether that kind tells failures from passes at all.  So for every
changed instance of ``bl compare --why`` this module takes the trial that stands for the
side that passes more (a passing one) and the trial that stands for the other side (a
failing one), finds their first difference exactly as ``bl view`` does
(:func:`.trajectory.first_difference`, :func:`.trajectory.difference`), and says it as data:
the step, the failing side's tool, each differing argument with both values (cut to
:data:`VALUE_CHARS`), and a normalised *shape* of the change ("a different file path",
"a different command", "gave up earlier", "kept working").  Divergences of one candidate
are grouped by kind (the failing side's tool and sub-command, the first differing
argument, the shape) into a summary per candidate and direction, each kind with its
instances; the report's fail reason of each failing trial is counted beside it.

A kind is only an explanation when it is rarer in passes: for each kind the share of the
kind's instances whose *passing* trial also takes that action somewhere (the same tool
with the same values of the differing arguments; for a stop, a passing trial that ended
at or before that step) is given beside the share of failing trials that take it; a kind
at least as common in passes as in failures is marked ``explains_nothing``.  Everything
here is deterministic and cites its pair of job ids (no model judges a transcript).

Pure: no request is made here (the combine fetches the trials, ``engine/combines/comparison.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..compare.why_scope import Scope, scope_of
from . import trials as t
from .trajectory import (
    NONE,
    Difference,
    Step,
    Trajectory,
    align,
    arguments,
    difference,
    first_difference,
    read,
)

VALUE_CHARS = 120  # a value of a differing argument is cut to this many characters
SHOWN_CHANGES = 4  # differing arguments kept per divergence (the rest counted)
NOTHING = 0.8  # a kind at least this share as common in passes as in failures explains nothing
PATH_NAMES = ("path", "file", "filename", "file_path", "filepath", "target", "url")


def cut(value: Any) -> Any:
    """A value cut to about :data:`VALUE_CHARS` characters (its JSON, when it is no text or number)."""
    if isinstance(value, str):
        return value if len(value) <= VALUE_CHARS else value[:VALUE_CHARS - 3] + "..."
    if value is None or isinstance(value, (bool, int, float)):
        return value
    from .trajectory import canonical

    text = canonical(value)
    return value if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 3] + "..."


def _subcommand(step: Step | None) -> str | None:
    """The one-word sub-command of a step's call (``str_replace``, ``view``), when it has one."""
    if step is None:
        return None
    command = arguments(step).get("command")
    if isinstance(command, str) and command and " " not in command and len(command) <= 24:
        return command
    return None


def _action_name(step: Step | None) -> str | None:
    if step is None or not step.is_object:
        return None
    if step.tool is None:
        return None
    sub = _subcommand(step)
    return f"{step.tool} {sub}" if sub else step.tool


def _shape(diff: Difference, passing: Step | None, failing: Step | None) -> tuple[str, str | None]:
    """(the normalised shape of the change, the argument it is about)."""
    if failing is None:
        return "gave up earlier", None
    if passing is None:
        return "kept working", None
    if diff.kind == "another tool":
        if failing.tool is None:
            return "gave up earlier", None
        if passing.tool is None:
            return "kept working", None
        return "a different tool", "tool"
    if diff.kind == "other arguments":
        names = diff.names
        if not names:
            return "a different action", None
        first = next((n for n in names if n.rsplit(" ", 1)[-1] in PATH_NAMES), names[0])
        last = first.rsplit(" ", 1)[-1].rsplit(".", 1)[-1]
        if last in PATH_NAMES:
            return "a different file path", first
        if last == "command":
            return "a different command", first
        return f"a different {last}", first
    return diff.kind, None


def _one(steps: list[Step]) -> Step | None:
    return steps[0] if len(steps) == 1 else None


def divergence(entry: dict[str, Any], passing: dict[str, Any], failing: dict[str, Any]) -> dict[str, Any]:
    """The divergence of one changed instance (``entry``: a comparison's changed-instance
    element) between its ``passing`` and ``failing`` trials (the step ``trial``'s values)."""
    pt, ft = (read(x.get("trajectory"), x.get("job_id")) for x in (passing, failing))
    rows = align(pt, ft)
    key = first_difference(rows)
    out: dict[str, Any] = {
        "instance": entry["instance"],
        "direction": "improved" if entry["difference"] > 0 else "regressed",
        "difference": entry["difference"],
        "passing": _side(passing), "failing": _side(failing),
    }
    if key is None:
        return {**out, "step": None, "shape": "the same actions", "kind": "the same actions", "tool": None,
                "argument": None, "changes": [], "more_changes": 0, "note": "the two trials take the same actions"}
    left, right = next(c for k, c in rows if k == key)
    diff = difference(key, left, right)
    p_step, f_step = _one(left), _one(right)
    shape, argument = _shape(diff, p_step, f_step)
    action = _action_name(f_step)
    changes = [{"argument": n, "passing": cut(a), "failing": cut(b)} for n, a, b in diff.changed]
    kind = pattern(action, argument, shape, _action_name(p_step))
    return {**out, "step": key, "shape": shape, "kind": kind, "tool": action, "argument": argument,
            "changes": changes[:SHOWN_CHANGES], "more_changes": max(0, len(changes) - SHOWN_CHANGES),
            "passing_action": cut(diff.left), "failing_action": cut(diff.right),
            "_signature": _signature(f_step, diff, shape, key)}


def pattern(action: str | None, argument: str | None, shape: str, instead: str | None = None) -> str:
    """A kind in words: ``editor str_replace with another path``, ``bash instead of editor``,
    ``gave up earlier``."""
    if shape in ("gave up earlier", "kept working", "the same actions") or action is None:
        return shape
    if argument and argument != "tool":
        return f"{action} with another {argument}"
    if shape == "a different tool" and instead:
        return f"{action} instead of {instead}"
    return f"{action} ({shape})"


def _side(trial: dict[str, Any]) -> dict[str, Any]:
    o = t.outcome(trial)
    return {"group": o["group_id"], "job_id": o["job_id"], "pass": o["pass"],
            "fail_reason": o["fail_reason"], "sub_fail_reason": o["sub_fail_reason"]}


def _signature(step: Step | None, diff: Difference, shape: str, key: int) -> tuple[Any, ...]:
    """What "the same kind of action" is, to look for in other trials."""
    if shape == "gave up earlier":
        return ("stop", key)
    if step is None:
        return ("none",)
    values = {n: b for n, _, b in diff.changed if n not in ("role", "tool") and b is not NONE}
    return ("act", step.tool, _subcommand(step), tuple(sorted((n, _digest(v)) for n, v in values.items())))


def _digest(value: Any) -> str:
    """A value as a short fingerprint (a signature holds no 100 KB argument)."""
    import hashlib

    from .trajectory import canonical

    return hashlib.sha256(canonical(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def takes(trajectory: Trajectory, signature: tuple[Any, ...]) -> bool:
    """Whether a trial takes the action of ``signature`` anywhere (a stop: it ended by that step)."""
    if signature[0] == "stop":
        return bool(trajectory.steps) and trajectory.steps[-1].key <= signature[1]
    if signature[0] != "act":
        return False
    _, tool, sub, values = signature
    for step in trajectory.steps:
        if not step.is_object or step.tool != tool or _subcommand(step) != sub:
            continue
        args = arguments(step)
        if all(n in args and _digest(args[n]) == v for n, v in values):
            return True
    return False


def summarise(candidate: str, baseline: str, found: Sequence[dict[str, Any]],
              passing: Iterable[tuple[str, dict[str, Any]]] = (),
              failing: Iterable[tuple[str, dict[str, Any]]] = (), scope: Scope | None = None) -> dict[str, Any]:
    """The divergence summary of one candidate: per direction, its kinds (largest first) with
    their instances, the fail reasons of the failing trials, and for each kind how often the
    passing (and failing) trials of its instances take the same action.  ``passing`` and
    ``failing``: ``(instance, trial)`` of every trial fetched, to count in; ``scope``: which
    changed instances were looked at (default: all of those ``found`` is of)."""
    scope = scope or Scope(picked=len(found), looked_at=len(found))
    by_instance_pass: dict[str, list[Trajectory]] = {}
    by_instance_fail: dict[str, list[Trajectory]] = {}
    for inst, trial in passing:
        by_instance_pass.setdefault(inst, []).append(read(trial.get("trajectory"), trial.get("job_id")))
    for inst, trial in failing:
        by_instance_fail.setdefault(inst, []).append(read(trial.get("trajectory"), trial.get("job_id")))
    directions = []
    for direction in ("regressed", "improved"):
        mine = [d for d in found if d["direction"] == direction]
        if not mine:
            continue
        kinds: dict[str, list[dict[str, Any]]] = {}
        for d in mine:
            kinds.setdefault(d["kind"], []).append(d)
        groups = []
        for kind, members in sorted(kinds.items(), key=lambda e: (-len(e[1]), e[0])):
            passes = fails = in_passes = in_fails = 0
            for d in members:
                sig = d.get("_signature")
                if sig is None:
                    continue
                for traj in by_instance_pass.get(d["instance"], []):
                    passes += 1
                    in_passes += takes(traj, sig)
                for traj in by_instance_fail.get(d["instance"], []):
                    fails += 1
                    in_fails += takes(traj, sig)
            share_p = in_passes / passes if passes else None
            share_f = in_fails / fails if fails else None
            nothing = share_p is not None and share_f is not None and share_f > 0 and share_p >= NOTHING * share_f
            first = members[0]
            groups.append({
                "kind": kind, "shape": first["shape"], "tool": first["tool"], "argument": first["argument"],
                "count": len(members), "instances": [d["instance"] for d in members],
                "in_failing": {"trials": fails, "taking_it": in_fails, "share": share_f},
                "in_passing": {"trials": passes, "taking_it": in_passes, "share": share_p},
                "explains_nothing": nothing,
                "fail_reasons": dict(Counter(_reason(d) for d in members).most_common()),
            })
        reasons = Counter(_reason(d) for d in mine)
        directions.append({"direction": direction, "instances": len(mine), "kinds": groups,
                           "fail_reasons": dict(reasons.most_common()),
                           "lines": _lines(direction, len(mine), groups, reasons)})
    return {"baseline": baseline, "candidate": candidate, **scope.fields(), "directions": directions,
            "divergences": [{k: v for k, v in d.items() if not k.startswith("_")} for d in found]}


def _reason(d: dict[str, Any]) -> str:
    side = d["failing"]
    return side.get("sub_fail_reason") or side.get("fail_reason") or "(no fail reason)"


def _lines(direction: str, total: int, groups: list[dict[str, Any]], reasons: Counter[str]) -> list[str]:
    word = "regressions" if direction == "regressed" else "improvements"
    out = []
    for g in groups:
        what = (f"the failing trial {g['kind']}" if g["shape"] in ("gave up earlier", "kept working")
                else f"the first differing action is `{g['tool']}` with another `{g['argument']}`"
                if g["argument"] and g["argument"] != "tool" else f"the first differing action is `{g['kind']}`")
        line = f"in {g['count']} of {total} {word} {what}"
        p, f = g["in_passing"], g["in_failing"]
        if p["share"] is not None:
            line += (f"; the same action in {p['taking_it']} of {p['trials']} passing trials"
                     f" (failing: {f['taking_it']} of {f['trials']})")
            if g["explains_nothing"]:
                line += ": as common in passes, it explains nothing"
        out.append(line + ": " + ", ".join(g["instances"]))
    out.append(f"{word} by fail reason: " + ", ".join(f"{r} {n}" for r, n in reasons.most_common()))
    return out


def sides(entry: dict[str, Any], baseline: str, candidate: str,
          passes: dict[str, dict[str, Any]]) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """((group, job) of the passing trial, (group, job) of the failing one) for a changed instance:
    the side that passes more stands with a passing trial, the other with a failing one
    (``trials.representative`` among that outcome's jobs); None when a side has no such trial."""
    better, worse = (candidate, baseline) if entry["difference"] > 0 else (baseline, candidate)
    side = {baseline: "baseline", candidate: "candidate"}
    picked = []
    for group, wanted in ((better, True), (worse, False)):
        jobs = [{"job_id": j, "pass": passes.get(group, {}).get(j)} for j in entry[side[group]]["jobs"]]
        jobs = [j for j in jobs if j["pass"] is wanted]
        if not jobs:
            return None
        picked.append((group, str(t.representative(jobs)["job_id"])))
    return picked[0], picked[1]


def _blocks(results: Sequence[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    out = []
    for r in results:
        summary = r.get("divergences")
        if not isinstance(summary, dict):
            continue
        lines = [line for d in summary["directions"] for line in d["lines"]]
        if summary.get("fallback") and summary.get("note") and lines:  # said first: these are mostly noise
            lines.insert(0, summary["note"])
        scope = scope_of(summary)
        out.append((f"Where {summary['candidate']} parts from {summary['baseline']} (--why: the first "
                    f"difference of a passing and a failing trial {scope.title()})",
                    lines or [summary.get("note") or "no changed instance had a passing and a failing trial to compare"]))
    return out


def text(results: Sequence[dict[str, Any]]) -> str:
    """The divergence summaries for a terminal (``--output table``), '' without ``--why``."""
    from ..compare.display import terminal_text

    blocks = _blocks(results)
    return "".join("\n" + terminal_text(title) + "\n" + "".join(f"  {terminal_text(line)}\n" for line in lines)
                   for title, lines in blocks)


def markdown(results: Sequence[dict[str, Any]]) -> str:
    """The divergence summaries for a pull request (``--output markdown``), '' without ``--why``."""
    from ..compare.display import markdown_text

    blocks = _blocks(results)
    return "".join(f"\n**{markdown_text(title)}**\n\n" + "".join(f"- {markdown_text(line)}\n" for line in lines)
                   for title, lines in blocks)
