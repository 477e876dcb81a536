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
  independent): the CR2 se with Bell-McCaffrey degrees of freedom (:func:`cr2_bm`;
  ``G − 1`` for equal clusters, fewer for unequal ones), and for a tested difference
  (``bootstrap=True``) the p-value and interval of the restricted wild cluster
  bootstrap (:mod:`.wildboot`).  When every instance is its own cluster the se is
  exactly ``s / √n`` and df ``n − 1``.  (Until issue 42: CR1 with ``G − 1`` df,
  which with SWE-bench's eight unequal repositories called two runs of one system
  different 8-14% of the time; :func:`clustered_se` still computes CR1.)
* **MDE**: the difference the two-sided 5% t test at ``df`` detects 80% of the time,
  the noncentral t's root (:func:`.distributions.detectable_noncentrality`) times se.
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
from dataclasses import dataclass

from .distributions import detectable_noncentrality, sign_test_p, t_cdf, t_quantile, t_two_sided
from .wildboot import WildBootstrap

LEVEL = 0.95
MDE_FACTOR = 2.8  # z(0.975) + z(0.80): the MDE in se at infinite df (the noncentral t gives more below)
TINY = 1e-12  # a figure closer to 0 than this is 0


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
    n, m, groups = len(values), mean(values), by_cluster(values, clusters)
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


def cr2_bm(values: Sequence[float], clusters: Sequence[Hashable]) -> tuple[float | None, int, float | None]:
    """``(se, G, df)``: the CR2 standard error of the mean and its Bell-McCaffrey degrees of freedom.

    For a mean (a regression on a constant) both have closed forms.  With ``n_c`` the size of
    cluster ``c``, ``e_c = Σ_{i∈c} (x_i − m)`` and ``h_c = n_c / n`` (its leverage),
    ``se² = Σ_c e_c² / (1 − h_c) / n²`` (Bell & McCaffrey 2002: the residuals of each cluster
    scaled by ``(I − H_cc)^(−1/2)``, whose constant direction has eigenvalue ``1 − h_c``).
    The degrees of freedom are Satterthwaite's for that sum under independent errors of one
    variance (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018, working model the identity):
    ``df = (tr M)² / tr M²`` with the G × G matrix
    ``M_cd = (n_c δ_cd − n_c n_d / n) / (n² √((1 − h_c)(1 − h_d)))``.  They depend on the
    cluster sizes only: ``G − 1`` for equal clusters, fewer when one cluster dominates
    (about 2.8 for SWE-bench Verified's largest eight repositories).  With every value its
    own cluster, ``se = s / √n`` and ``df = n − 1`` exactly.  None below two clusters (or two
    values); ``se`` exactly 0.0 when every value is equal.
    """
    n, m, groups = len(values), mean(values), by_cluster(values, clusters)
    count = len(groups)
    if m is None or n < 2 or count < 2:
        first_equal = n >= 2 and all(v == values[0] for v in values)
        return (0.0 if first_equal else None), count, None
    sizes = [len(members) for members in groups.values()]
    df = bell_mccaffrey_df(sizes)
    if all(v == values[0] for v in values):
        return 0.0, count, df
    sums = [math.fsum(v - m for v in members) for members in groups.values()]
    variance = math.fsum(e * e / (1.0 - k / n) for e, k in zip(sums, sizes, strict=True)) / (n * n)
    se = math.sqrt(variance)
    if se <= TINY * max(abs(v) for v in values):  # clusters with equal means: rounding, not spread
        return 0.0, count, df
    return se, count, df


def bell_mccaffrey_df(sizes: Sequence[int]) -> float:
    """The Bell-McCaffrey degrees of freedom of a mean's CR2 variance for clusters of these
    sizes (see :func:`cr2_bm`); ``G − 1`` when they are equal."""
    n = sum(sizes)
    if len(sizes) < 2:
        raise ValueError("at least two clusters are needed")
    if len(set(sizes)) == 1:
        return float(len(sizes) - 1)
    scale = [1.0 / math.sqrt(1.0 - k / n) for k in sizes]
    trace = math.fsum(k * (1.0 - k / n) * s * s for k, s in zip(sizes, scale, strict=True))
    square = math.fsum(((k if i == j else 0.0) - k * h / n) ** 2 * (s * t) ** 2
                       for i, (k, s) in enumerate(zip(sizes, scale, strict=True))
                       for j, (h, t) in enumerate(zip(sizes, scale, strict=True)))
    return min(float(len(sizes) - 1), trace * trace / square)


def interval(center: float | None, se: float | None, df: float | None, level: float = LEVEL
             ) -> list[float] | None:
    """``[m − t·se, m + t·se]`` with t's ``(1 + level)/2`` quantile at ``df``; ``[m, m]`` at zero
    spread; None without an se."""
    if center is None or se is None:
        return None
    if se == 0 or df is None or df <= 0:
        return [center, center]
    half = t_quantile(0.5 + level / 2, df) * se
    return [center - half, center + half]


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` values with its standard error and the t it is read with."""

    n: int
    mean: float | None
    se: float | None
    df: float | None  # degrees of freedom of t: n - 1, or Bell-McCaffrey's with clusters (None without an se)
    clusters: int  # G (n when every value is its own cluster)
    positive: int  # values above 0 (instances that improved)
    negative: int  # values below 0
    signs_up: int = -1  # the sign test's units above 0: values, or clusters (their mean) with clusters
    signs_down: int = -1
    wild: WildBootstrap | None = None  # with clusters and bootstrap=True: the p-value and CI come from it

    @classmethod
    def of(cls, values: Sequence[float], clusters: Sequence[Hashable] | None = None,
           bootstrap: bool = False) -> Estimate:
        """The estimate of ``values``; ``clusters`` (aligned with them) for the clustered se;
        ``bootstrap`` (with clusters): the p-value and the 95% interval from the restricted wild
        cluster bootstrap (:mod:`.wildboot`), as every tested difference of ``bl compare`` has."""
        n = len(values)
        positive = sum(1 for v in values if v > 0)
        negative = sum(1 for v in values if v < 0)
        up, down = positive, negative
        df: float | None
        if clusters is None:
            sd = sample_sd(values)
            se = None if sd is None else sd / math.sqrt(n)
            count = n
            df = None if se is None else n - 1  # an integer, as before
        else:
            se, count, df = cr2_bm(values, clusters)
            by: dict[Hashable, list[float]] = {}
            for value, cluster in zip(values, clusters, strict=True):
                by.setdefault(cluster, []).append(value)
            signs = [_sign(clean(math.fsum(members) / len(members)) or 0.0) for members in by.values()]
            up, down = signs.count(1), signs.count(-1)
            if se is None:
                df = None
        wild = WildBootstrap.of(values, clusters) if bootstrap and clusters is not None and se else None
        return cls(n, clean(mean(values)), se, df, count, positive, negative, up, down, wild)

    @property
    def effective_clusters(self) -> float | None:
        """``df + 1``: how many equal clusters would give these degrees of freedom (n without clusters)."""
        return None if self.df is None else self.df + 1.0

    def ci(self, level: float = LEVEL) -> list[float] | None:
        """The ``level`` interval: the wild bootstrap's when there is one (the values it does not
        reject), else t's (see :func:`interval`)."""
        if self.wild is not None:
            low, high = self.wild.interval(level)
            if not (math.isfinite(low) and math.isfinite(high)):
                return None  # no finite interval: too few clusters for the bootstrap to bound it
            return [clean(low), clean(high)]  # type: ignore[list-item]
        return self.t_ci(level)

    def t_ci(self, level: float = LEVEL) -> list[float] | None:
        """The t interval at ``df`` (CR2 and Bell-McCaffrey's df with clusters)."""
        found = interval(self.mean, self.se, self.df, level)
        return None if found is None else [clean(found[0]), clean(found[1])]  # type: ignore[list-item]

    @property
    def ci95(self) -> list[float] | None:
        """``[m − t·se, m + t·se]`` with t's 0.975 quantile; ``[m, m]`` at zero spread."""
        return self.ci(LEVEL)

    @property
    def ci90(self) -> list[float] | None:
        """The 90% t interval: the two one-sided 5% tests of an equivalence margin (TOST) in one
        (t at ``df`` with clusters too: CR2 and Bell-McCaffrey, conservative where the bootstrap is
        not needed)."""
        return self.t_ci(0.90)

    @property
    def p_value(self) -> float | None:
        """Two-sided p-value of the mean against 0: t's tail, or the sign test at zero spread."""
        if self.mean is None or self.se is None:
            return None
        if self.se == 0 or self.df is None or self.df <= 0:
            return self.sign_test_p
        if self.wild is not None:
            return self.wild.p_value(0.0)
        return t_two_sided(self.mean / self.se, self.df)

    @property
    def sign_test_p(self) -> float:
        """The exact sign test of the values above 0 against those below (of the clusters' sums
        with clusters: the clusters are the independent units)."""
        up = self.positive if self.signs_up < 0 else self.signs_up
        down = self.negative if self.signs_down < 0 else self.signs_down
        return sign_test_p(up, down)

    @property
    def mde(self) -> float | None:
        """The difference the two-sided 5% t test at these df detects with 80% power: the
        noncentral t's answer times the se (``2.8 · se`` only at large df)."""
        if self.se is None or self.df is None or self.df <= 0:
            return None
        return detectable_noncentrality(self.df) * self.se

    def tost_p(self, margin: float) -> float | None:
        """The p-value of the two one-sided t tests (TOST) that the true mean lies inside
        ``(−margin, margin)``: the larger of ``P(T >= (m + margin)/se)`` and
        ``P(T <= (m − margin)/se)``; below 0.05 exactly when the 90% interval is inside.
        None without an se, at zero spread (no spread is no evidence) or without a margin."""
        if self.mean is None or not self.se or self.df is None or self.df <= 0 or margin <= 0:
            return None
        lower = 1.0 - t_cdf((self.mean + margin) / self.se, self.df)
        upper = t_cdf((self.mean - margin) / self.se, self.df)
        return max(lower, upper)


def clean(value: float | None) -> float | None:
    """A figure within 1e-12 of 0 is 0 (a sum of differences like 2/3 − 1/3 leaves ~1e-17)."""
    if value is None:
        return None
    return 0.0 if abs(value) < TINY else value


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


def by_cluster(values: Sequence[float], clusters: Sequence[Hashable]) -> dict[Hashable, list[float]]:
    """The values of each cluster, in the order the clusters first appear."""
    groups: dict[Hashable, list[float]] = {}
    for value, cluster in zip(values, clusters, strict=True):
        groups.setdefault(cluster, []).append(value)
    return groups
