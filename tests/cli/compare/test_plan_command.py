"""``bl plan`` against the sandbox (the power function and the plan alone: tests/unit/compare/test_plan.py)."""

from __future__ import annotations

import json

import pytest

from benchloop.compare import plan


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160)


def test_bl_plan_from_base(bl, sandbox):
    r = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "plan", "-g", "BASE", "--trials", "4,8,16")
    assert r.code == 0, r.err
    [element] = json.loads(r.out)
    assert element["within_variance"] == pytest.approx(0.1375)
    assert [(row["trials"], row["instances"]) for row in element["table"]] == [
        (k, plan.instances_needed(k, element["within_variance"])) for k in (4, 8, 16)]
    assert element["table"][0]["instances"] in (1350, 1351, 1352)
    fixed = element["fixed"]
    assert fixed["instances"] == 40 and fixed["power"] >= 0.8
    assert len(element["allocation"]) == 40
    assert sum(a["trials"] for a in element["allocation"]) == fixed["allocated_trials"]
    assert fixed["allocated_power"] >= 0.8
    given = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "plan", "-g", "BASE", "--variance", "0.2",
               "--instances", "500", "--output", "table")
    assert given.code == 0, given.err
    assert given.out.startswith("to detect +2.0 pp with 80% power: ")
    bad = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "plan", "-g", "BASE", "--power", "1.5")
    assert bad.code == 2 and "--power must be between 0 and 1" in bad.err
