"""Crashes: ``bl`` killed with SIGKILL mid-run, or interrupted with Ctrl-C.

The real ``bl`` runs as a subprocess against an in-process sandbox.  It is
killed at 20 seeded points spread over a group pull (after a random number
of newly written files plus a random delay, so kills land between and during
writes), each rerun resuming with ``--skip-existing``.  A watcher thread reads
every non-hidden file as soon as it appears: at no moment may a final path
hold anything but the bytes of a clean run.  The last rerun completes and the
tree equals the clean run.  SIGINT exits 130 with a summary line and leaves
no temp files or staging directories behind.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import final_files, is_hidden, leftovers

pytestmark = pytest.mark.serial  # timing and signals: run alone (see the Makefile)

KEY = "crash-key"
BL = str(Path(sys.executable).with_name("bl"))
KILLS = 20
SEED = 424242

pytestmark = pytest.mark.skipif(not Path(BL).is_file(), reason=f"no bl entry point beside {sys.executable}")


def bl_cmd(url: str, *args: str) -> list[str]:
    return [BL, "--host", url, "--api-key", KEY, "--retry", "1", *args]


def popen(cmd: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)


@pytest.fixture(scope="module")
def crash_sb(make_sandbox):
    return make_sandbox(seed=3, groups=1, jobs_per_group=150, tasks_per_group=20, api_key=KEY,
                        artifact_bytes=96 * 1024, latency_ms=2, export_waiting=0,
                        export_running=0)


class Watcher(threading.Thread):
    """Reads every non-hidden file under ``root`` while runs go on; records any mismatch."""

    def __init__(self, root: Path, clean: dict[str, bytes]):
        super().__init__(daemon=True)
        self.root, self.clean = root, clean
        self.bad: list[str] = []
        self.checked: dict[str, tuple[int, int]] = {}
        self.stop = threading.Event()

    def scan(self) -> None:
        for dirpath, _dirs, names in os.walk(self.root):
            for name in names:
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, self.root)
                if is_hidden(rel):
                    continue
                try:
                    st = os.stat(full)
                    key = (st.st_size, st.st_mtime_ns)
                    if self.checked.get(rel) == key:
                        continue
                    data = Path(full).read_bytes()
                except FileNotFoundError:
                    continue
                if self.clean.get(rel) != data:
                    self.bad.append(f"{rel}: {len(data)} bytes, clean run has "
                                    f"{len(self.clean.get(rel, b''))}")
                self.checked[rel] = key

    def run(self) -> None:
        while not self.stop.is_set():
            self.scan()
            time.sleep(0.02)


def test_sigkill_at_20_points_then_skip_existing_equals_a_clean_run(crash_sb, tmp_path):
    args = ["pull", "-g", "G1", "--with", "report,artifacts,jobs,metrics", "--skip-existing"]
    clean_root, root = tmp_path / "clean", tmp_path / "crashed"
    clean = subprocess.run(bl_cmd(crash_sb.url, "--concurrency", "4", *args, "-o", str(clean_root)),
                           capture_output=True, text=True, env=os.environ.copy())
    assert clean.returncode == 1, clean.stderr  # unsignable artifacts of the dataset
    assert "Traceback" not in clean.stderr
    clean_files = final_files(clean_root)
    assert len(clean_files) > 200
    per_run = max(2, len(clean_files) // 40)  # 20 kills take about a third of the work

    rng = random.Random(SEED)
    watcher = Watcher(root, clean_files)
    watcher.start()
    killed_mid_run = 0
    progress_at_kill = []
    try:
        for _ in range(KILLS):
            # Most kills after some newly written files plus a few ms (between or during
            # writes), some at a random time from the start (startup, enumeration).
            new_files = rng.randint(0, per_run)
            delay = rng.uniform(0.0, 0.01) if new_files else rng.uniform(0.05, 0.5)
            proc = popen(bl_cmd(crash_sb.url, "--concurrency", "4", *args, "-o", str(root)))
            seen = 0
            while seen < new_files:
                line = proc.stderr.readline()
                if not line:
                    break
                if line.startswith(("wrote ", "downloaded ", "[warn] no artifact")):
                    seen += 1
            time.sleep(delay)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed_mid_run += 1
            proc.stderr.close()
            proc.wait()
            watcher.scan()
            # After a kill: every file at a final path is complete.
            now = final_files(root)
            assert [rel for rel, data in now.items() if clean_files.get(rel) != data] == []
            progress_at_kill.append(len(now))
        # The kills were spread over the run: mostly mid-run, at many different stages.
        assert killed_mid_run >= KILLS - 2, killed_mid_run
        assert len(set(progress_at_kill)) >= 10, progress_at_kill
        assert progress_at_kill[-1] < len(clean_files), progress_at_kill

        final = subprocess.run(bl_cmd(crash_sb.url, "--concurrency", "4", *args, "-o", str(root)),
                               capture_output=True, text=True, env=os.environ.copy())
    finally:
        watcher.stop.set()
        watcher.join()
    watcher.scan()
    assert watcher.bad == []
    assert final.returncode == clean.returncode, final.stderr
    assert "skip existing" in final.stderr
    assert final_files(root) == clean_files
    # A killed run's temp file is reused by the next write of the same destination, and stale
    # staging directories are removed: nothing is left once the run has completed.
    assert leftovers(root) == []


# ------------------------------------------------------------------ Ctrl-C
@pytest.fixture(scope="module")
def slow_sb(make_sandbox):
    return make_sandbox(seed=4, groups=1, jobs_per_group=40, tasks_per_group=5, api_key=KEY,
                        artifact_bytes=512 * 1024, latency_ms=60, trajectory_steps=40,
                        export_waiting=0, export_running=0)


def _interrupt_when(proc: subprocess.Popen, root: Path, cond, timeout: float = 30) -> str:
    """Send SIGINT as soon as ``cond(stderr_lines, root)`` holds; return the whole stderr."""
    lines: list[str] = []

    def read() -> None:
        for line in proc.stderr:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while not cond(lines, root):
        assert proc.poll() is None, "finished before it could be interrupted:\n" + "".join(lines)
        assert time.monotonic() < deadline, "".join(lines)
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    reader.join(timeout=10)
    return "".join(lines)


def _staging(root: Path) -> bool:
    return root.exists() and any(p.name.startswith(".") for p in root.rglob("*"))


def _line(prefix: str, where: str = ""):
    return lambda lines, root: any(line.startswith(prefix) and where in line for line in lines)


@pytest.mark.parametrize(("case", "args", "cond"), [
    ("artifact downloads", ["artifacts", "download", "-g", "G1"],
     lambda lines, root: _line("downloaded ")(lines, root) and _staging(root)),  # a .part exists
    ("report files", ["report", "download", "-g", "G1"], _line("wrote ", "/G1/")),
    ("task archive", ["trajectory", "download", "--task-id", "T2"], lambda lines, root: _staging(root)),
    ("group export", ["trajectory", "download", "-g", "G1"], lambda lines, root: _staging(root)),
])
def test_ctrl_c_exits_130_and_leaves_no_temp_files(slow_sb, tmp_path, case, args, cond):
    proc, err, root = _ctrl_c(slow_sb, tmp_path, case, args, cond)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert leftovers(root) == [], case


def test_ctrl_c_prints_a_summary_line(slow_sb, tmp_path):
    proc, err, _root = _ctrl_c(slow_sb, tmp_path, "report files", ["report", "download", "-g", "G1"],
                               _line("wrote ", "/G1/"))
    assert proc.returncode == 130, err
    assert any(line.startswith("[error] interrupted") for line in err.splitlines()), err


def _ctrl_c(slow_sb, tmp_path, case, args, cond):
    root = tmp_path / "out"
    if case == "group export":
        # Send the export body slowly, so the interrupt lands in its staging directory.
        slow_sb.configure_faults(slow_pause_s=0.5)
        slow_sb.inject_fault("_export", kind="slow")
    try:
        proc = popen(bl_cmd(slow_sb.url, "--concurrency", "2", *args, "-o", str(root)))
        err = _interrupt_when(proc, root, cond)
    finally:
        slow_sb.reset_state()
        slow_sb.configure_faults(0.0, slow_pause_s=0.02)
    return proc, err, root


def test_leftover_detection_recognises_the_writers_temp_names(tmp_path):
    """The checks above are only as good as ``leftovers``: it must see bl's real temp names."""
    import tempfile

    from benchloop.base import files as writers

    dest = tmp_path / "G1" / "..%2Fodd-job_report.md"
    for suffix in (".tmp", ".part"):
        with writers.replacing(str(dest), suffix) as (_fd, tmp):
            assert leftovers(tmp_path) == [os.path.relpath(tmp, tmp_path)]
            assert set(final_files(tmp_path)) <= {"G1/..%2Fodd-job_report.md"}
    assert final_files(tmp_path) == {"G1/..%2Fodd-job_report.md": b""} and leftovers(tmp_path) == []
    for prefix in (".T1-trajectories-", ".trace-trajectory-"):
        staging = tempfile.mkdtemp(prefix=prefix, dir=tmp_path)
        (Path(staging) / "export.bin").write_bytes(b"x")
        assert len(leftovers(tmp_path)) == 2
        assert "G1/..%2Fodd-job_report.md" in final_files(tmp_path)
        os.unlink(Path(staging) / "export.bin")
        os.rmdir(staging)
