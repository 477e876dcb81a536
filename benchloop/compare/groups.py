"""What ``bl compare`` compares: one group's jobs gathered by instance, and the options.

:func:`gather` turns the flat rows of one group (:mod:`.rows`) into a :class:`Group` of
:class:`Instance` s; :class:`Options` is what a comparison was asked for.  The figures
(:mod:`.stats`) and the caveats said before them (:mod:`.caveats`) both read these, so
they live apart from both.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .estimates import mean
from .scores import as_number

Row = Mapping[str, Any]


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
    """One group's jobs gathered by instance, and what its unscored jobs were."""

    group_id: str
    jobs: int
    jobs_scored: int
    instances: dict[str, Instance]
    jobs_passed: int = 0
    unscored: dict[str, int] = field(default_factory=dict)  # job status -> jobs without a score
    keyed: int = 0  # jobs with an instance key

    @property
    def scored(self) -> dict[str, Instance]:
        return {k: i for k, i in self.instances.items() if i.scored}


def gather(group_id: str, rows: Iterable[Row], costs: Sequence[str] = ()) -> Group:
    """Group the flat rows of one group (``job_id``, ``instance``, ``score``, ``pass``,
    ``status`` and the cost columns, as :func:`benchloop.compare.rows.job_rows` makes them)
    by instance."""
    instances: dict[str, Instance] = {}
    jobs = scored = passed = keyed = 0
    unscored: dict[str, int] = {}
    for row in rows:
        jobs += 1
        score = row.get("score")
        if score is not None:
            scored += 1
            passed += 1 if row.get("pass") else 0
        else:
            status = row.get("status")
            status = status if isinstance(status, str) and status else "unknown"
            unscored[status] = unscored.get(status, 0) + 1
        key = row.get("instance")
        if key is None:
            continue
        keyed += 1
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
    return Group(group_id, jobs, scored, instances, passed, unscored, keyed)



@dataclass(frozen=True)
class Options:
    """What a comparison was asked for (the command's options, as the figures need them)."""

    metric: str
    pass_threshold: float
    unit: str
    costs: Sequence[str] = ()
    cluster: str | None = None  # --cluster REGEX
    by: str | None = None  # --by EXPR (the rows carry its value as ``slice``)
    status: str | None = None  # --status, for the warning about filtering on an outcome
    outcome_statuses: Sequence[str] = ()  # the job statuses that are outcomes (succeeded, failed)
    margin: float | None = None  # --margin: the equivalence margin of the pass rate (a fraction), or None
