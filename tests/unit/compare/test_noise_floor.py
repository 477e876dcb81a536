"""The noise floor (``bl noise``, ``benchloop.compare.noise``): within-instance variance, splits
of a run's trials, the A/A floor, the between-run variance of cluster shocks.

The estimators are validated by seeded simulations with known components (unbiased within
Monte Carlo error; the predicted A/A share equal to the simulated one); the command against the
sandbox (its figures recomputed from what the backend serves when asked directly):
tests/cli/compare/test_noise_command.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchloop.compare import noise
from benchloop.compare.estimates import clusterer
from benchloop.compare.groups import gather


def _rows(group: str, passes: dict[str, list[int]]) -> list[dict]:
    return [{"job_id": f"{group}-{key}-{t}", "instance": key, "score": float(v), "pass": bool(v), "status": "succeeded"}
            for key, trials in passes.items() for t, v in enumerate(trials)]


def _group(name: str, passes: dict[str, list[int]]):
    return gather(name, _rows(name, passes))


def _run(rng, p, k):
    return {f"r{i // 10}__i{i}": [int(v) for v in rng.random(k) < p[i]] for i in range(len(p))}


def test_within_variance_is_unbiased_and_the_aa_share_is_the_simulated_one():
    """Known pass probabilities: σ_w² = mean p(1-p) within MC error; the A/A share predicted from
    one run equals the share two independent runs list (within 5% relative, or 0.01)."""
    rng = np.random.default_rng(7)
    for k, a, b in ((2, 0.6, 0.5), (4, 0.6, 0.5), (4, 2.0, 2.0), (8, 0.5, 0.8)):
        estimates, shares, predicted = [], [], []
        truth = None
        for _ in range(300):
            p = rng.beta(a, b, size=60)
            truth = float(np.mean(p * (1 - p))) if truth is None else truth
            run, again = _run(rng, p, k), _run(rng, p, k)
            g = _group("A", run)
            floor = noise.aa_floor(g)
            estimates.append(floor["within_variance"] - float(np.mean(p * (1 - p))))
            predicted.append(floor["share_changed"])
            shares.append(np.mean([sum(run[key]) != sum(again[key]) for key in run]))
        bias = np.mean(estimates)
        assert abs(bias) < 4 * np.std(estimates) / math.sqrt(len(estimates)) + 1e-3, (k, bias)
        assert np.mean(predicted) == pytest.approx(np.mean(shares), rel=0.05, abs=0.01), k


def test_splits_are_predicted_exactly():
    rng = np.random.default_rng(3)
    g = _group("A", _run(rng, rng.beta(0.6, 0.5, size=50), 4))
    s = noise.splits(g, count=4000, seed=1)
    assert s["share_changed"] == pytest.approx(s["share_changed_expected"], abs=0.01)
    assert s["difference_sd"] == pytest.approx(s["difference_sd_expected"], rel=0.05)
    assert noise.splits(g, count=50, seed=9) == noise.splits(g, count=50, seed=9)  # seeded


def test_the_aa_half_width_covers_95_percent_of_real_aa_differences():
    rng = np.random.default_rng(11)
    p = rng.beta(0.6, 0.5, size=200)
    inside, draws = 0, 1000
    base = _group("A", _run(rng, p, 4))
    half = noise.aa_floor(base)["half_width"]
    for _ in range(draws):
        x, y = _run(rng, p, 4), _run(rng, p, 4)
        d = np.mean([np.mean(y[key]) - np.mean(x[key]) for key in x])
        inside += abs(d) <= half
    assert inside / draws == pytest.approx(0.95, abs=0.03)


def test_between_run_variance_of_cluster_shocks_is_unbiased():
    """Runs of one system whose clusters (8 repositories of 20) share a shock of sd 0.06 per run:
    the method of moments recovers 0.0036 within MC error; without shocks it centres on 0."""
    rng = np.random.default_rng(5)
    cluster = clusterer("^(.+?)__")
    for sd in (0.06, 0.0):
        raw = []
        for _ in range(200):
            p = rng.uniform(0.2, 0.8, size=160)
            runs = []
            for r in range(3):
                shock = np.repeat(rng.normal(0, sd, size=16), 10)
                runs.append(_group(f"R{r}", _run(rng, np.clip(p + shock, 0, 1), 4)))
            found = noise.between_runs(runs, noise.common_keys(runs), cluster)
            raw.append(found["between_variance_raw"])
        mc = np.std(raw) / math.sqrt(len(raw))
        assert abs(np.mean(raw) - sd**2) < 4 * mc, (sd, np.mean(raw), mc)


def test_one_trial_per_instance_cannot_give_a_floor():
    g = _group("A", {f"i{k}": [k % 2] for k in range(10)})
    floor = noise.aa_floor(g)
    assert floor["within_variance"] is None and floor["half_width"] is None and floor["share_changed"] is None
    assert "cannot be estimated" in noise.floor_sentence("A", floor)
