"""What ``bl compare`` compares: one group's jobs gathered by instance, and the options.

:func:`gather` turns the flat rows of one group (:mod:`.rows`) into a :class:`Group` of
:class:`Instance` s; :class:`Options` is what a comparison was asked for.  The figures
(:mod:`.stats`) and the caveats said before them (:mod:`.caveats`) both read these, so
they live apart from both.

Why compact: a group is gathered as its rows are read (``job_rows`` with ``into:
instances``), so what ``bl compare`` holds is the per-instance aggregate, never the rows: an
instance keeps its job ids (one string), its scores, passes and costs (arrays of machine
numbers, in row order, so every figure is the one the rows give, to the last digit), and
the statuses its jobs had; the group keeps its status counts and, with ``--by``, a group
per slice.  Two groups of 10^6 jobs take a few hundred MB, where their rows took gigabytes.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .estimates import mean
from .scores import as_number

Row = Mapping[str, Any]
SLICE = "slice"  # the row key of the --by value (benchloop.compare.rows)
_SEP = "\x1f"  # between the job entries of an instance (a job id holding it is kept in a list)
_MARKS = {True: "1", False: "0", None: "-"}  # a job's pass as the first character of its entry
_PASS = {"1": True, "0": False}
_STATUSES: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # every statuses tuple once (shared by instances)


class Instance:
    """The trials (jobs) of one instance in one group: the ids of its jobs (with their pass),
    its scored jobs' score, pass and cost values in row order, its jobs' statuses.

    The numbers are one array of machine floats, a record per scored job (``score, pass,
    cost...``; NaN: no value of that cost, never a value here), so an instance of four
    trials is a few hundred bytes, and every mean is the one its rows' values give."""

    __slots__ = ("key", "_jobs", "_values", "_names", "statuses")

    def __init__(self, key: str, jobs: Iterable[str] = (), scores: Iterable[float] = (),
                 passes: Iterable[int] = (), costs: Sequence[str] = ()):
        self.key = key
        self._jobs: str | list[str] = ""
        self._names = tuple(costs)  # the cost columns, in record order
        self._values = array("d")
        self.statuses: tuple[Any, ...] = ()  # the distinct statuses of its jobs, in the order seen
        no_costs = [math.nan] * len(self._names)  # a record is score, pass and one value per cost
        for score, passed in zip(scores, passes, strict=True):
            self.add_scored(float(score), bool(passed), no_costs)
        for job in jobs:
            self.add_job(job, None)

    def add_job(self, job_id: str, passed: bool | None) -> None:
        job_id = job_id if type(job_id) is str else str(job_id)  # an id a caller gave as a number
        entry = _MARKS[passed] + job_id
        if isinstance(self._jobs, list):
            self._jobs.append(entry)
        elif _SEP in job_id:
            self._jobs = [*self._entries(), entry]
        else:
            self._jobs = f"{self._jobs}{_SEP}{entry}" if self._jobs else entry

    def add_scored(self, score: float, passed: bool, costs: Sequence[float]) -> None:
        """One scored job: its score, pass and a value (NaN: none) per cost column."""
        self._values.append(score)
        self._values.append(1.0 if passed else 0.0)
        self._values.extend(costs)

    def _entries(self) -> list[str]:
        if isinstance(self._jobs, list):
            return self._jobs
        return self._jobs.split(_SEP) if self._jobs else []

    @property
    def jobs(self) -> list[str]:
        """Every job id with this key, in row order."""
        return [entry[1:] for entry in self._entries()]

    def outcomes(self) -> Iterator[tuple[str, bool | None]]:
        """Each job id with its pass (None: not scored), in row order."""
        for entry in self._entries():
            yield entry[1:], _PASS.get(entry[0])

    @property
    def _width(self) -> int:
        return 2 + len(self._names)

    @property
    def scores(self) -> list[float]:
        return list(self._values[0::self._width])

    @property
    def passes(self) -> list[int]:
        return [int(v) for v in self._values[1::self._width]]

    @property
    def costs(self) -> dict[str, list[float]]:
        return {name: values for name in self._names if (values := self._cost_values(name))}

    def _cost_values(self, name: str) -> list[float]:
        if name not in self._names:
            return []
        return [v for v in self._values[2 + self._names.index(name)::self._width] if v == v]

    @property
    def scored(self) -> int:
        return len(self._values) // self._width

    @property
    def pass_rate(self) -> float | None:
        # sum / count of integers: equal rates (1/3, 2/6) give the same float, so
        # "unchanged" (d_i == 0) is exact.
        passes = self._values[1::2 + len(self._names)]  # 0.0 and 1.0: an exact sum, the same float
        return sum(passes) / len(passes) if passes else None

    @property
    def mean(self) -> float | None:
        return mean(self._values[0::self._width])

    def cost(self, name: str) -> float | None:
        return mean(self._cost_values(name))

    def summary(self) -> dict[str, Any]:
        return {"pass_rate": self.pass_rate, "mean": self.mean, "jobs": self.jobs}


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
    statuses: dict[Any, int] = field(default_factory=dict)  # every job's status (None: none) -> jobs
    slices: dict[Any, Group] | None = None  # with --by: the slice's value -> its jobs gathered

    @property
    def scored(self) -> dict[str, Instance]:
        return {k: i for k, i in self.instances.items() if i.scored}

    def extend(self, rows: Iterable[Row], costs: Sequence[str] = ()) -> None:
        """Count flat rows in (``job_id``, ``instance``, ``score``, ``pass``, ``status`` and the
        cost columns, as :func:`benchloop.compare.rows.job_rows` makes them), each read once."""
        statuses, unscored, instances, slices = self.statuses, self.unscored, self.instances, self.slices
        names = tuple(costs)
        intern, nan, inf, marks, sep = sys.intern, math.nan, math.inf, _MARKS, _SEP
        jobs = scored = passed = keyed = 0
        for row in rows:
            jobs += 1
            get = row.get
            status = get("status")
            statuses[status] = statuses.get(status, 0) + 1
            if slices is not None:
                value = get(SLICE)
                part = slices.get(value)
                if part is None:
                    part = slices[value] = Group("", 0, 0, {})
                part.extend((row,))
            score = get("score")
            ok = bool(get("pass"))
            if score is not None:
                scored += 1
                passed += ok
            else:
                known = status if isinstance(status, str) and status else "unknown"
                unscored[known] = unscored.get(known, 0) + 1
            key = get("instance")
            if key is None:
                continue
            keyed += 1
            inst = instances.get(key)
            if inst is None:  # the key's text once for every group (both runs of a comparison share it)
                key = intern(key) if type(key) is str else key
                inst = instances[key] = Instance(key, costs=names)
            if status not in inst.statuses:
                seen = (*inst.statuses, status)
                inst.statuses = _STATUSES.setdefault(seen, seen)
            job_id = get("job_id")
            if job_id is not None:
                if type(job_id) is not str:  # rows a Python caller made: the id as text, as the CLI's rows have it
                    job_id = str(job_id)
                entry = marks[None if score is None else ok] + job_id
                held = inst._jobs
                if type(held) is str and sep not in job_id:
                    inst._jobs = f"{held}{sep}{entry}" if held else entry
                else:
                    inst.add_job(job_id, None if score is None else ok)
            if score is None:
                continue
            values = inst._values
            values.append(float(score))
            values.append(1.0 if ok else 0.0)
            for name in names:
                value = get(name)
                if type(value) is not float:
                    value = as_number(value)
                    values.append(nan if value is None else float(value))
                elif value != value or value in (inf, -inf):
                    values.append(nan)
                else:
                    values.append(value)
        self.jobs += jobs
        self.jobs_scored += scored
        self.jobs_passed += passed
        self.keyed += keyed

    def trim(self) -> None:
        """Each instance's array at its size (a growing one holds room to spare)."""
        for inst in self.instances.values():
            inst._values = array("d", inst._values)

    def passes_by_job(self) -> dict[str, bool | None]:
        """Each job's pass (None: not scored), by job id, over the jobs with an instance."""
        return {job: passed for inst in self.instances.values() for job, passed in inst.outcomes()}


def gather(group_id: str, rows: Iterable[Row], costs: Sequence[str] = (), slices: bool = False) -> Group:
    """Group the flat rows of one group (``job_id``, ``instance``, ``score``, ``pass``,
    ``status`` and the cost columns, as :func:`benchloop.compare.rows.job_rows` makes them)
    by instance, reading each row once (``rows`` may be a stream); with ``slices``, also
    each value of the rows' ``slice`` (``--by``) on its own."""
    group = Group(group_id, 0, 0, {}, slices={} if slices else None)
    group.extend(rows, costs)
    group.trim()
    return group


def as_group(group_id: str, value: Group | Iterable[Row], costs: Sequence[str] = (), slices: bool = False) -> Group:
    """``value`` as a :class:`Group`: gathered already (``job_rows`` with ``into: instances``), or
    the rows, gathered now."""
    return value if isinstance(value, Group) else gather(group_id, value, costs, slices)


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
