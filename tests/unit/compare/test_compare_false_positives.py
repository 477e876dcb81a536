"""How often ``bl compare`` calls two identical runs different: the verdict's false-positive rate.

Simulated benchmarks, the statistics functions called directly (the estimator, Holm's
adjustment and the verdict rule of benchloop.compare, no CLI, no rows): each draw is
one benchmark of ``n`` instances with a latent pass probability each, run once as the
baseline and once per candidate by the *same* system (so every difference is noise).
The verdict must say "better" or "worse" in at most 6% of 2,000 draws with one
candidate, and at most 6% family-wise (any of them) with four candidates, at n = 10
and n = 30, with one trial per instance (0/1 differences, the hardest case for t at
small n) and with four.

A last test shows what ``--cluster`` is for: a candidate whose effect varies by
repository but is zero on average.  Treating instances as independent then calls it
different far more often than 5%; the cluster-robust test stays near the nominal rate.

The measured rates are printed with ``-s`` (docs/compare.md quotes them).
"""

from __future__ import annotations

import random

import pytest

from benchloop.compare.distributions import holm
from benchloop.compare.estimates import Estimate
from benchloop.compare.stats import verdict

DRAWS = 2000
LEVELS = (0.0, 0.0, 0.05, 0.2, 0.4, 0.5, 0.6, 0.8, 0.95, 1.0, 1.0)  # easy, hard and in-between instances
LIMIT = 0.06


def _run(rng: random.Random, latent: list[float], trials: int) -> list[float]:
    """One run: per instance, the share of its trials that passed."""
    return [sum(rng.random() < p for _ in range(trials)) / trials for p in latent]


def false_positive_rate(n: int, candidates: int, trials: int, seed: int) -> float:
    """The share of draws in which any candidate's verdict is not "inconclusive"."""
    rng = random.Random(seed)
    hits = 0
    for _ in range(DRAWS):
        latent = [rng.choice(LEVELS) for _ in range(n)]
        base = _run(rng, latent, trials)
        estimates = [Estimate.of([c - b for c, b in zip(_run(rng, latent, trials), base, strict=True)])
                     for _ in range(candidates)]
        adjusted = holm([e.p_value for e in estimates])
        if any(verdict(p, e.mean) != "inconclusive" for p, e in zip(adjusted, estimates, strict=True)):
            hits += 1
    return hits / DRAWS


@pytest.mark.parametrize("trials", [1, 4])
@pytest.mark.parametrize("n", [10, 30])
def test_identical_runs_are_rarely_called_different(n, trials):
    one = false_positive_rate(n, 1, trials, seed=1000 * n + trials)
    four = false_positive_rate(n, 4, trials, seed=2000 * n + trials)
    print(f"\nn={n} trials={trials}: one candidate {one:.2%}, four candidates (family-wise) {four:.2%}")
    assert one <= LIMIT
    assert four <= LIMIT


def _clustered_draw(rng: random.Random, repos: int, per_repo: int, cluster: bool) -> bool:
    """One benchmark whose candidate helps some repositories and hurts others (zero on average):
    is it called different?"""
    values, names = [], []
    for r in range(repos):
        effect = rng.choice((-0.3, 0.3))  # the repository's effect; its mean over repositories is 0
        for _ in range(per_repo):
            p = rng.choice(LEVELS)
            base = float(rng.random() < p)
            cand = float(rng.random() < min(1.0, max(0.0, p + effect)))
            values.append(cand - base)
            names.append(f"repo{r}")
    estimate = Estimate.of(values, names if cluster else None)
    return verdict(estimate.p_value, estimate.mean) != "inconclusive"


def test_clustering_keeps_a_repository_level_effect_from_looking_significant():
    rates = {}
    for cluster in (False, True):
        rng = random.Random(77)
        rates[cluster] = sum(_clustered_draw(rng, 8, 6, cluster) for _ in range(DRAWS)) / DRAWS
    print(f"\nrepository effects of mean 0, 8 x 6 instances: independent {rates[False]:.2%}, "
          f"clustered {rates[True]:.2%}")
    assert rates[False] > 0.10  # instances taken as independent: far above 5%
    assert rates[True] <= 0.08
