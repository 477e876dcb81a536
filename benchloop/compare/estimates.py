"""A mean with its standard error, 95% interval and p-value: Student's t, with or without clusters.

Every figure of ``bl compare`` is a mean over instances (a group's pass rate)
or over paired instances (a difference), and they all share this estimator.

* **Without clusters**: ``se = s / √n`` (``s`` the sample standard deviation,
  n − 1), and the interval and the p-value use Student's t with ``n − 1``
  degrees of freedom: ``m ± t(0.975, n−1) · se`` and ``P(|T| >= |m| / se)``.
  (Until round two ``bl compare`` used the normal quantile 1.96; at 10 instances
  that made a difference of two identical runs look significant 5-10% of the
  time instead of at most 5%.)
* **With clusters** (``--cluster``; instances that share a repository are not
  independent): with ``G`` clusters and ``e_c = Σ_{i∈c} (x_i − m)``,
  ``se = √(G/(G−1) · Σ_c e_c²) / n``, and t has ``G − 1`` degrees of freedom.
  When every instance is its own cluster this is exactly ``s / √n``.
* **Zero spread** (n ≥ 2 values all equal, detected exactly): ``se = 0``, the
  interval is ``[m, m]`` and the p-value is the exact sign test of the values'
  signs (the t formula's limit, 0, would claim certainty from two instances).
* **Undefined**: no value gives no mean; one value (or one cluster) gives a
  mean but no se, interval or p-value (``None``).

Sums are ``math.fsum`` (correctly rounded, independent of the order of values).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Sequence

from ..base.frozen import dataclass
from .distributions import sign_test_p, t_quantile, t_two_sided

LEVEL = 0.95
MDE_FACTOR = 2.8  # z(0.975) + z(0.80) = 1.96 + 0.84: 80% power at 5% two-sided significance


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean; None for no values; exactly the value when all are equal."""
    if not values:
        return None
    first = values[0]
    if all(v == first for v in values):
        return float(first)
    return math.fsum(values) / len(values)


def sample_sd(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n - 1); None below two values; exactly 0.0 when all equal."""
    n = len(values)
    if n < 2:
        return None
    first = values[0]
    if all(v == first for v in values):
        return 0.0
    m = math.fsum(values) / n
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))


def clustered_se(values: Sequence[float], clusters: Sequence[Hashable]) -> tuple[float | None, int]:
    """``(se, G)``: the cluster-robust standard error of the mean and the number of clusters.

    ``se = √(G/(G−1) · Σ_c e_c²) / n`` with ``e_c = Σ_{i∈c} (x_i − m)``; None below two
    clusters (or two values); exactly 0.0 when every value is equal.
    """
    n = len(values)
    groups: dict[Hashable, list[float]] = {}
    m = mean(values)
    for value, cluster in zip(values, clusters, strict=True):
        groups.setdefault(cluster, []).append(value)
    count = len(groups)
    if m is None or n < 2:
        return None, count
    first = values[0]
    if all(v == first for v in values):
        return 0.0, count
    if count < 2:
        return None, count
    sums = [math.fsum(v - m for v in members) for members in groups.values()]
    return math.sqrt(count / (count - 1) * math.fsum(e * e for e in sums)) / n, count


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` values with its standard error and the t it is read with."""

    n: int
    mean: float | None
    se: float | None
    df: int | None  # degrees of freedom of t: n - 1, or G - 1 with clusters (None without an se)
    clusters: int  # G (n when every value is its own cluster)
    positive: int  # values above 0 (the sign test's "up")
    negative: int  # values below 0

    @classmethod
    def of(cls, values: Sequence[float], clusters: Sequence[Hashable] | None = None) -> Estimate:
        """The estimate of ``values``; ``clusters`` (aligned with them) for the clustered se."""
        n = len(values)
        positive = sum(1 for v in values if v > 0)
        negative = sum(1 for v in values if v < 0)
        if clusters is None:
            sd = sample_sd(values)
            se = None if sd is None else sd / math.sqrt(n)
            count = n
        else:
            se, count = clustered_se(values, clusters)
        df = None if se is None else (count - 1 if clusters is not None else n - 1)
        return cls(n, mean(values), se, df, count, positive, negative)

    @property
    def ci95(self) -> list[float] | None:
        """``[m − t·se, m + t·se]`` with t's 0.975 quantile; ``[m, m]`` at zero spread."""
        if self.mean is None or self.se is None:
            return None
        if self.se == 0 or self.df is None or self.df < 1:
            return [self.mean, self.mean]
        half = t_quantile(0.5 + LEVEL / 2, self.df) * self.se
        return [self.mean - half, self.mean + half]

    @property
    def p_value(self) -> float | None:
        """Two-sided p-value of the mean against 0: t's tail, or the sign test at zero spread."""
        if self.mean is None or self.se is None:
            return None
        if self.se == 0 or self.df is None or self.df < 1:
            return self.sign_test_p
        return t_two_sided(self.mean / self.se, self.df)

    @property
    def sign_test_p(self) -> float:
        return sign_test_p(self.positive, self.negative)

    @property
    def mde(self) -> float | None:
        """The smallest difference detectable with 80% power at 5% two-sided: ``2.8 · se``."""
        return None if self.se is None else MDE_FACTOR * self.se


# ------------------------------------------------------------------ clusters
Clusterer = Callable[[str], tuple[bool, str]]


def clusterer(pattern: str | None) -> Clusterer | None:
    """The function naming an instance's cluster from ``--cluster REGEX`` (None without one).

    The regex is searched in the instance key; its first capture group (the whole
    match when it has none) names the cluster: ``'^(.+?)__'`` gives ``django`` for
    ``django__django-11308``.  An instance it does not match, or whose group took
    no part in the match, is its own cluster.  The result is ``(matched, name)``, so
    an unmatched instance called ``django`` is not put in the cluster ``django``.
    """
    if pattern is None:
        return None
    regex = re.compile(pattern)

    def cluster(key: str) -> tuple[bool, str]:
        found = regex.search(key)
        if found is None:
            return (False, key)
        name = found.group(1) if regex.groups else found.group(0)
        return (False, key) if name is None else (True, name)

    return cluster
