"""The sandbox's comparison groups BASE, CAND, CAND2, REPO-BASE and REPO-CAND (``compare_jobs=N``).

Runs of one SWE-bench-like benchmark: the same instances (``repo__repo-NNNN``
over 8 repositories) with several trials each, outcomes that change between runs
(fixed, broken, unchanged instances) by repository, and instances of one run
only; REPO-CAND's difference from REPO-BASE is significant only when instances
are taken as independent.  They are added without changing anything the other
ids answer, and the job list agrees with the paged detail metrics.
"""

from __future__ import annotations

import re
from collections import Counter

import httpx
import pytest
from compare_cases import COMPARE_COLUMNS, COSTS, table_rows

from benchloop.compare.stats import compare_groups
from benchloop.sandbox import payloads
from benchloop.sandbox.dataset import (
    COMPARE_GROUPS,
    COMPARE_REPOS,
    COMPARE_TEMPLATES,
    COMPARE_TRIALS,
    Dataset,
)

N = 2001  # pages of 1000 end at 1000, 2000 and one more


@pytest.fixture(scope="module")
def compare_sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=N)


@pytest.fixture(scope="module")
def client(compare_sandbox):
    with httpx.Client(base_url=compare_sandbox.url, headers={"X-API-Key": compare_sandbox.api_key},
                      timeout=30) as c:
        yield c


def pages(client: httpx.Client, path: str, key: str, **params) -> tuple[list[dict], int]:
    items, skip, total = [], 0, None
    while True:
        body = client.get(path, params={**params, "skip": skip, "limit": 1000}).json()
        total = body["total"]
        items += body[key]
        skip += len(body[key])
        if not body[key] or skip >= total:
            return items, total


def test_the_other_ids_answer_as_without_the_comparison_groups():
    plain, more = Dataset(seed=7), Dataset(seed=7, compare_jobs=300)
    for gid in ("G1", "G2", "G3", "GEMPTY"):
        assert plain.group(gid) == more.group(gid)
        assert list(plain.iter_group_jobs(gid)) == list(more.iter_group_jobs(gid))
        assert plain.all_tasks(gid) == more.all_tasks(gid)
        assert plain.list_jobs(gid, 3, 7, status="failed") == more.list_jobs(gid, 3, 7, status="failed")
    for job in ("JORPHAN", "../JODD x", "G1-J0001"):
        assert plain.job(job) == more.job(job)
    for task in ("T1", "T2", "T3", "TEMPTY", "TMEDIA"):
        assert plain.download_task(task) == more.download_task(task)
    assert more.group_ids() == [*plain.group_ids(), *COMPARE_GROUPS]
    # every job that existed keeps its place in the unfiltered list
    old = [j["job_id"] for j in plain.list_jobs(None, 0, 10_000)[0]]
    new = [j["job_id"] for j in more.list_jobs(None, 0, 10_000)[0]]
    assert [j for j in new if j in set(old)] == old


def test_off_by_default():
    assert set(Dataset(seed=7).group_ids()).isdisjoint(COMPARE_GROUPS)
    with pytest.raises(ValueError, match="compare_jobs"):
        Dataset(compare_jobs=-1)


def test_job_list_and_detail_metrics_agree(client):
    for gid in COMPARE_GROUPS:
        jobs, total = pages(client, "/openapi/jobs", "jobs", group_id=gid)
        metrics, metrics_total = pages(client, "/openapi/metrics", "metrics", group_id=gid)
        assert total == metrics_total == len(jobs) == N
        assert [j["job_id"] for j in jobs] == [m["job_id"] for m in metrics]
        assert len({j["job_id"] for j in jobs}) == N
        assert metrics[0] == client.get(f"/openapi/metrics/{jobs[0]['job_id']}").json()
        for job, element in zip(jobs, metrics, strict=True):
            assert job["instance_id"] and job["group_id"] == gid
            scored = [m for m in element["metrics"] if m.get("type") == "eval"]
            if job["status"] in ("succeeded", "failed"):
                [entry] = scored
                score = entry["data"]["task_score"]
                assert (score >= 0.5) == (job["status"] == "succeeded")
            else:
                assert scored == []  # running and cancelled jobs have no score
            if job["status"] != "running":
                [run] = element["run_metrics"]
                for key in ("duration_s", "tokens_sent", "api_call_count", "tool_error_count"):
                    float(run[key])  # strings of numbers, as the backend sends them


def test_instances_have_trials_and_some_are_in_one_group_only():
    data = Dataset(seed=7, groups=0, compare_jobs=400)
    instances = {gid: Counter(j["instance_id"] for j in data.iter_group_jobs(gid)) for gid in COMPARE_GROUPS}
    base, cand, cand2, repo_base, repo_cand = (instances[g] for g in COMPARE_GROUPS)
    assert set(base.values()) == {COMPARE_TRIALS}  # 400 jobs = 100 instances x 4 trials
    assert len(base) == len(cand) == len(cand2) == 100
    assert len(set(base) & set(cand)) == 95 and len(set(base) - set(cand)) == 5
    assert len(set(base) & set(cand2)) == 90 and len(set(cand2) - set(base)) == 10
    assert set(repo_base) == set(repo_cand) == set(base)
    assert data.group("CAND")["task_count"] == 100
    tasks = [t["name"] for t in data.all_tasks("CAND")]
    assert sorted(tasks) == sorted(cand)


def test_instance_ids_are_swe_bench_like_over_eight_repositories():
    data = Dataset(seed=7, groups=0, compare_jobs=160)
    jobs = list(data.iter_group_jobs("BASE"))
    names = {j["instance_id"] for j in jobs}
    repos = Counter(name.split("__")[0] for name in names)
    assert set(repos) == set(COMPARE_REPOS) and len(repos) == 8
    assert max(repos.values()) - min(repos.values()) <= 1  # in turn: 40 instances, 5 each
    assert all(re.fullmatch(r"([a-z-]+)__\1-\d{4,5}", name) for name in names)
    # each instance has one category, the template of its jobs, the same in every run
    category = {j["instance_id"]: j["template"] for j in jobs}
    assert set(category.values()) == set(COMPARE_TEMPLATES)
    assert all(category.get(j["instance_id"], j["template"]) == j["template"]
               for gid in COMPARE_GROUPS for j in data.iter_group_jobs(gid))


def _groups(data: Dataset, ids) -> list[tuple[str, list[dict]]]:
    out = []
    for gid in ids:
        jobs = list(data.iter_group_jobs(gid))
        out.append((gid, table_rows(gid, [payloads.job_summary(j) for j in jobs],
                                  [payloads.job_metrics(j) for j in jobs], columns=COMPARE_COLUMNS)))
    return out


@pytest.mark.parametrize("size", [160, 800])
def test_outcomes_differ_as_the_groups_say(size):
    data = Dataset(seed=7, groups=0, compare_jobs=size)
    groups = _groups(data, ("BASE", "CAND", "CAND2"))
    for cluster in (None, "^(.+?)__"):
        cand, cand2 = compare_groups(groups, metric="m", pass_threshold=0.5, unit="instance_id",
                                     costs=COSTS, cluster=cluster)
        for result in (cand, cand2):
            p = result["paired"]
            assert p["improved"] > 0 and p["regressed"] > 0 and p["unchanged"] > 0
            assert result["only_baseline"] and result["only_candidate"]
            assert result["groups"][0]["jobs"] > result["groups"][0]["jobs_scored"]  # running, cancelled
        # CAND fixes some repositories and breaks others: inconclusive; CAND2 is better, with or
        # without clusters; CAND is slower, CAND2 makes more calls.
        assert (cand["paired"]["verdict"], cand2["paired"]["verdict"]) == ("inconclusive", "better")
        assert cand["costs"]["duration_s"]["ci95"][0] > 0
        assert cand2["costs"]["api_call_count"]["ci95"][0] > 0
    by_repo = {e["cluster"]: e["pass_rate_difference"] for e in cand["cluster_differences"]}
    assert min(by_repo["django"], by_repo["sympy"]) > 0 > max(by_repo["sphinx"], by_repo["pytest"])


@pytest.mark.parametrize("size", [160, 400, 2001])
def test_the_repo_pair_differs_only_without_clusters(size):
    data = Dataset(seed=7, groups=0, compare_jobs=size)
    groups = _groups(data, ("REPO-BASE", "REPO-CAND"))
    [plain] = compare_groups(groups, metric="m", pass_threshold=0.5, unit="instance_id")
    [clustered] = compare_groups(groups, metric="m", pass_threshold=0.5, unit="instance_id", cluster="^(.+?)__")
    assert plain["paired"]["verdict"] == "better" and plain["paired"]["p_value"] < 0.01
    assert clustered["paired"]["verdict"] == "inconclusive" and clustered["paired"]["clusters"] == 8
    assert clustered["paired"]["pass_rate_difference"] == plain["paired"]["pass_rate_difference"]


def test_the_same_seed_gives_the_same_groups():
    a, b = Dataset(seed=7, groups=0, compare_jobs=50), Dataset(seed=7, groups=0, compare_jobs=50)
    assert list(a.iter_group_jobs("CAND")) == list(b.iter_group_jobs("CAND"))
    other = Dataset(seed=8, groups=0, compare_jobs=50)
    assert list(a.iter_group_jobs("CAND")) != list(other.iter_group_jobs("CAND"))
