"""What every printing command prints matches what the table says it prints.

Each dimension of a printing action has an output in the model (``table/outputs.py``:
worked out of the answers, transforms and steps, or declared).  Here every such
dimension runs against the sandbox - each choice of a ``select`` option, with and without
the flags that pick other parts - and every printed element is validated against the
output's schema by jsonschema (Draft 2020-12), an independent validator; the flat formats'
columns are checked against the output's columns.  A command whose output changes
without its declaration fails here.
"""

from __future__ import annotations

import csv
import io
import json
from itertools import product

import jsonschema
import pytest

from benchloop.sandbox.dataset import Dataset
from benchloop.table.load import load_model
from benchloop.table.model import Action

MODEL = load_model()
# Ids of the sandbox for each kind of id of the table (their flags are the model's); a kind
# the table gains needs ids here (test_every_kind_of_id_has_sandbox_ids says so).
IDS = {"group": ["G1"], "job": ["G1-J0001"], "task": ["T1"]}
TASK_IDS = {"brm": ["uid-G1-1"]}  # a behaviour analysis, not a download task
COMPARE = ["BASE", "CAND"]
NEEDED = {("brm", "run"): ["--steps", "10"]}  # options an action cannot run without on the sandbox
SANDBOX = {"seed": 7, "groups": 3, "jobs_per_group": 40, "tasks_per_group": 25, "compare_jobs": 40, "live_jobs": 4}
_DATA = Dataset(**SANDBOX)
TRIALS = _DATA.job_ids("G1")[:2]  # two trials of an action of two jobs (bl divergence -j A -j B)
INSTANCE = next(iter(_DATA.iter_group_jobs(COMPARE[0])))["instance_id"]  # a trial of each of -g BASE -g CAND
# A wait: work that is done (G1 keeps some jobs running): the live group, every job finished, or its jobs.
WAIT = {"group": ["GLIVE"], "job": _DATA.job_ids("GLIVE")[:1]}
_DATA.close()


def trial_options(action: Action, dim: str) -> list[str]:
    """A group's trial (the ``trial`` step: bl view, bl divergence) stands for the group on one
    instance, named by the action's ``instance_id`` option; a job is its own trial."""
    trial = any(getattr(getattr(part, "step", None), "name", None) == "trial" for part in action.dimensions[dim].parts.values())
    return [action.flag_of("instance_id"), INSTANCE] if trial and dim == "group" else []


def invocations(action: Action, dim: str) -> list[list[str]]:
    """Argument lists that run every part of a dimension at least once."""
    ids = TASK_IDS.get(action.resource, IDS[dim]) if dim == "task" else IDS[dim]
    if action.min_ids:
        ids = COMPARE if dim == "group" else TRIALS
    if action.waits and dim in WAIT:
        ids = WAIT[dim]
    flag = action.dimensions[dim].kind.short
    head = [*action.words, *(w for ident in ids for w in (flag, ident)), *NEEDED.get((action.resource, action.name), []),
            *trial_options(action, dim)]
    if action.stdout_when:
        head.append(action.flag_of(action.stdout_when))
    variants: list[list[list[str]]] = []
    select = action.dimensions[dim].select
    if select is not None:
        variants.append([[action.flag_of(select.option), choice] for choice in select.choices])
    flags = sorted({name for part in action.dimensions[dim].parts.values() if part.when
                    for name in part.when.options
                    if (opt := action.option(name)) is not None and opt.kind.is_flag})
    for name in flags:
        variants.append([[], [action.flag_of(name)]])
    return [head + [w for chosen in combo for w in chosen] for combo in product(*variants)] or [head]


def test_every_kind_of_id_has_sandbox_ids():
    kinds = {dim for action in MODEL.actions for dim in action.dimensions}
    assert kinds and kinds <= set(IDS), f"no sandbox ids for {sorted(kinds - set(IDS))}"
    assert WAIT["job"] and WAIT["job"][0].startswith(WAIT["group"][0])


CASES = [(action, dim, args) for action in MODEL.actions if action.prints and action.writer != "text"
         for dim in action.dimensions for args in invocations(action, dim)]


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    sandbox = make_sandbox(**SANDBOX)
    sandbox.live.advance(4)
    return sandbox


def run(bl, sandbox, args: list[str]):
    return bl("--host", sandbox.url, "--api-key", sandbox.api_key, "--retry", "0", *args)


@pytest.mark.parametrize(("action", "dim", "args"), CASES, ids=[" ".join(args) for _, _, args in CASES])
def test_every_printed_element_matches_the_declared_output(bl, sandbox, module_env, action, dim, args):
    output = action.dimensions[dim].output
    assert output is not None
    result = run(bl, sandbox, args)
    assert result.code in (0, 1), result.err  # 1: an artifact of the task fails on purpose
    elements = json.loads(result.out)
    assert elements, f"bl {' '.join(args)} printed nothing to check"
    validator = jsonschema.Draft202012Validator(output.resolved)
    for element in elements:
        errors = sorted(validator.iter_errors(element), key=lambda e: list(e.absolute_path))
        assert not errors, f"bl {' '.join(args)}: {errors[0].message} at {list(errors[0].absolute_path)}"


@pytest.mark.parametrize(("action", "dim", "args"), CASES, ids=[" ".join(args) for _, _, args in CASES])
def test_the_csv_header_is_the_declared_columns_then_the_rest(bl, sandbox, module_env, action, dim, args):
    output = action.dimensions[dim].output
    result = run(bl, sandbox, [*args, "--output", "csv"])
    assert result.code in (0, 1), result.err
    if action.combine is not None and not result.out:
        pytest.skip("the combine renders nothing for csv")
    header = next(csv.reader(io.StringIO(result.out)))
    declared = [c for c in header if c in output.column_names]
    # the declared columns come first, in declared order; the data's other fields after them
    assert header[:len(declared)] == declared
    assert declared == [c for c in output.column_names if c in declared]
    assert declared, f"bl {' '.join(args)}: no declared column in {header}"


def test_jobs_get_all_as_csv_is_one_row_per_job(bl, sandbox, module_env):
    result = run(bl, sandbox, ["jobs", "get", "-g", "G1", "--all", "--output", "csv"])
    rows = list(csv.DictReader(io.StringIO(result.out)))
    listed = json.loads(run(bl, sandbox, ["jobs", "get", "-g", "G1", "--all"]).out)[0]["jobs"]
    assert [r["job_id"] for r in rows] == [j["job_id"] for j in listed]
    assert {"group_id", "job_id", "status", "instance_id", "created_at", "template"} <= set(rows[0])
    assert [r["status"] for r in rows] == [j["status"] for j in listed]
    assert all(r["group_id"] == "G1" for r in rows)


def test_a_dimension_that_builds_a_new_value_declares_it():
    """brm get's element is built by a transform: its output is the table's declaration."""
    dim = MODEL.action("brm", "get").dimensions["task"]
    assert dim.output is not None and dim.output.rows is None
    names = dim.output.column_names
    assert "overall.summary.totalSamples" in names and "detail.behaviorPatterns.positive" in names


def test_columns_follow_the_declared_order_and_flatten_objects():
    jobs = MODEL.action("jobs", "get").dimensions["group"].output
    assert jobs is not None and jobs.rows == ("jobs",) and jobs.ids == ("group_id",)
    assert jobs.column_names[:3] == ("group_id", "job_id", "id")
    metrics = MODEL.action("metrics", "get").dimensions["job"].output
    assert metrics is not None
    # run_metrics is an object or a list of them: its own column, and its fields dotted
    assert {"run_metrics", "run_metrics.duration_s", "tokenized_metrics.llm_calls"} <= set(metrics.column_names)
    described = {c.name: c for c in metrics.columns}
    assert described["run_metrics.duration_s"].description.startswith("Wall-clock duration")
    assert described["run_metrics.duration_s"].types == ["string", "number"]
