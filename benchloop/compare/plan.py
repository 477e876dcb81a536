"""A plan before the run: how many instances and trials a decision needs (``bl plan``).

Why: "is +2 pp real?" has an answer before the run is made.  Two runs of a benchmark are
compared on the paired differences ``d_i`` of the instances' pass rates; with ``k`` trials per
instance in each run, a within-instance trial variance ``σ_w²`` (from past runs: ``bl noise``)
and effects that may vary between instances by ``τ²``, ``Var(d_i) = 2 σ_w² / k + τ²``.  With
clusters whose runs share a shock of variance ``σ_u²`` (``--cluster``), the mean difference over
``n`` instances has ``Var(D) = Var(d_i)/n + 2 σ_u² Σ_c w_c²`` (``w_c``: the cluster's share of the
instances, as in the past run): the design effect is the ratio to ``Var(d_i)/n``, and t has at
most ``G − 1`` degrees of freedom.

The power of the paired t test of ``D`` at two-sided level ``α`` is exactly
``P(|T'| > t_{1−α/2, df})`` with ``T'`` noncentral t (``df``, noncentrality ``δ / se(D)``), computed
here by integrating the normal over the chi distribution of the standard error (plain Python;
checked against scipy's ``nct``).  :func:`instances_needed` is the smallest ``n`` reaching the
power; :func:`trials_needed` the fewest trials per instance for a fixed instance set.

For a fixed instance set the trials can go where they reduce the variance most: Neyman's
allocation (1934) gives instance ``i`` trials in proportion to its standard deviation
``√(p_i(1−p_i))`` (estimated from past runs by its posterior mean under the beta distribution of
the instances' pass probabilities, so that an instance that never passed in four trials still
gets some, and their mean is the runs' ``σ_w²``), which minimises ``Σ σ_i²/k_i`` for a
given total ``Σ k_i``: :func:`allocation` prints the trials per instance and how many more each
needs beyond those already run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .distributions import t_quantile

POWER = 0.8
ALPHA = 0.05
EFFECT = 0.02
TRIALS = (1, 2, 4, 8, 16)
_MAX_INSTANCES = 10**7
_MAX_TRIALS = 1024


def _normal_sf(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2))


def power(effect: float, se: float, df: float, alpha: float = ALPHA) -> float:
    """Power of the two-sided t test at level ``alpha`` of a mean whose standard error is ``se``
    (``df`` degrees of freedom) when the true mean is ``effect``: ``P(|T'| > c)``, ``T'`` noncentral
    t with noncentrality ``effect / se``."""
    if se <= 0:
        return 1.0 if effect else alpha
    ncp = abs(effect) / se
    crit = t_quantile(1 - alpha / 2, df)
    if df > 1e6:
        return _normal_sf(crit - ncp) + _normal_sf(crit + ncp)
    # s = sqrt(W/df), W ~ chi2(df): integrate P(Z + ncp > c s) + P(Z + ncp < -c s) over s.
    spread = 1 / math.sqrt(2 * df)
    low = max(0.0, 1 - 14 * spread) if df >= 20 else 0.0
    high = 1 + 14 * spread if df >= 20 else math.sqrt((df + 40 * math.sqrt(df) + 80) / df)
    steps = 2000 if df >= 20 else 8000
    h = (high - low) / steps
    log_const = math.log(2) + (df / 2) * math.log(df / 2) - math.lgamma(df / 2)
    total = 0.0
    for i in range(steps + 1):
        s = low + i * h
        if s <= 0:  # the density at 0: finite at one degree of freedom, else 0
            density = math.exp(log_const) if df == 1 else 0.0
        else:
            density = math.exp(log_const + (df - 1) * math.log(s) - df * s * s / 2)
        value = _normal_sf(crit * s - ncp) + _normal_sf(crit * s + ncp)
        total += density * value * (1 if i in (0, steps) else 4 if i % 2 else 2)
    return min(1.0, total * h / 3)


def design(n: int, variance_d: float, between: float = 0.0, shares: Sequence[float] = ()) -> tuple[float, float, int]:
    """``(se(D), design effect, df)`` for ``n`` instances: ``shares`` the clusters' shares of the
    instances (none: every instance its own cluster), ``between`` the cluster shock's variance."""
    herfindahl = math.fsum(w * w for w in shares) if shares else 0.0
    var = variance_d / n + 2 * between * herfindahl
    effect = var / (variance_d / n) if variance_d > 0 else 1.0
    df = min(n - 1, len(shares) - 1) if shares else n - 1
    return math.sqrt(var), effect, max(df, 1)


def power_at(n: int, trials: float, within: float, effect: float = EFFECT, alpha: float = ALPHA,
             effect_variance: float = 0.0, between: float = 0.0, shares: Sequence[float] = ()) -> float:
    variance_d = 2 * within / trials + effect_variance
    se, _, df = design(n, variance_d, between, shares)
    return power(effect, se, df, alpha)


def instances_needed(trials: float, within: float, effect: float = EFFECT, target: float = POWER,
                     alpha: float = ALPHA, effect_variance: float = 0.0, between: float = 0.0,
                     shares: Sequence[float] = ()) -> int | None:
    """The fewest paired instances whose test reaches ``target`` power (None: no number does,
    the clusters' shocks alone are too large)."""
    def reaches(n: int) -> bool:
        return power_at(n, trials, within, effect, alpha, effect_variance, between, shares) >= target

    if not reaches(_MAX_INSTANCES):
        return None
    low, high = 1, 2
    while not reaches(high):
        low, high = high, high * 2
    return max(_smallest(reaches, low, high), 2)


def trials_needed(instances: int, within: float, effect: float = EFFECT, target: float = POWER,
                  alpha: float = ALPHA, effect_variance: float = 0.0, between: float = 0.0,
                  shares: Sequence[float] = ()) -> int | None:
    """The fewest trials per instance (in each run) with which ``instances`` reach the power."""
    for k in range(1, _MAX_TRIALS + 1):
        if power_at(instances, k, within, effect, alpha, effect_variance, between, shares) >= target:
            return k
    return None


def variances(counts: Sequence[tuple[str, int, int]]) -> list[float]:
    """Each instance's trial variance ``p_i(1−p_i)``, estimated by its posterior mean under the beta
    distribution of the instances' pass probabilities (:func:`noise.beta_prior`, fitted by moments:
    the mean of these is the runs' ``σ_w²``); ``(x+1)/(k+2)`` smoothing when no instance has two trials."""
    from .noise import beta_prior

    prior = beta_prior([(x, k) for _, x, k in counts])
    out = []
    for _, x, k in counts:
        if prior is None:
            rate = (x + 1) / (k + 2)
            out.append(rate * (1 - rate))
        elif prior == (0.0, 0.0):
            out.append(0.0)
        else:
            a, b = prior[0] + x, prior[1] + k - x
            out.append(a * b / ((a + b) * (a + b + 1)))
    return out


def allocation(counts: Sequence[tuple[str, int, int]], budget: int) -> list[dict[str, Any]]:
    """Neyman's allocation of ``budget`` trials per run over the instances ``(key, passes,
    trials run)``: one each, the rest in proportion to ``√(p(1−p))`` (:func:`variances`), rounded
    by largest remainder; most trials to run again first."""
    n = len(counts)
    if n == 0:
        return []
    budget = max(budget, n)
    sds = [math.sqrt(v) for v in variances(counts)]
    total = math.fsum(sds)
    spare = budget - n  # one each first, the rest by Neyman
    raw = [spare * s / total if total else spare / n for s in sds]
    given = [1 + math.floor(r) for r in raw]
    order = sorted(range(n), key=lambda i: (-(raw[i] - math.floor(raw[i])), counts[i][0]))
    for i in order[: budget - sum(given)]:
        given[i] += 1
    rows: list[dict[str, Any]] = [{"instance": key, "pass_rate": x / k if k else None, "trials_run": k, "trials": t,
                                   "run_again": max(0, t - k)} for (key, x, k), t in zip(counts, given, strict=True)]
    rows.sort(key=lambda r: (-r["run_again"], -r["trials"], r["instance"]))
    return rows


def allocated_se(counts: Sequence[tuple[str, int, int]], rows: Sequence[dict[str, Any]]) -> float:
    """The paired difference's standard error under an allocation, at :func:`variances`."""
    trials = {r["instance"]: r["trials"] for r in rows}
    n = len(counts)
    var = math.fsum(2 * v / trials[key] for (key, _, _), v in zip(counts, variances(counts), strict=True))
    return math.sqrt(var) / n


def _with_shocks(se: float, between: float, shares: Sequence[float]) -> float:
    return math.sqrt(se * se + 2 * between * math.fsum(w * w for w in shares))


def neyman_budget(counts: Sequence[tuple[str, int, int]], effect: float, target: float, alpha: float, df: int,
                  between: float = 0.0, shares: Sequence[float] = ()) -> int | None:
    """The fewest trials per run in total whose Neyman allocation over ``counts`` reaches the
    power (at :func:`variances`); None: not up to 1,024 per instance."""
    def reaches(total: int) -> bool:
        se = _with_shocks(allocated_se(counts, allocation(counts, total)), between, shares)
        return power(effect, se, df, alpha) >= target

    n = len(counts)
    low, high = n, n * _MAX_TRIALS
    if not reaches(high):
        return None
    return _smallest(reaches, low, high)


def plan(within: float, effect: float = EFFECT, target: float = POWER, alpha: float = ALPHA,
         trials: Sequence[int] = TRIALS, instances: int | None = None, effect_variance: float = 0.0,
         between: float = 0.0, shares: Sequence[float] = (), counts: Sequence[tuple[str, int, int]] = ()
         ) -> dict[str, Any]:
    """``bl plan``: the instances x trials table, the trials a fixed instance set needs, and the
    Neyman allocation of those trials over ``counts`` (the past run's instances)."""
    table = []
    for k in trials:
        n = instances_needed(k, within, effect, target, alpha, effect_variance, between, shares)
        table.append({"trials": k, "instances": n,
                      "total_trials": None if n is None else 2 * n * k,
                      "design_effect": None if n is None else design(n, 2 * within / k + effect_variance,
                                                                    between, shares)[1]})
    fixed: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = []
    if instances:
        needed = trials_needed(instances, within, effect, target, alpha, effect_variance, between, shares)
        fixed = {"instances": instances, "trials": needed,
                 "power": None if needed is None else power_at(instances, needed, within, effect, alpha, effect_variance,
                                                          between, shares)}
        if needed is not None and counts and len(counts) == instances:
            df = design(instances, 1.0, 0.0, shares)[2]
            total = neyman_budget(counts, effect, target, alpha, df, between, shares)
            if total is not None:
                rows = allocation(counts, total)
                fixed["allocated_trials"] = total
                fixed["allocated_power"] = power(effect, _with_shocks(allocated_se(counts, rows), between, shares),
                                                 df, alpha)
    return {"effect": effect, "power": target, "alpha": alpha, "within_variance": within,
            "effect_variance": effect_variance, "between_variance": between,
            "clusters": len(shares) or None, "table": table, "fixed": fixed, "allocation": rows,
            "summary": summary(effect, target, table, fixed)}


def summary(effect: float, target: float, table: Sequence[dict[str, Any]], fixed: dict[str, Any] | None) -> str:
    def trials(k: int) -> str:
        return f"{k} trial{'s' if k != 1 else ''}"

    parts = [f"{r['instances']:,} instances at {trials(r['trials'])}" if r["instances"] else
             f"no instance count at {trials(r['trials'])}" for r in table]
    text = f"to detect {100 * effect:+.1f} pp with {100 * target:.0f}% power: " + ", ".join(parts)
    if fixed is not None:
        k = fixed["trials"]
        text += (f"; on these {fixed['instances']:,} instances, {k} trials per instance in each run" if k
                 else f"; these {fixed['instances']:,} instances cannot reach it")
    return text


def _smallest(reaches: Callable[[int], bool], low: int, high: int) -> int:
    """The smallest n in (low, high] for which ``reaches(n)`` holds (it holds at ``high`` and,
    being monotone, at every n above the answer)."""
    while high - low > 1:
        mid = (low + high) // 2
        if reaches(mid):
            high = mid
        else:
            low = mid
    return high
