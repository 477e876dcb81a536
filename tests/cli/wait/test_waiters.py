"""Waiters as data: `bl jobs wait`, the export on the same mechanism, and a wait added with YAML only.

The live group GLIVE of the sandbox (``live_jobs``) has jobs that finish over time
(``live_pace`` seconds apart, or when the test advances them), so a wait really waits.
A stand-in backend (``origins``) plays a job list whose statuses the table does not know.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from support import ROOT, js

from benchloop.base.errors import EXIT_WAIT_TIMEOUT
from benchloop.engine.polling import Backoff
from benchloop.table.build import build_model
from benchloop.table.compiler import compile_spec
from benchloop.table.load import load_model
from benchloop.table.model import Delay

PROGRESS = re.compile(r"^\[progress\] group GLIVE: 6 jobs, (.*)$", re.M)


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    # Its own sandbox: the tests move the live group's jobs along (restart() puts them back).
    return make_sandbox(seed=7, groups=1, jobs_per_group=12, tasks_per_group=4, live_jobs=6, live_pace=0)


pytestmark = pytest.mark.usefixtures("live")  # every test starts with GLIVE's jobs all running


def test_jobs_wait_returns_when_the_live_group_finishes(sandbox, api):
    sandbox.live.pace = 0.15  # one job every 0.15 s once the wait names the group
    result = api("jobs", "wait", "-g", "GLIVE", "--interval", "0.1")
    assert result.code == 0, result.err
    # The final statuses of jobs 1-6 (sandbox LIVE_FINALS), in the order of the table's statuses.
    assert json.loads(result.out) == [{"group_id": "GLIVE", "total": 6,
                                       "by_status": {"succeeded": 5, "failed": 1}}]
    lines = PROGRESS.findall(result.err)
    assert lines[0] == "6 running" and lines[-1] == "5 succeeded, 1 failed"
    assert len(lines) == len(set(lines)) >= 3  # one line per change, never the same one twice
    running = [int(m.group(1)) if m else 0 for m in (re.search(r"(\d+) running", line) for line in lines)]
    assert running == sorted(running, reverse=True)


def test_a_timeout_exits_124_with_the_counts(sandbox, api):
    sandbox.live.advance(2)  # the clock stands still (pace 0): 4 jobs run for ever
    result = api("jobs", "wait", "-g", "GLIVE", "--interval", "0.1", "--timeout", "0.3")
    assert result.code == EXIT_WAIT_TIMEOUT == 124
    assert result.out.strip() == "[]"
    assert result.failed == ["GLIVE"]
    assert "GLIVE: jobs wait total timeout exceeded (after 0.3s: 2 succeeded, 4 running)" in result.err


def test_a_timeout_among_other_failures_is_exit_1(sandbox, api):
    result = api("jobs", "wait", "-g", "GLIVE,G404", "--interval", "0.1", "--timeout", "0.3")
    assert result.code == 1
    assert result.failed == ["GLIVE", "G404"]


def test_finished_groups_and_empty_ones_end_at_once(sandbox, api):
    sandbox.live.advance(6)
    sandbox.reset_stats()
    result = api("jobs", "wait", "-g", "GLIVE,GEMPTY", "--interval", "30")  # no second look: both are done
    assert result.code == 0
    assert json.loads(result.out) == [{"group_id": "GLIVE", "total": 6, "by_status": {"succeeded": 5, "failed": 1}},
                                      {"group_id": "GEMPTY", "total": 0, "by_status": {}}]
    assert sandbox.stats["group"] == 1  # GEMPTY: is it there at all?
    # One look each. An empty page names no id, so when GEMPTY's list is read on a connection
    # GLIVE's list used first (the two go concurrently), it is asked once more on a new one.
    asked = Counter(parse_qs(urlsplit(entry.path).query).get("group_id", ["?"])[0]
                    for entry in sandbox.requests_log if urlsplit(entry.path).path == load_model().endpoints["job_list"].path)
    assert asked["GLIVE"] == 1 and asked["GEMPTY"] in (1, 2) and set(asked) == {"GLIVE", "GEMPTY"}, asked


def test_a_backend_that_is_restarting_does_not_end_the_wait(sandbox, api):
    sandbox.live.advance(6)
    sandbox.reset_stats()
    sandbox.inject_fault("job_list", status=503, count=2)  # --retry 0: each is an answer of the wait
    result = api("jobs", "wait", "-g", "GLIVE", "--interval", "0.1")
    assert result.code == 0, result.err
    assert sandbox.stats["job_list"] == 3
    assert api("jobs", "wait", "-g", "G404", "--interval", "0.1").code == 1  # a 404 still fails the group


def test_quiet_prints_only_the_data(sandbox, api):
    sandbox.live.pace = 0.1
    result = api("-q", "jobs", "wait", "-g", "GLIVE", "--interval", "0.1")
    assert result.code == 0 and result.err == ""
    assert json.loads(result.out)[0]["total"] == 6


def test_on_a_terminal_the_counts_are_one_live_line(sandbox, monkeypatch):
    from benchloop.cli.app import main

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    sandbox.live.pace = 0.1
    err, out = Terminal(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", out)
    code = main(["--host", sandbox.url, "--api-key", sandbox.api_key, "jobs", "wait", "-g", "GLIVE",
                 "--interval", "0.1"])
    text = err.getvalue()
    assert code == 0
    assert "\r\x1b[Kgroup GLIVE: 6 jobs, 6 running" in text  # redrawn in place
    assert "[progress] group GLIVE: 6 jobs, 6 running" not in text
    assert text.endswith("\r\x1b[K[progress] group GLIVE: 6 jobs, 5 succeeded, 1 failed\n")


def test_an_unknown_id_fails_as_everywhere(api):
    result = api("jobs", "wait", "-g", "G404", "--interval", "0.1")
    assert result.code == 1 and "group not found: G404" in result.err


@pytest.mark.parametrize(("args", "message"), [
    (["--interval", "0"], "--interval must be at least 0.1"),
    (["--timeout", "0"], "--timeout must be at least 0.1"),
    (["--timeout", "nan"], "--timeout must be a finite number"),
])
def test_bad_interval_or_timeout_is_a_usage_error(api, args, message):
    result = api("jobs", "wait", "-g", "GLIVE", *args)
    assert result.code == 2 and message in result.err and result.out == ""


def test_the_http_timeout_is_still_the_global_option(sandbox, api):
    # --timeout before the resource is each request's; after the action it is the wait's.
    sandbox.live.advance(6)
    result = api("--timeout", "5", "jobs", "wait", "-g", "GLIVE", "--timeout", "0.2")
    assert result.code == 0


def test_a_status_the_table_does_not_know_keeps_the_wait_going_with_a_warning(bl, origins):
    answers = iter([["queued", "running"], ["queued", "succeeded"], ["failed", "succeeded"]])
    seen: list[list[str]] = []

    def answer(path, query):
        if path == "/openapi/jobs":
            if not seen or int(query.get("skip", 0)) == 0:
                seen.append(next(answers))
            statuses = seen[-1]
            jobs = [{"job_id": f"J{i}", "created_at": "2026-01-01T00:00:00", "status": s}
                    for i, s in enumerate(statuses)]
            return js({"jobs": jobs, "total": len(jobs)})
        return js({"group_id": "X"})

    backend = origins(answer)
    result = bl("--host", backend.url, "--api-key", "k", "jobs", "wait", "-g", "X", "--interval", "0.1")
    assert result.code == 0, result.err
    assert len(seen) == 3
    assert result.err.count("status 'queued' is not one the table knows") == 1
    assert "[progress] group X: 2 jobs, 1 running, 1 queued" in result.err
    assert json.loads(result.out)[0]["by_status"] == {"succeeded": 1, "failed": 1}


def test_backoff_grows_after_unchanged_answers_and_resets_on_a_change():
    delay = Delay(option="interval", backoff=1.5, high=4.0)
    waits = Backoff(delay, {"interval": 1.0}, rng=lambda: 0.5)
    assert [waits.next(None, changed) for changed in (True, False, False, False, False, True, False)] == [
        1.0, 1.5, 2.25, 3.375, 4.0, 1.0, 1.5]
    # An interval above the cap is kept: the cap never shortens the first wait.
    assert Backoff(delay, {"interval": 10.0}, rng=lambda: 0.5).next(None, True) == 10.0


def test_jitter_spreads_the_wait_either_way():
    delay = Delay(option="interval", jitter=0.2)
    assert Backoff(delay, {"interval": 10.0}, rng=lambda: 0.0).next(None, True) == pytest.approx(8.0)
    assert Backoff(delay, {"interval": 10.0}, rng=lambda: 1.0).next(None, True) == pytest.approx(12.0)


def test_a_hint_is_clamped_and_missing_means_the_maximum():
    delay = Delay(hint=("retry_after_seconds",), low=1.0, high=15.0)
    assert Backoff(delay, {}, rng=lambda: 0.5).next({"retry_after_seconds": 0.2}, True) == 1.0
    assert Backoff(delay, {}, rng=lambda: 0.5).next({"retry_after_seconds": "99"}, True) == 15.0
    assert Backoff(delay, {}, rng=lambda: 0.5).next({}, True) == 15.0


# ------------------------------------------------------------- waiters as YAML
GUIDE = ROOT / "docs" / "adding-an-endpoint.md"


def guide_block(name: str) -> str:
    """A YAML example of the maintainers' guide (between its example markers)."""
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- example:{name}:start -->\s*```yaml\n(.*?)```\s*<!-- example:{name}:end -->", text, re.S)
    assert found, f"no example:{name} block in {GUIDE.name}"
    return found.group(1)


def yaml_only_table(tmp_path: Path, final: list[str] | None = None) -> Path:
    """A copy of the table with `bl brm wait` added as the guide shows it (a waiter and an action,
    nothing else); ``final`` changes the job statuses that are final."""
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    shutil.copy(ROOT / "spec" / "benchloop.schema.json", spec_dir)
    text = (ROOT / "spec" / "benchloop.yaml").read_text(encoding="utf-8")
    waiter = guide_block("waiter").removeprefix("waiters:\n")
    text = text.replace("\nwaiters:\n", "\nwaiters:\n" + waiter, 1)
    brm = "\n  brm:\n    help: Behaviour analyses (BRM) of groups.\n    actions:\n"
    assert brm in text
    text = text.replace(brm, brm + guide_block("wait-action"), 1)
    if final is not None:
        text = text.replace("    final: [succeeded, failed, cancelled]", f"    final: [{', '.join(final)}]", 1)
    (spec_dir / "benchloop.yaml").write_text(text, encoding="utf-8")
    return spec_dir


def run_with(spec_dir: Path, tmp_path: Path, sandbox, *args: str) -> subprocess.CompletedProcess:
    """``bl ARGS`` in a process of its own with the table of ``spec_dir`` (a process builds its
    commands from one table: in this one the shipped table's are built already)."""
    env = {**os.environ, "BENCHLOOP_SPEC_DIR": str(spec_dir), "BENCHLOOP_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "benchloop", "--host", sandbox.url, "--api-key", sandbox.api_key,
                           "--retry", "0", *args], capture_output=True, text=True, timeout=120, env=env,
                          stdin=subprocess.DEVNULL)


def test_a_maintainer_adds_brm_wait_with_yaml_only(tmp_path, sandbox, api):
    spec_dir = yaml_only_table(tmp_path)
    model = build_model(compile_spec((spec_dir / "benchloop.yaml").read_bytes(), spec_dir / "benchloop.yaml"))
    action = model.action("brm", "wait")
    assert action.dimensions["task"].parts["status"].wait is model.waiters["behavior_done"]
    assert model.waiters["behavior_done"].acceptors[0].statuses is model.statuses["behavior"]
    run = api("brm", "run", "-g", "G1", "--steps", "10")
    uid = json.loads(run.out)[0]["uid"]
    sandbox.reset_stats()
    done = run_with(spec_dir, tmp_path, sandbox, "brm", "wait", "--task-id", uid, "--interval", "0.1")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["status"] == "Finished"
    assert sandbox.stats["behavior_task"] >= 2  # Running first, then Finished
    help_page = run_with(spec_dir, tmp_path, sandbox, "brm", "wait", "--help").stdout
    assert "Wait until each behaviour analysis is finished" in help_page


def test_the_final_statuses_are_the_tables(tmp_path, sandbox):
    spec_dir = yaml_only_table(tmp_path, final=["succeeded", "failed", "cancelled", "running"])  # running: done
    done = run_with(spec_dir, tmp_path, sandbox, "jobs", "wait", "-g", "GLIVE", "--interval", "0.1",
                    "--timeout", "5")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["by_status"] == {"running": 6}


def test_the_python_client_waits_too(sandbox):
    import benchloop

    with benchloop.Client(host=sandbox.url, api_key=sandbox.api_key, retry=0) as bl:
        with pytest.raises(benchloop.WaitTimeout) as caught:
            bl.jobs.wait(group=["GLIVE", "GEMPTY"], interval=0.1, timeout=0.3)
        assert isinstance(caught.value, benchloop.PartialFailure)
        assert caught.value.results == [{"group_id": "GEMPTY", "total": 0, "by_status": {}}]
        assert [ident for ident, _ in caught.value.failures] == ["GLIVE"]
        sandbox.live.advance(6)
        assert bl.jobs.wait(group="GLIVE", interval=0.1) == [
            {"group_id": "GLIVE", "total": 6, "by_status": {"succeeded": 5, "failed": 1}}]
