"""``bl trend`` against the sandbox's comparison runs (its figures alone: tests/unit/compare/test_trend.py)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160)


def test_bl_trend_of_base_cand_cand2(bl, sandbox):
    r = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "trend", "-g", "BASE", "-g", "CAND", "-g", "CAND2")
    assert r.code == 0, r.err
    [t] = json.loads(r.out)
    compared = json.loads(bl("--host", sandbox.url, "--api-key", sandbox.api_key, "compare", "-g", "BASE",
                             "-g", "CAND2").out)[0]
    assert t["groups"] == ["BASE", "CAND", "CAND2"]
    assert [round(run["own_pass_rate"], 3) for run in t["runs"]] == [0.438, 0.506, 0.648]
    assert t["runs"][0]["own_pass_rate"] == compared["groups"][0]["pass_rate"]
    assert t["summary"] in r.err
    one = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "trend", "-g", "BASE")
    assert one.code == 2 and "at least two different runs" in one.err
    table = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "trend", "-g", "BASE,CAND,CAND2", "--output",
               "table")
    assert table.code == 0 and table.out.startswith("3 runs over ")
