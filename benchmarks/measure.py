"""Run one command as a child process and measure it: wall, CPU, peak RSS.

Why ``os.wait4``: it returns the resource usage of exactly the child that was
waited for - user and system CPU and ``ru_maxrss`` (peak resident set, KiB on
Linux) - with no sampling and no interference from other children (the
sandbox process, earlier runs).  Wall time spans ``Popen`` to the reap, so it
includes interpreter start and exit, like a user's shell would see.

stdin and stderr go through files, not pipes, so a chatty child can never
block on a full pipe while we wait for it.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Run:
    argv: list[str]
    rc: int
    wall: float  # seconds
    user: float  # seconds
    sys: float  # seconds
    maxrss_kb: int
    stderr_tail: str = ""
    timed_out: bool = False

    @property
    def cpu(self) -> float:
        return self.user + self.sys

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out

    def describe_failure(self) -> str:
        what = "timed out" if self.timed_out else f"exit {self.rc}"
        tail = self.stderr_tail.strip().splitlines()[-3:]
        return f"{what}: {' | '.join(tail)}" if tail else what


def run(argv: Sequence[str], *, stdin_path: str | None = None, env: dict[str, str] | None = None,
        cwd: str | None = None, stdout_path: str | None = None, timeout: float | None = None) -> Run:
    """Run ``argv`` to completion; stdout goes to ``stdout_path`` (default: discarded)."""
    argv = list(argv)
    with tempfile.TemporaryFile() as err, \
            open(stdin_path or os.devnull, "rb") as stdin, \
            open(stdout_path or os.devnull, "wb") as stdout:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=err, env=env, cwd=cwd)
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.daemon = True
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            if timer:
                timer.cancel()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: keep Popen from waiting again
        err.seek(0, os.SEEK_END)
        size = err.tell()
        err.seek(max(0, size - 4000))
        tail = err.read().decode("utf-8", "replace")
    return Run(argv, proc.returncode, wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss,
               tail, killed.is_set())


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def median_run(runs: Sequence[Run]) -> dict[str, float]:
    """Medians of the successful runs' figures (NaN when none succeeded)."""
    good = [r for r in runs if r.ok]
    return {
        "wall": median([r.wall for r in good]),
        "cpu": median([r.cpu for r in good]),
        "maxrss_mb": median([r.maxrss_kb / 1024 for r in good]),
        "runs": len(good),
        "failed": len(runs) - len(good),
    }
