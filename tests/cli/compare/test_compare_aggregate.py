"""``bl compare`` holds per-instance aggregates, never the rows: the same figures as the rows give.

The command gathers each group by instance as its pages arrive (step ``job_rows`` with
``into: instances``, ``benchloop.compare.groups``).  What it prints must be, to the last
digit, what the comparison made of the whole rows before (the rows of ``bl jobs table``,
given to the same combine as the value of each group): checked on the sandbox's runs of one
benchmark, with the options that read more than the pass rates (slices, clusters, the
sequential figures, the per-instance rows).  A moderate scale group is compared through the
command too (memory is measured by the benchmark, ``python -m benchmarks --only streaming``).
"""

from __future__ import annotations

import json
import math
import random
import sys

import pytest
from compare_cases import _COMPARE, COSTS

from benchloop.base.log import Log
from benchloop.compare.estimates import mean
from benchloop.compare.groups import Group, Instance, gather
from benchloop.engine.combining import combine_outcomes
from benchloop.engine.outcomes import Outcome
from benchloop.sandbox.dataset import COMPARE_GROUPS
from benchloop.sandbox.scale import SCALE_GROUPS, TRIALS

RUNS = [g for g in COMPARE_GROUPS if not g.startswith("REPO-")]  # BASE, CAND, CAND2: one benchmark's runs
SCALE = 20_000


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=1, jobs_per_group=5, tasks_per_group=5, compare_jobs=600, scale_jobs=SCALE)


@pytest.fixture
def run(sandbox, bl):
    def go(*args: str):
        result = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "--retry", "0", "-q", *args)
        assert result.code == 0, result.err
        return json.loads(result.out)

    return go


def _from_rows(run, groups: list[str], **options):
    """What the compare combine makes of the whole rows of each group (the value before)."""
    outcomes = [Outcome(g, run("jobs", "table", "-g", g, "--output", "json")) for g in groups]
    assert all(isinstance(o.value, list) and o.value for o in outcomes)
    if options.get("by") == "template":  # the job-list field the table's column copies
        for outcome in outcomes:
            for row in outcome.value:
                row["slice"] = row["template"]
    combined = combine_outcomes(_COMPARE, {**_COMPARE.defaults, **options}, outcomes, Log(quiet=True))
    return json.loads(json.dumps(combined.elements))


VARIANTS = {  # the command's flags, and the same as option values
    "plain": ([], {}),
    "by template": (["--by", "template"], {"by": "template"}),
    "cluster by repository": (["--cluster", "^(.+?)__"], {"cluster": "^(.+?)__"}),
    "sequential": (["--sequential"], {"sequential": True}),
    "per instance": (["--per-instance"], {"per_instance": True}),
    "margin and fdr": (["--margin", "3", "--fdr", "0.2"], {"margin": 3.0, "fdr": 0.2}),
}


@pytest.mark.parametrize(("flags", "options"), VARIANTS.values(), ids=VARIANTS.keys())
def test_the_aggregates_give_the_figures_of_the_whole_rows(run, flags, options):
    args = [w for g in RUNS for w in ("-g", g)]
    streamed = run("compare", *args, *flags, "--output", "json")
    assert streamed == _from_rows(run, RUNS, **options)
    assert json.dumps(streamed) == json.dumps(_from_rows(run, RUNS, **options))  # the same digits
    if not options:
        assert [r["candidate"] for r in streamed] == RUNS[1:]
        assert all(r["groups"][0]["jobs"] == 600 for r in streamed)
        assert any(r["instances"] for r in streamed)  # changed instances with their job ids


def test_an_instance_keeps_the_values_its_rows_had():
    """The compact instance (one array of floats, the ids in one string) gives exactly what the
    lists of its values give: means by ``math.fsum``, equal values as themselves, costs left
    out where a job has none, the job ids and passes in row order."""
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(1, 9)
        scores = [rng.choice([0.1, 0.7, 1e-300, 1e300, rng.random(), rng.uniform(-1e6, 1e6)]) for _ in range(n)]
        if rng.random() < 0.3:
            scores = [scores[0]] * n  # all equal: the mean is the value itself
        passes = [rng.random() < 0.5 for _ in range(n)]
        costs = [rng.choice([None, rng.random() * 100, rng.randint(0, 10**6), "12.5", math.nan]) for _ in range(n)]
        rows = [{"job_id": f"j{i}\x1f" if i == 3 else f"j{i}", "instance": "k", "score": s, "pass": p,
                 "status": "succeeded", "c": c} for i, (s, p, c) in enumerate(zip(scores, passes, costs, strict=True))]
        inst = gather("G", rows, ["c"]).instances["k"]
        assert inst.mean == mean(scores) and inst.scores == scores
        assert inst.passes == [int(p) for p in passes] and inst.pass_rate == sum(passes) / n
        numbers = [float(c) for c in costs if c is not None and float(c) == float(c)]
        assert inst.cost("c") == mean(numbers) and inst.cost("other") is None
        assert inst.jobs == [r["job_id"] for r in rows]
        assert list(inst.outcomes()) == [(r["job_id"], r["pass"]) for r in rows]
    made = Instance("k", ["a", "b"], [0.5, 1.0], [0, 1])  # made of its lists, as the trend tests do
    assert (made.jobs, made.scores, made.passes, made.mean) == (["a", "b"], [0.5, 1.0], [0, 1], 0.75)
    with_costs = Instance("k", ["a", "b"], [1.0, 0.0], [1, 0], costs=["c"])  # a record per job whatever the costs
    assert (with_costs.scored, with_costs.scores, with_costs.passes) == (2, [1.0, 0.0], [1, 0])
    assert with_costs.pass_rate == 0.5 and with_costs.cost("c") is None
    numbered = gather("G", [{"job_id": 5, "instance": "i", "score": 1.0, "pass": True}])  # a Python caller's rows
    assert numbered.instances["i"].jobs == ["5"] and numbered.passes_by_job() == {"5": True}


def test_both_runs_share_the_instance_keys():
    rows = [{"job_id": f"j{i}", "instance": "".join(["inst", str(i % 3)]), "score": 1.0, "pass": True}
            for i in range(6)]
    a, b = gather("A", rows), gather("B", [dict(r) for r in rows])
    assert isinstance(a, Group)
    for key in a.instances:
        assert next(k for k in b.instances if k == key) is key
    assert sys.intern("inst0") is next(iter(a.instances))


def test_a_scale_group_compares_through_the_command(run):
    """GSCALE against GSCALE2 (``SCALE`` jobs each, generated per page): the command completes
    with every job counted, the instances paired, and GSCALE2's raised repositories better."""
    [result] = run("compare", "-g", SCALE_GROUPS[0], "-g", SCALE_GROUPS[1], "--cluster", "^(.+?)__",
                   "--output", "json")
    instances = -(-SCALE // TRIALS)
    assert [g["jobs"] for g in result["groups"]] == [SCALE, SCALE]
    assert result["paired"]["instances"] == instances
    assert result["paired"]["pass_rate_difference"] > 0
    moved = {c["cluster"]: c["pass_rate_difference"] for c in result["cluster_differences"]}
    assert moved["django"] > 0.15 and moved["sympy"] > 0.15 and abs(moved["requests"]) < 0.05
    assert set(result["costs"]) == set(COSTS)
