"""The figures of ``bl compare``: per instance, per group, paired, costs.

The method is Evan Miller's "Adding Error Bars to Evals" (2024): the unit of
analysis is the **instance** (the benchmark item), not the job.  The jobs of
one instance in one group are trials; they are averaged first, and every
figure is then a mean over instances with a central-limit-theorem interval.
Two groups are compared on the instances scored in both (paired), which
removes the variance of instances being easy or hard for both.

The definitions, exactly as computed here (``docs/compare.md`` says the same
for users):

* a job is **scored** when its metric gives a number (``as_score``); it
  **passes** when that score is at or above the pass threshold, or, for a
  boolean metric, when the metric is true (its score is then 1.0 or 0.0);
* per instance, over its scored jobs: ``pass_rate_i`` = mean of pass (0/1),
  ``mean_i`` = mean of the scores; an instance without a scored job has
  neither and takes part in nothing below;
* per group: ``pass_rate`` / ``mean`` = mean over the scored instances of
  ``pass_rate_i`` / ``mean_i``; ``instances`` = how many there are; the 95%
  CI is ``m ± 1.96 · SE`` with ``SE = s / √n``, ``s`` the sample standard
  deviation (n − 1);
* paired, over the instances scored in both groups, ``d_i`` = candidate −
  baseline: the difference is ``mean(d_i)``, ``se = sd(d_i) / √n``, the CI
  ``difference ± 1.96 · se``, the p-value two-sided from the normal
  approximation, ``2 · (1 − Φ(|D| / se))``; the same for ``mean_i``;
  ``improved`` / ``regressed`` / ``unchanged`` count ``d_i`` > 0, < 0, = 0 on
  the pass rate;
* costs: per instance the mean of a cost column over its scored jobs that
  carry a number in it (the same trials the pass rate comes from), then the
  paired difference as above over the paired instances where both groups
  have a value.

Edge cases, decided rather than left to a crash or a NaN:

* n = 0: every mean, SE, CI and p-value is ``None`` (JSON null);
* n = 1: the mean is the one value; the sample standard deviation, hence the
  SE, the CI and the p-value, are undefined: ``None``;
* all values equal (SE = 0, n ≥ 2): the CI is the limit ``[m, m]``; the
  p-value is the limit of ``2 · (1 − Φ(|D| / se))`` as se → 0: 0.0 when the
  difference is not 0, and 1.0 when it is (no evidence of any difference);
  all-equal values are detected exactly, so their SD is exactly 0;
* a job without an instance key counts in ``jobs`` (and ``jobs_scored``) but
  belongs to no instance;
* non-finite numbers (``NaN``, ``inf``, also as strings) are not scores.

Floats are computed with ``math.fsum`` (order-independent, correctly
rounded), so the figures do not depend on the order of pages or jobs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Z95 = 1.96  # the two-sided 95% normal quantile the definitions use (not 1.959964...)

Row = Mapping[str, Any]


# ------------------------------------------------------------------ scores
def as_number(value: Any) -> float | int | None:
    """A finite number from a JSON value: numbers, strings of numbers, else None.

    Booleans are not numbers here (see :func:`score_and_pass`); a one-element
    list is read as its element (``metrics[?type=='eval'].data.task_score``
    gives ``[0.85]``).  A string is a number when it is one in JSON's sense,
    give or take spaces around it: ``"12.5"`` -> 12.5, ``"100"`` -> 100 (an int),
    ``"1e3"`` -> 1000.0; ``"nan"``, ``"inf"``, ``"1_000"`` and ``"0x10"`` are not.
    """
    kind = type(value)
    if kind is list and len(value) == 1:
        value = value[0]
        kind = type(value)
    if kind is int:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is not str:
        return None
    text = value.strip()
    if "_" in text:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    if text.isdecimal() or (text[:1] in "+-" and text[1:].isdecimal()):
        return int(text)
    return number


def as_boolean(value: Any) -> bool | None:
    """``True``/``False`` from a boolean or the strings ``"true"``/``"false"``; else None."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def score_and_pass(value: Any, threshold: float) -> tuple[float | None, bool | None]:
    """(score, pass) of one job from its metric value; (None, None) when it is not scored.

    A boolean metric passes when true, and scores 1.0 or 0.0 (so ``mean_i`` is
    its rate); a number (or a string of one) passes when ``score >= threshold``.
    """
    flag = as_boolean(value)
    if flag is not None:
        return (1.0 if flag else 0.0), flag
    number = as_number(value)
    if number is None:
        return None, None
    score = float(number)
    return score, score >= threshold


# ------------------------------------------------------------ basic figures
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


def ci95(center: float | None, se: float | None) -> list[float] | None:
    """``[center - 1.96 se, center + 1.96 se]``; None when either is undefined."""
    if center is None or se is None:
        return None
    return [center - Z95 * se, center + Z95 * se]


def p_value(difference: float | None, se: float | None) -> float | None:
    """Two-sided p-value of ``difference`` against 0 from the normal approximation.

    ``2 (1 - Φ(|D| / se)) = erfc(|D| / (se √2))`` (erfc keeps precision in the
    tail).  se = 0: the limit, 0.0 for a non-zero difference, 1.0 for zero.
    """
    if difference is None or se is None:
        return None
    if se == 0:
        return 1.0 if difference == 0 else 0.0
    return math.erfc(abs(difference) / (se * math.sqrt(2.0)))


@dataclass(frozen=True)
class Estimate:
    """A mean over n values with its standard error (None where undefined)."""

    n: int
    mean: float | None
    se: float | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Estimate:
        sd = sample_sd(values)
        return cls(len(values), mean(values), None if sd is None else sd / math.sqrt(len(values)))

    @property
    def ci95(self) -> list[float] | None:
        return ci95(self.mean, self.se)

    @property
    def p_value(self) -> float | None:
        return p_value(self.mean, self.se)


# ---------------------------------------------------------------- instances
@dataclass
class Instance:
    """The trials (jobs) of one instance in one group."""

    key: str
    jobs: list[str] = field(default_factory=list)  # every job id with this key, in row order
    scores: list[float] = field(default_factory=list)
    passes: list[int] = field(default_factory=list)
    costs: dict[str, list[float]] = field(default_factory=dict)

    @property
    def scored(self) -> int:
        return len(self.scores)

    @property
    def pass_rate(self) -> float | None:
        # sum / count of integers: equal rates (1/3, 2/6) give the same float, so
        # "unchanged" (d_i == 0) is exact.
        return sum(self.passes) / len(self.passes) if self.passes else None

    @property
    def mean(self) -> float | None:
        return mean(self.scores)

    def cost(self, name: str) -> float | None:
        return mean(self.costs.get(name, []))

    def summary(self) -> dict[str, Any]:
        return {"pass_rate": self.pass_rate, "mean": self.mean, "jobs": list(self.jobs)}


@dataclass
class Group:
    """One group's jobs gathered by instance."""

    group_id: str
    jobs: int
    jobs_scored: int
    instances: dict[str, Instance]

    @property
    def scored(self) -> dict[str, Instance]:
        return {k: i for k, i in self.instances.items() if i.scored}


def gather(group_id: str, rows: Iterable[Row], costs: Sequence[str] = ()) -> Group:
    """Group the flat rows of one group (``job_id``, ``instance``, ``score``, ``pass``
    and the cost columns, as :func:`benchloop.compare.rows.job_rows` makes them) by instance."""
    instances: dict[str, Instance] = {}
    jobs = scored = 0
    for row in rows:
        jobs += 1
        score = row.get("score")
        if score is not None:
            scored += 1
        key = row.get("instance")
        if key is None:
            continue
        inst = instances.get(key)
        if inst is None:
            inst = instances[key] = Instance(key)
        job_id = row.get("job_id")
        if job_id is not None:
            inst.jobs.append(job_id)
        if score is None:
            continue
        inst.scores.append(float(score))
        inst.passes.append(1 if row.get("pass") else 0)
        for name in costs:
            value = row.get(name)
            if type(value) is not float:
                value = as_number(value)
                if value is None:
                    continue
            elif value != value or value in (math.inf, -math.inf):
                continue
            inst.costs.setdefault(name, []).append(float(value))
    return Group(group_id, jobs, scored, instances)


def _sorted_keys(keys: Iterable[str]) -> list[str]:
    return sorted(keys, key=str)


# ------------------------------------------------------------------ figures
def group_figures(group: Group) -> dict[str, Any]:
    """One element of ``groups``: counts, pass rate and mean score with their 95% CIs."""
    scored = group.scored
    keys = _sorted_keys(scored)
    rate = Estimate.of([scored[k].pass_rate for k in keys])  # type: ignore[misc]
    score = Estimate.of([scored[k].mean for k in keys])  # type: ignore[misc]
    return {
        "group_id": group.group_id,
        "jobs": group.jobs,
        "jobs_scored": group.jobs_scored,
        "instances": len(scored),
        "pass_rate": rate.mean,
        "pass_rate_ci95": rate.ci95,
        "mean": score.mean,
        "mean_ci95": score.ci95,
    }


def paired_keys(baseline: Group, candidate: Group) -> list[str]:
    """The instances scored in both groups, sorted."""
    b, c = baseline.scored, candidate.scored
    return _sorted_keys(k for k in b if k in c)


def paired_figures(baseline: Group, candidate: Group) -> dict[str, Any]:
    """The ``paired`` element: differences of pass rate and mean score over paired instances."""
    b, c = baseline.scored, candidate.scored
    keys = paired_keys(baseline, candidate)
    d_rate = [c[k].pass_rate - b[k].pass_rate for k in keys]  # type: ignore[operator]
    d_mean = [c[k].mean - b[k].mean for k in keys]  # type: ignore[operator]
    rate, score = Estimate.of(d_rate), Estimate.of(d_mean)
    return {
        "instances": len(keys),
        "pass_rate_difference": rate.mean,
        "se": rate.se,
        "ci95": rate.ci95,
        "p_value": rate.p_value,
        "mean_difference": score.mean,
        "mean_difference_se": score.se,
        "mean_difference_ci95": score.ci95,
        "mean_difference_p_value": score.p_value,
        "improved": sum(1 for d in d_rate if d > 0),
        "regressed": sum(1 for d in d_rate if d < 0),
        "unchanged": sum(1 for d in d_rate if d == 0),
    }


def cost_figures(baseline: Group, candidate: Group, costs: Sequence[str]) -> dict[str, Any]:
    """The ``costs`` element: per cost column, the paired difference of per-instance means."""
    b, c = baseline.scored, candidate.scored
    keys = paired_keys(baseline, candidate)
    out: dict[str, Any] = {}
    for name in costs:
        pairs = [(b[k].cost(name), c[k].cost(name)) for k in keys]
        both = [(x, y) for x, y in pairs if x is not None and y is not None]
        diff = Estimate.of([y - x for x, y in both])
        out[name] = {
            "baseline_mean": mean([x for x, _ in both]),
            "candidate_mean": mean([y for _, y in both]),
            "difference": diff.mean,
            "ci95": diff.ci95,
            "instances": len(both),
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


def compare_pair(baseline: Group, candidate: Group, *, metric: str, pass_threshold: float,
                 unit: str, costs: Sequence[str] = ()) -> dict[str, Any]:
    """One element of ``bl compare``'s output: the candidate against the baseline."""
    b, c = baseline.scored, candidate.scored
    return {
        "baseline": baseline.group_id,
        "candidate": candidate.group_id,
        "metric": metric,
        "pass_threshold": pass_threshold,
        "unit": unit,
        "groups": [group_figures(baseline), group_figures(candidate)],
        "paired": paired_figures(baseline, candidate),
        "costs": cost_figures(baseline, candidate, costs),
        "instances": changed_instances(baseline, candidate),
        "only_baseline": _sorted_keys(k for k in b if k not in c),
        "only_candidate": _sorted_keys(k for k in c if k not in b),
    }


def compare_groups(groups: Sequence[tuple[str, Iterable[Row]]], *, metric: str,
                   pass_threshold: float, unit: str, costs: Sequence[str] = ()) -> list[dict[str, Any]]:
    """``bl compare``: the first group is the baseline, every other one a candidate.

    ``groups`` are ``(group_id, rows)`` pairs; the answer has one element per
    candidate, in order.
    """
    if len(groups) < 2:
        raise ValueError("compare needs at least two groups: a baseline and a candidate")
    gathered = [gather(gid, rows, costs) for gid, rows in groups]
    base = gathered[0]
    return [compare_pair(base, cand, metric=metric, pass_threshold=pass_threshold, unit=unit,
                         costs=costs) for cand in gathered[1:]]
