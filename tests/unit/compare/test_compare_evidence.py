"""Changes ranked by evidence: Fisher's exact test per instance, Benjamini-Hochberg across them,
and the A/A expectation beside every listing (``benchloop.compare.evidence``).

Every figure is checked against scipy (``fisher_exact``, ``false_discovery_control``) or an
exhaustive enumeration; the claims about error rates (the FDR, how many an A/A lists) by seeded
simulations of identical runs.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from scipy import stats as sp

from benchloop.compare import evidence
from benchloop.compare.stats import compare_groups


def test_fisher_matches_scipy_on_every_table_up_to_10_trials():
    for n1, n2 in itertools.product(range(1, 11), repeat=2):
        for a, b in itertools.product(range(n1 + 1), range(n2 + 1)):
            expected = sp.fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue
            assert evidence.fisher_exact(a, n1, b, n2) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_the_smallest_p_values_of_the_issue():
    # 2 trials against 2: no outcome reaches 0.05; 4 against 4: only 4/4 vs 0/4, 2/70.
    assert evidence.smallest_p(2, 2) == pytest.approx(1 / 3)
    assert evidence.smallest_p(4, 4) == pytest.approx(2 / 70)
    for n1, n2 in itertools.product(range(1, 7), repeat=2):
        brute = min(sp.fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue
                    for a in range(n1 + 1) for b in range(n2 + 1))
        assert evidence.smallest_p(n1, n2) == pytest.approx(brute)
    # the trials that make a complete flip stand out at level L
    for level in (0.1, 0.05, 0.01, 0.0025):
        k = evidence.trials_to_reach(level)
        assert sp.fisher_exact([[0, k], [k, 0]]).pvalue <= level * (1 + 1e-12) < sp.fisher_exact([[0, k - 1], [k - 1, 0]]).pvalue


def test_benjamini_hochberg_matches_scipy():
    rng = random.Random(3)
    for m in (1, 2, 5, 40, 300):
        p = [rng.random() ** 3 for _ in range(m)] + [1.0] * 3
        assert evidence.benjamini_hochberg(p) == pytest.approx(list(sp.false_discovery_control(p)), abs=1e-12)


def test_changed_under_null_is_the_exact_share_of_deals():
    # Every way of dealing x passes of n1 + n2 trials into the two runs, counted by hand.
    for n1, n2 in ((1, 1), (2, 2), (2, 3), (4, 4), (3, 5)):
        for x in range(n1 + n2 + 1):
            trials = [1] * x + [0] * (n1 + n2 - x)
            deals = list(itertools.combinations(range(n1 + n2), n1))
            moved = sum(1 for first in deals
                        if sum(trials[i] for i in first) * n2 != (x - sum(trials[i] for i in first)) * n1)
            assert evidence.changed_under_null(x, n1, n2) == pytest.approx(moved / len(deals))


def test_changed_under_null_is_unbiased_for_two_runs_of_one_system():
    """Averaged over the pooled outcome, the chance of a change equals that of two real runs."""
    for p, n1, n2 in ((0.3, 2, 2), (0.5, 4, 4), (0.8, 3, 4)):
        exact = 1 - sum(sp.binom.pmf(i, n1, p) * sp.binom.pmf(j, n2, p)
                        for i in range(n1 + 1) for j in range(n2 + 1) if i * n2 == j * n1)
        mean = sum(sp.binom.pmf(x, n1 + n2, p) * evidence.changed_under_null(x, n1, n2) for x in range(n1 + n2 + 1))
        assert mean == pytest.approx(exact, rel=1e-12)


def _rows(group: str, passes: dict[str, list[int]]) -> list[dict]:
    return [{"job_id": f"{group}-{key}-{t}", "instance": key, "score": float(v), "pass": bool(v), "status": "succeeded"}
            for key, trials in passes.items() for t, v in enumerate(trials)]


def _compare(base: dict[str, list[int]], cand: dict[str, list[int]], fdr: float = 0.1) -> dict:
    return compare_groups([("A", _rows("A", base)), ("B", _rows("B", cand))], metric="m", pass_threshold=0.5,
                          unit="u", fdr=fdr)[0]


def test_a_comparison_carries_the_evidence_of_each_changed_instance():
    base = {"flip": [0] * 8, "half": [1, 0, 1, 0], "same": [1, 1], "down": [1, 1, 1, 0]}
    cand = {"flip": [1] * 8, "half": [1, 1, 1, 0], "same": [1, 1], "down": [0, 0, 0, 0]}
    r = _compare(base, cand)
    tested = {e["instance"]: e for e in r["instances"]}
    assert set(tested) == {"flip", "half", "down"}
    for key, e in tested.items():
        a, n1, b, n2 = sum(base[key]), len(base[key]), sum(cand[key]), len(cand[key])
        assert e["p_value"] == pytest.approx(sp.fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue)
    keys = sorted(base)  # the family: every paired instance, "same" included (p = 1)
    ps = [sp.fisher_exact([[sum(base[k]), len(base[k]) - sum(base[k])],
                           [sum(cand[k]), len(cand[k]) - sum(cand[k])]]).pvalue for k in keys]
    qs = dict(zip(keys, sp.false_discovery_control(ps), strict=True))
    for key, e in tested.items():
        assert e["q_value"] == pytest.approx(qs[key])
        assert e["beyond_noise"] == (qs[key] <= 0.1)
    assert [e["instance"] for e in r["instances"]] == sorted(tested, key=lambda k: tested[k]["p_value"])
    s = r["evidence"]
    assert (s["instances"], s["changed"], s["beyond_noise"], s["fdr"]) == (4, 3, sum(qs[k] <= 0.1 for k in tested), 0.1)
    assert s["summary"].startswith(f"3 changed; an A/A comparison lists about {s['aa_expected']:.0f} of 4; ")
    assert s["summary"].endswith(f"{s['beyond_noise']} beyond noise at FDR 10%")


def test_with_two_trials_against_two_it_says_no_instance_can_reach_it():
    base = {f"i{k}": [0, 0] for k in range(30)}
    cand = {f"i{k}": [1, 1] for k in range(30)}
    s = _compare(base, cand)["evidence"]
    assert s["beyond_noise"] == 0 and s["reachable"] == 0
    assert s["smallest_p"] == pytest.approx(1 / 3)
    k = s["trials_needed"]
    assert sp.fisher_exact([[0, k], [k, 0]]).pvalue <= 0.1 / 30 * (1 + 1e-12) < sp.fisher_exact([[0, k - 1], [k - 1, 0]]).pvalue
    assert "no instance can reach it with these trial counts" in s["summary"]
    assert f"{k} trials per instance in each run" in s["summary"]


def test_the_fdr_is_kept_and_an_aa_lists_what_was_predicted():
    """A/A runs (identical systems) with 1-8 trials: the beyond-noise count is 0 in most draws,
    some false discovery at all in at most FDR of them (every discovery is false here), and the
    printed A/A expectation is the measured count on average (within 3%)."""
    rng = np.random.default_rng(46)
    draws, any_false, listed, predicted = 400, 0, 0.0, 0.0
    for _ in range(draws):
        n = 40
        p = rng.choice([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0], size=n)
        k = rng.integers(1, 9, size=n)
        base = {f"i{i}": list(rng.random(k[i]) < p[i]) for i in range(n)}
        cand = {f"i{i}": list(rng.random(k[i]) < p[i]) for i in range(n)}
        s = _compare({key: [int(v) for v in t] for key, t in base.items()},
                     {key: [int(v) for v in t] for key, t in cand.items()})["evidence"]
        any_false += s["beyond_noise"] > 0
        listed += s["changed"]
        predicted += s["aa_expected"]
    assert any_false / draws <= 0.1 + 3 * math.sqrt(0.1 * 0.9 / draws)
    assert abs(predicted / listed - 1) < 0.03, (predicted / draws, listed / draws)


def test_the_fdr_level_is_an_option():
    base = {f"i{k}": [0] * 6 for k in range(10)}
    cand = {f"i{k}": [1] * 6 if k < 3 else [0] * 6 for k in range(10)}
    loose, strict = _compare(base, cand, fdr=0.2)["evidence"], _compare(base, cand, fdr=0.001)["evidence"]
    assert loose["beyond_noise"] == 3 and strict["beyond_noise"] == 0
    assert "at FDR 20%" in loose["summary"] and "at FDR 0.1%" in strict["summary"]


def test_the_report_lists_the_changes_beyond_noise_first():
    from benchloop.compare import html_report, markdown, terminal

    base = {f"i{k}": [0] * 6 for k in range(10)}
    cand = {f"i{k}": [1] * 6 if k < 3 else ([1, 0, 0, 0, 0, 0] if k == 3 else [0] * 6) for k in range(10)}
    r = _compare(base, cand)
    assert [e["instance"] for e in r["instances"] if e["beyond_noise"]] == ["i0", "i1", "i2"]
    page = html_report.render([r])
    section = page[page.index('<section class="comparison"'):]
    evidence = section.index('<div class="evidence">')
    assert evidence < section.index('<table class="groups"')  # right after the verdict
    beyond = section[evidence:section.index("</div>", evidence)]
    assert beyond.count("<tr>") == 1 + 3 and "i3" not in beyond
    assert r["evidence"]["summary"] in page and r["noise_floor"]["summary"] in page
    table = terminal.render([r], "beyond-noise")
    assert "instances beyond noise (3 of 4 changed, strongest evidence first)" in table
    assert " i3" not in table
    assert "beyond noise" in markdown.render([r], "beyond-noise")
