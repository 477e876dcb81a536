"""The figures of ``bl compare``: per instance, per group, paired, costs, slices, verdicts.

The method is Evan Miller's "Adding Error Bars to Evals" (2024): the unit of
analysis is the **instance** (the benchmark item), not the job.  The jobs of
one instance in one group are trials; they are averaged first, and every
figure is then a mean over instances with a t interval (:mod:`.estimates`).
Two groups are compared on the instances scored in both (paired), which
removes the variance of instances being easy or hard for both.

The definitions, exactly as computed here (``docs/compare.md`` says the same
for users):

* a job is **scored** when its metric gives a number (:mod:`.scores`); it
  **passes** when that score is at or above the pass threshold, or, for a
  boolean metric, when the metric is true (its score is then 1.0 or 0.0);
* per instance, over its scored jobs: ``pass_rate_i`` = mean of pass (0/1),
  ``mean_i`` = mean of the scores; an instance without a scored job has
  neither and takes part in nothing below;
* per group: ``pass_rate`` / ``mean`` = mean over the scored instances, with
  a 95% t interval; ``paired_pass_rate`` / ``paired_mean`` the same means over
  the paired instances only (like for like);
* paired, over the instances scored in both groups, ``d_i`` = candidate −
  baseline: the difference, its se, t interval and p-value, the sign test of
  improved against regressed (of clusters under ``--cluster``), the minimum
  detectable effect (the noncentral t's, at the df used), and with ``--margin``
  the equivalence test (TOST) on the 90% interval;
  ``p_value_adjusted`` is Holm's adjustment over the candidates of one call,
  and the **verdict** is ``better`` / ``worse`` when it is below 0.05, else
  ``inconclusive``;
* costs: per instance the mean of a cost column over its scored jobs that
  carry a number in it, then the paired difference as above, over the paired
  instances where both groups have a value (Holm-adjusted over the candidates
  too: a cost is marked only with the same adjustment);
* slices (``--by``): the paired figures of each value's jobs alone, Holm-adjusted
  over the slices of one comparison, with Bonferroni intervals (``ci95_adjusted``)
  so that an interval never contradicts its verdict;
* under ``--cluster`` every tested difference takes its p-value and 95% interval
  from the restricted wild cluster bootstrap (:mod:`.wildboot`), its se from CR2
  and its df from Bell-McCaffrey (:mod:`.estimates`);
* a figure within 1e-12 of 0 is 0.

Edge cases are decided in :mod:`.estimates` (no value, one value, zero
spread); a job without an instance key counts in ``jobs`` (and
``jobs_scored``) but belongs to no instance.  The figures do not depend on the
order of pages or jobs (sums are ``math.fsum``, instances sorted).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import caveats, noise, verdicts
from .distributions import holm
from .estimates import Clusterer, Estimate, clean, clusterer, interval, mean
from .evidence import FDR
from .groups import Group, Instance, Options, Row, as_group, gather

__all__ = ["Group", "Instance", "Options", "compare_groups", "gather", "per_instance", "verdict"]

ALPHA = 0.05


def _sorted_keys(keys: Iterable[str]) -> list[str]:
    return sorted(keys, key=str)


def _estimate(values: Sequence[float], keys: Sequence[str], cluster: Clusterer | None,
              tested: bool = False) -> Estimate:
    """The estimate of ``values``; a ``tested`` difference under ``--cluster`` takes its p-value and
    interval from the wild cluster bootstrap (a group's own interval stays CR2's t)."""
    return Estimate.of(values, None if cluster is None else [cluster(k) for k in keys], bootstrap=tested)


# ------------------------------------------------------------------ figures
def paired_keys(baseline: Group, candidate: Group) -> list[str]:
    """The instances scored in both groups, sorted."""
    b, c = baseline.scored, candidate.scored
    return _sorted_keys(k for k in b if k in c)


def group_figures(group: Group, paired: Sequence[str], cluster: Clusterer | None = None) -> dict[str, Any]:
    """One element of ``groups``: counts, pass rate and mean score with their 95% CIs, and the
    same means over the paired instances only."""
    scored = group.scored
    keys = _sorted_keys(scored)
    rate = _estimate([scored[k].pass_rate for k in keys], keys, cluster)  # type: ignore[misc]
    score = _estimate([scored[k].mean for k in keys], keys, cluster)  # type: ignore[misc]
    return {
        "group_id": group.group_id,
        "jobs": group.jobs,
        "jobs_scored": group.jobs_scored,
        "instances": len(scored),
        "clusters": rate.clusters,
        "pass_rate": rate.mean,
        "pass_rate_ci95": rate.ci95,
        "mean": score.mean,
        "mean_ci95": score.ci95,
        "paired_pass_rate": mean([scored[k].pass_rate for k in paired]),  # type: ignore[misc]
        "paired_mean": mean([scored[k].mean for k in paired]),  # type: ignore[misc]
    }


def verdict(p_adjusted: float | None, difference: float | None) -> str:
    """``better`` / ``worse`` when the adjusted p-value is below 0.05 (by the difference's
    sign), else ``inconclusive``."""
    if p_adjusted is None or difference is None or p_adjusted >= ALPHA or difference == 0:
        return "inconclusive"
    return "better" if difference > 0 else "worse"


def paired_figures(baseline: Group, candidate: Group, cluster: Clusterer | None = None,
                   margin: float | None = None) -> dict[str, Any]:
    """The ``paired`` element (see :func:`paired_estimate`)."""
    return paired_estimate(baseline, candidate, cluster, margin)[0]


def paired_estimate(baseline: Group, candidate: Group, cluster: Clusterer | None = None,
                    margin: float | None = None) -> tuple[dict[str, Any], Estimate]:
    """The ``paired`` element: differences of pass rate and mean score over paired instances.

    ``p_value_adjusted`` (and so the verdict) is the p-value itself here, and ``ci95_adjusted``
    the interval itself: the family they are adjusted in (the candidates, the slices) is the
    caller's (:func:`adjust`).  ``margin`` (``--margin``, a fraction) adds the equivalence test
    (TOST) of the pass rate.
    """
    b, c = baseline.scored, candidate.scored
    keys = paired_keys(baseline, candidate)
    d_rate = [c[k].pass_rate - b[k].pass_rate for k in keys]  # type: ignore[operator]
    d_mean = [c[k].mean - b[k].mean for k in keys]  # type: ignore[operator]
    rate, score = _estimate(d_rate, keys, cluster, True), _estimate(d_mean, keys, cluster, True)
    tost = None if margin is None else rate.tost_p(margin)
    return {
        "instances": len(keys),
        "clusters": rate.clusters,
        "df": rate.df,
        "effective_clusters": rate.effective_clusters if cluster is not None else None,
        "pass_rate_difference": rate.mean,
        "se": rate.se,
        "ci95": rate.ci95,
        "ci95_adjusted": rate.ci95,
        "ci90": rate.ci90,
        "p_value": rate.p_value,
        "p_value_adjusted": rate.p_value,
        "sign_test_p": rate.sign_test_p,
        "mde": rate.mde,
        "margin": margin,
        "tost_p": tost,
        "equivalent": None if tost is None else tost < ALPHA,
        "verdict": verdict(rate.p_value, rate.mean),
        "mean_difference": score.mean,
        "mean_difference_se": score.se,
        "mean_difference_ci95": score.ci95,
        "mean_difference_p_value": score.p_value,
        "mean_difference_p_value_adjusted": score.p_value,
        "improved": rate.positive,
        "regressed": rate.negative,
        "unchanged": len(keys) - rate.positive - rate.negative,
    }, rate


def cost_figures(baseline: Group, candidate: Group, costs: Sequence[str],
                 cluster: Clusterer | None = None) -> dict[str, Any]:
    """The ``costs`` element: per cost column, the paired difference of per-instance means."""
    b, c = baseline.scored, candidate.scored
    keys = paired_keys(baseline, candidate)
    out: dict[str, Any] = {}
    for name in costs:
        both = [(k, b[k].cost(name), c[k].cost(name)) for k in keys]
        kept = [(k, x, y) for k, x, y in both if x is not None and y is not None]
        diff = _estimate([y - x for _, x, y in kept], [k for k, _, _ in kept], cluster, True)
        out[name] = {
            "baseline_mean": mean([x for _, x, _ in kept]),
            "candidate_mean": mean([y for _, _, y in kept]),
            "difference": diff.mean,
            "se": diff.se,
            "ci95": diff.ci95,
            "p_value": diff.p_value,
            "p_value_adjusted": diff.p_value,
            "instances": len(kept),
        }
    return out


def changed_instances(baseline: Group, candidate: Group) -> list[dict[str, Any]]:
    """Every paired instance whose pass rate changed, largest |change| first (ties by key)."""
    b, c = baseline.scored, candidate.scored
    changed: list[tuple[float, str]] = []
    for k in paired_keys(baseline, candidate):
        d = c[k].pass_rate - b[k].pass_rate  # type: ignore[operator]
        if d != 0:
            changed.append((d, k))
    changed.sort(key=lambda e: (-abs(e[0]), str(e[1])))
    return [{"instance": k, "difference": d, "baseline": b[k].summary(), "candidate": c[k].summary()}
            for d, k in changed]


def cluster_differences(baseline: Group, candidate: Group, cluster: Clusterer | None) -> list[dict[str, Any]]:
    """With ``--cluster``: per cluster of the paired instances, how many there are, how many
    improved and regressed, and their mean change of pass rate (sorted by cluster name)."""
    if cluster is None:
        return []
    b, c = baseline.scored, candidate.scored
    by: dict[tuple[bool, str], list[float]] = {}
    for k in paired_keys(baseline, candidate):
        by.setdefault(cluster(k), []).append(c[k].pass_rate - b[k].pass_rate)  # type: ignore[operator]
    return [{"cluster": name, "instances": len(ds), "improved": sum(1 for x in ds if x > 0),
             "regressed": sum(1 for x in ds if x < 0), "pass_rate_difference": clean(mean(ds))}
            for (_, name), ds in sorted(by.items(), key=lambda e: (e[0][1], e[0][0]))]


# ------------------------------------------------------------- adjustments
def adjust(elements: Sequence[dict[str, Any]], p: str = "p_value", adjusted: str = "p_value_adjusted",
           difference: str | None = None, estimates: Sequence[Estimate] | None = None) -> None:
    """Holm's adjustment of ``element[p]`` over ``elements`` (one family), into ``element[adjusted]``;
    with ``difference``, each element's ``verdict`` follows the adjusted p-value, and its
    ``ci95_adjusted`` is the Bonferroni interval over the family (level ``1 − 0.05/k`` for ``k``
    p-values): it excludes 0 only when Holm's verdict is better or worse, never the other way
    round, so an interval never contradicts the verdict beside it.  ``estimates`` (aligned) make
    that interval the way each element's own interval was made (the wild bootstrap's under
    ``--cluster``); without them it is t's from the element's ``se`` and ``df``."""
    family = sum(1 for e in elements if e[p] is not None)
    for i, (element, value) in enumerate(zip(elements, holm([e[p] for e in elements]), strict=True)):
        element[adjusted] = value
        if difference is not None:
            element["verdict"] = verdict(value, element[difference])
            if family > 1 and "ci95_adjusted" in element:
                level = 1 - ALPHA / family
                found = (estimates[i].ci(level) if estimates is not None
                         else interval(element[difference], element.get("se"), element.get("df"), level))
                element["ci95_adjusted"] = None if found is None else [clean(x) for x in found]


def adjust_comparisons(results: Sequence[dict[str, Any]], estimates: Sequence[Estimate] | None = None) -> None:
    """Every figure that is marked, adjusted over the candidates of one call (one family per
    figure): the pass rate (which decides the verdict), the mean score, each cost."""
    paired = [r["paired"] for r in results]
    adjust(paired, difference="pass_rate_difference", estimates=estimates)
    adjust(paired, "mean_difference_p_value", "mean_difference_p_value_adjusted")
    for name in results[0]["costs"] if results else ():
        adjust([r["costs"][name] for r in results])


# ------------------------------------------------------------------ slices
def _slice_key(value: Any) -> tuple[bool, str]:
    return (value is None, "" if value is None else str(value))


def slice_figures(base_rows: Sequence[Row] | Group, cand_rows: Sequence[Row] | Group,
                  cluster: Clusterer | None = None, margin: float | None = None) -> list[dict[str, Any]]:
    """``slices``: per value of ``--by`` (the rows' ``slice``), the paired figures of that
    value's jobs alone, exactly as a filter on that value would give them; Holm-adjusted over
    the slices.  Jobs without a value form the slice ``null`` (last).  Each side is its rows or
    its group gathered with its slices (:func:`benchloop.compare.groups.gather`)."""
    split_b, split_c = (_slices(side) for side in (base_rows, cand_rows))
    out = []
    estimates = []
    for key in sorted(set(split_b) | set(split_c), key=_slice_key):
        b = split_b.get(key) or Group("", 0, 0, {})
        c = split_c.get(key) or Group("", 0, 0, {})
        figures, estimate = paired_estimate(b, c, cluster, margin)
        out.append({"key": key, "baseline_jobs": b.jobs, "candidate_jobs": c.jobs, "paired": figures})
        estimates.append(estimate)
    paired = [s["paired"] for s in out]
    adjust(paired, difference="pass_rate_difference", estimates=estimates)
    adjust(paired, "mean_difference_p_value", "mean_difference_p_value_adjusted")
    return out


def _slices(side: Sequence[Row] | Group) -> dict[Any, Group]:
    if isinstance(side, Group):
        return side.slices or {}
    return gather("", side, slices=True).slices or {}


# ------------------------------------------------------------- comparisons
def compare_pair(baseline: Group, candidate: Group, options: Options, base_rows: Sequence[Row] | Group = (),
                 cand_rows: Sequence[Row] | Group = (), cluster: Clusterer | None = None) -> dict[str, Any]:
    """One element of ``bl compare``'s output: the candidate against the baseline (before the
    adjustment over candidates and the summary sentence, which :func:`compare_groups` adds)."""
    paired = paired_figures(baseline, candidate, cluster, options.margin)
    return compare_pair_figures(baseline, candidate, options, paired, base_rows, cand_rows, cluster)


def compare_pair_figures(baseline: Group, candidate: Group, options: Options, paired: dict[str, Any],
                         base_rows: Sequence[Row] | Group = (), cand_rows: Sequence[Row] | Group = (),
                         cluster: Clusterer | None = None) -> dict[str, Any]:
    """:func:`compare_pair` with its ``paired`` element made already."""
    b, c = baseline.scored, candidate.scored
    keys = paired_keys(baseline, candidate)
    clusters = cluster_differences(baseline, candidate, cluster)
    return {
        "baseline": baseline.group_id,
        "candidate": candidate.group_id,
        "metric": options.metric,
        "pass_threshold": options.pass_threshold,
        "unit": options.unit,
        "cluster": options.cluster,
        "by": options.by,
        "margin": options.margin,
        "summary": "",
        "groups": [group_figures(baseline, keys, cluster), group_figures(candidate, keys, cluster)],
        "paired": paired,
        "costs": cost_figures(baseline, candidate, options.costs, cluster),
        "slices": slice_figures(base_rows, cand_rows, cluster, options.margin) if options.by is not None else [],
        "cluster_differences": clusters,
        "instances": changed_instances(baseline, candidate),
        "only_baseline": _sorted_keys(k for k in b if k not in c),
        "only_candidate": _sorted_keys(k for k in c if k not in b),
        "warnings": caveats.warnings(baseline, candidate, len(keys), options, clusters, paired),
    }


def compare_groups(groups: Sequence[tuple[str, Iterable[Row] | Group]], *, metric: str, pass_threshold: float,
                   unit: str, costs: Sequence[str] = (), cluster: str | None = None, by: str | None = None,
                   status: str | None = None, outcome_statuses: Sequence[str] = (),
                   check: str | None = None, margin: float | None = None, fdr: float = FDR) -> list[dict[str, Any]]:
    """``bl compare``: the first group is the baseline, every other one a candidate.

    ``groups`` are ``(group_id, rows)`` pairs (or ``(group_id, group)``, the rows gathered
    already with these ``costs`` and, with ``by``, their slices); the answer has one element per
    candidate, in order, its marked figures Holm-adjusted over the candidates.
    ``check`` (the filters given, as :func:`caveats.problems` words them; "" for none):
    raise :class:`caveats.NothingToCompare` when a group cannot take part, before any figure.
    """
    if len(groups) < 2:
        raise ValueError("compare needs at least two groups: a baseline and a candidate")
    if margin is not None and not (math.isfinite(margin) and margin > 0):
        raise ValueError("the equivalence margin must be a positive number (a fraction: 0.02 is 2 pp)")
    options = Options(metric, pass_threshold, unit, tuple(costs), cluster, by, status, tuple(outcome_statuses),
                      margin)
    gathered = [as_group(gid, value, costs, by is not None) for gid, value in groups]
    if check is not None:
        found = caveats.problems(gathered, metric=metric, unit=unit, filters=check)
        if found:
            raise caveats.NothingToCompare(found)
    cluster_of = clusterer(cluster)
    results, estimates = [], []
    evidence: list[dict[str, Any]] = []
    for cand in gathered[1:]:
        paired, estimate = paired_estimate(gathered[0], cand, cluster_of, options.margin)
        evidence.append(noise.evidence(gathered[0], cand, fdr))  # what noise alone would give (first: its
        # records of every paired instance are gone before the changed instances are listed)
        results.append(compare_pair_figures(gathered[0], cand, options, paired, gathered[0], cand, cluster_of))
        estimates.append(estimate)
    adjust_comparisons(results, estimates)
    for result, noted in zip(results, evidence, strict=True):
        noise.apply(result, noted)
    for result in results:
        result["summary"] = verdicts.sentence(result, len(results))
    return results


# -------------------------------------------------------------- per instance
PER_INSTANCE_COLUMNS = ("baseline", "candidate", "instance", "cluster", "baseline_pass_rate",
                        "candidate_pass_rate", "difference", "baseline_mean", "candidate_mean",
                        "mean_difference", "baseline_jobs", "candidate_jobs", "p_value", "q_value",
                        "beyond_noise", "aa_changed")


def per_instance(groups: Sequence[tuple[str, Iterable[Row] | Group]], *, cluster: str | None = None,
                 fdr: float = FDR) -> list[dict[str, Any]]:
    """``--per-instance``: one flat row per paired instance of every candidate (every instance
    scored in both, changed or not), in the order of the candidates, then of the instances.

    ``cluster`` is the instance's cluster under ``--cluster`` (the instance key itself when
    the regex does not match it; null without ``--cluster``); ``jobs`` count every job of
    the instance in that group, as the ``jobs`` lists of ``instances`` do.
    """
    gathered = [as_group(gid, value) for gid, value in groups]
    cluster_of: Callable[[str], tuple[bool, str]] | None = clusterer(cluster)
    base = gathered[0]
    out = []
    for cand in gathered[1:]:
        b, c = base.scored, cand.scored
        for k in paired_keys(base, cand):
            x, y = b[k], c[k]
            out.append(dict(zip(PER_INSTANCE_COLUMNS, (
                base.group_id, cand.group_id, k, None if cluster_of is None else cluster_of(k)[1],
                x.pass_rate, y.pass_rate, y.pass_rate - x.pass_rate,  # type: ignore[operator]
                x.mean, y.mean, clean(y.mean - x.mean),  # type: ignore[operator]
                len(x.jobs), len(y.jobs), None, None, None, None), strict=True)))
    noise.per_instance_evidence(out, gathered, fdr)  # the exact test of each, BH over the candidate's
    return out
