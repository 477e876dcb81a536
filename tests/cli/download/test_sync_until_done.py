"""`bl pull -g G --until-done`: wait for a running group, syncing as its jobs finish, then stop.

Against the sandbox's live group GLIVE over loopback: its jobs finish while the command
waits (``live_pace``), one of them with an artifact the backend cannot sign
(``live_unsigned``: ``artifact_sign_failed``, a failure that will not change).  The command
ends with exit 0 and a complete copy (what a plain pull of the finished group writes), the
permanent failure listed on stderr and recorded in the manifest once; a later sync does not
ask for it again nor fail on it.  A failure that may still succeed (a 503 that goes on)
ends with 75, the wait's --timeout with 124.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import final_files

from benchloop.base.errors import EXIT_SYNC_RETRY, EXIT_USAGE, EXIT_WAIT_TIMEOUT
from benchloop.table.load import load_model

JOBS = 6
UNSIGNED = 3  # GLIVE-J0003: a job with a downloadable artifact otherwise (sandbox payloads.artifact_kind)
SECTIONS = "report,artifacts,trajectory"
FINAL = load_model().statuses["job"].final


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=1, jobs_per_group=4, tasks_per_group=2, live_jobs=JOBS, live_pace=0,
                        export_waiting=0, export_running=0, live_unsigned=UNSIGNED)


pytestmark = pytest.mark.usefixtures("live")  # every test starts with GLIVE's jobs all running


def manifest(out: Path) -> dict:
    return json.loads((out / "GLIVE" / ".bl-sync.json").read_text(encoding="utf-8"))


def until_done(api, out: Path, *extra: str):
    return api("pull", "-g", "GLIVE", "--until-done", "--with", SECTIONS, "-o", str(out), "--interval", "0.1",
               *extra)


def test_until_done_ends_finished_and_synced_with_the_permanent_failure_listed(sandbox, api, tmp_path):
    sandbox.live.pace = 0.3  # one job finishes every 0.3 s once the command names the group
    sandbox.reset_stats()
    out = tmp_path / "live"
    result = until_done(api, out, "--timeout", "60")
    assert result.code == 0, result.err
    unsigned = f"GLIVE-J{UNSIGNED:04d}"
    failure = f"GLIVE:artifacts:{unsigned}:result.tgz"
    assert "permanent failure(s)" in result.err and failure in result.err
    assert "artifact_sign_failed" in result.err
    assert f"sync GLIVE: finished ({JOBS} jobs) and synced" in result.err
    assert "syncing again" in result.err  # it synced while the jobs finished, not only at the end
    items = manifest(out)["items"]
    assert {i["state"]["status"] for i in items.values()} <= set(FINAL) and len(items) == JOBS
    assert items[unsigned]["permanent"] == {"artifacts": [{"id": failure, "message": "artifact_sign_failed"}]}
    # The trajectory export was asked for at most once per sync in which a job had finished.
    assert 1 <= sandbox.stats["group_trace_export"] <= result.err.count("syncing again") + 1
    # A complete copy: what a plain pull of the finished group writes (which fails on that artifact).
    fresh = tmp_path / "fresh"
    full = api("pull", "-g", "GLIVE", "--with", f"jobs,{SECTIONS}", "-o", str(fresh))
    assert full.code == 1 and full.failed == [failure]
    synced = {k: v for k, v in final_files(out).items() if "bl-sync" not in k}
    assert synced == final_files(fresh)

    # Later syncs: the failure is listed again, never asked for again, never a failure.
    sandbox.reset_stats()
    again = api("pull", "-g", "GLIVE", "--sync", "--with", SECTIONS, "-o", str(out))
    assert again.code == 0, again.err
    assert failure in again.err and "permanent failure(s)" in again.err
    assert sandbox.stats.get("job_artifacts", 0) == 0 and sandbox.stats.get("group_trace_export", 0) == 0


def test_the_export_is_fetched_again_only_when_a_job_finished(sandbox, api, tmp_path):
    def sync():
        sandbox.reset_stats()
        result = api("pull", "-g", "GLIVE", "--sync", "--with", "trajectory,report", "-o", str(tmp_path))
        assert result.code == 0, result.err
        return sandbox.stats.get("group_trace_export", 0), sandbox.stats.get("job_report", 0)

    assert sync() == (1, JOBS)  # the first sync: everything
    sandbox.live.advance(2)
    assert sync() == (1, 2)  # two jobs finished: their reports and the export
    sandbox.live.restart()  # the two are running again: changed, but no job finished
    assert sync() == (0, 2)  # their reports, not the export
    assert sync() == (0, 0)


def test_a_failure_that_may_still_succeed_ends_with_75(sandbox, api, tmp_path):
    sandbox.live.advance(JOBS)  # finished already: the wait ends at its first look
    sandbox.inject_fault("job_report", status=503, count=10**6)
    try:
        result = api("pull", "-g", "GLIVE", "--until-done", "--with", "report", "-o", str(tmp_path),
                     "--interval", "0.1", "--timeout", "30")
    finally:
        sandbox.reset_state()  # the fault gone (and the live group restarted)
    sandbox.live.advance(JOBS)
    assert result.code == EXIT_SYNC_RETRY == 75, result.err
    assert "may still succeed: run the same command again" in result.err
    assert result.failed == ["GLIVE:report"]
    again = api("pull", "-g", "GLIVE", "--until-done", "--with", "report", "-o", str(tmp_path),
                "--interval", "0.1", "--timeout", "30")
    assert again.code == 0, again.err  # the backend is back: the same command completes the copy
    assert all((tmp_path / "GLIVE" / f"GLIVE-J{n:04d}_report.md").is_file() for n in range(1, JOBS + 1))


def test_the_timeout_ends_the_wait_with_124_and_keeps_the_copy_so_far(sandbox, api, tmp_path):
    sandbox.live.advance(2)  # the clock stands still: 4 jobs run for ever
    result = until_done(api, tmp_path, "--timeout", "0.5")
    assert result.code == EXIT_WAIT_TIMEOUT, result.err
    assert "total timeout exceeded" in result.err
    assert (tmp_path / "GLIVE" / "GLIVE-J0001_report.md").is_file()
    assert len(manifest(tmp_path)["items"]) == JOBS


def test_the_wait_options_go_with_until_done(api, tmp_path):
    result = api("pull", "-g", "GLIVE", "--sync", "--timeout", "3", "-o", str(tmp_path))
    assert result.code == EXIT_USAGE and "--timeout goes with --until-done" in result.err
    jobs = api("pull", "-j", "GLIVE-J0001", "--until-done", "-o", str(tmp_path))
    assert jobs.code == EXIT_USAGE and "--until-done refreshes groups: give -g GROUP" in jobs.err
    assert not any(tmp_path.iterdir())  # refused before any request
