"""The figures of ``bl compare`` (benchloop.compare.stats) against the definitions.

Three kinds of evidence:

* the worked example of compare_cases.HAND, every figure checked against a
  value computed by hand (the arithmetic is in the comments);
* an independent computation with numpy and scipy on random data (groupby by
  numpy, sample SD by ``ddof=1``, the p-value by ``scipy.stats.norm``);
* the properties the method implies (pairing on identical instances gives
  the difference of means; the CI shrinks as 1/sqrt(n); order of rows does
  not matter) and every edge case the module documents.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from compare_cases import HAND_BASELINE, HAND_CANDIDATE, job_id, payloads, table_rows
from scipy import stats as sp

from benchloop.compare import stats
from benchloop.compare.stats import compare_groups, p_value, sample_sd, score_and_pass

COSTS = ["duration_s", "tool_error_count"]


def hand_result() -> dict:
    groups = []
    for gid, table in (("G1", HAND_BASELINE), ("G2", HAND_CANDIDATE)):
        jobs, metrics = payloads(gid, table)
        groups.append((gid, table_rows(gid, jobs, metrics)))
    [result] = compare_groups(groups, metric="m", pass_threshold=0.5, unit="instance_id", costs=COSTS)
    return result


def approx(value, rel=1e-5, abs=1e-6):
    return pytest.approx(value, rel=rel, abs=abs)


# ----------------------------------------------------------- worked example
def test_hand_example_baseline_group():
    g = hand_result()["groups"][0]
    # 14 jobs; scored: 1-11 and 14 (12 is running, 13 cancelled without a metric) = 12.
    # Scored instances: i1..i6 (i8's only job is unscored; job 14 has no instance) = 6.
    assert (g["group_id"], g["jobs"], g["jobs_scored"], g["instances"]) == ("G1", 14, 12, 6)
    # pass_rate_i = [.5, 1, 0, .5, .5, 1] -> 3.5 / 6 = 7/12.
    assert g["pass_rate"] == approx(7 / 12)
    # deviations from 7/12 in twelfths: -1, 5, -7, -1, -1, 5 -> SS = 102/144; var = SS/5;
    # SE = sqrt(var/6) = sqrt(102/4320) = 0.153659; 1.96 SE = 0.301172.
    assert g["pass_rate_ci95"] == [approx(0.282162), approx(0.884505)]
    # mean_i = [.5, 1, 0, .4, .6 ('0.4' is a string), 1] -> 3.5 / 6.
    assert g["mean"] == approx(7 / 12)
    # SS = .006944 + .173611 + .340278 + .033611 + .000278 + .173611 = .728333;
    # SE = sqrt(.728333 / 5 / 6) = 0.155813; 1.96 SE = 0.305393.
    assert g["mean_ci95"] == [approx(0.277940), approx(0.888727)]


def test_hand_example_candidate_group():
    g = hand_result()["groups"][1]
    assert (g["group_id"], g["jobs"], g["jobs_scored"], g["instances"]) == ("G2", 11, 11, 6)
    # pass_rate_i = [1, .5, 0, 1, .5, 0] -> 0.5; SS = 1.0; SE = sqrt(1/5/6) = 0.182574.
    assert g["pass_rate"] == approx(0.5)
    assert g["pass_rate_ci95"] == [approx(0.142155), approx(0.857845)]
    # mean_i = [1, .5, 0, .8, .6, 0] -> 2.9 / 6 = 0.483333; SS = .848333; SE = 0.168160.
    assert g["mean"] == approx(2.9 / 6)
    assert g["mean_ci95"] == [approx(0.153739), approx(0.812927)]


def test_hand_example_paired():
    p = hand_result()["paired"]
    # Paired: i1..i5.  d_i (pass rate) = [.5, -.5, 0, .5, 0]: D = 0.1, SS = .7,
    # se = sqrt(.7/4/5) = sqrt(.035) = 0.187083, 1.96 se = 0.366683,
    # z = 0.534522, Phi(z) = 0.703510 -> p = 2 (1 - Phi) = 0.592980.
    assert p["instances"] == 5
    assert p["pass_rate_difference"] == approx(0.1)
    assert p["se"] == approx(0.187083)
    assert p["ci95"] == [approx(-0.266683), approx(0.466683)]
    assert p["p_value"] == approx(0.592980, abs=2e-6)
    # d_i (mean) = [.5, -.5, 0, .4, 0]: D = .08, SS = .628, se = sqrt(.0314) = 0.177200,
    # 1.96 se = 0.347312, z = 0.451467 -> p = 0.651654.
    assert p["mean_difference"] == approx(0.08)
    assert p["mean_difference_se"] == approx(0.177200)
    assert p["mean_difference_ci95"] == [approx(-0.267312), approx(0.427312)]
    assert p["mean_difference_p_value"] == approx(0.651654, abs=2e-6)
    assert (p["improved"], p["regressed"], p["unchanged"]) == (2, 1, 2)


def test_hand_example_costs():
    c = hand_result()["costs"]
    # duration_s per instance over scored jobs: baseline [15, 20, 40, 10, 20] -> 21,
    # candidate [20, 15, 50, 20, 25] -> 26; d = [5, -5, 10, 10, 5] -> 5, SS = 150,
    # se = sqrt(150/4/5) = 2.738613, 1.96 se = 5.367681.
    assert c["duration_s"] == {"baseline_mean": approx(21), "candidate_mean": approx(26),
                               "difference": approx(5), "ci95": [approx(-0.367681), approx(10.367681)],
                               "instances": 5}
    # every job has one tool error: all d_i = 0, se = 0 -> the CI is the limit [0, 0].
    assert c["tool_error_count"] == {"baseline_mean": 1.0, "candidate_mean": 1.0, "difference": 0.0,
                                     "ci95": [0.0, 0.0], "instances": 5}


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


def test_field_names_are_the_interface():
    r = hand_result()
    assert list(r) == ["baseline", "candidate", "metric", "pass_threshold", "unit", "groups", "paired",
                       "costs", "instances", "only_baseline", "only_candidate"]
    assert list(r["groups"][0]) == ["group_id", "jobs", "jobs_scored", "instances", "pass_rate",
                                    "pass_rate_ci95", "mean", "mean_ci95"]
    assert {"instances", "pass_rate_difference", "se", "ci95", "p_value", "mean_difference",
            "mean_difference_ci95", "improved", "regressed", "unchanged"} <= set(r["paired"])
    assert {"baseline_mean", "candidate_mean", "difference", "ci95"} <= set(r["costs"]["duration_s"])
    assert list(r["instances"][0]) == ["instance", "difference", "baseline", "candidate"]


# ------------------------------------------------ independent computation
def _random_group(rng: random.Random, gid: str, instances: list[str]) -> list[dict]:
    rows, n = [], 0
    for inst in instances:
        for _ in range(rng.randint(1, 4)):
            n += 1
            roll = rng.random()
            score = None if roll < 0.1 else round(rng.random(), 3) if roll < 0.9 else float(rng.randint(0, 1))
            rows.append({"job_id": f"{gid}-{n}", "instance": inst, "score": score,
                         "pass": None if score is None else score >= 0.5,
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


def _ci(values: np.ndarray) -> tuple[float, float, float]:
    m = values.mean()
    se = values.std(ddof=1) / math.sqrt(len(values))
    return m, m - 1.96 * se, m + 1.96 * se


@pytest.mark.parametrize("seed", range(8))
def test_figures_match_numpy_and_scipy(seed):
    rng = random.Random(seed)
    shared = [f"inst-{k}" for k in range(rng.randint(5, 60))]
    base_rows = _random_group(rng, "A", shared + ["only-a-1", "only-a-2"])
    cand_rows = _random_group(rng, "B", shared[: len(shared) - 2] + ["only-b"])
    [r] = compare_groups([("A", base_rows), ("B", cand_rows)], metric="m", pass_threshold=0.5,
                         unit="u", costs=["duration_s"])

    a, b = _numpy_instances(base_rows), _numpy_instances(cand_rows)
    for g, inst in zip(r["groups"], (a, b), strict=True):
        rates = np.array([v[0] for v in inst.values()])
        means = np.array([v[1] for v in inst.values()])
        m, lo, hi = _ci(rates)
        assert g["instances"] == len(inst)
        assert g["pass_rate"] == pytest.approx(m, rel=1e-12)
        assert g["pass_rate_ci95"] == [pytest.approx(lo, rel=1e-9), pytest.approx(hi, rel=1e-9)]
        m, lo, hi = _ci(means)
        assert g["mean"] == pytest.approx(m, rel=1e-12)
        assert g["mean_ci95"] == [pytest.approx(lo, rel=1e-9), pytest.approx(hi, rel=1e-9)]

    paired = sorted(set(a) & set(b))
    for col, diff, ci, p_key in ((0, "pass_rate_difference", "ci95", "p_value"),
                                 (1, "mean_difference", "mean_difference_ci95", "mean_difference_p_value")):
        d = np.array([b[k][col] - a[k][col] for k in paired])
        m, lo, hi = _ci(d)
        se = d.std(ddof=1) / math.sqrt(len(d))
        assert r["paired"][diff] == pytest.approx(m, rel=1e-9, abs=1e-12)
        assert r["paired"][ci] == [pytest.approx(lo, rel=1e-9), pytest.approx(hi, rel=1e-9)]
        assert r["paired"][p_key] == pytest.approx(2 * sp.norm.sf(abs(m) / se), rel=1e-9, abs=1e-15)
        if col == 0:
            assert r["paired"]["se"] == pytest.approx(se, rel=1e-9)
            assert (r["paired"]["improved"], r["paired"]["regressed"], r["paired"]["unchanged"]) == (
                int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum()))
            changed = {e["instance"]: e["difference"] for e in r["instances"]}
            assert changed == {k: pytest.approx(b[k][0] - a[k][0]) for k in paired if b[k][0] != a[k][0]}
            sizes = [abs(e["difference"]) for e in r["instances"]]
            assert sizes == sorted(sizes, reverse=True)

    d = np.array([b[k][2] - a[k][2] for k in paired])
    m, lo, hi = _ci(d)
    cost = r["costs"]["duration_s"]
    assert cost["difference"] == pytest.approx(m, rel=1e-9)
    assert cost["ci95"] == [pytest.approx(lo, rel=1e-9), pytest.approx(hi, rel=1e-9)]
    assert cost["baseline_mean"] == pytest.approx(np.mean([a[k][2] for k in paired]), rel=1e-12)
    assert cost["candidate_mean"] == pytest.approx(np.mean([b[k][2] for k in paired]), rel=1e-12)
    assert r["only_baseline"] == sorted(set(a) - set(b))
    assert r["only_candidate"] == sorted(set(b) - set(a))


def test_p_value_is_the_two_sided_normal_tail():
    for diff, se in ((0.1, 0.05), (-0.3, 0.1), (0.001, 1.0), (5.0, 0.5)):
        assert p_value(diff, se) == pytest.approx(2 * sp.norm.sf(abs(diff) / se), rel=1e-12, abs=1e-300)


# ------------------------------------------------------------- properties
def _rows(gid: str, table: dict[str, list[float]]) -> list[dict]:
    return [{"job_id": f"{gid}-{inst}-{k}", "instance": inst, "score": s, "pass": s >= 0.5}
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


def test_interval_shrinks_as_one_over_sqrt_n():
    rng = random.Random(5)
    base = {f"i{k}": [rng.random()] for k in range(20)}
    cand = {f"i{k}": [rng.random()] for k in range(20)}

    def width(copies: int) -> tuple[float, float]:
        b = {f"{k}/{c}": v for c in range(copies) for k, v in base.items()}
        c_ = {f"{k}/{c}": v for c in range(copies) for k, v in cand.items()}
        [r] = compare_groups([("A", _rows("A", b)), ("B", _rows("B", c_))], metric="m",
                             pass_threshold=0.5, unit="u")
        lo, hi = r["paired"]["mean_difference_ci95"]
        g_lo, g_hi = r["groups"][0]["mean_ci95"]
        return hi - lo, g_hi - g_lo

    one, four = width(1), width(4)
    # n instances repeated 4 times: the sum of squares is 4 SS, so
    # se_4 = sqrt(4 SS / (4n - 1) / 4n) and se_1 = sqrt(SS / (n - 1) / n):
    # se_4 / se_1 = sqrt((n - 1) / (4n - 1)), about 1/2 = 1/sqrt(4).
    n = 20
    expected = math.sqrt((n - 1) / (4 * n - 1))
    assert expected == pytest.approx(0.5, rel=0.02)
    assert four[0] / one[0] == pytest.approx(expected, rel=1e-9)
    assert four[1] / one[1] == pytest.approx(expected, rel=1e-9)


def test_order_of_rows_does_not_change_any_figure():
    jobs, metrics = payloads("G1", HAND_BASELINE)
    cjobs, cmetrics = payloads("G2", HAND_CANDIDATE)
    rows_a, rows_b = table_rows("G1", jobs, metrics), table_rows("G2", cjobs, cmetrics)
    first = compare_groups([("G1", rows_a), ("G2", rows_b)], metric="m", pass_threshold=0.5, unit="u",
                           costs=COSTS)
    rng = random.Random(11)
    for _ in range(5):
        a, b = rows_a[:], rows_b[:]
        rng.shuffle(a)
        rng.shuffle(b)
        again = compare_groups([("G1", a), ("G2", b)], metric="m", pass_threshold=0.5, unit="u",
                               costs=COSTS)
        # everything equal except the order of job ids inside an instance
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
        assert (g["instances"], g["pass_rate"], g["pass_rate_ci95"], g["mean"], g["mean_ci95"]) == (
            0, None, None, None, None)
    assert r["groups"][0]["jobs"] == 1 and r["groups"][1]["jobs"] == 0
    p = r["paired"]
    assert (p["instances"], p["pass_rate_difference"], p["se"], p["ci95"], p["p_value"]) == (0, None, None, None, None)
    assert (p["improved"], p["regressed"], p["unchanged"]) == (0, 0, 0)
    assert r["costs"]["duration_s"] == {"baseline_mean": None, "candidate_mean": None, "difference": None,
                                        "ci95": None, "instances": 0}
    assert r["instances"] == [] and r["only_baseline"] == [] and r["only_candidate"] == []


def test_one_instance_has_a_mean_but_no_interval():
    a = [{"job_id": "A-1", "instance": "i1", "score": 0.2, "pass": False}]
    b = [{"job_id": "B-1", "instance": "i1", "score": 0.9, "pass": True}]
    [r] = compare_groups([("A", a), ("B", b)], metric="m", pass_threshold=0.5, unit="u")
    assert r["groups"][0]["pass_rate"] == 0.0 and r["groups"][0]["pass_rate_ci95"] is None
    p = r["paired"]
    assert p["pass_rate_difference"] == 1.0 and p["mean_difference"] == pytest.approx(0.7)
    assert (p["se"], p["ci95"], p["p_value"], p["mean_difference_ci95"]) == (None, None, None, None)
    assert p["improved"] == 1


@pytest.mark.parametrize("delta,expected_p", [(0.0, 1.0), (1.0, 0.0), (-1.0, 0.0)])
def test_all_equal_differences_take_the_limit(delta, expected_p):
    def group(gid: str, passed: bool) -> list[dict]:
        return [{"job_id": f"{gid}-{k}", "instance": f"i{k}", "score": float(passed), "pass": passed}
                for k in range(4)]

    a, b = group("A", delta < 0), group("B", delta > 0)
    [r] = compare_groups([("A", a), ("B", b)], metric="m", pass_threshold=0.5, unit="u")
    p = r["paired"]
    assert p["se"] == 0.0
    assert p["ci95"] == [delta, delta]
    assert p["p_value"] == expected_p
    # every instance passes or fails in both trials of a group: the group SE is 0 too
    assert r["groups"][0]["pass_rate_ci95"] == [r["groups"][0]["pass_rate"]] * 2


def test_all_equal_values_give_exactly_zero_spread():
    # 0.1 * 3 / 3 is not exactly 0.1 in floating point; equal values are detected instead.
    assert sample_sd([0.1, 0.1, 0.1]) == 0.0
    assert stats.mean([0.1, 0.1, 0.1]) == 0.1
    assert sample_sd([0.7]) is None and stats.mean([]) is None


@pytest.mark.parametrize("value,expected", [
    (0.85, (0.85, True)), (0.5, (0.5, True)), (0.49, (0.49, False)),
    ("0.85", (0.85, True)), (" 1 ", (1.0, True)), ("0", (0.0, False)), (1, (1.0, True)),
    (True, (1.0, True)), (False, (0.0, False)), ("true", (1.0, True)), ("FALSE", (0.0, False)),
    ([0.7], (0.7, True)), ([True], (1.0, True)),
    (None, (None, None)), ("n/a", (None, None)), ("nan", (None, None)), (float("inf"), (None, None)),
    ("-inf", (None, None)), ({"score": 1}, (None, None)), ([0.1, 0.9], (None, None)), ([], (None, None)),
])
def test_score_and_pass(value, expected):
    assert score_and_pass(value, 0.5) == expected


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
    # threshold does not matter for a boolean
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
