"""Handle on a sandbox running in its own process (:mod:`benchmarks.sandbox_launcher`).

Why another process: the client must not share an interpreter (GIL, memory,
CPU accounting) with the server it talks to, and the server of the big
scenarios holds a 100,000-job dataset or a gzip export of ~90 MB that has no
business in the orchestrating process either.  Each scenario starts its own
sandbox with its own sizes and stops it afterwards; the counters (requests,
connections) are read over the launcher's stdin/stdout.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
API_KEY = "bench-key"


class SandboxProcess:
    """``with SandboxProcess(jobs_per_group=1000, latency_ms=50, connect_latency_ms=50) as sb: sb.url ...``"""

    def __init__(self, *, groups: int = 1, jobs_per_group: int = 40, tasks_per_group: int = 25,
                 latency_ms: float = 0, connect_latency_ms: float = 0, trajectory_steps: int = 3, export_waiting: int = 0,
                 export_running: int = 0, prebuild_export: tuple[str, ...] = (),
                 compare_jobs: int = 0, scale_jobs: int = 0, ready_timeout: float = 3600):
        self.options: list[str] = [
            "--groups", str(groups), "--jobs-per-group", str(jobs_per_group),
            "--tasks-per-group", str(tasks_per_group), "--api-key", API_KEY,
        ]
        if latency_ms:
            self.options += ["--latency-ms", f"{latency_ms:g}"]
        if connect_latency_ms:
            self.options += ["--connect-latency-ms", f"{connect_latency_ms:g}"]
        if trajectory_steps != 3:
            self.options += ["--trajectory-steps", str(trajectory_steps)]
        self.options += ["--export-waiting", str(export_waiting), "--export-running", str(export_running)]
        for group in prebuild_export:
            self.options += ["--prebuild-export", group]
        if compare_jobs:
            self.options += ["--compare-jobs", str(compare_jobs)]
        if scale_jobs:
            self.options += ["--scale-jobs", str(scale_jobs)]
        self.ready_timeout = ready_timeout
        self.api_key = API_KEY
        self.url = ""
        self._proc: subprocess.Popen[str] | None = None

    @property
    def command(self) -> str:
        """The launch command, for the report."""
        return "python -m benchmarks.sandbox_launcher " + " ".join(self.options)

    def start(self) -> SandboxProcess:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.sandbox_launcher", *self.options],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
        )
        assert self._proc.stdout is not None
        # Progress (dataset, export build) goes to our stderr meanwhile.
        ready, _, _ = select.select([self._proc.stdout], [], [], self.ready_timeout)
        line = self._proc.stdout.readline() if ready else ""
        if not line.startswith("sandbox serving "):
            self.stop()
            raise RuntimeError(f"sandbox launcher did not start within {self.ready_timeout:g} s: {line!r}")
        self.url = line.split()[2]
        return self

    def _ask(self, command: str) -> dict[str, Any]:
        assert self._proc and self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        return json.loads(self._proc.stdout.readline())

    def stats(self) -> dict[str, Any]:
        """Counters since the last reset, and ``first_request_monotonic`` / ``last_answer_monotonic``
        (the sandbox process's clock: only their difference means anything here)."""
        return self._ask("stats")["stats"]

    def exports(self) -> dict[str, Any]:
        return self._ask("stats")["exports"]

    def reset(self) -> None:
        self._ask("reset")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.write("quit\n")
                proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()

    def __enter__(self) -> SandboxProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
