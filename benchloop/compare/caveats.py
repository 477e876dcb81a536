"""What makes a comparison misleading or empty, said before anyone reads a figure.

Two kinds:

* :func:`warnings` - the comparison stands, but a reader must know something
  (the ``warnings`` list of each element, and ``[warn]`` lines on stderr): jobs
  that have no score (running, cancelled, no metric), a ``--status`` filter on
  an outcome (every rate is then biased: ``--status succeeded`` keeps only
  passing jobs), a pass threshold at which every scored job passes or none does,
  groups whose scored instances differ by more than 10% (their pass rates
  then compare different instances; ``paired_pass_rate`` compares the same), and
  ``--cluster`` with fewer than 20 clusters or one holding over a third of the
  paired instances (the evidence is then a handful of clusters'; the effective
  number says how many equal ones it is worth).
* :func:`problems` - nothing can be compared: a group without jobs, a ``--unit``
  that gives no job an instance, a ``--metric`` that gives no job a score.
  Each is a line naming the option, the expression and the group, with a hint
  naming the option to change; the command stops (exit 1) before printing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .groups import Group, Options

DIFFERENT_SETS = 0.10  # share of a group's instances not paired above which the sets "differ"
FEW_CLUSTERS = 20  # below this many clusters (or with one over a third of the instances) --cluster warns


def _jobs(count: int) -> str:
    return f"{count} job{'s' if count != 1 else ''}"


def _unscored(group: Group, outcomes: Sequence[str]) -> str | None:
    missing = group.jobs - group.jobs_scored
    if missing <= 0:
        return None
    parts = []
    for status, count in sorted(group.unscored.items(), key=lambda e: (-e[1], e[0])):
        parts.append(f"{count} {status}" + (" without a score" if status in outcomes or status == "unknown" else ""))
    return (f"{group.group_id}: {missing} of {_jobs(group.jobs)} have no score ({', '.join(parts)}); "
            "they take part in no figure")


def few_clusters(clusters: Sequence[dict[str, Any]], figures: dict[str, Any] | None) -> str | None:
    """The warning of ``--cluster`` with few clusters, or one that holds over a third of the
    paired instances: the evidence is then that of a handful of clusters, whatever n is."""
    if not clusters:
        return None
    total = sum(c["instances"] for c in clusters)
    largest = max(clusters, key=lambda c: (c["instances"], c["cluster"]))
    count = len(clusters)
    if count >= FEW_CLUSTERS and largest["instances"] * 3 <= total:
        return None
    effective = (figures or {}).get("effective_clusters")
    eff = f", as many as {effective:.1f} equal ones" if isinstance(effective, float) else ""
    return (f"--cluster: the {total} paired instances form {count} cluster{'s' if count != 1 else ''}{eff}; "
            f"the largest ({largest['cluster']}) holds {largest['instances']}: with fewer than {FEW_CLUSTERS} "
            "clusters or one over a third of the instances the evidence is that of the clusters, not of "
            "the instances (the wild cluster bootstrap keeps the verdict's error rate at 5%; "
            "more clusters narrow the interval, more instances of the same clusters barely do)")


def warnings(baseline: Group, candidate: Group, paired: int, options: Options,
             clusters: Sequence[dict[str, Any]] = (), figures: dict[str, Any] | None = None) -> list[str]:
    """The warnings of one comparison element (see the module docstring); ``clusters`` are its
    ``cluster_differences`` and ``figures`` its ``paired`` element (for the clusters' warning)."""
    out: list[str] = []
    outcomes = tuple(options.outcome_statuses)
    for group in (baseline, candidate):
        line = _unscored(group, outcomes)
        if line:
            out.append(line)
    if options.status is not None and options.status in outcomes:
        out.append(f"--status {options.status} keeps only jobs with that outcome: every pass rate is "
                   "biased (leave --status out to compare every finished job)")
    scored = baseline.jobs_scored + candidate.jobs_scored
    passed = baseline.jobs_passed + candidate.jobs_passed
    if scored and passed in (0, scored):
        which = "every" if passed else "no"
        out.append(f"at --pass-threshold {options.pass_threshold:g}, {which} scored job of "
                   f"{baseline.group_id} and {candidate.group_id} passes: the pass rates cannot differ "
                   "(choose a threshold inside the range of the scores)")
    sizes = [(g, len(g.scored)) for g in (baseline, candidate)]
    if any(n and (n - paired) / n > DIFFERENT_SETS for _, n in sizes):
        only = ", ".join(f"{n - paired} of {g.group_id}'s {n}" for g, n in sizes)
        out.append(f"{baseline.group_id} and {candidate.group_id} scored different instances "
                   f"(not paired: {only}): their pass rates cover different instances; "
                   "paired_pass_rate compares the same ones")
    line = few_clusters(clusters, figures)
    if line:
        out.append(line)
    return out


class NothingToCompare(ValueError):
    """The :func:`problems` of a comparison that cannot be made, ``(group id, message)`` each."""

    def __init__(self, found: list[tuple[str, str]]):
        super().__init__("\n".join(message for _, message in found))
        self.problems = found


def problems(groups: Iterable[Group], *, metric: str, unit: str, filters: str = "") -> list[tuple[str, str]]:
    """Why nothing can be compared: ``(group id, message with its hint line)`` per problem,
    none when every group can take part.  ``filters`` describes the filters given (`` with
    --status failed``), for the message about a group without jobs."""
    out = []
    for group in groups:
        gid = group.group_id
        if group.jobs == 0:
            out.append((gid, f"group {gid} has no job{filters}: nothing to compare\n"
                       f"  hint: check the group id{' and the filters' if filters else ''} "
                       f"(bl jobs get -g {gid})"))
        elif group.keyed == 0:
            out.append((gid, f"--unit {unit} gives no instance for any job of group {gid}\n"
                       "  hint: --unit is JMESPath on a job-list entry; see the fields of one with "
                       f"bl jobs get -g {gid} --page-size 1"))
        elif group.jobs_scored == 0:
            counts = ", ".join(f"{n} {s}" for s, n in sorted(group.unscored.items(), key=lambda e: (-e[1], e[0])))
            out.append((gid, f"--metric {metric} gives no score for any job of group {gid} ({counts})\n"
                       "  hint: --metric is JMESPath on a job's metrics element; see one with "
                       f"bl metrics get -j JOB_ID (a job of {gid})"))
        elif not group.scored:
            out.append((gid, f"--unit {unit} gives no instance for any scored job of group {gid}\n"
                       "  hint: --unit is JMESPath on a job-list entry; see the fields of one with "
                       f"bl jobs get -g {gid} --page-size 1"))
    return out
