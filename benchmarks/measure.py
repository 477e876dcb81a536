"""Run one command as a child process and measure it: wall, CPU, peak RSS.

Why ``os.wait4``: it returns the resource usage of exactly the child that was
waited for - user and system CPU and ``ru_maxrss`` (peak resident set, KiB on
Linux) - with no sampling and no interference from other children (the
sandbox process, earlier runs).  Wall time spans the spawn to the reap, so it
includes interpreter start and exit, like a user's shell would see.  Commands are
started by a small process of their own (:mod:`benchmarks.spawner`), never by the
harness: Linux counts the pre-``exec`` image in a child's peak RSS, and the
harness grows as scenarios build their inputs.

stdin and stderr go through files, not pipes, so a chatty child can never
block on a full pipe while we wait for it.
"""

from __future__ import annotations

import marshal
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
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


_spawner: subprocess.Popen[bytes] | None = None
_spawner_lock = threading.Lock()


def start_spawner() -> None:
    """Start the process that starts every measured command (:mod:`benchmarks.spawner`):
    call it while the harness is small, before any scenario builds its inputs."""
    global _spawner
    if _spawner is None or _spawner.poll() is not None:
        _spawner = subprocess.Popen([sys.executable, "-S", "-I", os.path.join(os.path.dirname(__file__), "spawner.py")],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _spawn(request: dict) -> dict:
    with _spawner_lock:
        start_spawner()
        assert _spawner is not None and _spawner.stdin is not None and _spawner.stdout is not None
        marshal.dump(request, _spawner.stdin)
        _spawner.stdin.flush()
        answer = marshal.load(_spawner.stdout)
    if "error" in answer:
        raise OSError(answer["error"])
    return answer


def run(argv: Sequence[str], *, stdin_path: str | None = None, env: dict[str, str] | None = None,
        cwd: str | None = None, stdout_path: str | None = None, timeout: float | None = None) -> Run:
    """Run ``argv`` to completion; stdout goes to ``stdout_path`` (default: discarded)."""
    argv = list(argv)
    env = dict(os.environ if env is None else env)
    program = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=env.get("PATH")) or argv[0]
    with tempfile.TemporaryDirectory() as tmp:
        err_path = os.path.join(tmp, "stderr")
        answer = _spawn({"argv": [program, *argv[1:]], "env": env, "cwd": cwd, "stdin": stdin_path or os.devnull,
                         "stdout": stdout_path or os.devnull, "stderr": err_path, "timeout": timeout})
        with open(err_path, "rb") as err:
            err.seek(0, os.SEEK_END)
            size = err.tell()
            err.seek(max(0, size - 4000))
            tail = err.read().decode("utf-8", "replace")
    rc = os.waitstatus_to_exitcode(answer["status"])
    return Run(argv, rc, answer["wall"], answer["user"], answer["sys"], answer["maxrss_kb"], tail,
               answer["timed_out"])


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
