"""Staging directories of task archives and group exports: whose are they, and who may remove them.

Round four of the reliability work (docs/reliability.md).  A run stages a task archive in
``<root>/.<task>-trajectories-<pid>-XXXXXXXX`` and a group export in
``<root>/<group>/.trace-trajectory-<pid>-XXXXXXXX``, and removes the ones left by dead runs
before it makes its own.  The PID in the name says nothing about a run in another PID
namespace (a container) or on another host sharing the output volume: there the owner has
another PID, and the PID in the name is dead or someone else's here.  So a directory is
judged by its lock (an flock on ``.lock`` inside, released by the kernel when the owner
dies), never by the PID.

The owner of another namespace is played by a child process that holds the flock on a
directory named with a PID that no longer exists here; the real ``bl`` runs as a process
against the sandbox on loopback.
"""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import API_KEY, leftovers

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")

# An owner in another PID namespace: makes the directory, locks its .lock, stages a file, says
# "ready", and holds the lock until it is killed or its stdin closes.
OWNER = r"""
import fcntl, os, sys
path = sys.argv[1]
os.makedirs(path)
fd = os.open(os.path.join(path, ".lock"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
with open(os.path.join(path, "export.bin"), "wb") as staged:
    staged.write(b"half an export")
print("ready", flush=True)
sys.stdin.read()
"""

CASES = {  # command, the directory its run stages in (relative to -o), the staging prefix
    "task archive": (["trajectory", "download", "--task-id", "T1"], ".", ".T1-trajectories-"),
    "group export": (["trajectory", "download", "-g", "G1"], "G1", ".trace-trajectory-"),
}


def dead_pid() -> int:
    """A PID that no process has here now (a child that has exited and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def bl(sandbox, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchloop", "--host", sandbox.url, "--api-key", API_KEY, *args],
                          capture_output=True, text=True, timeout=120)


def start_owner(path: Path) -> subprocess.Popen:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None and owner.stdout.readline() == "ready\n"
    return owner


@pytest.mark.parametrize("case", CASES)
def test_a_live_staging_directory_of_another_namespace_survives_and_is_swept_once_its_owner_dies(
        sandbox, tmp_path, case):
    """Was: removed by the next run (its PID is dead here), under the feet of the run writing it."""
    args, where, prefix = CASES[case]
    live = tmp_path / where / f"{prefix}{dead_pid()}-abcdefgh"
    (tmp_path / where).mkdir(parents=True, exist_ok=True)
    owner = start_owner(live)
    try:
        result = bl(sandbox, *args, "-o", str(tmp_path))
        assert result.returncode == 0, result.stderr
        assert (live / "export.bin").read_bytes() == b"half an export"  # untouched
    finally:
        owner.kill()  # dies without a word: the kernel releases its lock
        owner.wait()
    result = bl(sandbox, *args, "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert not live.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("case", CASES)
def test_a_staging_directory_without_a_lock_is_swept_only_after_a_day_without_change(sandbox, tmp_path, case):
    """One made by a bl before the lock (or on a file system without locks): kept while anything in
    it changed within a day (was: removed at once, its PID being dead here), removed after that."""
    args, where, prefix = CASES[case]
    old = tmp_path / where / f"{prefix}{dead_pid()}-abcdefgh"
    old.mkdir(parents=True)
    (old / "export.bin").write_bytes(b"written a minute ago")
    result = bl(sandbox, *args, "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (old / "export.bin").exists()
    two_days_ago = time.time() - 2 * 24 * 3600
    for path in (old / "export.bin", old):
        os.utime(path, (two_days_ago, two_days_ago))
    result = bl(sandbox, *args, "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert not old.exists() and leftovers(tmp_path) == []


def test_bl_holds_the_lock_of_its_staging_directory_while_it_works(make_sandbox, tmp_path):
    """A task archive of 40 jobs at 60 ms a request: while bl stages it, its directory has a
    ``.lock`` that nobody else can lock (was: no lock at all); it is gone when bl is done."""
    slow = make_sandbox(seed=4, groups=1, jobs_per_group=40, tasks_per_group=5, latency_ms=60)
    proc = subprocess.Popen([sys.executable, "-m", "benchloop", "--host", slow.url, "--api-key", API_KEY,
                             "--concurrency", "2", "trajectory", "download", "--task-id", "T1", "-o", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        staging: list[Path] = []
        while not staging:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline
            staging = [p for p in tmp_path.glob(".T1-trajectories-*") if (p / ".lock").exists()]
            time.sleep(0.01)
        assert staging[0].name.startswith(f".T1-trajectories-{proc.pid}-")
        fd = os.open(staging[0] / ".lock", os.O_RDWR)
        try:
            with pytest.raises(OSError) as held:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            assert held.value.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES)
        finally:
            os.close(fd)
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not staging[0].exists() and leftovers(tmp_path) == []


def test_a_forced_exit_removes_the_staging_directories_in_use(tmp_path):
    """After Ctrl-C the CLI exits without waiting for workers still inside a staging directory;
    ``remove_live_temps`` removes those directories as it removes their temp files."""
    from benchloop.base.files import remove_live_temps, staging_dir

    with staging_dir(str(tmp_path), ".T9-trajectories-") as work:
        (Path(work) / "export.bin").write_bytes(b"x")
        assert (Path(work) / ".lock").exists()
        remove_live_temps()
        assert not Path(work).exists()
    assert list(tmp_path.iterdir()) == []
