"""A plan before the run (``bl plan``, ``benchloop.compare.plan``): noncentral-t power, the
instances x trials table, clusters, the Neyman allocation.

The power function is checked against scipy's noncentral t; the printed plan by seeded
simulations of the comparison it plans (power within 80% ± 3); the command against the sandbox:
tests/cli/compare/test_plan_command.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sp

from benchloop.compare import plan


def scipy_power(effect: float, se: float, df: float, alpha: float = 0.05) -> float:
    c = sp.t.ppf(1 - alpha / 2, df)
    return sp.nct.sf(c, df, effect / se) + sp.nct.cdf(-c, df, effect / se)


@pytest.mark.parametrize("df", [1, 2, 3, 5, 7, 10, 19, 20, 39, 100, 1350, 20000])
def test_power_matches_scipys_noncentral_t(df):
    for ncp in (0.0, 0.3, 1.0, 2.0, 2.8, 3.5, 5.0):
        for alpha in (0.05, 0.01):
            assert plan.power(ncp, 1.0, df, alpha) == pytest.approx(scipy_power(ncp, 1.0, df, alpha), abs=1e-8)


def test_the_issues_plan_at_base_variance():
    """+2 pp at 80% power, σ_w² = 0.1375: about 1,351 instances at 4 trials, 677 at 8, 340 at 16,
    and 11 trials per instance on 500 instances (as an independent solve with scipy gives)."""
    def needed(k):
        sd = math.sqrt(2 * 0.1375 / k)
        n = optimize.brentq(lambda n: scipy_power(0.02, sd / math.sqrt(n), n - 1) - 0.8, 3, 5000)
        return math.ceil(n)

    for k, about in ((4, 1351), (8, 677), (16, 340)):
        assert plan.instances_needed(k, 0.1375) == needed(k)
        assert abs(needed(k) - about) <= 1
    assert plan.trials_needed(500, 0.1375) == 11


def _levels(within: float, effect: float) -> float:
    """A baseline pass probability whose variance, averaged with the candidate's (p + effect),
    is ``within``."""
    return optimize.brentq(lambda p: (p * (1 - p) + (p + effect) * (1 - p - effect)) / 2 - within, 0.0, 0.4)


def test_simulated_power_of_the_printed_plan_is_80_percent():
    """The plan for +2 pp at 4 trials (σ_w² 0.1375) run 2,000 times: the paired t test at 5%
    detects it 80% ± 3 of the time."""
    n, k, effect, within = plan.instances_needed(4, 0.1375), 4, 0.02, 0.1375
    low = _levels(within, effect)
    p = np.array([low] * (n // 2) + [1 - low - effect] * (n - n // 2))
    rng = np.random.default_rng(46)
    hits, draws = 0, 2000
    for _ in range(draws // 200):
        base = rng.binomial(k, p, size=(200, n)) / k
        cand = rng.binomial(k, p + effect, size=(200, n)) / k
        d = cand - base
        t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
        hits += int(np.sum(np.abs(t) > sp.t.ppf(0.975, n - 1)))
    assert hits / draws == pytest.approx(0.80, abs=0.03)


def test_with_cluster_shocks_the_plan_keeps_its_power():
    """8 clusters sharing a shock (variance 0.0004) per run, t with G - 1 df on cluster means:
    the planned instances reach 80% ± 3 in simulation (a larger effect, since shocks floor it)."""
    effect, within, between, k = 0.10, 0.1375, 0.0004, 4
    shares = [1 / 8] * 8
    n = plan.instances_needed(k, within, effect, between=between, shares=shares)
    assert n is not None
    n -= n % 8
    n += 8
    low = _levels(within, effect)
    p = np.array([low, 1 - low - effect] * (n // 2))
    cluster = np.repeat(np.arange(8), n // 8)
    rng = np.random.default_rng(8)
    hits, draws = 0, 1500
    for _ in range(draws):
        shock_b = rng.normal(0, math.sqrt(between), 8)[cluster]
        shock_c = rng.normal(0, math.sqrt(between), 8)[cluster]
        d = (rng.binomial(k, np.clip(p + effect + shock_c, 0, 1)) - rng.binomial(k, np.clip(p + shock_b, 0, 1))) / k
        means = np.array([d[cluster == c].mean() for c in range(8)])
        t = means.mean() / (means.std(ddof=1) / math.sqrt(8))
        hits += abs(t) > sp.t.ppf(0.975, 7)
    power_planned = plan.power_at(n, k, within, effect, between=between, shares=shares)
    assert hits / draws == pytest.approx(power_planned, abs=0.03)
    assert power_planned >= 0.8
    assert plan.instances_needed(k, within, 0.02, between=0.01, shares=shares) is None  # shocks dominate


def test_neyman_allocation_gives_trials_in_proportion_to_the_sd():
    counts = [(f"i{i}", x, 4) for i, x in enumerate([0, 1, 2, 3, 4, 2, 2, 0])]
    rows = plan.allocation(counts, 80)
    assert sum(r["trials"] for r in rows) == 80 and min(r["trials"] for r in rows) >= 1
    by = {r["instance"]: r for r in rows}
    sd = {key: math.sqrt(v) for (key, _, _), v in zip(counts, plan.variances(counts), strict=True)}
    for key, r in by.items():
        ideal = 1 + 72 * sd[key] / sum(sd.values())  # one each, the other 72 by Neyman
        assert abs(r["trials"] - ideal) < 1
        assert r["run_again"] == max(0, r["trials"] - 4)
    # for a given total, it never has a larger variance than equal trials
    assert plan.allocated_se(counts, rows) <= plan.allocated_se(counts, plan.allocation(
        [(k, 1, 1) for k, _, _ in counts], 80)) + 1e-12


def test_the_neyman_plan_reaches_its_power_in_simulation():
    """The allocation the plan prints for 40 instances like BASE's, run 1,500 times with each
    instance's pass probability giving the variance it was planned with: 80% ± 3."""
    rng = np.random.default_rng(4)
    counts = [(f"i{i}", int(x), 4) for i, x in enumerate(rng.choice([0, 0, 1, 2, 3, 4, 4], size=40))]
    effect = 0.10
    total = plan.neyman_budget(counts, effect, 0.8, 0.05, 39)
    rows = {r["instance"]: r["trials"] for r in plan.allocation(counts, total)}
    trials = np.array([rows[key] for key, _, _ in counts])
    var = np.array(plan.variances(counts))
    # p(1-p) averaged over the two runs = var, the candidate at p + effect
    p = np.array([optimize.brentq(lambda q, v=v: (q * (1 - q) + (q + effect) * (1 - q - effect)) / 2 - v,
                                  0.0, 0.5 - effect / 2) for v in var])
    hits, draws = 0, 1500
    for _ in range(draws):
        d = rng.binomial(trials, p + effect) / trials - rng.binomial(trials, p) / trials
        t = d.mean() / (d.std(ddof=1) / math.sqrt(40))
        hits += abs(t) > sp.t.ppf(0.975, 39)
    assert hits / draws == pytest.approx(0.80, abs=0.03)
