"""A verdict that stays valid however often one looks: ``bl compare --sequential`` and ``--watch``.

Why a module of its own: the fixed-sample figures of :mod:`.stats` hold at *one* look.
Read again while runs progress, stopping at the first "better" or "worse", a comparison of
two runs of one system is called different far more often than 5% (18.7% at 9 looks, the
audit measured).  A **confidence sequence** covers the true difference at every sample
size at once, so a verdict read from it at any look, or at every look, is wrong at most
``alpha`` of the time.  The price is a wider interval at each look; both are shown.

What is computed (``docs/compare.md``, "Looking while runs progress", cites the sources):

* the values are the paired differences of pass rate ``d_i`` (candidate - baseline, in
  [-1, 1]) of the instances whose every trial has *finished* in both runs (no job of the
  instance in a status that is not final): an instance still running in either run is
  not looked at, so a partly finished instance never moves the figure;
* the interval is the two-sided **normal-mixture (asymptotic) confidence sequence** of
  Waudby-Smith, Arnold, Wu, Wang & Ramdas (2024, Ann. Statist.), on the boundary of
  Robbins' normal mixture as Howard, Ramdas, McAuliffe & Sekhon (2021, Ann. Statist.)
  give it: after ``t`` instances with mean ``m`` and standard deviation ``s``,

      m +- s * sqrt( 2 (t rho^2 + 1) / (t^2 rho^2) * log( sqrt(t rho^2 + 1) / alpha ) )

  with ``rho^2 = (-2 log alpha + log(-2 log alpha + 1)) / t*``, the mixture tuned to be
  tightest at ``t*`` instances: the instances the two job lists share, finished or not
  (known before any outcome, the same at every look while the runs progress);
* ``s^2`` is the variance of the values with four pseudo-values of variance 1/2 mixed in
  (1/2: the largest variance of the difference of two runs of one system on one instance,
  ``2 p (1 - p)`` at ``p = 1/2``): ``(4 * 1/2 + sum (d_i - m)^2) / (4 + t - 1)``.  Without
  them, three instances that all improved would have ``s = 0`` and a point interval; with
  one pseudo-value of variance 1/4 the sequence, valid only asymptotically, calls two runs
  of one system on 40 coin-flip instances different 6.5% of the time at 50 looks; with
  these four, 2.8% (the seeded simulations of the tests), at a small cost in power;
* the **anytime-valid p-value** is the ``alpha`` at which the interval just touches 0:
  ``min(1, sqrt(t rho^2 + 1) * exp(-t^2 rho^2 m^2 / (2 s^2 (t rho^2 + 1))))``; the
  chance that it is ever below ``alpha`` for two runs of one system is at most
  ``alpha``.  Over several candidates it is Holm-adjusted (valid uniformly over the
  looks: Holm's proof is a union bound), and each candidate's interval is at level
  ``1 - alpha / k`` (Bonferroni), so an interval that excludes 0 agrees with the verdict;
* with ``--cluster``, ``s^2`` is at least ``t`` times the cluster-robust (CR1) variance of
  the mean (:func:`benchloop.compare.estimates.clustered_se`): instances of one repository
  are not independent, and the sequence then counts their evidence by cluster, as the
  fixed-sample figures do (asymptotically in the number of clusters: a warning says so).

Plain Python (``math`` only), as every figure of the package.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .distributions import holm
from .estimates import clustered_se, clusterer
from .groups import Group, as_group

ALPHA = 0.05
PRIOR_VALUES = 4  # pseudo-values mixed into s^2 (see the module docstring)
PRIOR_VARIANCE = 0.5  # their variance
METHOD = "normal-mixture confidence sequence (Howard et al. 2021; Waudby-Smith et al. 2024)"


def rho_squared(horizon: int, alpha: float = ALPHA) -> float:
    """The mixture's ``rho^2``, tuned to be tightest at ``horizon`` values."""
    log_term = -2 * math.log(alpha)
    return (log_term + math.log(log_term + 1)) / max(int(horizon), 1)


@dataclass(frozen=True)
class Sequential:
    """The confidence sequence of a mean after ``n`` values, at one look."""

    n: int
    mean: float | None
    sd: float | None  # the regularised s (the pseudo-values mixed in; at least the clustered one)
    half_width: float | None
    p_value: float | None  # anytime-valid, against a mean of 0
    horizon: int
    alpha: float

    @property
    def interval(self) -> list[float] | None:
        """``[m - h, m + h]``, clipped to [-1, 1] (a difference of pass rates lies there)."""
        if self.mean is None or self.half_width is None:
            return None
        return [max(-1.0, self.mean - self.half_width), min(1.0, self.mean + self.half_width)]


def from_sums(n: int, total: float, squares: float, horizon: int, alpha: float = ALPHA,
              floor: float = 0.0) -> Sequential:
    """The sequence after ``n`` values of sum ``total`` and sum of squared deviations from
    their mean ``squares`` (so a look costs O(1) once the sums are kept); ``floor``: a
    variance ``s^2`` is never below (``--cluster``: the cluster-robust one)."""
    if n < 2:
        return Sequential(n, total / n if n else None, None, None, None, horizon, alpha)
    m = total / n
    variance = max((PRIOR_VALUES * PRIOR_VARIANCE + max(squares, 0.0)) / (PRIOR_VALUES + n - 1), floor)
    rho2 = rho_squared(horizon, alpha)
    grow = n * rho2 + 1
    half = math.sqrt(variance * 2 * grow / (n * n * rho2) * math.log(math.sqrt(grow) / alpha))
    exponent = -(n * n * rho2 * m * m) / (2 * variance * grow)
    p = min(1.0, math.sqrt(grow) * math.exp(exponent))
    return Sequential(n, m, math.sqrt(variance), half, p, horizon, alpha)


def of(values: Sequence[float], horizon: int | None = None, alpha: float = ALPHA,
       clusters: Sequence[Hashable] | None = None) -> Sequential:
    """The sequence of ``values`` (their order does not matter), tuned for ``horizon``
    values (default: as many as there are); with ``clusters`` (aligned with the values),
    ``s^2`` is at least ``n`` times the cluster-robust variance of the mean."""
    n = len(values)
    total = math.fsum(values)
    m = total / n if n else 0.0
    squares = math.fsum((v - m) ** 2 for v in values)
    floor = 0.0
    if clusters is not None:
        se, _ = clustered_se(values, clusters)
        floor = n * se * se if se is not None else 0.0
    return from_sums(n, total, squares, horizon if horizon is not None else n, alpha, floor)


def verdict(p_adjusted: float | None, difference: float | None, alpha: float = ALPHA) -> str:
    """``better`` / ``worse`` when the anytime-valid (adjusted) p-value is below ``alpha``."""
    if p_adjusted is None or difference is None or p_adjusted >= alpha or difference == 0:
        return "inconclusive"
    return "better" if difference > 0 else "worse"


# ------------------------------------------------------------- from the rows
def unfinished(rows: Iterable[Mapping[str, Any]] | Group, final: Collection[str]) -> set[str]:
    """The instances with a job in a status that is not final (``final``: the table's final
    job statuses; a job without a status counts as not final); ``rows`` may be the group
    gathered already (each instance keeps its jobs' statuses)."""
    if isinstance(rows, Group):
        return {str(k) for k, inst in rows.instances.items() if any(s not in final for s in inst.statuses)}
    out = set()
    for row in rows:
        key = row.get("instance")
        if key is not None and row.get("status") not in final:
            out.add(str(key))
    return out


def running_jobs(rows: Iterable[Mapping[str, Any]] | Group, final: Collection[str]) -> int:
    if isinstance(rows, Group):
        return sum(count for status, count in rows.statuses.items() if status not in final)
    return sum(1 for row in rows if row.get("status") not in final)


def figures(base: Any, cand: Any, base_rows: Sequence[Mapping[str, Any]] | Group,
            cand_rows: Sequence[Mapping[str, Any]] | Group,
            final: Collection[str], alpha: float = ALPHA, cluster: str | None = None) -> dict[str, Any]:
    """The ``sequential`` element of one comparison (``base``, ``cand``: the groups of
    :func:`benchloop.compare.groups.gather`), before the adjustment over candidates."""
    waiting = unfinished(base_rows, final) | unfinished(cand_rows, final)
    b, c = base.scored, cand.scored
    keys = sorted(k for k in b if k in c and k not in waiting)
    shared = {k for k in base.instances if k in cand.instances}
    values = [c[k].pass_rate - b[k].pass_rate for k in keys]
    cluster_of = clusterer(cluster)
    seq = of(values, max(len(shared), len(keys)), alpha, None if cluster_of is None else [cluster_of(k) for k in keys])
    return {
        "method": METHOD,
        "instances": seq.n,
        "instances_waiting": len(shared - set(keys)),
        "horizon": seq.horizon,
        "level": 1 - alpha,
        "pass_rate_difference": seq.mean,
        "interval": seq.interval,
        "p_value": seq.p_value,
        "p_value_adjusted": seq.p_value,
        "verdict": verdict(seq.p_value, seq.mean),
        "running_jobs": running_jobs(base_rows, final) + running_jobs(cand_rows, final),
    }


def add(results: Sequence[dict[str, Any]], groups: Sequence[tuple[str, Iterable[Mapping[str, Any]] | Group]],
        final: Collection[str], alpha: float = ALPHA) -> None:
    """Add ``sequential`` to every comparison of one call (``groups``: every group's ``(id,
    rows)``, the baseline first, as :func:`benchloop.compare.stats.compare_groups` took them)
    and make it the summary: each candidate's sequence at level ``1 - alpha / k``, the
    anytime-valid p-values Holm-adjusted over the ``k`` candidates, the verdict from them."""
    gathered = [as_group(gid, value) for gid, value in groups]
    k = max(len(results), 1)
    cluster = results[0].get("cluster") if results else None
    elements = [figures(gathered[0], cand, gathered[0], cand, final, alpha / k, cluster) for cand in gathered[1:]]
    for element, adjusted in zip(elements, holm([e["p_value"] for e in elements]), strict=True):
        element["level"] = 1 - alpha  # simultaneous over the candidates (each at 1 - alpha / k)
        element["p_value_adjusted"] = adjusted
        element["verdict"] = verdict(adjusted, element["pass_rate_difference"], alpha)
    for result, element in zip(results, elements, strict=True):
        result["sequential"] = element
        result["summary"] = sentence(result)
        if result.get("cluster") is not None:
            result["warnings"] = [*result["warnings"],
                                  "--sequential with --cluster: the sequence's variance is the cluster-robust one, "
                                  "valid as the clusters grow many; with few clusters its verdict is only roughly "
                                  "at 5% (read the fixed-sample interval too)"]


# ------------------------------------------------------------------ words
def _pp(value: float) -> str:
    return f"{100 * value:+.1f} pp"


def _interval(ci: Sequence[float]) -> str:
    return f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def _p(value: float) -> str:
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def sentence(result: Mapping[str, Any]) -> str:
    """The verdict of the sequential mode as one sentence (the ``summary`` under --sequential)."""
    base, cand = str(result["baseline"]), str(result["candidate"])
    s = result["sequential"]
    n, waiting = s["instances"], s["instances_waiting"]
    still = f", {waiting} still running" if waiting else ""
    if s["interval"] is None:
        return (f"{cand} cannot be compared with {base} yet: {n} instance{'s' if n != 1 else ''} finished in "
                f"both runs{still} (at least 2 are needed)")
    over = f"over {n} instances finished in both runs{still}"
    evidence = f"anytime-valid p {_p(s['p_value_adjusted'])}"
    if s["verdict"] in ("better", "worse"):
        return (f"{cand} is {s['verdict']} than {base} (sequential): {_pp(s['pass_rate_difference'])} "
                f"{_interval(s['interval'])} {over} ({evidence})")
    return (f"{cand} is not distinguishable from {base} yet (sequential): {_pp(s['pass_rate_difference'])} "
            f"{_interval(s['interval'])} {over} ({evidence})")


def state(results: Sequence[Mapping[str, Any]]) -> tuple[str, str, bool]:
    """For ``--watch``: what a change of is reported (each candidate's verdict), the line that
    reports it, and whether the comparison is settled (every candidate better or worse)."""
    verdicts = [f"{r['candidate']} {r['sequential']['verdict']}" for r in results]
    lines = []
    for r in results:
        s = r["sequential"]
        figure = (f"{_pp(s['pass_rate_difference'])} {_interval(s['interval'])}, anytime-valid p "
                  f"{_p(s['p_value_adjusted'])}" if s["interval"] is not None else "no interval yet")
        n = s["instances"]
        lines.append(f"{r['candidate']}: {s['verdict']} ({figure}; {n} instance{'s' if n != 1 else ''} finished "
                     f"in both, {s['instances_waiting']} waiting)")
    settled = bool(results) and all(r["sequential"]["verdict"] in ("better", "worse") for r in results)
    return "; ".join(verdicts), "; ".join(lines), settled


def warn_running(results: Sequence[dict[str, Any]], groups: Sequence[tuple[str, Iterable[Mapping[str, Any]] | Group]],
                 final: Collection[str]) -> None:
    """Without --sequential: a warning in every comparison of a group that still has running
    jobs (a verdict read now and again later is not a 5% verdict)."""
    running = {gid: running_jobs(rows, final) for gid, rows in groups}
    for result in results:
        counts = {gid: running[gid] for gid in (result["baseline"], result["candidate"]) if running.get(gid)}
        if counts:
            result["warnings"] = [*result["warnings"], running_warning(counts)]


def running_warning(counts: Mapping[str, int]) -> str:
    """The fixed-sample comparison's warning about groups that still have running jobs."""
    listed = ", ".join(f"{gid} {n}" for gid, n in counts.items())
    return (f"jobs still running ({listed}): a verdict read now and again later is wrong more often than "
            "5% (every look is another chance of a false verdict); use --sequential (or --watch), whose "
            "verdict stays valid however often you look")


def price_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """Both intervals of the pass rate (the price of validity under looking), for the
    renderings: ``[label, difference, interval, over, evidence]`` per row; none without
    ``sequential``."""
    s = result.get("sequential")
    if s is None:
        return []
    p = result["paired"]

    def pp(value: Any) -> str:
        return _pp(value) if isinstance(value, (int, float)) else "-"

    def ci(value: Any) -> str:
        return _interval(value) if value else "-"

    fixed_p = p.get("p_value_adjusted")
    seq_p = s.get("p_value_adjusted")
    return [
        ["fixed-sample 95% CI (valid at one look)", pp(p.get("pass_rate_difference")), ci(p.get("ci95")),
         f"{p['instances']} instances", f"p {_p(fixed_p)}" if fixed_p is not None else ""],
        [f"sequential {100 * s['level']:.0f}% CS (valid at every look)", pp(s.get("pass_rate_difference")),
         ci(s.get("interval")), f"{s['instances']} finished in both",
         (f"anytime-valid p {_p(seq_p)}" if seq_p is not None else "") + f", {s['verdict']}"],
    ]


PRICE_TITLE = "the price of looking (pass rate, candidate - baseline): the sequential verdict decides"


def markdown_lines(result: Mapping[str, Any]) -> list[str]:
    """``--output markdown``: the two intervals as a table (none without ``sequential``)."""
    rows = price_rows(result)
    if not rows:
        return []
    head = "| figure | difference | interval | over | evidence |"
    rule = "| --- | ---: | ---: | ---: | --- |"
    body = ["| " + " | ".join(r) + " |" for r in rows]
    return ["", f"{PRICE_TITLE[0].upper()}{PRICE_TITLE[1:]}:", "", head, rule, *body]


