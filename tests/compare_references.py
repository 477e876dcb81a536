"""Independent reference computations of ``bl compare``'s clustered figures, in numpy/scipy/statsmodels.

Shared by tests/unit/compare/test_compare_stats.py and tests/cli/compare/test_compare_cli.py: each computes a figure from
the data by a general formula (matrices, brute force), never by the package's shortcuts.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sp


def sandwich_se(values: np.ndarray, clusters: list) -> float:
    """The cluster-robust SE of an intercept-only regression (the mean), as a sandwich of
    numpy matrices, with the G/(G-1) correction the definition has."""
    n = len(values)
    x = np.ones((n, 1))
    beta = np.linalg.solve(x.T @ x, x.T @ values)
    u = values - x @ beta
    bread = np.linalg.inv(x.T @ x)
    names = sorted(set(clusters), key=str)
    meat = np.zeros((1, 1))
    for c in names:
        idx = [i for i, k in enumerate(clusters) if k == c]
        s = x[idx].T @ u[idx]
        meat += np.outer(s, s)
    g = len(names)
    return float(np.sqrt((g / (g - 1) * bread @ meat @ bread)[0, 0]))


def cr2_bm(values: np.ndarray, clusters: list) -> tuple[float, float]:
    """(se, df) of the mean by CR2 and Bell-McCaffrey, in the general matrix form of Pustejovsky &
    Tipton (2018, eq. 5 and section 3.2, working model the identity) for a design ``X = 1``:
    ``A_g = (I - H_gg)^(-1/2)`` by eigendecomposition, ``V = B Σ X_g' A_g u_g u_g' A_g X_g B``,
    ``p_g = (I - H)_g' A_g X_g B c``, ``df = (Σ_g p_g'p_g)² / Σ_gh (p_g'p_h)²``."""
    n = len(values)
    x = np.ones((n, 1))
    bread = np.linalg.inv(x.T @ x)
    hat = x @ bread @ x.T
    u = values - hat @ values
    names = sorted(set(clusters), key=str)
    meat = np.zeros((1, 1))
    ps = []
    residual_maker = np.eye(n) - hat
    for c in names:
        idx = [i for i, k in enumerate(clusters) if k == c]
        w, v = np.linalg.eigh(np.eye(len(idx)) - hat[np.ix_(idx, idx)])
        a = v @ np.diag(w ** -0.5) @ v.T
        s = x[idx].T @ a @ u[idx]
        meat += np.outer(s, s)
        ps.append(residual_maker[idx, :].T @ a @ x[idx] @ bread @ np.ones(1))
    p = np.array(ps)
    gram = p @ p.T
    return float(np.sqrt((bread @ meat @ bread)[0, 0])), float(np.trace(gram) ** 2 / (gram ** 2).sum())


def webb_vectors(g: int) -> np.ndarray:
    """Every vector of Webb's six weights for g clusters (the bootstrap enumerates them up to 6)."""
    import itertools
    webb = [-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)]
    return np.array(list(itertools.product(webb, repeat=g)))


def wcr_p_numpy(values: np.ndarray, clusters: list, weights: np.ndarray, mu0: float) -> float:
    """The restricted wild cluster bootstrap p-value of mean = mu0, from the data: every bootstrap
    sample built as data (``mu0 + w_g (x_i - mu0)``, one row per weight vector), its mean and its
    CR1 se (cluster sums of residuals through an indicator matrix), as numpy matrices."""
    values = np.asarray(values, dtype=float)
    names = list(dict.fromkeys(clusters))  # column j of the weights: the j-th cluster to appear
    index = np.array([names.index(c) for c in clusters])
    member = np.zeros((len(values), len(names)))
    member[np.arange(len(values)), index] = 1.0
    g, n = len(names), len(values)
    t = (values.mean() - mu0) / sandwich_se(values, clusters)
    star = mu0 + weights[:, index] * (values - mu0)
    means = star.mean(axis=1)
    sums = (star - means[:, None]) @ member
    se = np.sqrt(g / (g - 1) * (sums ** 2).sum(axis=1)) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where(se > 0, (means - mu0) / se, np.where(means != mu0, np.inf, 0.0))
    return float(np.mean(np.abs(t_star) >= abs(t) * (1 - 1e-12)))


def wcr_interval_numpy(values: np.ndarray, clusters: list, weights: np.ndarray,
                        level: float = 0.95) -> list[float]:
    """The values mu0 the bootstrap test does not reject, by bisection outwards from the mean."""
    m, se = float(np.mean(values)), sandwich_se(np.asarray(values, dtype=float), clusters)
    bounds = []
    for side in (-1.0, 1.0):
        inner, step = m, se
        while wcr_p_numpy(values, clusters, weights, m + side * step) >= 1 - level:
            inner, step = m + side * step, step * 2
        outer = m + side * step
        while abs(outer - inner) > 1e-9 * se:
            middle = (inner + outer) / 2
            if wcr_p_numpy(values, clusters, weights, middle) < 1 - level:
                outer = middle
            else:
                inner = middle
        bounds.append((inner + outer) / 2)
    return bounds


def mde_factor(df: float) -> float:
    """The noncentrality with 80% power for the two-sided 5% t test, by scipy's nct and brentq."""
    from scipy import optimize
    crit = sp.t.ppf(0.975, df)

    def gap(nc: float) -> float:
        power = sp.nct.sf(crit, df, nc) + sp.nct.cdf(-crit, df, nc)
        if math.isnan(power):  # scipy's nct fails at small df: the power as an integral over chi²(df)
            from scipy import integrate

            def given(v: float) -> float:
                s = crit * math.sqrt(v / df)
                return (sp.norm.sf(s - nc) + sp.norm.cdf(-s - nc)) * sp.chi2.pdf(v, df)
            power = integrate.quad(given, 0, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
        return power - 0.8

    high = 3.0
    while gap(high) < 0:  # scipy's nct is nan at a large noncentrality: bracket from below
        high *= 1.5
    return optimize.brentq(gap, 0.5, high, xtol=1e-13)


def statsmodels_cr1(values: np.ndarray, clusters: list) -> float:
    """statsmodels' cluster-robust se of the mean (OLS on a constant, CR1 without the (n-1)/(n-k)
    factor, which is 1 here)."""
    import statsmodels.api as sm
    codes = np.unique(np.array(clusters), return_inverse=True)[1]
    fit = sm.OLS(values, np.ones((len(values), 1))).fit(cov_type="cluster", cov_kwds={"groups": codes})
    return float(fit.bse[0])


def drawn_weights(g: int) -> np.ndarray:
    """The weight vectors the package draws for g clusters (beyond 6 it draws, seeded): the same
    vectors, so that the brute-force bootstrap above can be compared with its answer exactly."""
    import random

    from benchloop.compare import wildboot
    if 6 ** g <= wildboot.ENUMERATE_LIMIT:
        return webb_vectors(g)
    return np.array(wildboot._draws(random.Random(wildboot.SEED), g, wildboot.DRAWS))


def difference_figures(values, clusters: list | None) -> tuple[float, float, float, float, float]:
    """(mean, se, low, high, p) of a tested difference as ``bl compare`` defines it: Student's t
    with n - 1 df without clusters; with them the CR2 se and the wild cluster bootstrap's interval
    and p-value (brute force over the package's weight vectors)."""
    values = np.asarray(values, dtype=float)
    m = float(values.mean())
    if clusters is None:
        se, df = values.std(ddof=1) / math.sqrt(len(values)), len(values) - 1
        half = sp.t.ppf(0.975, df) * se
        return m, se, m - half, m + half, 2 * sp.t.sf(abs(m) / se, df)
    se, _ = cr2_bm(values, clusters)
    weights = drawn_weights(len(set(clusters)))
    low, high = wcr_interval_numpy(values, clusters, weights)
    return m, se, low, high, wcr_p_numpy(values, clusters, weights, 0.0)
