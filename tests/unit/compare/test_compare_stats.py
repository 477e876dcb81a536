"""The figures of ``bl compare`` (benchloop.compare.stats, .estimates, .distributions) against
the definitions.

Three kinds of evidence:

* the worked example of compare_cases.HAND, every figure checked against a
  value computed by hand (the arithmetic is in the comments; t quantiles from
  a table: t(0.975, 3) = 3.182446, t(0.975, 4) = 2.776445, t(0.975, 5) = 2.570582);
* an independent computation with numpy and scipy on random data (groupby by
  numpy, sample SD by ``ddof=1``, t by ``scipy.stats.t``, the sign test by
  ``scipy.stats.binomtest``, Holm by its step-down definition, the
  cluster-robust SEs as sandwich estimators in numpy matrices: CR1 also by
  statsmodels, CR2 with (I - H_gg)^(-1/2) by eigendecomposition and its
  Bell-McCaffrey degrees of freedom by Pustejovsky & Tipton's general formula,
  the noncentral t against ``scipy.stats.nct``, TOST against statsmodels), and the
  distribution functions themselves against scipy to about 1e-9 over many
  degrees of freedom and values;
* the properties the method implies (pairing on identical instances gives
  the difference of means; the CI shrinks as 1/sqrt(n); order of rows does
  not matter; one cluster per instance is the plain SE) and every edge case
  the modules document.
"""

from __future__ import annotations

import json
import math
import random
import re

import numpy as np
import pytest
from compare_cases import HAND_BASELINE, HAND_CANDIDATE, job_id, payloads, table_rows
from compare_references import (
    cr2_bm as _cr2_bm,
)
from compare_references import (
    mde_factor as _mde_factor,
)
from compare_references import (
    sandwich_se as _sandwich_se,
)
from compare_references import (
    statsmodels_cr1 as _statsmodels_cr1,
)
from compare_references import (
    wcr_interval_numpy as _wcr_interval_numpy,
)
from compare_references import (
    wcr_p_numpy as _wcr_p_numpy,
)
from compare_references import (
    webb_vectors as _webb_vectors,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special
from scipy import stats as sp
from support import ROOT

from benchloop.compare import caveats, estimates, stats
from benchloop.compare.distributions import (
    betainc,
    holm,
    sign_test_p,
    t_cdf,
    t_quantile,
    t_two_sided,
)
from benchloop.compare.estimates import Estimate, clustered_se, sample_sd
from benchloop.compare.scores import as_number, score_and_pass, too_big
from benchloop.compare.stats import compare_groups, gather, per_instance

COSTS = ["duration_s", "tool_error_count"]
OUTCOMES = ("succeeded", "failed")


def hand_result(**options) -> dict:
    return hand_results(**options)[0]


def hand_results(candidates: int = 1, **options) -> list[dict]:
    groups = []
    for gid, table in (("G1", HAND_BASELINE), *((f"G{k + 2}", HAND_CANDIDATE) for k in range(candidates))):
        jobs, metrics = payloads(gid, table)
        groups.append((gid, table_rows(gid, jobs, metrics)))
    return compare_groups(groups, metric="m", pass_threshold=0.5, unit="instance_id", costs=COSTS,
                          outcome_statuses=OUTCOMES, **options)


def approx(value, rel=1e-5, abs=1e-6):
    return pytest.approx(value, rel=rel, abs=abs)


# ----------------------------------------------------------- worked example
def test_hand_example_baseline_group():
    g = hand_result()["groups"][0]
    # 14 jobs; scored: 1-11 and 14 (12 is running, 13 cancelled without a metric) = 12.
    # Scored instances: i1..i6 (i8's only job is unscored; job 14 has no instance) = 6.
    assert (g["group_id"], g["jobs"], g["jobs_scored"], g["instances"], g["clusters"]) == ("G1", 14, 12, 6, 6)
    # pass_rate_i = [.5, 1, 0, .5, .5, 1] -> 3.5 / 6 = 7/12.
    assert g["pass_rate"] == approx(7 / 12)
    # deviations from 7/12 in twelfths: -1, 5, -7, -1, -1, 5 -> SS = 102/144; var = SS/5;
    # SE = sqrt(var/6) = sqrt(102/4320) = 0.153659; t(0.975, 5) SE = 2.570582 * 0.153659 = 0.394993.
    assert g["pass_rate_ci95"] == [approx(0.188340), approx(0.978327)]
    # mean_i = [.5, 1, 0, .4, .6 ('0.4' is a string), 1] -> 3.5 / 6.
    assert g["mean"] == approx(7 / 12)
    # SS = .006944 + .173611 + .340278 + .033611 + .000278 + .173611 = .728333;
    # SE = sqrt(.728333 / 5 / 6) = 0.155813; 2.570582 SE = 0.400531.
    assert g["mean_ci95"] == [approx(0.182803), approx(0.983864)]
    # Over the paired instances i1..i5 only: rates [.5, 1, 0, .5, .5] -> 0.5; means
    # [.5, 1, 0, .4, .6] -> 0.5.
    assert (g["paired_pass_rate"], g["paired_mean"]) == (approx(0.5), approx(0.5))


def test_hand_example_candidate_group():
    g = hand_result()["groups"][1]
    assert (g["group_id"], g["jobs"], g["jobs_scored"], g["instances"]) == ("G2", 11, 11, 6)
    # pass_rate_i = [1, .5, 0, 1, .5, 0] -> 0.5; SS = 1.0; SE = sqrt(1/5/6) = 0.182574;
    # 2.570582 SE = 0.469322.
    assert g["pass_rate"] == approx(0.5)
    assert g["pass_rate_ci95"] == [approx(0.030678), approx(0.969322)]
    # mean_i = [1, .5, 0, .8, .6, 0] -> 2.9 / 6 = 0.483333; SS = .848333; SE = 0.168160;
    # 2.570582 SE = 0.432269.
    assert g["mean"] == approx(2.9 / 6)
    assert g["mean_ci95"] == [approx(0.051064), approx(0.915602)]
    # paired i1..i5: rates [1, .5, 0, 1, .5] -> 0.6; means [1, .5, 0, .8, .6] -> 0.58
    assert (g["paired_pass_rate"], g["paired_mean"]) == (approx(0.6), approx(0.58))


def test_hand_example_paired():
    p = hand_result()["paired"]
    # Paired: i1..i5.  d_i (pass rate) = [.5, -.5, 0, .5, 0]: D = 0.1, SS = .7,
    # se = sqrt(.7/4/5) = sqrt(.035) = 0.187083, t(0.975, 4) se = 2.776445 * 0.187083 = 0.519425;
    # t = D / se = 0.534522 with 4 df: two-sided p = 0.621308.
    assert (p["instances"], p["clusters"], p["df"]) == (5, 5, 4)
    assert p["pass_rate_difference"] == approx(0.1)
    assert p["se"] == approx(0.187083)
    assert p["ci95"] == [approx(-0.419425), approx(0.619425)]
    assert p["p_value"] == approx(0.621308, abs=2e-6)
    # one candidate: Holm's adjustment is the p-value itself; not below 0.05
    assert p["p_value_adjusted"] == p["p_value"]
    assert p["verdict"] == "inconclusive"
    # 2 improved, 1 regressed, ties dropped: P(X <= 1) for Binomial(3, 1/2) = 4/8, doubled: 1.0
    assert p["sign_test_p"] == 1.0
    # mde: the noncentral t(4) effect with 80% power, 3.761103 se (2.8 se only at large df)
    assert p["mde"] == approx(3.7611 * 0.187083, rel=1e-4) == _mde_factor(4) * p["se"]
    # d_i (mean) = [.5, -.5, 0, .4, 0]: D = .08, SS = .628, se = sqrt(.0314) = 0.177200,
    # 2.776445 se = 0.491987, t = 0.451467 -> p = 0.675049.
    assert p["mean_difference"] == approx(0.08)
    assert p["mean_difference_se"] == approx(0.177200)
    assert p["mean_difference_ci95"] == [approx(-0.411987), approx(0.571987)]
    assert p["mean_difference_p_value"] == approx(0.675049, abs=2e-6)
    assert p["mean_difference_p_value_adjusted"] == p["mean_difference_p_value"]
    assert (p["improved"], p["regressed"], p["unchanged"]) == (2, 1, 2)


def test_hand_example_clustered():
    # --cluster '^(i)[12]$': i1 and i2 form the cluster "i"; i3, i4, i5 do not match (their own).
    result = hand_result(cluster="^(i)[12]$")
    p = result["paired"]
    # d = [.5, -.5, 0, .5, 0], D = .1; e_c: {i1, i2}: .4 - .6 = -.2; i3: -.1; i4: .4; i5: -.1.
    # CR2: each e_c² over 1 - n_c/n: .04/.6 + (.01 + .16 + .01)/.8 = 0.291667; se = sqrt(that) / 5
    # = 0.108012.  Bell-McCaffrey df (sizes 2, 1, 1, 1): (tr M)² / tr M² = 8/3 (not G - 1 = 3).
    d = np.array([.5, -.5, 0, .5, 0])
    assert (p["clusters"], p["df"]) == (4, approx(8 / 3)) == (4, approx(_cr2_bm(d, ["i", "i", "3", "4", "5"])[1]))
    assert p["effective_clusters"] == approx(8 / 3 + 1)
    assert p["se"] == approx(0.108012)
    # p-value and interval: the wild cluster bootstrap, every one of the 6^4 weight vectors
    names = ["i", "i", "3", "4", "5"]
    assert p["p_value"] == approx(_wcr_p_numpy(d, names, _webb_vectors(4), 0.0)) == approx(1.0)
    assert p["ci95"] == [approx(x) for x in _wcr_interval_numpy(d, names, _webb_vectors(4))]
    assert p["ci95"] == [approx(-0.644781), approx(0.5)]  # asymmetric, as the bootstrap's can be
    assert p["mde"] == approx(_mde_factor(p["df"]) * 0.108012)
    assert result["cluster"] == "^(i)[12]$"
    # per cluster: "i" has i1 (+.5) and i2 (-.5): mean 0; i3 0, i4 +.5, i5 0
    assert result["cluster_differences"] == [
        {"cluster": "i", "instances": 2, "improved": 1, "regressed": 1, "pass_rate_difference": 0.0},
        {"cluster": "i3", "instances": 1, "improved": 0, "regressed": 0, "pass_rate_difference": 0.0},
        {"cluster": "i4", "instances": 1, "improved": 1, "regressed": 0, "pass_rate_difference": 0.5},
        {"cluster": "i5", "instances": 1, "improved": 0, "regressed": 0, "pass_rate_difference": 0.0}]
    # the groups are clustered too: G1's six instances i1..i6 form 5 clusters
    assert [g["clusters"] for g in result["groups"]] == [5, 5]


def test_hand_example_costs():
    c = hand_result()["costs"]
    # duration_s per instance over scored jobs: baseline [15, 20, 40, 10, 20] -> 21,
    # candidate [20, 15, 50, 20, 25] -> 26; d = [5, -5, 10, 10, 5] -> 5, SS = 150,
    # se = sqrt(150/4/5) = 2.738613, t(0.975, 4) se = 7.603608; t = 1.825742 -> p = 0.141927.
    assert c["duration_s"] == {"baseline_mean": approx(21), "candidate_mean": approx(26),
                               "difference": approx(5), "se": approx(2.738613),
                               "ci95": [approx(-2.603608), approx(12.603608)],
                               "p_value": approx(0.141927), "p_value_adjusted": approx(0.141927),
                               "instances": 5}
    # every job has one tool error: all d_i = 0, se = 0 -> the CI is [0, 0] and the p-value the
    # sign test of no non-tie: 1.0
    assert c["tool_error_count"] == {"baseline_mean": 1.0, "candidate_mean": 1.0, "difference": 0.0,
                                     "se": 0.0, "ci95": [0.0, 0.0], "p_value": 1.0, "p_value_adjusted": 1.0,
                                     "instances": 5}


def test_hand_example_instances_and_one_sided():
    r = hand_result()
    assert (r["baseline"], r["candidate"], r["metric"], r["pass_threshold"], r["unit"]) == (
        "G1", "G2", "m", 0.5, "instance_id")
    # |d| = .5 for i1 (+), i2 (-) and i4 (+); ties by instance key; i3 and i5 unchanged.
    assert [(e["instance"], e["difference"]) for e in r["instances"]] == [
        ("i1", 0.5), ("i2", -0.5), ("i4", 0.5)]
    i1 = r["instances"][0]
    # the jobs of the instance (the running one too); pass rate and mean over the scored ones
    assert i1["baseline"] == {"pass_rate": 0.5, "mean": 0.5,
                              "jobs": [job_id("G1", 1), job_id("G1", 2), job_id("G1", 12)]}
    assert i1["candidate"] == {"pass_rate": 1.0, "mean": 1.0, "jobs": [job_id("G2", 1), job_id("G2", 2)]}
    # i8 has jobs in G1 but no score: it is in neither list
    assert (r["only_baseline"], r["only_candidate"]) == (["i6"], ["i7"])


def test_hand_example_summary_and_warnings():
    r = hand_result()
    assert r["summary"] == ("G2 is not distinguishable from G1: differences below ±70.4 pp are detected less "
                            "than 80% of the time with 5 instances (measured +10.0 pp [-41.9, +61.9], p 0.621)")
    # G1 has 2 unscored jobs (12 running, 13 cancelled); each group has 1 of 6 instances unpaired
    # (17% > 10%); the threshold splits the scores.
    assert r["warnings"] == [
        "G1: 2 of 14 jobs have no score (1 cancelled, 1 running); they take part in no figure",
        "G1 and G2 scored different instances (not paired: 1 of G1's 6, 1 of G2's 6): their pass rates "
        "cover different instances; paired_pass_rate compares the same ones"]


def test_field_names_are_the_interface():
    r = hand_result(by="x")
    assert list(r) == ["baseline", "candidate", "metric", "pass_threshold", "unit", "cluster", "by", "margin",
                       "summary",
                       "groups", "paired", "costs", "slices", "cluster_differences", "instances", "only_baseline",
                       "only_candidate", "warnings", "evidence", "noise_floor"]
    assert list(r["groups"][0]) == ["group_id", "jobs", "jobs_scored", "instances", "clusters", "pass_rate",
                                    "pass_rate_ci95", "mean", "mean_ci95", "paired_pass_rate", "paired_mean"]
    assert list(r["paired"]) == [
        "instances", "clusters", "df", "effective_clusters", "pass_rate_difference", "se", "ci95", "ci95_adjusted",
        "ci90", "p_value", "p_value_adjusted", "sign_test_p", "mde", "margin", "tost_p", "equivalent", "verdict",
        "mean_difference", "mean_difference_se", "mean_difference_ci95",
        "mean_difference_p_value", "mean_difference_p_value_adjusted", "improved", "regressed", "unchanged"]
    assert list(r["costs"]["duration_s"]) == ["baseline_mean", "candidate_mean", "difference", "se", "ci95",
                                              "p_value", "p_value_adjusted", "instances"]
    assert list(r["slices"][0]) == ["key", "baseline_jobs", "candidate_jobs", "paired"]
    assert list(r["slices"][0]["paired"]) == list(r["paired"])
    assert list(r["instances"][0]) == ["instance", "difference", "baseline", "candidate", "p_value", "q_value",
                                       "beyond_noise"]
    json.dumps(r, allow_nan=False)  # plain JSON: no NaN, no tuples of odd types


# ------------------------------------------------- distributions vs scipy
DFS = [*range(1, 41), 45, 50, 60, 79, 100, 150, 299, 500, 999, 1000, 4999, 19999, 100000]
TS = [1e-3, 0.01, 0.1, 0.3, 0.5, 0.9, 1.0, 1.5, 1.96, 2.0, 2.2, 2.5, 3.0, 4.0, 6.0, 10.0, 30.0, 100.0, 1e4]


def test_t_two_sided_matches_scipy():
    for df in DFS:
        for t in TS:
            expected = 2 * sp.t.sf(t, df)
            assert t_two_sided(t, df) == pytest.approx(expected, rel=1e-9, abs=1e-300), (df, t)
            assert t_two_sided(-t, df) == t_two_sided(t, df)
    assert t_two_sided(0.0, 7) == 1.0 and t_two_sided(math.inf, 7) == 0.0


def test_t_cdf_matches_scipy_on_both_sides():
    rng = random.Random(2)
    for _ in range(400):
        df = rng.choice(DFS) if rng.random() < 0.5 else rng.uniform(0.5, 300)
        t = rng.uniform(-8, 8)
        assert t_cdf(t, df) == pytest.approx(sp.t.cdf(t, df), rel=1e-9, abs=1e-12), (df, t)


def test_t_quantile_matches_scipy_and_inverts_the_cdf():
    for df in DFS:
        for p in (0.5001, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999, 0.025, 0.001):
            q = t_quantile(p, df)
            assert q == pytest.approx(sp.t.ppf(p, df), rel=1e-9, abs=1e-9), (df, p)
            assert sp.t.cdf(q, df) == pytest.approx(p, rel=1e-10), (df, p)
    assert t_quantile(0.5, 3) == 0.0
    # the table values the hand example uses
    assert t_quantile(0.975, 4) == pytest.approx(2.776445105, abs=1e-9)
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


def test_incomplete_beta_matches_scipy():
    for a in (0.5, 1.0, 2.5, 7.0, 30.0, 250.0, 5000.0):
        for b in (0.5, 1.0, 3.0, 12.0, 400.0):
            for x in (1e-6, 0.01, 0.2, 0.5, 0.8, 0.99, 0.999999):
                expected = special.betainc(a, b, x)
                assert betainc(a, b, x) == pytest.approx(expected, rel=1e-9, abs=1e-300), (a, b, x)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 9, 10, 30, 101, 1000, 2000, 2001, 2500, 9999])
def test_sign_test_matches_scipys_binomial_test(m):
    for k in sorted({0, 1, m // 10, m // 3, m // 2 - 1, m // 2, m // 2 + 1, m - 1, m} - {-1}):
        if 0 <= k <= m:
            expected = sp.binomtest(k, m, 0.5).pvalue
            assert sign_test_p(k, m - k) == pytest.approx(expected, rel=1e-9, abs=1e-300), (k, m)


def test_sign_test_small_cases_by_hand():
    assert sign_test_p(2, 0) == 0.5  # two instances, both improved: 2 * (1/4)
    assert sign_test_p(3, 0) == 0.25  # three: 2 * (1/8)
    assert sign_test_p(0, 3) == 0.25
    assert sign_test_p(0, 0) == 1.0  # no non-tie
    assert sign_test_p(5, 5) == 1.0


def _holm_by_definition(p: list[float]) -> list[float]:
    """The smallest α at which Holm's step-down procedure rejects each hypothesis: run the
    procedure at every candidate α (the values (m - i) p_(i)) and keep the first that rejects."""
    m = len(p)
    order = np.argsort(p, kind="stable")
    candidates = sorted({min(1.0, (m - i) * p[j]) for i, j in enumerate(order)} | {1.0})
    out = [1.0] * m
    for alpha in reversed(candidates):
        rejected = set()
        for i, j in enumerate(order):
            if p[j] <= alpha / (m - i) + 1e-15:
                rejected.add(int(j))
            else:
                break
        for j in rejected:
            out[j] = alpha
    return out


def test_holm_matches_its_definition_and_a_numpy_formula():
    rng = np.random.default_rng(4)
    for _ in range(200):
        m = int(rng.integers(1, 9))
        p = [float(x) for x in rng.uniform(0, 0.2, m) ** rng.uniform(0.5, 3)]
        mine = holm(p)
        # numpy: sorted p times (m, m-1, ..., 1), running maximum, capped at 1, back in order
        order = np.argsort(p, kind="stable")
        steps = np.minimum(1.0, np.maximum.accumulate(np.array(p)[order] * (m - np.arange(m))))
        expected = np.empty(m)
        expected[order] = steps
        assert mine == pytest.approx(list(expected), rel=1e-12)
        assert mine == pytest.approx(_holm_by_definition(p), rel=1e-9)
    assert holm([0.03]) == [0.03]  # one hypothesis: the p-value itself
    assert holm([0.01, None, 0.04]) == [0.02, None, 0.04]  # None is not in the family


# ---------------------------------------------------- cluster-robust SE
def test_cr1_matches_statsmodels():
    rng = np.random.default_rng(4)
    for _ in range(30):
        n = int(rng.integers(6, 80))
        clusters = [f"c{int(rng.integers(0, 9))}" for _ in range(n)]
        if len(set(clusters)) < 2:
            continue
        values = rng.normal(0, 1, n)
        se, _ = clustered_se(list(values), clusters)
        assert se == pytest.approx(_statsmodels_cr1(values, clusters), rel=1e-9)


def test_cr2_and_bell_mccaffrey_df_match_the_general_matrix_formulas():
    rng = np.random.default_rng(11)
    for trial in range(60):
        n = int(rng.integers(4, 90))
        g = int(rng.integers(2, min(n, 14) + 1))
        # unequal sizes on purpose: a geometric draw of the cluster of each value
        clusters = [f"c{min(int(rng.geometric(0.3)), g)}" for _ in range(n)] if trial % 2 else \
            [f"c{int(rng.integers(0, g))}" for _ in range(n)]
        if len(set(clusters)) < 2:
            continue
        values = rng.choice([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0], n) + rng.normal(0, 0.01, n)
        se, df = _cr2_bm(values, clusters)
        est = Estimate.of(list(values), clusters)
        assert est.clusters == len(set(clusters))
        assert est.se == pytest.approx(se, rel=1e-9)
        assert est.df == pytest.approx(df, rel=1e-9)
        assert est.p_value == pytest.approx(2 * sp.t.sf(abs(values.mean()) / se, df), rel=1e-8)
        half = sp.t.ppf(0.975, df) * se
        assert est.ci95 == [pytest.approx(values.mean() - half, rel=1e-9, abs=1e-12),
                            pytest.approx(values.mean() + half, rel=1e-9, abs=1e-12)]
        assert est.mde == pytest.approx(_mde_factor(df) * se, rel=1e-8)


def test_bell_mccaffrey_df_of_swe_bench_sized_clusters():
    sizes = [231, 75, 44, 34, 32, 22, 19, 8]
    clusters = [f"r{i}" for i, k in enumerate(sizes) for _ in range(k)]
    values = np.random.default_rng(1).normal(0, 1, sum(sizes))
    assert estimates.bell_mccaffrey_df(sizes) == pytest.approx(_cr2_bm(values, clusters)[1], rel=1e-10)
    assert estimates.bell_mccaffrey_df(sizes) == pytest.approx(2.8317, abs=1e-4)  # not 7: one cluster is half
    assert estimates.bell_mccaffrey_df([30] * 8) == 7.0


def test_noncentral_t_matches_scipy():
    from benchloop.compare.distributions import nct_cdf
    worst = 0.0
    for df in (1.0, 1.5, 2.83, 4, 7, 30, 120, 400, 5000):
        for nc in (-6.0, -2.0, -0.5, 0.0, 0.7, 2.8, 3.3, 6.0, 12.0):
            for t in (-30.0, -4.0, -2.3, -0.1, 0.0, 0.3, 1.96, 2.36, 4.0, 12.0, 50.0):
                expected = sp.nct.cdf(t, df, nc)
                if math.isnan(expected):
                    continue
                worst = max(worst, abs(nct_cdf(t, df, nc) - expected))
    assert worst < 1e-9


@pytest.mark.parametrize("df", [2, 2.83, 4, 7, 19, 60, 400, 10_000])  # scipy's nct is nan at df 1
def test_detectable_effect_is_the_noncentral_t_root(df):
    from benchloop.compare.distributions import detectable_noncentrality, t_power
    factor = detectable_noncentrality(float(df))
    assert factor == pytest.approx(_mde_factor(df), rel=1e-9)
    assert t_power(factor, float(df)) == pytest.approx(0.8, abs=1e-10)
    assert factor > 2.8  # z(0.975) + z(0.8) = 2.8016 is the limit from above
    if df >= 400:
        assert factor == pytest.approx(2.8016, abs=0.01)


def test_tost_matches_statsmodels_and_the_90_interval():
    from statsmodels.stats.weightstats import ttost_paired
    rng = np.random.default_rng(8)
    for _ in range(20):
        n = int(rng.integers(5, 200))
        base = rng.normal(0.5, 0.3, n)
        cand = base + rng.normal(rng.uniform(-0.05, 0.05), 0.2, n)
        margin = float(rng.uniform(0.01, 0.2))
        est = Estimate.of(list(cand - base))
        expected = ttost_paired(cand, base, -margin, margin)[0]
        assert est.tost_p(margin) == pytest.approx(expected, rel=1e-8, abs=1e-14)
        lo, hi = est.ci90
        assert (est.tost_p(margin) < 0.05) == (-margin < lo and hi < margin)


def test_clustered_se_matches_the_sandwich_estimator():
    rng = np.random.default_rng(9)
    for _ in range(50):
        n = int(rng.integers(4, 80))
        g = int(rng.integers(2, min(n, 12) + 1))
        clusters = [f"c{int(rng.integers(0, g))}" for _ in range(n)]
        if len(set(clusters)) < 2:
            continue
        values = rng.choice([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0], n) + rng.normal(0, 0.01, n)
        se, count = clustered_se(list(values), clusters)  # CR1: kept as a function, not the verdict's
        assert count == len(set(clusters))
        assert se == pytest.approx(_sandwich_se(values, clusters), rel=1e-9)


def test_one_cluster_per_instance_is_the_plain_se():
    rng = random.Random(5)
    values = [rng.random() for _ in range(37)]
    plain = Estimate.of(values)
    own = Estimate.of(values, [f"k{i}" for i in range(37)])
    assert own.se == pytest.approx(plain.se, rel=1e-12) and own.df == plain.df == 36
    assert own.ci95 == pytest.approx(plain.ci95, rel=1e-12)


def test_clusterer_names_clusters_by_the_first_group():
    name = estimates.clusterer("^(.+?)__")
    assert name("django__django-11308") == (True, "django")
    assert name("pytest__pytest-12092") == (True, "pytest")
    # not matched: its own cluster, never the cluster of the same name
    assert name("django") == (False, "django") != name("django__x")
    assert estimates.clusterer("django")("my-django-1") == (True, "django")  # no group: the whole match
    assert estimates.clusterer("^(a)|(b)")("b") == (False, "b")  # the first group took no part
    assert estimates.clusterer(None) is None


def test_too_few_clusters_give_no_interval():
    est = Estimate.of([0.0, 1.0, 0.5], ["a", "a", "a"])
    assert (est.mean, est.se, est.ci95, est.p_value, est.mde, est.clusters) == (0.5, None, None, None, None, 1)


# ------------------------------------------------ independent computation
def _random_group(rng: random.Random, gid: str, instances: list[str]) -> list[dict]:
    rows, n = [], 0
    for inst in instances:
        for _ in range(rng.randint(1, 4)):
            n += 1
            roll = rng.random()
            score = None if roll < 0.1 else round(rng.random(), 3) if roll < 0.9 else float(rng.randint(0, 1))
            rows.append({"job_id": f"{gid}-{n}", "instance": inst, "score": score,
                         "pass": None if score is None else score >= 0.5, "status": "failed",
                         "duration_s": None if score is None else rng.uniform(5, 600)})
    rng.shuffle(rows)
    return rows


def _numpy_instances(rows: list[dict]) -> dict[str, tuple[float, float, float]]:
    """(pass_rate_i, mean_i, duration_i) per scored instance, by numpy grouping."""
    scored = [r for r in rows if r["score"] is not None]
    keys = np.array([r["instance"] for r in scored])
    scores = np.array([r["score"] for r in scored])
    passes = (scores >= 0.5).astype(float)
    durations = np.array([r["duration_s"] for r in scored])
    out = {}
    for key in np.unique(keys):
        mask = keys == key
        out[str(key)] = (passes[mask].mean(), scores[mask].mean(), durations[mask].mean())
    return out


def _t_figures(values: np.ndarray, clusters: list | None = None) -> tuple[float, float, float, float, float]:
    """(mean, se, low, high, df) by numpy and scipy, plain or cluster-robust (CR2, BM df)."""
    m = values.mean()
    if clusters is None:
        se, df = values.std(ddof=1) / math.sqrt(len(values)), len(values) - 1
    else:
        se, df = _cr2_bm(values, clusters)
    half = sp.t.ppf(0.975, df) * se
    return m, se, m - half, m + half, df


def _tested(values: np.ndarray, clusters: list | None, lo: float, hi: float, p: float
            ) -> tuple[float, float, float]:
    """(low, high, p) of a tested difference: t's as given without clusters; with them the wild
    cluster bootstrap's, by numpy over every Webb weight vector (5 clusters: 6^5 of them)."""
    if clusters is None:
        return lo, hi, p
    weights = _webb_vectors(len(set(clusters)))
    low, high = _wcr_interval_numpy(values, clusters, weights)
    return low, high, _wcr_p_numpy(values, clusters, weights, 0.0)


def _close(a, b) -> bool:
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("clustered", [False, True])
def test_figures_match_numpy_and_scipy(seed, clustered):
    rng = random.Random(seed)
    repos = ["alpha", "beta", "gamma", "delta", "eps"]
    shared = [f"{rng.choice(repos)}__x-{k}" for k in range(rng.randint(12, 60))]
    shared = sorted(set(shared))
    base_rows = _random_group(rng, "A", shared + ["only__a-1", "only__a-2"])
    cands = [_random_group(rng, name, shared[: len(shared) - 2] + ["only__b-1"]) for name in ("B", "C", "D")]
    regex = "^(.+?)__" if clustered else None
    results = compare_groups([("A", base_rows), *zip("BCD", cands, strict=True)], metric="m",
                             pass_threshold=0.5, unit="u", costs=["duration_s"], cluster=regex)

    def cluster_of(keys):
        return [k.split("__")[0] for k in keys] if clustered else None

    a = _numpy_instances(base_rows)
    raw_p = []
    for r, cand_rows in zip(results, cands, strict=True):
        b = _numpy_instances(cand_rows)
        paired = sorted(set(a) & set(b))
        for g, inst in zip(r["groups"], (a, b), strict=True):
            keys = sorted(inst)
            for col, (figure, interval, paired_figure) in enumerate(
                    (("pass_rate", "pass_rate_ci95", "paired_pass_rate"), ("mean", "mean_ci95", "paired_mean"))):
                values = np.array([inst[k][col] for k in keys])
                m, _, lo, hi, _ = _t_figures(values, cluster_of(keys))
                assert g["instances"] == len(inst)
                assert g["clusters"] == (len(set(cluster_of(keys))) if clustered else len(keys))
                assert _close(g[figure], m) and _close(g[interval][0], lo) and _close(g[interval][1], hi)
                assert _close(g[paired_figure], np.mean([inst[k][col] for k in paired]))
        p = r["paired"]
        d = np.array([b[k][0] - a[k][0] for k in paired])
        m, se, lo, hi, df = _t_figures(d, cluster_of(paired))
        assert _close(p["df"], df) and _close(p["se"], se) and _close(p["pass_rate_difference"], m)
        lo, hi, p_value = _tested(d, cluster_of(paired), lo, hi, 2 * sp.t.sf(abs(m) / se, df))
        assert _close(p["ci95"][0], lo) and _close(p["ci95"][1], hi)
        assert _close(p["p_value"], p_value)
        assert p["mde"] == pytest.approx(_mde_factor(df) * se, rel=1e-8)
        up, down = int((d > 0).sum()), int((d < 0).sum())
        assert (p["improved"], p["regressed"], p["unchanged"]) == (up, down, int((d == 0).sum()))
        if clustered:  # the sign test of the clusters' mean changes: they are the independent units
            names = cluster_of(paired)
            sums = [d[[i for i, k in enumerate(names) if k == c]].sum() for c in sorted(set(names))]
            up, down = sum(1 for x in sums if x > 1e-12), sum(1 for x in sums if x < -1e-12)
        assert _close(p["sign_test_p"], sp.binomtest(up, up + down, 0.5).pvalue if up + down else 1.0)
        raw_p.append(p["p_value"])
        dm = np.array([b[k][1] - a[k][1] for k in paired])
        m, se, lo, hi, df = _t_figures(dm, cluster_of(paired))
        lo, hi, p_value = _tested(dm, cluster_of(paired), lo, hi, 2 * sp.t.sf(abs(m) / se, df))
        assert _close(p["mean_difference"], m) and _close(p["mean_difference_p_value"], p_value)
        assert _close(p["mean_difference_ci95"][0], lo) and _close(p["mean_difference_ci95"][1], hi)
        cost = r["costs"]["duration_s"]
        dc = np.array([b[k][2] - a[k][2] for k in paired])
        m, se, lo, hi, df = _t_figures(dc, cluster_of(paired))
        lo, hi, p_value = _tested(dc, cluster_of(paired), lo, hi, 2 * sp.t.sf(abs(m) / se, df))
        assert _close(cost["difference"], m) and _close(cost["se"], se)
        assert _close(cost["ci95"][0], lo) and _close(cost["ci95"][1], hi)
        assert _close(cost["p_value"], p_value)
        assert _close(cost["baseline_mean"], np.mean([a[k][2] for k in paired]))
        changed = {e["instance"]: e["difference"] for e in r["instances"]}
        assert changed == {k: pytest.approx(b[k][0] - a[k][0]) for k in paired if b[k][0] != a[k][0]}
        assert r["only_baseline"] == sorted(set(a) - set(b))
        assert r["only_candidate"] == sorted(set(b) - set(a))
    # Holm over the three candidates
    adjusted = _holm_by_definition(raw_p)
    for r, expected in zip(results, adjusted, strict=True):
        assert r["paired"]["p_value_adjusted"] == pytest.approx(expected, rel=1e-9)
        p = r["paired"]
        assert p["verdict"] == ("inconclusive" if expected >= 0.05 else
                                "better" if p["pass_rate_difference"] > 0 else "worse")


def test_several_candidates_are_adjusted_together():
    results = hand_results(candidates=3)
    raw = [r["paired"]["p_value"] for r in results]
    assert raw[0] == raw[1] == raw[2]  # three identical candidates
    assert [r["paired"]["p_value_adjusted"] for r in results] == [pytest.approx(min(1.0, 3 * raw[0]))] * 3
    assert results[0]["costs"]["duration_s"]["p_value_adjusted"] == pytest.approx(
        min(1.0, 3 * results[0]["costs"]["duration_s"]["p_value"]))
    assert "Holm-adjusted over 3 candidates" in results[0]["summary"]


# ------------------------------------------------------------- properties
def _rows(gid: str, table: dict[str, list[float]], **extra) -> list[dict]:
    return [{"job_id": f"{gid}-{inst}-{k}", "instance": inst, "score": s, "pass": s >= 0.5,
             "status": "succeeded" if s >= 0.5 else "failed", **extra}
            for inst, scores in table.items() for k, s in enumerate(scores)]


def test_paired_difference_is_the_difference_of_means_on_the_same_instances():
    rng = random.Random(3)
    base = {f"i{k}": [rng.random() for _ in range(3)] for k in range(30)}
    cand = {f"i{k}": [rng.random() for _ in range(2)] for k in range(30)}
    [r] = compare_groups([("A", _rows("A", base)), ("B", _rows("B", cand))], metric="m",
                         pass_threshold=0.5, unit="u")
    g_a, g_b = r["groups"]
    assert r["paired"]["pass_rate_difference"] == pytest.approx(g_b["pass_rate"] - g_a["pass_rate"])
    assert r["paired"]["mean_difference"] == pytest.approx(g_b["mean"] - g_a["mean"])
    assert (g_a["paired_pass_rate"], g_b["paired_mean"]) == (g_a["pass_rate"], g_b["mean"])


def test_standard_error_shrinks_as_one_over_sqrt_n():
    rng = random.Random(5)
    base = {f"i{k}": [rng.random()] for k in range(20)}
    cand = {f"i{k}": [rng.random()] for k in range(20)}

    def se(copies: int) -> tuple[float, float]:
        b = {f"{k}/{c}": v for c in range(copies) for k, v in base.items()}
        c_ = {f"{k}/{c}": v for c in range(copies) for k, v in cand.items()}
        [r] = compare_groups([("A", _rows("A", b)), ("B", _rows("B", c_))], metric="m",
                             pass_threshold=0.5, unit="u")
        return r["paired"]["mean_difference_se"], r["paired"]["df"]

    (one, df1), (four, df4) = se(1), se(4)
    # n instances repeated 4 times: SS becomes 4 SS, so se_4 / se_1 = sqrt((n - 1) / (4n - 1)) ~ 1/2
    assert four / one == pytest.approx(math.sqrt(19 / 79), rel=1e-9)
    assert (df1, df4) == (19, 79)


def test_order_of_rows_does_not_change_any_figure():
    jobs, metrics = payloads("G1", HAND_BASELINE)
    cjobs, cmetrics = payloads("G2", HAND_CANDIDATE)
    rows_a, rows_b = table_rows("G1", jobs, metrics), table_rows("G2", cjobs, cmetrics)
    first = compare_groups([("G1", rows_a), ("G2", rows_b)], metric="m", pass_threshold=0.5, unit="u",
                           costs=COSTS, cluster="^(i)[12]$")
    rng = random.Random(11)
    for _ in range(5):
        a, b = rows_a[:], rows_b[:]
        rng.shuffle(a)
        rng.shuffle(b)
        again = compare_groups([("G1", a), ("G2", b)], metric="m", pass_threshold=0.5, unit="u",
                               costs=COSTS, cluster="^(i)[12]$")
        for x in (first, again):
            for e in x[0]["instances"]:
                e["baseline"]["jobs"].sort()
                e["candidate"]["jobs"].sort()
        assert again == first


# -------------------------------------------------------------- edge cases
def test_no_scored_instance_gives_nulls_not_a_crash():
    rows = [{"job_id": "A-1", "instance": "i1", "score": None, "pass": None}]
    [r] = compare_groups([("A", rows), ("B", [])], metric="m", pass_threshold=0.5, unit="u",
                         costs=["duration_s"])
    for g in r["groups"]:
        assert (g["instances"], g["pass_rate"], g["pass_rate_ci95"], g["mean"], g["mean_ci95"],
                g["paired_pass_rate"]) == (0, None, None, None, None, None)
    p = r["paired"]
    assert (p["instances"], p["pass_rate_difference"], p["se"], p["ci95"], p["p_value"], p["p_value_adjusted"],
            p["mde"], p["verdict"], p["sign_test_p"]) == (0, None, None, None, None, None, None, "inconclusive", 1.0)
    assert r["costs"]["duration_s"]["ci95"] is None and r["costs"]["duration_s"]["instances"] == 0
    assert r["summary"].startswith("B cannot be compared with A: no instance is scored in both")


def test_one_instance_has_a_mean_but_no_interval():
    a = [{"job_id": "A-1", "instance": "i1", "score": 0.2, "pass": False}]
    b = [{"job_id": "B-1", "instance": "i1", "score": 0.9, "pass": True}]
    [r] = compare_groups([("A", a), ("B", b)], metric="m", pass_threshold=0.5, unit="u")
    assert r["groups"][0]["pass_rate"] == 0.0 and r["groups"][0]["pass_rate_ci95"] is None
    p = r["paired"]
    assert p["pass_rate_difference"] == 1.0 and p["mean_difference"] == pytest.approx(0.7)
    assert (p["se"], p["ci95"], p["p_value"], p["mean_difference_ci95"], p["mde"]) == (None,) * 5
    assert p["verdict"] == "inconclusive" and p["improved"] == 1
    assert r["summary"] == "B cannot be compared with A: 1 paired instance (at least 2 are needed)"


@pytest.mark.parametrize(("n", "delta", "expected_p"), [
    (2, 1.0, 0.5), (3, 1.0, 0.25), (3, -1.0, 0.25), (4, 0.0, 1.0), (8, 1.0, 2 / 2 ** 8)])
def test_zero_spread_takes_the_sign_test_never_zero(n, delta, expected_p):
    def group(gid: str, passed: bool) -> list[dict]:
        return [{"job_id": f"{gid}-{k}", "instance": f"i{k}", "score": float(passed), "pass": passed}
                for k in range(n)]

    a, b = group("A", delta < 0), group("B", delta > 0)
    [r] = compare_groups([("A", a), ("B", b)], metric="m", pass_threshold=0.5, unit="u")
    p = r["paired"]
    assert p["se"] == 0.0 and p["mde"] == 0.0
    assert p["ci95"] == [delta, delta]
    assert p["p_value"] == p["sign_test_p"] == expected_p
    assert p["verdict"] == ("inconclusive" if expected_p >= 0.05 else "better")
    # every instance passes or fails in both trials of a group: the group SE is 0 too
    assert r["groups"][0]["pass_rate_ci95"] == [r["groups"][0]["pass_rate"]] * 2
    if n == 3:
        assert "all 3 instances changed by" in r["summary"] and "sign test p 0.250" in r["summary"]


def test_all_equal_values_give_exactly_zero_spread():
    # 0.1 * 3 / 3 is not exactly 0.1 in floating point; equal values are detected instead.
    assert sample_sd([0.1, 0.1, 0.1]) == 0.0
    assert estimates.mean([0.1, 0.1, 0.1]) == 0.1
    assert sample_sd([0.7]) is None and estimates.mean([]) is None
    assert clustered_se([0.1, 0.1, 0.1], ["a", "a", "b"]) == (0.0, 2)


@pytest.mark.parametrize("value,expected", [
    (0.85, (0.85, True)), (0.5, (0.5, True)), (0.49, (0.49, False)),
    ("0.85", (0.85, True)), (" 1 ", (1.0, True)), ("0", (0.0, False)), (1, (1.0, True)),
    (True, (1.0, True)), (False, (0.0, False)), ("true", (1.0, True)), ("FALSE", (0.0, False)),
    ([0.7], (0.7, True)), ([True], (1.0, True)),
    (None, (None, None)), ("n/a", (None, None)), ("nan", (None, None)), (float("inf"), (None, None)),
    ("-inf", (None, None)), ({"score": 1}, (None, None)), ([0.1, 0.9], (None, None)), ([], (None, None)),
    (10 ** 400, (None, None)), (-(10 ** 400), (None, None)), ("1" * 400, (None, None)), ("1e400", (None, None)),
])
def test_score_and_pass(value, expected):
    assert score_and_pass(value, 0.5) == expected


def test_numbers_too_big_for_a_float_are_not_numbers():
    assert as_number(10 ** 400) is None and too_big(10 ** 400) and too_big([10 ** 400])
    assert as_number(2 ** 1023) == 2 ** 1023 and not too_big(2 ** 1023)
    assert too_big("1" * 400) and too_big(" -1e400 ") and too_big(float("inf"))
    assert not too_big("inf") and not too_big("nan") and not too_big("abc") and not too_big(None)
    assert not too_big(True) and not too_big(1.5)


def test_a_big_number_anywhere_is_counted_not_scored():
    rows = [{"job_id": "A-1", "instance": "i1", "score": 0.7, "pass": True, "duration_s": 10 ** 400},
            {"job_id": "A-2", "instance": "i2", "score": 0.2, "pass": False, "duration_s": "9" * 400},
            {"job_id": "A-3", "instance": "i2", "score": None, "pass": None, "status": "succeeded"}]
    [r] = compare_groups([("A", rows), ("B", rows)], metric="m", pass_threshold=0.5, unit="u",
                         costs=["duration_s"], outcome_statuses=OUTCOMES)
    assert r["costs"]["duration_s"]["instances"] == 0
    assert r["groups"][0]["jobs"] == 3 and r["groups"][0]["jobs_scored"] == 2
    assert "A: 1 of 3 jobs have no score (1 succeeded without a score)" in r["warnings"][0]


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10 ** 500), max_value=10 ** 500),
                         st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                         st.sampled_from(["1e400", "-1e999", "0.5", " 7 ", "nan", "Infinity", "1_0", "0x1"]))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["i1", "i2", "i3", None]), JSON_VALUES, JSON_VALUES,
                          st.sampled_from(["succeeded", "failed", "running", None])), max_size=12),
       st.lists(st.tuples(st.sampled_from(["i1", "i2", "i3"]), JSON_VALUES, JSON_VALUES), max_size=12))
def test_no_metric_or_cost_value_breaks_a_comparison(base, cand):
    """Whatever the backend sends as a score or a cost, the figures are computed (no exception)."""
    columns = [{"name": "job_id", "from": "job.job_id", "type": "string"},
               {"name": "status", "from": "job.status", "type": "string"},
               {"name": "instance", "from": "instance", "type": "string"},
               {"name": "score", "from": "score", "type": "number"},
               {"name": "pass", "from": "pass", "type": "boolean"},
               {"name": "cost", "from": "metrics.cost", "type": "number"}]
    groups = []
    for gid, entries in (("A", base), ("B", [(*e, "failed") for e in cand])):
        jobs = [{"job_id": f"{gid}-{k}", "instance_id": inst, "status": status}
                for k, (inst, _, _, status) in enumerate(entries)]
        metrics = [{"job_id": f"{gid}-{k}", "metrics": [{"type": "eval", "data": {"task_score": score}}],
                    "cost": cost} for k, (_, score, cost, _) in enumerate(entries)]
        groups.append((gid, table_rows(gid, jobs, metrics, columns=columns)))
    results = compare_groups(groups, metric="metrics[?type=='eval'].data.task_score | [0]", pass_threshold=0.5,
                             unit="instance_id", costs=["cost"], cluster="^(i)", by="u",
                             outcome_statuses=OUTCOMES)
    json.dumps(results, allow_nan=False)
    per_instance(groups, cluster="^(i)")


def test_boolean_metric_passes_when_true_whatever_the_threshold():
    assert score_and_pass(True, 2.0) == (1.0, True)
    assert score_and_pass(False, -1.0) == (0.0, False)
    assert score_and_pass(1, 2.0) == (1.0, False)  # the number 1 is a score, not a boolean


def test_a_boolean_metric_end_to_end():
    jobs, metrics = payloads("G1", HAND_BASELINE)
    for element in metrics:
        for m in element["metrics"]:
            m["data"]["resolved"] = bool(float(m["data"]["task_score"]) >= 0.7)
    rows = table_rows("G1", jobs, metrics, metric="metrics[?type=='eval'].data.resolved")
    scored = [r for r in rows if r["score"] is not None]
    assert {r["score"] for r in scored} == {0.0, 1.0}
    assert all(r["pass"] == (r["score"] == 1.0) for r in scored)
    assert table_rows("G1", jobs, metrics, metric="metrics[?type=='eval'].data.resolved",
                      pass_threshold=100) == rows


def test_compare_needs_two_groups():
    with pytest.raises(ValueError, match="at least two groups"):
        compare_groups([("A", [])], metric="m", pass_threshold=0.5, unit="u")


def test_every_candidate_is_compared_with_the_first_group():
    rows = _rows("A", {"i1": [1.0], "i2": [0.0]})
    out = compare_groups([("A", rows), ("B", rows), ("C", rows)], metric="m", pass_threshold=0.5, unit="u")
    assert [(r["baseline"], r["candidate"]) for r in out] == [("A", "B"), ("A", "C")]
    assert out[0]["paired"]["pass_rate_difference"] == 0.0 and out[0]["paired"]["p_value"] == 1.0


# ------------------------------------------------------------------ slices
def test_a_slice_is_the_comparison_of_its_jobs_alone():
    rng = random.Random(8)
    base, cand = [], []
    for rows, gid in ((base, "A"), (cand, "B")):
        for k in range(60):
            score = rng.random()
            rows.append({"job_id": f"{gid}-{k}", "instance": f"r{k % 5}__i{k % 20}", "score": score,
                         "pass": score >= 0.5, "status": "failed", "slice": ["t1", "t2", "t3", None][k % 4]})
    [r] = compare_groups([("A", base), ("B", cand)], metric="m", pass_threshold=0.5, unit="u", by="template",
                         cluster="^(.+?)__")
    assert [s["key"] for s in r["slices"]] == ["t1", "t2", "t3", None]
    raw = []
    for s in r["slices"]:
        only_b = [row for row in base if row["slice"] == s["key"]]
        only_c = [row for row in cand if row["slice"] == s["key"]]
        [alone] = compare_groups([("A", only_b), ("B", only_c)], metric="m", pass_threshold=0.5, unit="u",
                                 cluster="^(.+?)__")
        assert (s["baseline_jobs"], s["candidate_jobs"]) == (len(only_b), len(only_c))
        for name in ("instances", "clusters", "pass_rate_difference", "se", "ci95", "p_value", "sign_test_p", "mde",
                     "mean_difference", "mean_difference_ci95", "improved", "regressed", "unchanged"):
            assert s["paired"][name] == alone["paired"][name], name
        raw.append(s["paired"]["p_value"])
    assert [s["paired"]["p_value_adjusted"] for s in r["slices"]] == pytest.approx(_holm_by_definition(raw))
    # without --by there are none
    assert compare_groups([("A", base), ("B", cand)], metric="m", pass_threshold=0.5, unit="u")[0]["slices"] == []


# ---------------------------------------------------------- per instance
def test_per_instance_rows_cover_every_paired_instance():
    groups = []
    for gid, table in (("G1", HAND_BASELINE), ("G2", HAND_CANDIDATE), ("G3", HAND_BASELINE)):
        jobs, metrics = payloads(gid, table)
        groups.append((gid, table_rows(gid, jobs, metrics)))
    rows = per_instance(groups, cluster="^(i)[12]$")
    assert [(r["candidate"], r["instance"]) for r in rows] == [
        ("G2", f"i{k}") for k in range(1, 6)] + [("G3", f"i{k}") for k in range(1, 7)]
    assert list(rows[0]) == list(stats.PER_INSTANCE_COLUMNS)
    assert rows[0] == {"baseline": "G1", "candidate": "G2", "instance": "i1", "cluster": "i",
                       "baseline_pass_rate": 0.5, "candidate_pass_rate": 1.0, "difference": 0.5,
                       "baseline_mean": 0.5, "candidate_mean": 1.0, "mean_difference": 0.5,
                       "baseline_jobs": 3, "candidate_jobs": 2,
                       # 1 of 2 against 2 of 2: Fisher's p is 1; 3 passes of 4 never split evenly
                       "p_value": 1.0, "q_value": 1.0, "beyond_noise": False, "aa_changed": 1.0}
    assert rows[2]["cluster"] == "i3"  # not matched: the instance is its own cluster
    assert per_instance(groups)[0]["cluster"] is None  # no --cluster


# ---------------------------------------------------------------- caveats
def test_the_issues_example_of_different_instance_sets():
    # A baseline of 100 instances against a candidate that ran only 10 easy ones.
    base = {f"i{k}": [1.0 if k < 10 else (1.0 if k % 2 else 0.0)] for k in range(100)}
    base.update({f"i{k}": [1.0] for k in range(10)})
    cand = {f"i{k}": [1.0] for k in range(10)}
    [r] = compare_groups([("BASE", _rows("BASE", base)), ("CAND", _rows("CAND", cand))], metric="m",
                         pass_threshold=0.5, unit="u", outcome_statuses=OUTCOMES)
    g_b, g_c = r["groups"]
    assert g_b["pass_rate"] < 0.6 and g_c["pass_rate"] == 1.0
    assert g_b["paired_pass_rate"] == g_c["paired_pass_rate"] == 1.0  # like for like
    assert any("scored different instances (not paired: 90 of BASE's 100, 0 of CAND's 10)" in w
               for w in r["warnings"])


def test_warnings_name_the_status_filter_and_a_degenerate_threshold():
    rows = _rows("A", {"i1": [0.7], "i2": [0.9]})
    [r] = compare_groups([("A", rows), ("B", rows)], metric="m", pass_threshold=0.0, unit="u",
                         status="succeeded", outcome_statuses=OUTCOMES)
    assert r["warnings"] == [
        "--status succeeded keeps only jobs with that outcome: every pass rate is biased (leave --status out "
        "to compare every finished job)",
        "at --pass-threshold 0, every scored job of A and B passes: the pass rates cannot differ (choose a "
        "threshold inside the range of the scores)"]
    rows = [dict(row, **{"pass": False}) for row in rows]  # as job_rows makes them at threshold 1
    [r] = compare_groups([("A", rows), ("B", rows)], metric="m", pass_threshold=1.0, unit="u",
                         status="running", outcome_statuses=OUTCOMES)
    assert r["warnings"] == ["at --pass-threshold 1, no scored job of A and B passes: the pass rates cannot "
                             "differ (choose a threshold inside the range of the scores)"]


def test_problems_name_the_option_the_expression_and_the_group():
    unscored = gather("CAND", [{"job_id": "J1", "instance": "i1", "score": None, "status": "succeeded"},
                               {"job_id": "J2", "instance": "i1", "score": None, "status": "running"}])
    unkeyed = gather("BASE", [{"job_id": "J1", "instance": None, "score": 0.5}])
    empty = gather("EMPTY", [])
    fine = gather("OK", [{"job_id": "J1", "instance": "i1", "score": 0.5}])
    found = caveats.problems([fine, unscored, unkeyed, empty], metric="metrics.x", unit="job.y",
                             filters=" with --status failed")
    assert [gid for gid, _ in found] == ["CAND", "BASE", "EMPTY"]
    assert found[0][1] == ("--metric metrics.x gives no score for any job of group CAND (1 running, 1 succeeded)\n"
                           "  hint: --metric is JMESPath on a job's metrics element; see one with "
                           "bl metrics get -j JOB_ID (a job of CAND)")
    assert found[1][1].startswith("--unit job.y gives no instance for any job of group BASE\n  hint: --unit is")
    assert found[2][1].startswith("group EMPTY has no job with --status failed: nothing to compare\n"
                                  "  hint: check the group id and the filters")
    assert caveats.problems([fine], metric="m", unit="u") == []


def test_docs_define_every_field():
    """docs/compare.md names every field a comparison has (and the per-instance columns)."""

    text = (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")
    r = hand_result(by="x", cluster="^(i)[12]$")
    fields = {*r, *r["groups"][0], *r["paired"], *r["costs"]["duration_s"], *r["slices"][0],
              *r["cluster_differences"][0], *stats.PER_INSTANCE_COLUMNS}
    missing = [f for f in sorted(fields) if not re.search(rf"[`.{{]{re.escape(f)}[`\[,}}]", text)]
    assert not missing, missing


# --------------------------------------------------- consistency of figures
def _rows(gid: str, trials: dict[str, list[int]], slice_of=None) -> list[dict]:
    rows = []
    for inst, passes in trials.items():
        for j, passed in enumerate(passes):
            rows.append({"job_id": f"{gid}-{inst}-{j}", "instance": inst, "score": float(passed),
                         "pass": bool(passed), "status": "failed",
                         "slice": None if slice_of is None else slice_of(inst)})
    return rows


def test_a_difference_left_by_rounding_is_zero():
    # pass rates 1/3 -> 0 and 2/3 -> 1: the float differences sum to 2.8e-17, not 0
    assert math.fsum([0 - 1 / 3, 1 - 2 / 3]) / 2 != 0
    base = _rows("A", {"a": [1, 0, 0], "b": [1, 1, 0]})
    cand = _rows("B", {"a": [0, 0, 0], "b": [1, 1, 1]})
    [r] = compare_groups([("A", base), ("B", cand)], metric="m", pass_threshold=0.5, unit="u")
    p = r["paired"]
    assert p["pass_rate_difference"] == 0.0 and p["mean_difference"] == 0.0
    assert p["ci95"][0] == -p["ci95"][1]
    assert "+0.0 pp" in r["summary"] and "e-17" not in json.dumps(r)


@pytest.mark.parametrize("cluster", [None, "^(.+?)__"])
def test_slice_intervals_are_adjusted_like_their_verdicts(cluster):
    rng = random.Random(21)
    trials_b, trials_c = {}, {}
    for k in range(90):
        inst = f"r{(k // 3) % 9}__i{k}"  # every slice has all 9 clusters
        p = rng.choice((0.1, 0.3, 0.5))
        trials_b[inst] = [int(rng.random() < p) for _ in range(4)]
        trials_c[inst] = [int(rng.random() < p + (0.5 if k % 3 == 0 else 0.0)) for _ in range(4)]

    def slice_of(inst: str) -> str:
        return f"t{int(inst.rsplit('i', 1)[1]) % 3}"
    [r] = compare_groups([("A", _rows("A", trials_b, slice_of)), ("B", _rows("B", trials_c, slice_of))],
                         metric="m", pass_threshold=0.5, unit="u", by="template", cluster=cluster)
    k = len(r["slices"])
    assert k == 3
    for s in r["slices"]:
        p = s["paired"]
        low, high = p["ci95_adjusted"]
        if cluster is None:  # Bonferroni: t at level 1 - 0.05/3
            half = sp.t.ppf(1 - 0.05 / k / 2, p["df"]) * p["se"]
            assert (low, high) == (approx(p["pass_rate_difference"] - half), approx(p["pass_rate_difference"] + half))
        assert low <= p["ci95"][0] and p["ci95"][1] <= high  # wider than the unadjusted one
        if low > 0 or high < 0:  # an adjusted interval that excludes 0 never sits beside "inconclusive"
            assert p["verdict"] in ("better", "worse")
        # and Bonferroni's p-value below 0.05 means Holm's is too
        if min(1.0, k * p["p_value"]) < 0.05:
            assert p["p_value_adjusted"] < 0.05
    assert any(s["paired"]["verdict"] == "better" for s in r["slices"])  # the test has something to check
    # one candidate: ci95_adjusted of the comparison itself is ci95
    assert r["paired"]["ci95_adjusted"] == r["paired"]["ci95"]


def test_the_sign_test_counts_clusters_under_cluster():
    # 3 clusters: two whose instances all improved (4 each), one whose 4 regressed
    base = _rows("A", {f"{c}__{i}": [0] if c != "z" else [1] for c in "xyz" for i in range(4)})
    cand = _rows("B", {f"{c}__{i}": [1] if c != "z" else [0] for c in "xyz" for i in range(4)})
    [plain] = compare_groups([("A", base), ("B", cand)], metric="m", pass_threshold=0.5, unit="u")
    [clustered] = compare_groups([("A", base), ("B", cand)], metric="m", pass_threshold=0.5, unit="u",
                                 cluster="^(.+?)__")
    assert plain["paired"]["sign_test_p"] == pytest.approx(sp.binomtest(8, 12, 0.5).pvalue)
    assert clustered["paired"]["sign_test_p"] == pytest.approx(sp.binomtest(2, 3, 0.5).pvalue) == 1.0


def test_few_clusters_are_warned_about_with_their_effective_number():
    sizes = {"django": 24, "astropy": 4, "flask": 3, "sympy": 3}
    trials = {f"{repo}__{i}": [i % 2] for repo, n in sizes.items() for i in range(n)}
    flipped = {k: [1 - v[0]] if k.endswith("__1") else v for k, v in trials.items()}
    [r] = compare_groups([("A", _rows("A", trials)), ("B", _rows("B", flipped))], metric="m",
                         pass_threshold=0.5, unit="u", cluster="^(.+?)__")
    p = r["paired"]
    assert p["effective_clusters"] == approx(estimates.bell_mccaffrey_df(list(sizes.values())) + 1)
    assert p["effective_clusters"] < 4
    [line] = [w for w in r["warnings"] if w.startswith("--cluster:")]
    assert "34 paired instances form 4 clusters" in line and "largest (django) holds 24" in line
    assert f"{p['effective_clusters']:.1f}" in line and f"in 4 clusters, effectively {p['effective_clusters']:.1f} (" in r["summary"]
    # 20 equal clusters: no warning
    many = {f"r{c}__{i}": [i % 2] for c in range(20) for i in range(3)}
    [quiet] = compare_groups([("A", _rows("A", many)), ("B", _rows("B", many))], metric="m",
                             pass_threshold=0.5, unit="u", cluster="^(.+?)__")
    assert not [w for w in quiet["warnings"] if w.startswith("--cluster:")]
    assert quiet["paired"]["effective_clusters"] == 20.0


def test_margin_gives_an_equivalence_statement_from_tost():
    from statsmodels.stats.weightstats import ttost_paired
    rng = random.Random(3)
    trials = {f"i{k}": [int(rng.random() < 0.5) for _ in range(4)] for k in range(400)}
    same = {k: list(v) for k, v in trials.items()}
    for k in list(same)[:20]:
        same[k] = [1 - x for x in same[k]]
    groups = [("A", _rows("A", trials)), ("B", _rows("B", same))]
    [wide] = compare_groups(groups, metric="m", pass_threshold=0.5, unit="u", margin=0.05)
    [narrow] = compare_groups(groups, metric="m", pass_threshold=0.5, unit="u", margin=0.001)
    keys = sorted(trials)
    b = np.array([np.mean(trials[k]) for k in keys])
    c = np.array([np.mean(same[k]) for k in keys])
    for r, margin in ((wide, 0.05), (narrow, 0.001)):
        p = r["paired"]
        assert p["margin"] == margin == r["margin"]
        assert p["tost_p"] == pytest.approx(ttost_paired(c, b, -margin, margin)[0], rel=1e-8)
        assert p["equivalent"] == (-margin < p["ci90"][0] and p["ci90"][1] < margin)
    assert wide["paired"]["equivalent"] and not narrow["paired"]["equivalent"]
    assert "is equivalent to A: no change larger than ±5.0 pp: the 90% interval" in wide["summary"]
    assert "a change of ±0.1 pp is not ruled out" in narrow["summary"]
    [none] = compare_groups(groups, metric="m", pass_threshold=0.5, unit="u")
    assert (none["paired"]["margin"], none["paired"]["tost_p"], none["paired"]["equivalent"]) == (None,) * 3
    with pytest.raises(ValueError, match="margin"):
        compare_groups(groups, metric="m", pass_threshold=0.5, unit="u", margin=0.0)


def test_two_clusters_give_no_finite_bootstrap_interval_and_every_rendering_says_so():
    from benchloop.compare import html_report, markdown, terminal
    # 2 clusters: Webb's 36 weight vectors give a p-value of at least 2/36 for every value,
    # so the bootstrap rejects none: the interval is unbounded, the verdict inconclusive
    base = _rows("A", {f"{c}__{i}": [0] for c in "xy" for i in range(10)})
    cand = _rows("B", {f"{c}__{i}": [int(i < (8 if c == "x" else 6))] for c in "xy" for i in range(10)})
    [r] = compare_groups([("A", base), ("B", cand)], metric="m", pass_threshold=0.5, unit="u",
                         cluster="^(.+?)__", by="template", costs=[])
    p = r["paired"]
    assert p["se"] > 0 and p["ci95"] is None and p["verdict"] == "inconclusive"
    assert "[no finite 95% interval]" in r["summary"]
    # two clusters with equal means: no spread at all, the sign test of the clusters
    same = _rows("B", {f"{c}__{i}": [int(i < 8)] for c in "xy" for i in range(10)})
    [flat] = compare_groups([("A", base), ("B", same)], metric="m", pass_threshold=0.5, unit="u",
                            cluster="^(.+?)__")
    assert flat["paired"]["se"] == 0.0 and flat["paired"]["p_value"] == 0.5 == flat["paired"]["sign_test_p"]
    json.dumps(r, allow_nan=False)
    for text in (terminal.render([r]), markdown.render([r]), html_report.render([r])):
        assert "inf" not in text.replace("info", "")


def test_the_bootstrap_interval_is_unbounded_only_when_no_value_is_rejected():
    from benchloop.compare.wildboot import WildBootstrap
    rng = random.Random(2)
    for g, bounded in ((2, False), (3, True), (4, True)):
        names = [f"c{i % g}" for i in range(30)]
        values = [rng.choice([0.0, 1.0, 1.0, 0.5]) for _ in names]
        low, high = WildBootstrap.of(values, names).interval()
        assert (math.isfinite(low) and math.isfinite(high)) == bounded
        est = Estimate.of(values, names, bootstrap=True)
        assert (est.ci95 is not None) == bounded
        if bounded:
            assert est.ci95 == [approx(x) for x in _wcr_interval_numpy(np.array(values), names, _webb_vectors(g))]
