"""`bl pull -g G --sync`: the lists every time, a job's own files only when the job changed.

Against the sandbox's live group GLIVE (jobs finish when the test advances them), the
sandbox counting every request by endpoint: two syncs of the same state fetch the lists
only, a sync after jobs finished fetches those jobs' files and nothing else, an
interrupted or failed sync is picked up where it stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import final_files

BL = [sys.executable, "-m", "benchloop"]
LISTS = {"job_list": 1, "group_metrics_overall": 1, "group_metrics_detail": 1}  # one page each (6 jobs)
PER_JOB = ("job_report", "job_artifacts", "job_artifact_download")
EXPORT = ("group_trace_export", "group_job_ids", "_export")


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=1, jobs_per_group=4, tasks_per_group=2, live_jobs=6, live_pace=0,
                        export_waiting=0, export_running=0)


pytestmark = pytest.mark.usefixtures("live")  # every test starts with GLIVE's jobs all running


def counts(sandbox) -> dict[str, int]:
    stats = sandbox.stats
    return {name: stats.get(name, 0) for name in (*LISTS, *PER_JOB, *EXPORT, "group_report", "group_tasks")
            if stats.get(name, 0)}


def sync(api, sandbox, out: Path, *extra: str, sections: str = "metrics,trajectory,report,artifacts"):
    sandbox.reset_stats()
    result = api("pull", "-g", "GLIVE", "--sync", "--with", sections, "-o", str(out), *extra)
    return result, counts(sandbox)


def manifest(out: Path) -> dict:
    return json.loads((out / "GLIVE" / ".bl-sync.json").read_text(encoding="utf-8"))


def test_two_syncs_of_an_unchanged_group_fetch_the_lists_only(sandbox, api, tmp_path):
    first, requests = sync(api, sandbox, tmp_path)
    assert first.code == 0, first.err
    assert "[progress] sync GLIVE: 6 jobs, 6 new, 0 changed, 0 unchanged" in first.err
    # Everything once: the lists, the export, the report summary, every job's report and listing
    # (running jobs have no artifact yet: nothing to download).
    assert requests == {**LISTS, "job_report": 6, "job_artifacts": 6, "group_trace_export": 1,
                        "group_job_ids": 1, "_export": 1, "group_report": 1}
    before = final_files(tmp_path)
    again, requests = sync(api, sandbox, tmp_path)
    assert again.code == 0, again.err
    assert "[progress] sync GLIVE: 6 jobs, 0 new, 0 changed, 6 unchanged" in again.err
    assert requests == LISTS
    assert "skip unchanged " + str(tmp_path / "GLIVE" / "trajectory.json") in again.err
    assert final_files(tmp_path) == before


def test_a_sync_after_jobs_finished_fetches_those_jobs_only(sandbox, api, tmp_path):
    sync(api, sandbox, tmp_path)
    old = manifest(tmp_path)
    assert {k: v["state"]["status"] for k, v in old["items"].items()} == dict.fromkeys(old["items"], "running")
    sandbox.live.advance(2)  # GLIVE-J0001 and J0002 finish (succeeded; updated_at moves on)
    result, requests = sync(api, sandbox, tmp_path)
    assert result.code == 0, result.err
    assert "[progress] sync GLIVE: 6 jobs, 0 new, 2 changed, 4 unchanged" in result.err
    # The lists, and for the two changed jobs: report, listing, artifact; the group's export and
    # summary once, since a job of the group changed.
    assert requests == {**LISTS, "job_report": 2, "job_artifacts": 2, "job_artifact_download": 2,
                        "group_trace_export": 1, "group_job_ids": 1, "_export": 1, "group_report": 1}
    new = manifest(tmp_path)["items"]
    assert new["GLIVE-J0001"]["state"] == {"status": "succeeded", "updated_at": "2026-09-01T00:05:10"}
    assert new["GLIVE-J0001"]["sections"]["artifacts"] == ["GLIVE/GLIVE-J0001/result.tgz"]
    assert new["GLIVE-J0003"] == old["items"]["GLIVE-J0003"]
    listed = json.loads((tmp_path / "GLIVE" / "job_list.json").read_text(encoding="utf-8"))
    assert [j["status"] for j in listed["jobs"]][-2:] == ["succeeded", "succeeded"]  # the list is new
    assert "**succeeded**" in (tmp_path / "GLIVE" / "GLIVE-J0001_report.md").read_text(encoding="utf-8")
    # And the result is what a full pull of the same state writes.
    fresh_root = tmp_path / "fresh"
    full = api("pull", "-g", "GLIVE", "--with", "jobs,metrics,trajectory,report,artifacts", "-o", str(fresh_root))
    assert full.code == 0, full.err
    synced = {k: v for k, v in final_files(tmp_path).items() if not k.startswith("fresh/") and "bl-sync" not in k}
    assert synced == final_files(fresh_root)


def test_a_removed_file_is_fetched_again(sandbox, api, tmp_path):
    sync(api, sandbox, tmp_path)
    (tmp_path / "GLIVE" / "GLIVE-J0004_report.md").unlink()
    result, requests = sync(api, sandbox, tmp_path)
    assert result.code == 0
    # Only that job's report again; not the report summary: no job finished since the last sync.
    assert requests == {**LISTS, "job_report": 1}
    assert (tmp_path / "GLIVE" / "GLIVE-J0004_report.md").is_file()


def test_a_failed_job_is_fetched_again_and_only_it(sandbox, api, tmp_path):
    sandbox.inject_fault("job_report", status=500, count=1)  # one report fails (--retry 0)
    first, _ = sync(api, sandbox, tmp_path, sections="report")
    assert first.code == 75 and len(first.failed) == 1  # EXIT_SYNC_RETRY: a 500 may succeed next time
    items = manifest(tmp_path)["items"]
    missing = [f"GLIVE-J000{n}" for n in range(1, 7) if "report" not in items.get(f"GLIVE-J000{n}", {}).get(
        "sections", {})]
    assert len(missing) == 1  # the job whose report failed is not entered: the others are
    failed = missing[0]
    assert first.failed == ["GLIVE:report"] and failed in first.err
    again, requests = sync(api, sandbox, tmp_path, sections="report")
    assert again.code == 0, again.err
    assert requests == {"job_list": 1, "job_report": 1}  # no metrics section chosen; no job finished
    assert (tmp_path / "GLIVE" / f"{failed}_report.md").is_file()


def test_a_section_added_later_is_fetched_for_every_job(sandbox, api, tmp_path):
    sync(api, sandbox, tmp_path, sections="report")
    result, requests = sync(api, sandbox, tmp_path, sections="report,artifacts")
    assert result.code == 0
    assert requests == {"job_list": 1, "job_artifacts": 6}  # the job list always; no metrics chosen


def test_an_unreadable_manifest_means_everything_again(sandbox, api, tmp_path):
    sync(api, sandbox, tmp_path, sections="report")
    (tmp_path / "GLIVE" / ".bl-sync.json").write_text("{not json", encoding="utf-8")
    result, requests = sync(api, sandbox, tmp_path, sections="report")
    assert result.code == 0
    assert "the manifest" in result.err and "every job is fetched again" in result.err
    assert requests["job_report"] == 6


@pytest.mark.parametrize(("args", "message"), [
    (["-j", "GLIVE-J0001"], "--sync refreshes groups: give -g GROUP"),
    (["-g", "GLIVE", "--skip-existing"], "--sync decides itself which files to fetch again"),
])
def test_sync_needs_groups_and_no_skip_existing(api, tmp_path, args, message):
    result = api("pull", "--sync", *args, "-o", str(tmp_path))
    assert result.code == 2 and message in result.err and result.out == ""


@pytest.mark.serial
def test_an_interrupted_sync_is_picked_up_and_trusts_complete_files_only(make_sandbox, tmp_path):
    slow = make_sandbox(seed=7, groups=1, jobs_per_group=2, tasks_per_group=1, live_jobs=12, live_pace=0,
                        latency_ms=40, export_waiting=0, export_running=0)
    slow.live.advance(12)
    base = [*BL, "--host", slow.url, "--api-key", slow.api_key, "--retry", "0", "--concurrency", "2",
            "pull", "-g", "GLIVE", "--sync", "--with", "report,artifacts", "-o", str(tmp_path)]
    proc = subprocess.Popen(base, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and slow.stats.get("job_artifact_download", 0) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    path = tmp_path / "GLIVE" / ".bl-sync.json"
    recorded = json.loads(path.read_text(encoding="utf-8"))["items"] if path.exists() else {}
    for job, entry in recorded.items():  # only complete files are named, and each is there
        for files in entry["sections"].values():
            assert all((tmp_path / f).is_file() for f in files), job
    slow.reset_stats()
    done = subprocess.run(base, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    fetched = sorted(r.path for r in slow.requests_log if r.path.startswith("/openapi/jobs/") and r.path.endswith("/report"))
    assert fetched == sorted(f"/openapi/jobs/{j}/report" for j in (f"GLIVE-J{n:04d}" for n in range(1, 13))
                             if "report" not in recorded.get(j, {}).get("sections", {})), (recorded, done.stderr)
    fresh = tmp_path / "fresh"
    full = subprocess.run([*BL, "--host", slow.url, "--api-key", slow.api_key, "pull", "-g", "GLIVE", "--with",
                           "jobs,report,artifacts", "-o", str(fresh)], capture_output=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert full.returncode == 0
    synced = {k: v for k, v in final_files(tmp_path).items() if not k.startswith("fresh/") and "bl-sync" not in k}
    assert synced == final_files(fresh)
    assert os.listdir(tmp_path / "GLIVE")  # something was written
