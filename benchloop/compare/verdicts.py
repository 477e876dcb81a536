"""The one sentence that leads a comparison: what the pass rate says, and how sure it is.

Only the pass rate decides (``paired.verdict``); the sentence says which way,
by how much with its 95% interval, over how many instances (and clusters), and,
when the answer is "inconclusive", what that means here: the smallest
difference these instances could have shown (``mde``), not "no difference".
The text is plain: each rendering escapes it as it escapes every other string
(ids come from the server).
"""

from __future__ import annotations

from typing import Any


def _pp(value: float) -> str:
    return f"{100 * value:+.1f} pp"


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _over(p: dict[str, Any], clustered: bool) -> str:
    n = p["instances"]
    text = f"{n} instance{'s' if n != 1 else ''}"
    if clustered:
        g = p["clusters"]
        text += f" in {g} cluster{'s' if g != 1 else ''}"
    return text


def _evidence(p: dict[str, Any], candidates: int) -> str:
    if p.get("p_value") is None:
        return ""
    if candidates > 1 and p.get("p_value_adjusted") is not None:
        return f"p {_p(p['p_value'])}, Holm-adjusted over {candidates} candidates {_p(p['p_value_adjusted'])}"
    return f"p {_p(p['p_value'])}"


def sentence(result: dict[str, Any], candidates: int = 1) -> str:
    """The verdict of one comparison element as a sentence (see the module docstring)."""
    base, cand = str(result["baseline"]), str(result["candidate"])
    p = result["paired"]
    clustered = result.get("cluster") is not None
    n, diff, ci = p["instances"], p["pass_rate_difference"], p["ci95"]
    if n == 0:
        return (f"{cand} cannot be compared with {base}: no instance is scored in both "
                "(the instance keys differ: see --unit)")
    if p["se"] is None:
        if clustered and n >= 2:
            return (f"{cand} cannot be compared with {base}: its {_over(p, True)} give no standard error "
                    "(at least 2 clusters are needed)")
        return f"{cand} cannot be compared with {base}: 1 paired instance (at least 2 are needed)"
    evidence = _evidence(p, candidates)
    if p["verdict"] in ("better", "worse"):
        return (f"{cand} is {p['verdict']} than {base}: {_pp(diff)} [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}] "
                f"over {_over(p, clustered)} ({evidence})")
    if p["se"] == 0:
        if diff == 0:
            return (f"{cand} is not distinguishable from {base}: every one of the {_over(p, clustered)} "
                    "has the same pass rate in both")
        return (f"{cand} is not distinguishable from {base}: all {_over(p, clustered)} changed by {_pp(diff)}, "
                f"too few to tell (sign test p {_p(p['sign_test_p'])})")
    measured = f"measured {_pp(diff)} [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}], {evidence}"
    if p["mde"] >= 1:
        return (f"{cand} is not distinguishable from {base}: {_over(p, clustered)} are too few to detect "
                f"any difference of pass rate ({measured})")
    return (f"{cand} is not distinguishable from {base}: a difference smaller than ±{100 * p['mde']:.1f} pp "
            f"cannot be detected with {_over(p, clustered)} ({measured})")
