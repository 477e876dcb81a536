"""The noise floor of a benchmark: how much two runs of one system differ (``bl noise``).

Why: a verdict or a list of changed instances means little until it is set beside what no
change at all would give.  Madaan et al. (2024, "Quantifying variance in evaluation
benchmarks") measure it by running one configuration several times; a run with several trials
per instance also measures it by itself, its trials dealt at random into two pseudo-runs.

From one run (its trials per instance ``x_i`` passes of ``k_i``):

* the **within-instance trial variance** ``σ_w² = mean_i k_i/(k_i−1) · p̂_i(1−p̂_i)`` (instances
  with at least two trials; the unbiased variance of a trial's 0/1 outcome on the instance);
* **splits**: seeded random deals of each instance's trials into two halves, many times; per
  deal the paired difference of the halves' pass rates and the share of instances whose halves
  differ.  Their spread is predicted exactly by ``Σ_i s_i² (1/h1 + 1/h2) / n²`` and their mean
  share by :func:`evidence.changed_under_null` (checked against the deals);
* the **A/A floor** at the run's own trials (another run like it): the paired difference's
  95% half-width ``t · √(Σ_i 2 s_i²/k_i) / n``, and the expected share of instances listed as
  changed, from a beta distribution of the instances' pass probabilities fitted by moments
  (each instance's chance is its posterior expectation: exact beta moments).

From two or more runs of one configuration on their common instances: every pair of runs as an
A/A comparison, and the **between-run variance** of a shock shared by the instances of a cluster
in one run (``--cluster``; without it the whole run is one cluster), by the method of moments:
``σ_u² = Σ_c n_c (V_c − ŵ_c) / Σ_c n_c``, ``V_c`` the variance over runs of the cluster's mean and
``ŵ_c`` the part of it the trials' own variance explains.  The A/A spread then adds
``2 σ_u² Σ_c (n_c/n)²``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from .distributions import t_quantile
from .estimates import Clusterer, mean
from .evidence import changed_under_null
from .groups import Group

SPLITS = 200  # default deals of --splits
SEED = 0


def unbiased_variance(passes: Sequence[int]) -> float | None:
    """The sample variance (k − 1) of an instance's 0/1 trials; None under two trials."""
    k = len(passes)
    if k < 2:
        return None
    rate = sum(passes) / k
    return k / (k - 1) * rate * (1 - rate)


def within_variance(groups: Sequence[Group], keys: Sequence[str] | None = None) -> tuple[float | None, int]:
    """``σ_w²``: the mean of the instances' unbiased trial variances over every group (and the
    count of instance-runs it averages)."""
    values = []
    for group in groups:
        scored = group.scored
        for key in (keys if keys is not None else sorted(scored)):
            inst = scored.get(key)
            if inst is not None:
                v = unbiased_variance(inst.passes)
                if v is not None:
                    values.append(v)
    return mean(values), len(values)


def _variances(group: Group, keys: Sequence[str], fallback: float) -> list[float]:
    out = []
    scored = group.scored
    for key in keys:
        v = unbiased_variance(scored[key].passes)
        out.append(fallback if v is None else v)
    return out


def _half(se: float | None, n: int) -> float | None:
    if se is None or n < 2:
        return None
    return t_quantile(0.975, n - 1) * se


# ------------------------------------------------------------ beta model
def beta_prior(counts: Sequence[tuple[int, int]]) -> tuple[float, float] | None:
    """A beta distribution of the instances' pass probabilities, fitted by moments: mean
    ``mean(p̂_i)``, variance ``mean(p̂_i) − σ_w² − mean(p̂_i)²`` (``E[p(1−p)] = σ_w²``).
    ``(0, 0)`` when every instance always passes or always fails (nothing changes); None when
    no instance has two trials (``σ_w²``, hence the spread, is unknown)."""
    rates = [x / k for x, k in counts if k]
    mu = mean(rates)
    within = mean([k / (k - 1) * (x / k) * (1 - x / k) for x, k in counts if k >= 2])
    if mu is None or within is None:
        return None
    if mu <= 0 or mu >= 1:
        return (0.0, 0.0)
    spread = mu - within - mu * mu
    size = 1e6 if spread <= 1e-12 else max(mu * (1 - mu) / spread - 1, 0.05)
    return mu * size, (1 - mu) * size


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def changed_chance(prior: tuple[float, float] | None, x: int, k: int, n1: int, n2: int) -> float:
    """The expected chance, given ``x`` passes in ``k`` trials of an instance and the beta
    ``prior``, that two new runs with ``n1`` and ``n2`` trials list it as changed."""
    if prior is None or n1 == 0 or n2 == 0 or prior == (0.0, 0.0):
        return 0.0
    a, b = prior[0] + x, prior[1] + k - x
    base = _log_beta(a, b)
    same = 0.0
    for i in range(n1 + 1):
        if (i * n2) % n1:
            continue
        j = i * n2 // n1
        s = i + j
        same += math.comb(n1, i) * math.comb(n2, j) * math.exp(_log_beta(a + s, b + n1 + n2 - s) - base)
    return min(1.0, max(0.0, 1.0 - same))


def aa_floor(group: Group, keys: Sequence[str] | None = None, against: Sequence[int] | None = None,
             between: float = 0.0, cluster: Clusterer | None = None, share: bool = True) -> dict[str, Any]:
    """What an A/A comparison of ``group`` (another run like it) gives on ``keys`` (default: its
    scored instances): the 95% half-width of the paired difference and the expected share of
    instances listed as changed.  ``against``: the other run's trials per instance (default: the
    same as this run's); ``between``: the between-run variance of a cluster's shock; ``share``:
    False leaves the share out (null; the spread alone is cheap)."""
    scored = group.scored
    keys = list(keys if keys is not None else sorted(scored))
    n = len(keys)
    trials = [len(scored[k].passes) for k in keys]
    other = list(against) if against is not None else trials
    within, _ = within_variance([group], keys)
    fallback = within if within is not None else 0.0
    variances = _variances(group, keys, fallback)
    var = math.fsum(v * (1 / k1 + 1 / k2) for v, k1, k2 in zip(variances, trials, other, strict=True)) / n**2 \
        if n else 0.0
    if between and n:
        sizes: dict[Any, int] = {}
        for k in keys:
            name = cluster(k) if cluster is not None else None
            sizes[name] = sizes.get(name, 0) + 1
        var += 2 * between * math.fsum((c / n) ** 2 for c in sizes.values())
    se = math.sqrt(var) if n else None
    counts = [(sum(scored[k].passes), len(scored[k].passes)) for k in keys]
    prior = beta_prior(counts) if share else None
    expected = None if prior is None else math.fsum(
        changed_chance(prior, x, k, k1, k2) for (x, k), k1, k2 in zip(counts, trials, other, strict=True))
    if within is None:
        se = None
    return {"instances": n, "trials": mean([float(t) for t in trials]), "within_variance": within,
            "se": se, "half_width": _half(se, n), "changed_expected": expected,
            "share_changed": expected / n if n and expected is not None else None}


def floor_sentence(group_id: str, floor: dict[str, Any]) -> str:
    """``an A/A of BASE moves the pass rate by ±9.6 pp (95%) and lists 38% of instances as changed``."""
    half, share = floor.get("half_width"), floor.get("share_changed")
    if half is None or share is None:
        return f"an A/A of {group_id} cannot be estimated: too few instances with two trials or more"
    return (f"an A/A of {group_id} moves the pass rate by ±{100 * half:.1f} pp (95%) and lists "
            f"{100 * share:.0f}% of instances as changed")


# ---------------------------------------------------------------- splits
def splits(group: Group, count: int = SPLITS, seed: int = SEED) -> dict[str, Any]:
    """``count`` seeded deals of every instance's trials (two or more) into two halves: the
    share of instances whose halves differ, and the paired difference of the halves, measured
    over the deals and predicted from the trials."""
    scored = group.scored
    keys = [k for k in sorted(scored) if len(scored[k].passes) >= 2]
    n = len(keys)
    empty = {"count": count, "seed": seed, "instances": n, "share_changed": None,
             "share_changed_expected": None, "difference_sd": None, "difference_sd_expected": None,
             "difference_interval": None}
    if n == 0 or count < 1:
        return empty
    rng = random.Random(seed)
    trials = [list(scored[k].passes) for k in keys]
    halves = [(len(t) // 2, len(t) - len(t) // 2) for t in trials]
    shares, diffs = [], []
    for _ in range(count):
        moved = 0
        total = 0.0
        for t, (h1, h2) in zip(trials, halves, strict=True):
            rng.shuffle(t)
            a, b = sum(t[:h1]), sum(t[h1:])
            moved += a * h2 != b * h1
            total += b / h2 - a / h1
        shares.append(moved / n)
        diffs.append(total / n)
    expected = math.fsum(changed_under_null(sum(t), h1, h2) for t, (h1, h2) in zip(trials, halves, strict=True))
    variances = [unbiased_variance(t) or 0.0 for t in trials]
    predicted = math.sqrt(math.fsum(v * (1 / h1 + 1 / h2) for v, (h1, h2) in zip(variances, halves,
                                                                                 strict=True))) / n
    ordered = sorted(diffs)
    centre = mean(diffs) or 0.0
    sd = math.sqrt(math.fsum((d - centre) ** 2 for d in diffs) / (count - 1)) if count > 1 else None
    low, high = ordered[int(0.025 * (count - 1))], ordered[int(math.ceil(0.975 * (count - 1)))]
    return dict(empty, share_changed=mean(shares), share_changed_expected=expected / n, difference_sd=sd,
                difference_sd_expected=predicted, difference_interval=[low, high])


# ----------------------------------------------------------- between runs
def between_runs(groups: Sequence[Group], keys: Sequence[str], cluster: Clusterer | None = None
                 ) -> dict[str, Any] | None:
    """Two or more runs of one configuration on their common ``keys``: every pair as an A/A, and
    the between-run variance of a cluster's shock (method of moments; see the module)."""
    if len(groups) < 2 or not keys:
        return None
    runs = len(groups)
    pairs: list[dict[str, Any]] = []
    for first, second in combinations(groups, 2):
        a, b = first.scored, second.scored
        d = [b[k].pass_rate - a[k].pass_rate for k in keys]  # type: ignore[operator]
        pairs.append({"baseline": first.group_id, "candidate": second.group_id, "difference": mean(d),
                      "share_changed": sum(1 for x in d if x != 0) / len(keys)})
    by: dict[Any, list[str]] = {}
    for k in keys:
        by.setdefault(cluster(k) if cluster is not None else None, []).append(k)
    within, _ = within_variance(groups, keys)
    fallback = within or 0.0
    scored = [g.scored for g in groups]
    numerator = weight = 0.0
    for members in by.values():
        size = len(members)
        means = [math.fsum(s[k].pass_rate for k in members) / size for s in scored]  # type: ignore[misc]
        centre = math.fsum(means) / runs
        spread = math.fsum((m - centre) ** 2 for m in means) / (runs - 1)
        explained = math.fsum(
            math.fsum(v / len(s[k].passes) for v, k in zip(_variances(g, members, fallback), members,
                                                            strict=True)) / size**2
            for g, s in zip(groups, scored, strict=True)) / runs
        numerator += size * (spread - explained)
        weight += size
    raw = numerator / weight
    diffs: list[float] = [p["difference"] for p in pairs]
    centre = mean(diffs) or 0.0
    sd = math.sqrt(math.fsum((x - centre) ** 2 for x in diffs) / (len(diffs) - 1)) if len(diffs) > 1 else None
    return {"runs": runs, "instances": len(keys), "clusters": len(by), "pairs": pairs,
            "difference_sd": sd, "between_variance_raw": raw, "between_variance": max(0.0, raw),
            "share_changed": mean([float(p["share_changed"]) for p in pairs])}


def common_keys(groups: Sequence[Group]) -> list[str]:
    """The instances every group scored, sorted."""
    if not groups:
        return []
    keys = set(groups[0].scored)
    for g in groups[1:]:
        keys &= set(g.scored)
    return sorted(keys, key=str)


def noise_floor(groups: Sequence[Group], cluster: Clusterer | None = None, count: int = SPLITS,
                seed: int = SEED) -> dict[str, Any]:
    """``bl noise``: every figure of the module for these runs of one configuration."""
    keys = common_keys(groups)
    per_group = []
    for g in groups:
        floor = aa_floor(g)
        per_group.append({"group_id": g.group_id, "instances": len(g.scored), "trials": floor["trials"],
                          "pass_rate": mean([i.pass_rate for i in g.scored.values()]),  # type: ignore[misc]
                          "within_variance": floor["within_variance"], "aa": floor,
                          "splits": splits(g, count, seed)})
    within, counted = within_variance(groups, keys if len(groups) > 1 else None)
    between = between_runs(groups, keys, cluster)
    variance = between["between_variance"] if between else 0.0
    first = groups[0]
    floor = aa_floor(first, keys if len(groups) > 1 else None, between=variance, cluster=cluster)
    return {"groups": [g.group_id for g in groups], "instances": len(keys), "within_variance": within,
            "within_instances": counted, "per_group": per_group, "between_runs": between, "aa": floor,
            "summary": floor_sentence(first.group_id, floor)}


# ------------------------------------------------------ beside a comparison
def annotate(result: dict[str, Any], baseline: Group, candidate: Group, level: float) -> None:
    """Add to one element of ``bl compare`` what noise alone would give: ``evidence`` (the exact
    test of every paired instance, BH across them at ``level``, what an A/A lists; the changed
    ``instances`` get their ``p_value``, ``q_value`` and ``beyond_noise`` and are ordered by
    evidence, strongest first) and ``noise_floor`` (an A/A of the baseline at these trial counts,
    the line beside the verdict)."""
    apply(result, evidence(baseline, candidate, level))


def evidence(baseline: Group, candidate: Group, level: float) -> dict[str, Any]:
    """What :func:`annotate` adds, before the element is made (``bl compare`` works it out before
    it lists the changed instances, so that the records of every paired instance it goes
    through are gone by then): the exact tests of the changed instances, the summary, the floor."""
    from .evidence import assess

    b, c = baseline.scored, candidate.scored
    keys = sorted((k for k in b if k in c), key=str)
    pairs = [(k, sum(b[k].passes), len(b[k].passes), sum(c[k].passes), len(c[k].passes)) for k in keys]
    found = assess(pairs, level, changed_only=True)  # every changed instance: the ones listed
    del pairs
    floor = aa_floor(baseline, keys, against=[len(c[k].passes) for k in keys]) if keys else None
    return {"per_instance": found["per_instance"], "evidence": found["summary"],
            "noise_floor": None if floor is None else dict(floor, summary=floor_sentence(baseline.group_id, floor))}


def apply(result: dict[str, Any], found: dict[str, Any]) -> None:
    """Add :func:`evidence`'s findings to the element (see :func:`annotate`)."""
    per = found["per_instance"]
    for entry in result.get("instances") or []:
        tested = per.get(entry["instance"])
        if tested is not None:
            entry.update(p_value=tested["p_value"], q_value=tested["q_value"], beyond_noise=tested["beyond_noise"])
    if result.get("instances"):
        result["instances"].sort(key=lambda e: (e.get("p_value", 1.0), -abs(e["difference"]), str(e["instance"])))
    result["evidence"] = found["evidence"]  # its A/A count is the exact test's null: the pooled trials dealt
    result["noise_floor"] = found["noise_floor"]


def per_instance_evidence(rows: list[dict[str, Any]], groups: Sequence[Group], level: float) -> None:
    """``--per-instance``: each paired instance's ``p_value``, ``q_value``, ``beyond_noise`` and
    ``aa_changed`` (its chance of being listed under the null: their sum is the A/A count)."""
    from .evidence import assess

    base = groups[0]
    for cand in groups[1:]:
        b, c = base.scored, cand.scored
        keys = sorted((k for k in b if k in c), key=str)
        found = assess([(k, sum(b[k].passes), len(b[k].passes), sum(c[k].passes), len(c[k].passes))
                        for k in keys], level)["per_instance"]
        for row in rows:
            if row["candidate"] == cand.group_id and row["instance"] in found:
                tested = found[row["instance"]]
                row.update(p_value=tested["p_value"], q_value=tested["q_value"],
                           beyond_noise=tested["beyond_noise"], aa_changed=tested["null_changed"])
