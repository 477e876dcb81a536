"""``bl noise`` against the sandbox, and the noise floor beside compare's verdicts, the Python client and the MCP
tools (the estimators alone: tests/unit/compare/test_noise_floor.py)."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import numpy as np
import pytest


# ------------------------------------------------------------ the command
@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160)


def _raw_passes(backend, gid: str) -> dict[str, list[int]]:
    """instance -> 0/1 of its scored jobs, from the job list and detail metrics asked directly."""
    def every(path, key):
        items, skip = [], 0
        while True:
            body = backend(path, skip=skip, limit=1000, group_id=gid)
            items += body[key]
            skip += len(body[key])
            if not body[key] or skip >= body["total"]:
                return items

    metrics = {m["job_id"]: m for m in every("/openapi/metrics", "metrics")}
    out: dict[str, list[int]] = defaultdict(list)
    for job in every("/openapi/jobs", "jobs"):
        m = metrics.get(job["job_id"]) or {}
        scores = [x["data"]["task_score"] for x in m.get("metrics") or [] if x.get("type") == "eval"]
        if scores and isinstance(scores[0], (int, float)):
            out[job["instance_id"]].append(int(float(scores[0]) >= 0.5))
    return out


def test_bl_noise_gives_base_its_within_variance_of_01375(bl, sandbox, backend):
    raw = _raw_passes(backend, "BASE")
    within = np.mean([len(t) / (len(t) - 1) * np.mean(t) * (1 - np.mean(t)) for t in raw.values() if len(t) > 1])
    assert within == pytest.approx(0.1375)
    r = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "noise", "-g", "BASE", "--splits", "300")
    assert r.code == 0, r.err
    [element] = json.loads(r.out)
    assert element["within_variance"] == pytest.approx(within, abs=1e-12)
    assert element["groups"] == ["BASE"] and element["instances"] == len(raw)
    split = element["per_group"][0]["splits"]
    assert split["count"] == 300 and split["share_changed"] == pytest.approx(split["share_changed_expected"], abs=0.03)
    # the A/A floor's half-width, recomputed: t(0.975, n-1) * sqrt(sum 2 s_i^2 / k_i) / n
    from scipy import stats as sp

    s2 = [len(t) / (len(t) - 1) * np.mean(t) * (1 - np.mean(t)) for t in raw.values()]
    se = math.sqrt(sum(2 * v / len(t) for v, t in zip(s2, raw.values(), strict=True))) / len(raw)
    assert element["aa"]["half_width"] == pytest.approx(sp.t.ppf(0.975, len(raw) - 1) * se)
    assert element["summary"] in r.err  # the sentence on stderr too
    table = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "noise", "-g", "BASE", "--output", "table")
    assert table.code == 0 and table.out.startswith("an A/A of BASE moves the pass rate by ±")


def test_bl_noise_with_two_runs_pairs_them(bl, sandbox):
    r = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "noise", "-g", "BASE", "-g", "REPO-BASE",
           "--cluster", "^(.+?)__", "--output", "json")
    assert r.code == 0, r.err
    [element] = json.loads(r.out)
    between = element["between_runs"]
    assert between["runs"] == 2 and between["clusters"] == 8 and len(between["pairs"]) == 1
    assert between["between_variance"] >= 0


def test_every_verdict_of_compare_has_the_floor_beside_it(bl, sandbox):
    r = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "compare", "-g", "BASE", "-g", "CAND2", "-g", "CAND")
    assert r.code == 0, r.err
    results = json.loads(r.out)
    for result in results:
        assert result["noise_floor"]["summary"].startswith("an A/A of BASE moves the pass rate by ±")
        assert result["evidence"]["summary"] in r.err
    table = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "compare", "-g", "BASE", "-g", "CAND2",
               "--output", "table")
    lines = table.out.splitlines()
    assert lines[1] == results[0]["noise_floor"]["summary"]


def test_an_fdr_outside_0_1_is_a_usage_error(bl, sandbox):
    for level in ("0", "1", "1.5", "-0.1"):
        r = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "compare", "-g", "BASE", "-g", "CAND", "--fdr", level)
        assert r.code == 2 and "--fdr must be between 0 and 1" in r.err and r.out == "", level
    r = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "compare", "-g", "BASE", "-g", "CAND2", "--fdr", "0.3")
    [element] = json.loads(r.out)
    assert element["evidence"]["fdr"] == 0.3
    assert all(e["beyond_noise"] == (e["q_value"] <= 0.3) for e in element["instances"])


def test_aa_splits_of_the_sandbox_runs_stay_within_noise(bl, sandbox):
    """Each sandbox run's trials dealt at random into two halves, 60 seeds each, the halves
    compared: no instance is beyond noise in most seeds (at most FDR of them have any), and the
    printed A/A expectation is within 10% of the share the splits list."""
    from benchloop.compare.stats import compare_groups

    r = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "jobs", "table", "-g", "BASE,CAND,CAND2,REPO-BASE",
           "--fields", "group_id,job_id,status,instance,score,pass")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    rng = np.random.default_rng(46)
    for group in ("BASE", "CAND", "CAND2", "REPO-BASE"):
        by: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            if row["group_id"] == group:
                by[row["instance"]].append(row)
        flagged, printed, listed = 0, 0.0, 0
        seeds = 60
        for _ in range(seeds):
            first, second = [], []
            for trials in by.values():
                order = rng.permutation(len(trials))
                half = len(trials) // 2
                first += [trials[i] for i in order[:half]]
                second += [trials[i] for i in order[half:]]
            [result] = compare_groups([("A", first), ("B", second)], metric="m", pass_threshold=0.5, unit="u")
            flagged += result["evidence"]["beyond_noise"] > 0
            printed += result["evidence"]["aa_expected"]
            listed += result["evidence"]["changed"]
        assert flagged / seeds <= 0.1, group
        assert printed / listed == pytest.approx(1, abs=0.1), group


def test_the_python_client_and_the_mcp_tools_have_noise_and_plan(sandbox):
    from benchloop import Client
    from benchloop.mcp_server.tools import all_tools, served_resources
    from benchloop.table.load import load_model

    with Client(host=sandbox.url, api_key=sandbox.api_key) as client:
        [floor] = client.noise(group="BASE", splits=20)
        [planned] = client.plan(group="BASE", trials=[4])
    assert floor["within_variance"] == pytest.approx(0.1375)
    assert planned["table"][0]["instances"] in (1350, 1351, 1352)
    model = load_model()
    tools = {t.name: t for t in all_tools(model)}
    for resource in ("noise", "plan"):
        assert tools[resource].read_only and resource in served_resources(model, ("noise",))
        assert resource not in served_resources(model, model.mcp.default)  # not in the default budget
