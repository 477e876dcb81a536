"""``divergence``: where two trials first differ, as a compact diff (``bl divergence``; the MCP
tool ``divergence``).

The same two trials as ``bl view -j A -j B`` (or ``--instance X -g BASE -g CAND``: the trial
that stands for each group there), the same first difference (``viewer.trajectory``), but as
one small element instead of a page: each side's trial and outcome, the step, what changed
(each differing argument with both values, bounded) and the first-difference line, so that
an agent answers "where did CAND go wrong on X?" in one call of a few hundred bytes.
"""

from __future__ import annotations

from typing import Any

from ..combinecall import CombineCall, Combined
from .registry import combine


@combine("divergence")
def divergence(call: CombineCall) -> Combined:
    from ...base.masking import scrub_value
    from ...viewer import divergences as dv
    from ...viewer import trials as t
    from ...viewer.trajectory import align, difference, first_difference, note, read

    trials = [value for _, value in call.values if isinstance(value, dict)]
    if len(trials) != 2:
        return Combined([])
    rows = align(*(read(x.get("trajectory"), x.get("job_id")) for x in trials))
    key = first_difference(rows)
    sides = []
    for x in trials:
        o = t.outcome(x)
        sides.append({k: o[k] for k in ("job_id", "group_id", "instance_id", "pass", "fail_reason",
                                        "sub_fail_reason")})
    element: dict[str, Any] = {"trials": sides, "step": key}
    if key is None:
        element.update(kind="the same actions", note="The two trials take the same actions at every step.",
                       changes=[])
    else:
        diff = difference(key, *next(c for k, c in rows if k == key))
        element.update(kind=diff.kind, note=note(diff),
                       changes=[{"argument": n, "left": dv.cut(a), "right": dv.cut(b)}
                                for n, a, b in diff.changed[:dv.SHOWN_CHANGES]],
                       more_changes=max(0, len(diff.changed) - dv.SHOWN_CHANGES),
                       left=dv.cut(diff.left), right=dv.cut(diff.right))
    shown = scrub_value(element, call.secrets)
    return Combined([shown], {"text": lambda: f"step {shown['step']}: {shown['note']}\n"})
