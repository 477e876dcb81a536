"""Student's t, the exact sign test and Holm's adjustment, in plain Python.

Why here and not scipy: ``bl compare`` runs wherever ``bl`` does, and the
statistics must not pull a hundred megabytes of numerical libraries into a
command line client.  scipy is the tests' (``tests/unit/compare/test_compare_stats.py``
checks every function here against it to about 1e-9 over many degrees of
freedom and values).

The one hard piece is the regularized incomplete beta function ``I_x(a, b)``:
the t distribution's tails and the binomial's cumulative probabilities are both
values of it.  It is evaluated by its continued fraction (the classical one, as
in Press et al., *Numerical Recipes*, section 6.4), summed with the modified
Lentz method, on the side of ``x`` where the fraction converges fast, and the
complement ``1 - x`` is passed in separately so that a tail near 1 keeps its
digits.  The t quantile is found by Newton's method on that tail, started from a
bracket and kept inside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

_TINY = 1e-300
_EPS = 1e-16
_MAX_TERMS = 20_000


# ------------------------------------------------------- incomplete beta
def _continued_fraction(a: float, b: float, x: float, y: float) -> float:
    """The continued fraction of ``I_x(a, b)`` (without its front factor), modified Lentz.

    ``y`` is ``1 - x`` as the caller knows it exactly.  The even terms are
    ``m (b - m) x / ((a + 2m - 1)(a + 2m))``, the odd ones
    ``-(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))``.
    """
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, _MAX_TERMS):
        two_m = 2 * m
        even = m * (b - m) * x / ((a + two_m - 1.0) * (a + two_m))
        d = 1.0 + even * d
        c = 1.0 + even / c
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = c if abs(c) > _TINY else _TINY
        result *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1.0))
        d = 1.0 + odd * d
        c = 1.0 + odd / c
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = c if abs(c) > _TINY else _TINY
        step = d * c
        result *= step
        if abs(step - 1.0) < _EPS:
            return result
    return result  # not reached for the arguments used here (a + b below ~1e9)


def betainc(a: float, b: float, x: float, y: float | None = None) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for ``a, b > 0``, ``0 <= x <= 1``.

    ``y`` is ``1 - x`` when the caller has it more exactly than the subtraction
    would give (a tail probability near 1).
    """
    if y is None:
        y = 1.0 - x
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log(y))
    # The fraction converges quickly for x < (a + 1) / (a + b + 2); otherwise use the symmetry
    # I_x(a, b) = 1 - I_{1-x}(b, a).
    if x * (a + b + 2.0) < a + 1.0:
        return math.exp(log_front) * _continued_fraction(a, b, x, y) / a
    return 1.0 - math.exp(log_front) * _continued_fraction(b, a, y, x) / b


# ---------------------------------------------------------- Student's t
def t_two_sided(t: float, df: float) -> float:
    """``P(|T| >= |t|)`` for Student's t with ``df`` degrees of freedom (the two-sided p-value).

    It is ``I_{df/(df+t^2)}(df/2, 1/2)``; both ``df/(df+t^2)`` and its complement
    ``t^2/(df+t^2)`` are computed directly, so neither a small nor a large ``t``
    loses digits.
    """
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if math.isinf(t):
        return 0.0
    t2 = t * t
    if t2 == 0.0:
        return 1.0
    return min(1.0, betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2)))


def t_cdf(t: float, df: float) -> float:
    """``P(T <= t)`` for Student's t with ``df`` degrees of freedom."""
    half = t_two_sided(t, df) / 2.0
    return 1.0 - half if t > 0 else half


def _t_density(t: float, df: float) -> float:
    log = (math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
           - (df + 1.0) / 2.0 * math.log1p(t * t / df))
    return math.exp(log)


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``0 < p < 1``).

    Solves ``t_two_sided(t) = 2 min(p, 1 - p)`` for ``t >= 0`` by Newton's method kept
    inside a bracket (a step that would leave it bisects instead); cached, since a
    comparison asks for the same few (0.975 at a handful of df).
    """
    if not 0.0 < p < 1.0:
        raise ValueError("p must be between 0 and 1")
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if p == 0.5:
        return 0.0
    target = 2.0 * min(p, 1.0 - p)
    if df == 1.0:  # Cauchy: exact
        value = math.tan(math.pi * (0.5 - target / 2.0))
        return value if p > 0.5 else -value
    low, high = 0.0, 2.0
    while t_two_sided(high, df) > target:
        low, high = high, high * 2.0
    t = (low + high) / 2.0
    for _ in range(200):
        gap = t_two_sided(t, df) - target  # decreasing in t
        if gap > 0:
            low = t
        else:
            high = t
        slope = -2.0 * _t_density(t, df)
        step = t - gap / slope if slope else (low + high) / 2.0
        if not low < step < high:
            step = (low + high) / 2.0
        if abs(step - t) <= 1e-15 * max(1.0, abs(step)):
            t = step
            break
        t = step
    return t if p > 0.5 else -t


# ------------------------------------------------------------ sign test
_EXACT_SIGN_LIMIT = 2000  # up to this many non-ties, integers; beyond, the incomplete beta


def sign_test_p(improved: int, regressed: int) -> float:
    """The exact two-sided sign test of ``improved`` against ``regressed`` (ties dropped).

    Under the null each non-tie is up or down with probability 1/2, so the
    count up is Binomial(m, 1/2) with ``m = improved + regressed``; the p-value
    is ``min(1, 2 P(X <= min(improved, regressed)))`` (the distribution is
    symmetric, so this is also the sum of the probabilities no larger than the
    one observed).  No non-tie at all (m = 0) gives 1.0.
    """
    m = improved + regressed
    if improved < 0 or regressed < 0:
        raise ValueError("counts must not be negative")
    if m == 0:
        return 1.0
    k = min(improved, regressed)
    if 2 * k == m:
        return 1.0
    if m <= _EXACT_SIGN_LIMIT:
        tail = sum(math.comb(m, i) for i in range(k + 1))
        return min(1.0, 2 * tail / 2 ** m)
    # P(X <= k) = I_{1/2}(m - k, k + 1)
    return min(1.0, 2.0 * betainc(m - k, k + 1.0, 0.5, 0.5))


# ------------------------------------------------------------------ Holm
def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (None: not in the family).

    Sorted ascending as ``p_(1) <= ... <= p_(m)``, the adjusted ``p_(j)`` is
    ``max over i <= j of min(1, (m - i + 1) p_(i))``; a hypothesis is rejected at
    level α exactly when its adjusted p-value is at most α, which controls the
    family-wise error rate at α.  Ties keep their input order (it does not change
    any value).  With one p-value it is that p-value.
    """
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


# ------------------------------------------------------ noncentral t
def normal_cdf(z: float) -> float:
    """``P(Z <= z)`` for the standard normal (``erfc`` keeps the lower tail's digits)."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def _nct_upper_half(t: float, df: float, nc: float) -> float:
    """``P(0 <= T' <= t)``-part of Lenth's series for ``t >= 0`` (AS 243, 1989), without the
    ``Phi(-nc)`` term: the Poisson-weighted incomplete betas summed in both directions from the
    largest weight, so a large noncentrality neither underflows nor needs thousands of terms."""
    x = t * t / (t * t + df)
    if x <= 0.0:
        return 0.0
    lam = nc * nc / 2.0
    y = df / (t * t + df)
    b = df / 2.0
    # term j: p_j I_x(j + 1/2, b) + q_j I_x(j + 1, b), p_j = e^-lam lam^j / j! / 2,
    # q_j = e^-lam lam^j / Gamma(j + 3/2) * nc / sqrt(2) / 2 (Lenth's p and q, by index)
    top = max(0, int(lam))
    total = 0.0

    def term(j: int) -> float:
        log_p = -lam + j * math.log(lam) - math.lgamma(j + 1.0) if lam > 0 else (0.0 if j == 0 else -math.inf)
        log_q = (-lam + j * math.log(lam) - math.lgamma(j + 1.5) if lam > 0
                 else (-math.lgamma(1.5) if j == 0 else -math.inf))
        p = 0.5 * math.exp(log_p) if log_p > -745 else 0.0
        q = 0.5 * math.exp(log_q) * nc / math.sqrt(2.0) if log_q > -745 else 0.0
        value = 0.0
        if p:
            value += p * betainc(j + 0.5, b, x, y)
        if q:
            value += q * betainc(j + 1.0, b, x, y)
        return value

    j = top
    while j >= 0:  # downwards from the peak
        value = term(j)
        total += value
        if j < top and abs(value) < 1e-17 * max(abs(total), 1e-300):
            break
        j -= 1
    j = top + 1
    while j < top + _MAX_TERMS:  # upwards
        value = term(j)
        total += value
        if abs(value) < 1e-17 * max(abs(total), 1e-300):
            break
        j += 1
    return total


def nct_cdf(t: float, df: float, nc: float) -> float:
    """``P(T' <= t)`` for the noncentral t with ``df`` degrees of freedom and noncentrality ``nc``.

    ``T' = (Z + nc) / sqrt(V / df)``; for ``t >= 0`` it is ``Phi(-nc)`` plus Lenth's series
    (AS 243) of incomplete beta functions; for ``t < 0`` it is ``1 - F(-t; df, -nc)``.
    ``tests/unit/compare/test_compare_stats.py`` checks it against scipy's ``nct``.
    """
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if t < 0:
        return min(1.0, max(0.0, 1.0 - (normal_cdf(nc) + _nct_upper_half(-t, df, -nc))))
    return min(1.0, max(0.0, normal_cdf(-nc) + _nct_upper_half(t, df, nc)))


def t_power(nc: float, df: float, alpha: float = 0.05) -> float:
    """The power of the two-sided t test at level ``alpha`` when the true effect is ``nc``
    standard errors: ``P(|T'| > t(1 - alpha/2, df))`` with ``T'`` noncentral t(df, nc)."""
    crit = t_quantile(1.0 - alpha / 2.0, df)
    return (1.0 - nct_cdf(crit, df, nc)) + nct_cdf(-crit, df, nc)


@lru_cache(maxsize=4096)
def detectable_noncentrality(df: float, power: float = 0.80, alpha: float = 0.05) -> float:
    """The effect, in standard errors, that the two-sided t test at ``alpha`` with ``df`` degrees
    of freedom detects with probability ``power``: the root of ``t_power(nc, df) = power``
    (bisection; ``t_power`` increases with ``nc``).  About 2.80 at large df, 3.31 at df 7."""
    if not 0.0 < power < 1.0 or not 0.0 < alpha < 1.0:
        raise ValueError("power and alpha must be between 0 and 1")
    low, high = 0.0, 4.0
    while t_power(high, df, alpha) < power:
        low, high = high, high * 2.0
        if high > 1e6:
            return math.inf
    for _ in range(100):
        mid = (low + high) / 2.0
        if t_power(mid, df, alpha) < power:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * high:
            break
    return (low + high) / 2.0
