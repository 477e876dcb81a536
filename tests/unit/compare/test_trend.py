"""Trend over runs (``bl trend``, ``benchloop.compare.trend``): figures checked against numpy and
scipy, the control limits' family-wise rate and power by seeded simulation, the command against
the sandbox: tests/cli/compare/test_trend_command.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp
from support import ROOT

from benchloop.compare import trend
from benchloop.compare.groups import Group, Instance, gather


def _group(name: str, passes: dict[str, list[int]]):
    return gather(name, [{"job_id": f"{name}-{k}-{t}", "instance": k, "score": float(v), "pass": bool(v),
                          "status": "succeeded"} for k, trials in passes.items() for t, v in enumerate(trials)])


def _runs(rng, p, k, shifts):
    return [_group(f"R{r}", {f"i{i}": [int(v) for v in rng.random(k) < min(1.0, p[i] + shift)]
                             for i in range(len(p))}) for r, shift in enumerate(shifts)]


def test_dersimonian_laird_matches_the_formula():
    y, v = np.array([0.02, -0.01, 0.05, 0.03]), np.array([0.0004, 0.0009, 0.0005, 0.0007])
    w = 1 / v
    fixed = np.sum(w * y) / np.sum(w)
    q = np.sum(w * (y - fixed) ** 2)
    tau2 = max(0.0, (q - 3) / (np.sum(w) - np.sum(w**2) / np.sum(w)))
    ws = 1 / (v + tau2)
    mean, se = np.sum(ws * y) / np.sum(ws), math.sqrt(1 / np.sum(ws))
    got = trend.dersimonian_laird(list(y), list(v))
    assert got["tau2"] == pytest.approx(tau2) and got["mean"] == pytest.approx(mean) and got["se"] == pytest.approx(se)
    assert got["p_value"] == pytest.approx(2 * sp.norm.sf(abs(mean) / se))


def test_figures_against_numpy_and_scipy():
    rng = np.random.default_rng(2)
    groups = _runs(rng, rng.beta(0.6, 0.5, size=60), 4, [0.0, 0.05, 0.1, 0.1])
    t = trend.trend(groups)
    keys = sorted(groups[0].scored)
    x = np.array([[g.scored[k].pass_rate for k in keys] for g in groups])  # runs x instances
    slopes = np.array([sp.linregress(np.arange(4), x[:, i]).slope for i in range(len(keys))])
    assert t["slope"]["slope"] == pytest.approx(slopes.mean())
    se = slopes.std(ddof=1) / math.sqrt(len(keys))
    assert t["slope"]["p_value"] == pytest.approx(2 * sp.t.sf(abs(slopes.mean()) / se, len(keys) - 1))
    for r, run in enumerate(t["runs"]):
        assert run["pass_rate"] == pytest.approx(x[r].mean())
        lo, hi = sp.t.interval(0.95, len(keys) - 1, loc=x[r].mean(), scale=sp.sem(x[r]))
        assert run["pass_rate_ci95"] == pytest.approx([lo, hi])
        if r:
            assert run["previous"]["difference"] == pytest.approx((x[r] - x[r - 1]).mean())
            assert run["reference"]["difference"] == pytest.approx((x[r] - x[0]).mean())
    assert t["z"] == pytest.approx(sp.norm.ppf(1 - 0.05 / 6))


def _fast_group(name: str, passes: list[list[int]]) -> Group:
    """A run made straight of its trials (what :func:`gather` makes of their rows, without the rows:
    the simulations below build thousands of runs)."""
    instances = {f"i{i}": Instance(f"i{i}", [], [float(v) for v in row], row) for i, row in enumerate(passes)}
    return Group(name, len(passes) * len(passes[0]), len(passes) * len(passes[0]), instances)


def _simulated(rng, p, k: int, shifts: list[float]) -> list[Group]:
    return [_fast_group(f"R{r}", (rng.random((len(p), k)) < np.minimum(1.0, p + s)[:, None]).astype(int).tolist())
            for r, s in enumerate(shifts)]


def _predicted_power(p, k: int, step: float, m: int, alpha: float = 0.05) -> float:
    """The chance that a run ``step`` above the first is outside its control limit, by the normal
    approximation with the true variances: ``Φ(δ/se − z) + Φ(−δ/se − z)``."""
    q = np.minimum(1.0, p + step)
    se = math.sqrt(np.sum(p * (1 - p) + q * (1 - q)) / k) / len(p)
    z = sp.norm.ppf(1 - alpha / (2 * (m - 1)))
    return float(sp.norm.cdf(step / se - z) + sp.norm.cdf(-step / se - z))


STEP, TRIALS, RUNS, AT = 0.03, 4, 5, 3  # +3 pp from the fourth of five runs on, 4 trials per instance
SIZES, SERIES = (500, 1351), 150


def _row(n: int, flat: int, at_step: int, power: float, before: int) -> str:
    return (f"| {n:,} | {SERIES} | {100 * flat / SERIES:.1f}% | {100 * at_step / SERIES:.1f}% "
            f"| {100 * power:.1f}% | {100 * before / SERIES:.1f}% |")


@pytest.mark.timeout(600)
def test_flat_series_flag_at_most_alpha_and_a_3pp_step_is_flagged_at_the_step_with_its_power():
    """Seeded simulation (docs/compare.md prints the table): five runs of one system, 4 trials per
    instance, instances' pass rates uniform in 10-90%.  With no change some run is flagged in at
    most α = 5% of series (within MC error); with +3 pp from the fourth run on, the fourth run is
    flagged in the share the noise floor predicts (the power), and the runs before the step no
    more than α allows."""
    lines = []
    flat_total = 0
    for n in SIZES:
        rng = np.random.default_rng(46 + n)
        p = rng.uniform(0.1, 0.8, size=n)
        flat = sum(bool(trend.trend(_simulated(rng, p, TRIALS, [0.0] * RUNS))["flagged"]) for _ in range(SERIES))
        at_step = before = 0
        for _ in range(SERIES):
            runs = trend.trend(_simulated(rng, p, TRIALS, [0.0] * AT + [STEP] * (RUNS - AT)))["runs"]
            at_step += runs[AT]["flagged"]
            before += any(r["flagged"] for r in runs[1:AT])
        power = _predicted_power(p, TRIALS, STEP, RUNS)
        mc = math.sqrt(power * (1 - power) / SERIES)
        assert abs(at_step / SERIES - power) <= 3 * mc + 0.01, (n, at_step / SERIES, power)
        assert flat / SERIES <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / SERIES), (n, flat / SERIES)
        assert before / SERIES <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / SERIES), (n, before / SERIES)
        flat_total += flat
        lines.append(_row(n, flat, at_step, power, before))
    # over every size together: family-wise at most α within twice the MC error
    total = SERIES * len(SIZES)
    assert flat_total / total <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / total)
    assert _predicted_power(p, TRIALS, STEP, RUNS) > 0.8  # the largest size (bl plan's 1,351) sees the step
    print("\n".join(lines))
    documented = " ".join((ROOT / "docs" / "compare.md").read_text(encoding="utf-8").split())
    for line in lines:  # the docs print what this test measures
        assert line in documented, line


def test_dersimonian_laird_agrees_with_statsmodels():
    """``combine_effects(method_re="dl")``: the same τ², mean, se and normal interval whenever τ² > 0;
    statsmodels leaves a negative moment estimate as it is, where DerSimonian and Laird (and we)
    truncate at 0, which is the fixed-effect mean (statsmodels' ``mean_effect_fe``)."""
    meta = pytest.importorskip("statsmodels.stats.meta_analysis")
    rng = np.random.default_rng(1986)
    truncated = pooled = 0
    for _ in range(200):
        k = int(rng.integers(2, 9))
        v = rng.uniform(0.0002, 0.002, size=k)
        y = rng.normal(0.01, math.sqrt(rng.choice([0.0, 0.001])), size=k) + rng.normal(0, np.sqrt(v))
        ours = trend.dersimonian_laird(list(y), list(v))
        theirs = meta.combine_effects(y, v, method_re="dl")
        if theirs.tau2 > 0:
            pooled += 1
            assert ours["tau2"] == pytest.approx(theirs.tau2, rel=1e-9)
            assert ours["mean"] == pytest.approx(theirs.mean_effect_re, rel=1e-9)
            assert ours["se"] == pytest.approx(theirs.sd_eff_w_re, rel=1e-9)
            assert ours["ci95"] == pytest.approx(list(theirs.conf_int(use_t=False)[1]), rel=1e-9)
        else:
            truncated += 1
            assert ours["tau2"] == 0
            assert ours["mean"] == pytest.approx(theirs.mean_effect_fe, rel=1e-9)
            assert ours["se"] == pytest.approx(theirs.sd_eff_w_fe, rel=1e-9)
        assert ours["p_value"] == pytest.approx(2 * sp.norm.sf(abs(ours["mean"]) / ours["se"]), rel=1e-9)
    assert pooled > 20 and truncated > 20  # both branches were tried


def test_the_pooled_steps_of_a_trend_are_statsmodels_dl_of_its_steps():
    meta = pytest.importorskip("statsmodels.stats.meta_analysis")
    rng = np.random.default_rng(7)
    t = trend.trend(_runs(rng, rng.uniform(0.1, 0.9, size=80), 4, [0.0, 0.1, 0.0, 0.15, 0.05, 0.2]))
    steps = [r["previous"] for r in t["runs"][1:]]
    y, v = np.array([s["difference"] for s in steps]), np.array([s["se"] ** 2 for s in steps])
    theirs = meta.combine_effects(y, v, method_re="dl")
    assert theirs.tau2 > 0 and t["steps"]["steps"] == 5
    assert t["steps"]["mean"] == pytest.approx(theirs.mean_effect_re, rel=1e-9)
    assert t["steps"]["se"] == pytest.approx(theirs.sd_eff_w_re, rel=1e-9)
    assert t["steps"]["tau2"] == pytest.approx(theirs.tau2, rel=1e-9)


def test_the_slope_test_agrees_with_linregress_and_statsmodels_ols():
    """Each instance's slope is scipy's ``linregress`` slope; their mean with its t test is an OLS of
    the slopes on a constant; and it is the run coefficient of the stacked OLS with a fixed effect
    per instance (the instances' difficulty cancels)."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(12)
    m, n = 6, 70
    groups = _runs(rng, rng.uniform(0.1, 0.9, size=n), 4, [0.0, 0.01, 0.03, 0.02, 0.05, 0.06])
    t = trend.trend(groups)["slope"]
    keys = sorted(groups[0].scored)
    x = np.array([[g.scored[k].pass_rate for k in keys] for g in groups])  # runs x instances
    slopes = np.array([sp.linregress(np.arange(m), x[:, i]).slope for i in range(n)])
    fit = sm.OLS(slopes, np.ones(n)).fit()
    assert t["slope"] == pytest.approx(fit.params[0], rel=1e-9)
    assert t["se"] == pytest.approx(fit.bse[0], rel=1e-9)
    assert t["p_value"] == pytest.approx(fit.pvalues[0], rel=1e-9)
    assert t["ci95"] == pytest.approx(list(fit.conf_int(0.05)[0]), rel=1e-9)
    assert t["df"] == fit.df_resid == n - 1
    runs = np.repeat(np.arange(m), n).astype(float)
    instance = np.tile(np.eye(n), (m, 1))  # one dummy per instance, no intercept
    stacked = sm.OLS(x.reshape(-1), np.column_stack([runs, instance])).fit()
    assert t["slope"] == pytest.approx(stacked.params[0], rel=1e-9)
