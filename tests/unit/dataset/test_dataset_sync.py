"""``dataset.sync`` writes a group's rows into its partition as they arrive.

The fetcher here hands rows out one by one and, half-way, looks at the dataset's staging
folder: the rows handed out so far must already be on disk (a sync that gathered the group's
rows first, as it did, held 10^6 jobs' rows in memory: 1.1 GB at 200,000 jobs).  A page that
fails after rows keeps the group's previous partition and names the group.
"""

from __future__ import annotations

import os

import pytest

duckdb = pytest.importorskip("duckdb")

from benchloop.base.errors import BenchloopError  # noqa: E402
from benchloop.dataset import store, sync  # noqa: E402

GROUP = "G1"
ROWS = 200


def _row(i: int) -> dict:
    return {"group_id": GROUP, "job_id": f"{GROUP}-J{i:05d}", "status": "succeeded", "score": i / ROWS}


def _staged_bytes(root: str) -> int:
    folder = store.staging(root)
    return sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)) if os.path.isdir(folder) else 0


class Fetcher:
    def __init__(self, root: str, fail_at: int | None = None):
        self.root, self.fail_at, self.staged_half_way = root, fail_at, None

    def table(self, groups, **options):
        def rows():
            for i in range(ROWS):
                if i == ROWS // 2:
                    self.staged_half_way = _staged_bytes(self.root)
                if i == self.fail_at:
                    raise BenchloopError("page 3 failed")  # what the client's fetcher makes of a failed page
                yield _row(i)
        return rows(), []

    def trajectories(self, job_ids):
        return [], []


def test_rows_reach_the_partition_as_they_arrive(tmp_path):
    root = str(tmp_path / "ds")
    fetcher = Fetcher(root)
    report = sync.sync(fetcher, root, [GROUP])
    assert report.failures == [] and report.groups[0]["jobs"] == ROWS
    assert fetcher.staged_half_way and fetcher.staged_half_way > 0  # written before the last row came
    count = duckdb.connect().execute(
        f"SELECT count(*) FROM read_parquet('{store.partition(root, 'jobs', GROUP)}')").fetchone()[0]
    assert count == ROWS


def test_a_page_failing_after_rows_keeps_the_previous_partition(tmp_path):
    root = str(tmp_path / "ds")
    sync.sync(Fetcher(root), root, [GROUP])
    path = store.partition(root, "jobs", GROUP)
    before = open(path, "rb").read()
    report = sync.sync(Fetcher(root, fail_at=150), root, [GROUP])
    assert report.groups == [] and report.failures == [(GROUP, "page 3 failed")]
    assert open(path, "rb").read() == before
    assert [n for n in os.listdir(store.staging(root))] == []  # nothing staged left behind


def test_rows_too_wide_for_the_bounded_pool_are_copied_with_duckdbs_defaults(tmp_path, monkeypatch):
    from benchloop.dataset import parquet

    calls = []
    connect = parquet.connect
    monkeypatch.setattr(parquet, "BOUNDED", {"threads": 1, "memory_limit": "1MB"})
    monkeypatch.setattr(parquet, "connect", lambda **config: calls.append(config) or connect(**config))
    root = str(tmp_path / "ds")
    store.ensure(root)
    rows = [{"job_id": f"J{i}", "text": f"{i}-" * 20_000} for i in range(50)]
    path = str(tmp_path / "wide.parquet")
    assert parquet.write(path, [("job_id", "string"), ("text", "string")], rows, store.staging(root)) == 50
    assert calls == [{"threads": 1, "memory_limit": "1MB"}, {}]  # refused by the small pool, then copied
    texts = duckdb.connect().execute(f"SELECT text FROM read_parquet('{path}') ORDER BY job_id").fetchall()
    assert sorted(t for (t,) in texts) == sorted(r["text"] for r in rows)
