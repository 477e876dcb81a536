"""The one sentence that leads a comparison: what the pass rate says, and how sure it is.

Only the pass rate decides (``paired.verdict``); the sentence says which way,
by how much with its 95% interval, over how many instances (and clusters, with
their effective number), and, when the answer is "inconclusive", what that means
here: not "no difference", but that differences below ``mde`` are detected less
than 80% of the time with these instances (the noncentral t's answer at the
degrees of freedom used).  That is a property of the design, not a bound on the
true effect; a bound is the equivalence test's (``--margin``: "no change larger
than ±m pp" when the 90% interval lies inside, the two one-sided tests at 5%).
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
        effective = p.get("effective_clusters")
        if isinstance(effective, float) and g > 1:
            text += f", effectively {effective:.1f}"
    return text


def _ci(ci: list[float] | None) -> str:
    if not ci:  # the wild bootstrap bounds nothing with so few clusters
        return "[no finite 95% interval]"
    return f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def equivalence(p: dict[str, Any]) -> str:
    """The TOST clause of ``--margin`` ('' without one, or without an se): equivalent, or not ruled out."""
    margin, tost, ci90 = p.get("margin"), p.get("tost_p"), p.get("ci90")
    if margin is None or tost is None or not ci90:
        return ""
    m = f"±{100 * margin:.1f} pp"
    if p.get("equivalent"):
        return f"no change larger than {m}: the 90% interval {_ci(ci90)} is inside (TOST p {_p(tost)})"
    return f"a change of {m} is not ruled out: the 90% interval {_ci(ci90)} is not inside it (TOST p {_p(tost)})"


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
    tost = equivalence(p)
    if p["verdict"] in ("better", "worse"):
        within = f"; {tost}" if tost and p.get("equivalent") else ""
        return (f"{cand} is {p['verdict']} than {base}: {_pp(diff)} {_ci(ci)} "
                f"over {_over(p, clustered)} ({evidence}){within}")
    if p["se"] == 0:
        if diff == 0:
            return (f"{cand} is not distinguishable from {base}: every one of the {_over(p, clustered)} "
                    "has the same pass rate in both")
        return (f"{cand} is not distinguishable from {base}: all {_over(p, clustered)} changed by {_pp(diff)}, "
                f"too few to tell (sign test p {_p(p['sign_test_p'])})")
    measured = f"measured {_pp(diff)} {_ci(ci)}, {evidence}"
    if tost and p.get("equivalent"):
        return f"{cand} is equivalent to {base}: {tost}, over {_over(p, clustered)} ({measured})"
    tail = f"; {tost}" if tost else ""
    if p["mde"] is None or p["mde"] >= 1:
        return (f"{cand} is not distinguishable from {base}: with {_over(p, clustered)} even a difference of "
                f"±100 pp is detected less than 80% of the time ({measured}){tail}")
    return (f"{cand} is not distinguishable from {base}: differences below ±{100 * p['mde']:.1f} pp "
            f"are detected less than 80% of the time with {_over(p, clustered)} ({measured}){tail}")
