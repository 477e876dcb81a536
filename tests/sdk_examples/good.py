"""A script that uses the Python client as docs/python.md shows; mypy must accept it.

tests/contract/test_sdk_typing.py runs mypy on this file (it is never executed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import benchloop
from benchloop import AuthError, Client, DownloadResult, NetworkError, PartialFailure, UsageError

if TYPE_CHECKING:  # the element types live in the stubs only
    from benchloop.sdk.client import Comparison, JobSummary


def analyse(host: str, key: str) -> int:
    with Client(host=host, api_key=key, concurrency=8, retry=2, timeout=60.0) as bl:
        metrics: list[Any] = bl.metrics.get(job=["J1", "J2"])
        overall = bl.metrics.get(group="G1", scope="overall")
        failed = bl.jobs.get(group="G1", all=True, status="failed")
        failed_ids: list[str] = [job["job_id"] for page in failed for job in page.get("jobs", [])]
        p_value: float | None = bl.compare(group=["BASE", "CAND"])[0]["paired"]["p_value"]
        first_job_status: str = next(bl.jobs.iter(group="G1"))["status"]
        page = bl.jobs.get(group=["G1", "G2"], page=2, page_size=50)
        jobs: Iterator[Mapping[str, Any]] = bl.jobs.iter(group="G1", status="failed")
        typed: Iterator[JobSummary] = bl.jobs.iter(group="G1")
        comparisons: list[Comparison] = bl.compare(group=["BASE", "CAND"])
        first = next(jobs, None)
        ids = [job["job_id"] for job in bl.jobs.iter(group="G1")]
        tasks = list(bl.tasks.iter(group="G1", search="x", page_size=100))
        result: DownloadResult = bl.trajectory.download(group="G1", output_dir="out")
        paths: list[str] = result.paths
        failures: list[tuple[str, str]] = result.failures
        archive = bl.trajectory.download(task_id="T1", output_dir=Path("out"), skip_existing=True)
        listing: list[Any] = bl.artifacts.download(job="J1", list_only=True)
        files: DownloadResult = bl.artifacts.download(group="G1", include="*.tgz")
        submitted = bl.brm.run(group="G1", steps=[10, 20], sample_size=256)
        status = bl.brm.status(task_id=["uid-1", "uid-2"])
        detail = bl.brm.get(task_id="uid-1", scope="detail")
        pulled = bl.pull(group="G1", sections=["metrics", "report"])
        bl.report.trigger(group="G1", include_passed=True)
        groups = bl.brm.list(group="G1")
        try:
            bl.overview.get(job="J1")
        except PartialFailure as exc:
            print(exc.results, exc.failures)
        except (AuthError, NetworkError, UsageError) as exc:
            print(exc)
        except benchloop.BenchloopError:
            raise
        return (len(metrics) + len(overall) + len(failed) + len(page) + len(ids) + len(tasks) + len(paths)
                + len(failures) + len(archive.paths) + len(listing) + len(files.paths) + len(submitted)
                + len(status) + len(detail) + len(pulled.paths) + len(groups) + (first is not None)
                + len(failed_ids) + (p_value is None) + len(first_job_status) + len(list(typed))
                + len(comparisons))
