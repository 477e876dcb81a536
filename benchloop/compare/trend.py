"""How a benchmark moves over runs (``bl trend -g R1 -g R2 ...``), and which run is outside noise.

Why: a weekly series of pass rates (43.8% -> 50.6% -> 64.8%) says nothing until each step is set
beside the noise of one run.  The runs are taken in the order given; every figure is over the
instances every run scored (``common``), except each run's own pass rate.

* per run: its pass rate over the common instances and over its own, with t intervals
  (:mod:`.estimates`, cluster-robust with ``--cluster``); its paired difference to the previous
  run and to the reference (the first run);
* drift: the slope of the pass rate per run, estimated per instance (least squares on the run's
  index) and averaged, with its t test: the instances' difficulty cancels as in a paired
  comparison; and the DerSimonian-Laird (1986) random-effects mean of the steps between
  consecutive runs, with the between-step variance ``τ²``;
* control limits: each run's difference to the reference against the band an A/A of the
  reference gives at these trial counts (:func:`noise.aa_floor`), at ``z(1 − α / (2 (m − 1)))``
  (Bonferroni over the ``m − 1`` runs after the reference): with no change at all, some run is
  flagged in at most ``α`` of series.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

from .estimates import Clusterer, Estimate
from .groups import Group
from .noise import aa_floor, common_keys

ALPHA = 0.05


def _estimate(values: Sequence[float], keys: Sequence[str], cluster: Clusterer | None) -> Estimate:
    return Estimate.of(values, None if cluster is None else [cluster(k) for k in keys])


def _difference(a: Group, b: Group, keys: Sequence[str], cluster: Clusterer | None) -> dict[str, Any]:
    sa, sb = a.scored, b.scored  # (a property that builds its dict)
    d = [sb[k].pass_rate - sa[k].pass_rate for k in keys]  # type: ignore[operator]
    e = _estimate(d, keys, cluster)
    return {"from": a.group_id, "difference": e.mean, "se": e.se, "ci95": e.ci95, "p_value": e.p_value}


def dersimonian_laird(effects: Sequence[float], variances: Sequence[float]) -> dict[str, Any]:
    """The random-effects mean of ``effects`` with within-variances ``variances``:
    ``τ² = max(0, (Q − (k − 1)) / (Σw − Σw²/Σw))``, weights ``1/(v_i + τ²)``; its se, 95% normal
    interval and two-sided p-value."""
    k = len(effects)
    if k == 0 or any(v <= 0 for v in variances):
        return {"mean": None, "se": None, "ci95": None, "p_value": None, "tau2": None, "steps": k}
    w = [1 / v for v in variances]
    fixed = math.fsum(wi * y for wi, y in zip(w, effects, strict=True)) / math.fsum(w)
    q = math.fsum(wi * (y - fixed) ** 2 for wi, y in zip(w, effects, strict=True))
    c = math.fsum(w) - math.fsum(wi * wi for wi in w) / math.fsum(w)
    tau2 = max(0.0, (q - (k - 1)) / c) if k > 1 and c > 0 else 0.0
    ws = [1 / (v + tau2) for v in variances]
    mean = math.fsum(wi * y for wi, y in zip(ws, effects, strict=True)) / math.fsum(ws)
    se = math.sqrt(1 / math.fsum(ws))
    z = mean / se
    return {"mean": mean, "se": se, "ci95": [mean - 1.959963984540054 * se, mean + 1.959963984540054 * se],
            "p_value": math.erfc(abs(z) / math.sqrt(2)), "tau2": tau2, "steps": k}


def slope(groups: Sequence[Group], keys: Sequence[str], cluster: Clusterer | None) -> dict[str, Any]:
    """The pass rate's change per run: each instance's least-squares slope on the run index,
    averaged over the instances, with its t interval and test (cluster-robust with clusters)."""
    m = len(groups)
    centre = (m - 1) / 2
    sxx = math.fsum((r - centre) ** 2 for r in range(m))
    if m < 2 or not keys:
        return {"slope": None, "se": None, "ci95": None, "p_value": None, "df": None}
    scored = [g.scored for g in groups]
    per = [math.fsum((r - centre) * s[k].pass_rate for r, s in enumerate(scored)) / sxx  # type: ignore[operator]
           for k in keys]
    e = _estimate(per, keys, cluster)
    p = e.p_value if e.se else None
    return {"slope": e.mean, "se": e.se, "ci95": e.ci95, "p_value": p, "df": e.df}


def trend(groups: Sequence[Group], cluster: Clusterer | None = None, alpha: float = ALPHA) -> dict[str, Any]:
    """``bl trend``: every figure of the module (see its docstring)."""
    keys = common_keys(groups)
    reference = groups[0]
    m = len(groups)
    z = NormalDist().inv_cdf(1 - alpha / (2 * max(m - 1, 1)))
    runs = []
    for i, g in enumerate(groups):
        scored = g.scored
        own = sorted(scored, key=str)
        common = _estimate([scored[k].pass_rate for k in keys], keys, cluster)  # type: ignore[misc]
        alone = _estimate([scored[k].pass_rate for k in own], own, cluster)  # type: ignore[misc]
        run: dict[str, Any] = {"group_id": g.group_id, "instances": len(own), "pass_rate": common.mean,
                               "pass_rate_ci95": common.ci95, "own_pass_rate": alone.mean,
                               "own_pass_rate_ci95": alone.ci95, "previous": None, "reference": None,
                               "limit": None, "flagged": False}
        if i and keys:
            run["previous"] = _difference(groups[i - 1], g, keys, cluster)
            run["reference"] = _difference(reference, g, keys, cluster)
            floor = aa_floor(reference, keys, against=[len(scored[k].passes) for k in keys], share=False)
            if floor["se"] is not None:
                run["limit"] = z * floor["se"]
                diff = run["reference"]["difference"]
                run["flagged"] = diff is not None and abs(diff) > run["limit"]
        runs.append(run)
    steps = [r["previous"] for r in runs[1:] if r["previous"] and r["previous"]["se"]]
    pooled = dersimonian_laird([s["difference"] for s in steps], [s["se"] ** 2 for s in steps])
    flagged = [r["group_id"] for r in runs if r["flagged"]]
    out = {"groups": [g.group_id for g in groups], "instances": len(keys), "alpha": alpha, "z": z,
           "runs": runs, "slope": slope(groups, keys, cluster), "steps": pooled, "flagged": flagged}
    out["summary"] = sentence(out)
    return out


def sentence(t: dict[str, Any]) -> str:
    rates = " -> ".join(f"{100 * r['pass_rate']:.1f}%" if r["pass_rate"] is not None else "n/a" for r in t["runs"])
    s = t["slope"]
    text = f"{len(t['runs'])} runs over {t['instances']} common instances: {rates}"
    if s["slope"] is not None and s["p_value"] is not None:
        text += f"; drift {100 * s['slope']:+.1f} pp per run (p {s['p_value']:.3g})"
    if t["flagged"]:
        text += f"; outside the noise band (family-wise {100 * t['alpha']:g}%): {', '.join(t['flagged'])}"
    else:
        text += f"; no run outside the noise band (family-wise {100 * t['alpha']:g}%)"
    return text

