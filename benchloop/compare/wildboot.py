"""The restricted wild cluster bootstrap of a mean (WCR), with Webb's six-point weights.

Why: with few clusters of unequal size (SWE-bench Verified's largest eight repositories hold
231, 75, 44, 34, 32, 22, 19 and 8 instances) the cluster-robust t test with ``G - 1``
degrees of freedom calls two runs of one system different far more often than 5%, and CR2
with Bell-McCaffrey degrees of freedom errs the other way (``docs/compare.md`` shows the
simulations).  The restricted wild cluster bootstrap (Cameron, Gelbach & Miller 2008;
MacKinnon, Nielsen & Webb 2023) holds the level there: under the null ``μ = μ0`` each
cluster's residuals ``x_i − μ0`` are multiplied by one random weight ``w_g``, the t statistic
(CR1-studentized) is recomputed on each such sample, and the p-value is the share of
bootstrap ``|t*|`` at least the observed ``|t|``.  The weights are Webb's (2023): ``±√(1/2)``,
``±1``, ``±√(3/2)`` with probability 1/6 each (six points instead of Rademacher's two, so
that few clusters still give many distinct samples).  With ``6^G`` at most
:data:`ENUMERATE_LIMIT` every weight vector is enumerated (the answer is exact, no
randomness); otherwise :data:`DRAWS` vectors are drawn from a fixed seed, so the same data
give the same figures on every run and machine.

For a mean, everything a bootstrap sample needs is five numbers, linear or quadratic in
``μ0``: with the cluster totals ``T_g``, sizes ``n_g`` and ``a = Σ w_g T_g``, ``c = Σ w_g n_g``,
the sample's mean minus ``μ0`` is ``(a − c μ0) / n`` and its CR1 residual sum of squares
``A − 2 μ0 C + μ0² D``.  A p-value at any ``μ0`` then costs one pass over the samples, and
the interval is the set of ``μ0`` not rejected, found by bisection on each side.
"""

from __future__ import annotations

import itertools
import math
import operator
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

WEBB = (-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5))
ENUMERATE_LIMIT = 6 ** 6  # up to 6 clusters: every weight vector (46,656), exact
DRAWS = 9999  # beyond: this many seeded draws (B + 1 = 10,000, the usual choice)
SEED = 20230101  # fixed: the same data give the same p-value everywhere
WIDEN = 40  # doublings of the se before a side of the interval is taken as unbounded (2^40 se)


@dataclass(frozen=True)
class WildBootstrap:
    """The bootstrap samples of one mean, summarised (see the module docstring)."""

    n: int
    clusters: int
    mean: float
    se: float  # CR1: the statistic the samples are compared with is (mean − μ0) / se
    samples: tuple[tuple[float, float, float, float, float], ...]  # (a, c, A, C, D) per weight vector
    exact: bool  # every weight vector enumerated

    @classmethod
    def of(cls, values: Sequence[float], clusters: Sequence[Hashable], draws: int = DRAWS,
           seed: int = SEED) -> WildBootstrap | None:
        """The bootstrap of ``values`` by ``clusters``; None below two clusters or without spread."""
        totals: dict[Hashable, list[float]] = {}
        for value, cluster in zip(values, clusters, strict=True):
            totals.setdefault(cluster, []).append(value)
        g = len(totals)
        n = len(values)
        if g < 2 or all(v == values[0] for v in values):
            return None
        t = [math.fsum(members) for members in totals.values()]
        sizes = [float(len(members)) for members in totals.values()]
        m = math.fsum(t) / n
        residuals = [tg - ng * m for tg, ng in zip(t, sizes, strict=True)]
        se = math.sqrt(g / (g - 1) * math.fsum(e * e for e in residuals)) / n
        if se <= 1e-12 * max(abs(v) for v in values):  # clusters with equal means: no spread to resample
            return None
        exact = 6 ** g <= ENUMERATE_LIMIT
        weights = (itertools.product(WEBB, repeat=g) if exact
                   else _draws(random.Random(seed), g, draws))
        # With q = a/n and r = c/n:  A = Σw²T² − 2qΣwTn + q²Σn²,  C = Σw²Tn − rΣwTn − qΣwn² + qrΣn²,
        # D = Σw²n² − 2rΣwn² + r²Σn²  (α_g = w_g T_g − n_g q, β_g = w_g n_g − n_g r).
        tt = [x * x for x in t]
        tn = [x * k for x, k in zip(t, sizes, strict=True)]
        nn = [k * k for k in sizes]
        sum_nn = math.fsum(nn)
        samples = []
        for w in weights:
            w2 = [x * x for x in w]
            q = sum(map(operator.mul, w, t)) / n
            r = sum(map(operator.mul, w, sizes)) / n
            w_tn = sum(map(operator.mul, w, tn))
            w_nn = sum(map(operator.mul, w, nn))
            big_a = sum(map(operator.mul, w2, tt)) - 2.0 * q * w_tn + q * q * sum_nn
            big_c = sum(map(operator.mul, w2, tn)) - r * w_tn - q * w_nn + q * r * sum_nn
            big_d = sum(map(operator.mul, w2, nn)) - 2.0 * r * w_nn + r * r * sum_nn
            samples.append((q * n, r * n, max(big_a, 0.0), big_c, max(big_d, 0.0)))
        return cls(n, g, m, se, tuple(samples), exact)

    def p_value(self, mu0: float = 0.0) -> float:
        """The two-sided bootstrap p-value of ``μ = mu0``: the share of samples with
        ``|t*| >= |t|`` (``t = (m − mu0) / se``), compared squared: ``(a − c μ0)² >= k · rss``
        with ``k = t² · G/(G − 1)`` (a sample equal to the statistic counts: ties by rounding
        are kept with a relative 1e-12)."""
        observed = (self.mean - mu0) / self.se * (1 - 1e-12)
        k = observed * observed * self.clusters / (self.clusters - 1)
        two_mu, mu_sq = 2.0 * mu0, mu0 * mu0
        hits = sum(1 for a, c, big_a, big_c, big_d in self.samples
                   if (a - c * mu0) ** 2 >= k * (big_a - two_mu * big_c + mu_sq * big_d))
        return hits / len(self.samples)

    def interval(self, level: float = 0.95) -> list[float]:
        """The values ``μ0`` the test at ``1 − level`` does not reject: from the mean outwards on
        each side, the first ``μ0`` whose p-value falls below it (bisection to 1e-9 se); a side
        where none does within 2^40 se is infinite (too few clusters for any bound)."""
        alpha = 1.0 - level
        return [self._bound(-1.0, alpha), self._bound(1.0, alpha)]

    def _bound(self, side: float, alpha: float) -> float:
        inner, step = self.mean, self.se
        outer = self.mean + side * step
        for _ in range(WIDEN):  # widen until rejected (far enough out the p-value falls to its least)
            if self.p_value(outer) < alpha:
                break
            inner, step = outer, step * 2.0
            outer = self.mean + side * step
        else:  # never rejected: with so few clusters no value is (2 clusters: p >= 2/36 everywhere)
            return side * math.inf
        for _ in range(80):
            middle = (inner + outer) / 2.0
            if self.p_value(middle) < alpha:
                outer = middle
            else:
                inner = middle
            if abs(outer - inner) <= 1e-9 * self.se:
                break
        return (inner + outer) / 2.0


def _draws(rng: random.Random, g: int, draws: int) -> list[tuple[float, ...]]:
    return [tuple(rng.choice(WEBB) for _ in range(g)) for _ in range(draws)]
