"""After Ctrl-C the progress line names the jobs whose work was given up ``abandoned``.

The cancel that follows an interrupt ends every request in flight; those jobs did not fail
(the backend said nothing about them), so the counter must not print ``failed <job>`` for
them, which reads as a backend failure in a log.  A real ``bl`` in a subprocess gets a
SIGINT while downloading from a slow sandbox over loopback.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.serial,
              pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")]


@pytest.fixture(scope="module")
def slow(make_sandbox):
    sandbox = make_sandbox(seed=7, groups=1, jobs_per_group=2, tasks_per_group=1, live_jobs=24, live_pace=0,
                           latency_ms=250)
    sandbox.live.advance(24)  # every job finished: each has a report and an artifact
    return sandbox


@pytest.mark.parametrize(("command", "endpoint"), [
    (["report", "download"], "job_report"),
    (["artifacts", "download"], "job_artifacts"),
])
def test_jobs_cut_short_by_ctrl_c_are_abandoned_not_failed(slow, tmp_path, command, endpoint):
    slow.reset_stats()
    proc = subprocess.Popen([sys.executable, "-m", "benchloop", "--host", slow.url, "--api-key", slow.api_key,
                             "--retry", "0", "--concurrency", "4", *command, "-g", "GLIVE", "-o", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and slow.stats.get(endpoint, 0) < 6:
        time.sleep(0.02)
    time.sleep(0.1)  # requests in flight
    proc.send_signal(signal.SIGINT)
    _, raw = proc.communicate(timeout=60)
    err = raw.decode()
    assert proc.returncode == 130, err
    progress = [line for line in err.splitlines() if line.startswith("[progress]") and " jobs, " in line]
    assert any(", abandoned GLIVE-J" in line for line in progress), err
    assert not any(", failed " in line for line in progress), err
    assert "interrupted: unfinished work was abandoned" in err
