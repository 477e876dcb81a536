"""The sandbox's scale groups GSCALE and GSCALE2 (``scale_jobs=N``): generated per page, never stored.

A page is computed from the seed at any ``skip`` (no SQLite ``OFFSET``), so a group of
10^6 jobs starts at once; the pages agree with one another and with the single-job
answers, they follow the list order every group has, filters and counts are exact, and
nothing any other id answers changes.
"""

from __future__ import annotations

from collections import Counter

import httpx
import pytest

from benchloop.sandbox.dataset import JOB_STATUSES, Dataset
from benchloop.sandbox.scale import SCALE_GROUPS

N = 2503


@pytest.fixture(scope="module")
def scaled():
    return Dataset(seed=7, scale_jobs=N)


def walk(data: Dataset, gid: str | None, size: int, **filters) -> tuple[list[dict], int]:
    items, skip = [], 0
    while True:
        page, total = data.list_jobs(gid, skip, size, **filters)
        items += page
        skip += len(page)
        if not page or skip >= total:
            return items, total


def test_nothing_else_changes():
    plain, more = Dataset(seed=7, compare_jobs=40, live_jobs=3), Dataset(seed=7, compare_jobs=40, live_jobs=3,
                                                                          scale_jobs=50)
    assert more.group_ids() == plain.group_ids() + list(SCALE_GROUPS)
    for gid in plain.group_ids():
        assert plain.group(gid) == more.group(gid)
        assert list(plain.iter_group_jobs(gid)) == list(more.iter_group_jobs(gid))
        assert plain.status_counts(gid) == more.status_counts(gid)
    everything, total = walk(more, None, 97)
    assert total == walk(plain, None, 1000)[1] + 2 * 50
    assert [j["job_id"] for j in everything[100:]] == [j["job_id"] for j in walk(plain, None, 1000)[0]]
    assert Dataset(seed=7).group("GSCALE") is None and Dataset(seed=7).job("GSCALE-J0001") is None


def test_pages_of_any_size_give_the_list_order(scaled):
    for gid in SCALE_GROUPS:
        jobs, total = walk(scaled, gid, 1000)
        assert total == len(jobs) == N
        assert [j["n"] for j in jobs] == list(range(N, 0, -1))  # newest first: descending job number
        assert [j["job_id"] for j in walk(scaled, gid, 333)[0]] == [j["job_id"] for j in jobs]
        stamps = [j["created_at"] for j in jobs]
        assert stamps == sorted(stamps, reverse=True)
        assert Counter(Counter(stamps).values()) <= Counter({3: N // 3, N % 3: 1})  # ties of three
        assert scaled.job(jobs[17]["job_id"]) == jobs[17]  # a single job is the listed one
        assert list(scaled.iter_group_jobs(gid)) == jobs
        assert scaled.job_ids(gid) == [j["job_id"] for j in jobs]
    # Every job of GSCALE2 is newer than every job of GSCALE (the list of every job).
    assert min(j["created_at"] for j in walk(scaled, "GSCALE2", 1000)[0]) > \
        max(j["created_at"] for j in walk(scaled, "GSCALE", 1000)[0])


def test_the_same_seed_gives_the_same_jobs_and_another_seed_others(scaled):
    again, other = Dataset(seed=7, scale_jobs=N), Dataset(seed=8, scale_jobs=N)
    assert scaled.list_jobs("GSCALE", 1200, 50) == again.list_jobs("GSCALE", 1200, 50)
    assert scaled.list_jobs("GSCALE", 1200, 50) != other.list_jobs("GSCALE", 1200, 50)


def test_filters_and_counts_are_exact(scaled):
    jobs = walk(scaled, "GSCALE", 1000)[0]
    counts = scaled.status_counts("GSCALE")
    assert counts == {s: sum(j["status"] == s for j in jobs) for s in JOB_STATUSES}
    assert 0 < counts["running"] < counts["failed"] < N
    for status in JOB_STATUSES:
        found, total = walk(scaled, "GSCALE", 100, status=status)
        assert found == [j for j in jobs if j["status"] == status] and total == counts[status]
    instance = jobs[3]["instance_id"]
    found, total = walk(scaled, "GSCALE", 100, instance_id=instance, template=jobs[3]["template"])
    assert found == [j for j in jobs if j["instance_id"] == instance] and 3 <= total <= 5  # ~4 trials


def test_both_groups_run_the_same_instances_with_more_passes_in_django(scaled):
    a, b = (walk(scaled, gid, 1000)[0] for gid in SCALE_GROUPS)
    assert [j["instance_id"] for j in a] == [j["instance_id"] for j in b]

    def rate(jobs, repo):
        done = [j for j in jobs if j["instance_id"].startswith(repo) and j["status"] in ("succeeded", "failed")]
        return sum(j["status"] == "succeeded" for j in done) / len(done)

    assert rate(b, "django") > rate(a, "django") + 0.15
    assert abs(rate(b, "astropy") - rate(a, "astropy")) < 0.15


def test_a_million_jobs_page_in_constant_work():
    """10^6 jobs: the dataset is made at once and the last page is as cheap as the first (no
    row is stored: the pages are computed, not skipped over)."""
    data = Dataset(seed=7, groups=0, scale_jobs=1_000_000)
    last, total = data.list_jobs("GSCALE", 999_000, 1000)
    assert total == 1_000_000 and [j["n"] for j in last] == list(range(1000, 0, -1))
    assert data._all("SELECT COUNT(*) FROM jobs")[0][0] < 10  # only the jobs without a group


def test_served_over_http(make_sandbox):
    sb = make_sandbox(seed=7, groups=1, jobs_per_group=5, compare_jobs=0, live_jobs=0, scale_jobs=1500)
    with httpx.Client(base_url=sb.url, headers={"X-API-Key": sb.api_key}, timeout=30) as client:
        page = client.get("/openapi/jobs", params={"group_id": "GSCALE", "skip": 1400, "limit": 1000}).json()
        assert page["total"] == 1500 and [j["job_id"] for j in page["jobs"]][:2] == ["GSCALE-J0100", "GSCALE-J0099"]
        detail = client.get("/openapi/metrics", params={"group_id": "GSCALE2", "limit": 3, "source": "trace"}).json()
        assert [m["job_id"] for m in detail["metrics"]] == ["GSCALE2-J1500", "GSCALE2-J1499", "GSCALE2-J1498"]
        assert client.get("/openapi/groups/GSCALE").json()["group_id"] == "GSCALE"
        assert client.get("/openapi/jobs/GSCALE-J0042").json()["job_id"] == "GSCALE-J0042"
        assert client.get("/openapi/jobs/GSCALE-J9999").status_code == 404
