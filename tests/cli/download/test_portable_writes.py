"""Writes that need no POSIX-only module: a real download runs with ``fcntl`` unimportable.

Windows has no ``fcntl``; ``benchloop/base/files.py`` locks its temp files with ``flock`` where
the platform has it and otherwise leaves the guarding to the OS (a file open in one process
cannot be deleted by another there).  Here the import of ``fcntl`` is refused in a child
process before ``bl`` starts, and downloads into a directory with a killed run's leftover temp
file must still write every file, leave no temp file, and sweep the leftover.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support import final_files, leftovers

# Refuses ``import fcntl`` (and forgets a copy already imported), then runs ``bl ARGV``.
_BLOCKED = r"""
import importlib.abc, json, sys

class NoFcntl(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "fcntl":
            raise ImportError("fcntl is blocked (a platform without it)")
        return None

sys.modules.pop("fcntl", None)
sys.meta_path.insert(0, NoFcntl())
try:
    import fcntl  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the blocker did not hold")
from benchloop.cli.app import main
code = main(json.loads(sys.argv[1]))
sys.exit(code)
"""


def _bl_without_fcntl(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _BLOCKED, json.dumps(args)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_downloads_work_without_fcntl(sandbox, tmp_path):
    out = tmp_path / "out"
    (out / "G1").mkdir(parents=True)
    stale = out / "G1" / ".job_list.json.%tmp-0123456789abcdef.tmp"  # a killed run's leftover
    stale.write_bytes(b"partial")
    env = {**os.environ, "BENCHLOOP_NO_UPDATE_CHECK": "1", "HOME": str(tmp_path / "home"),
           "BENCHLOOP_CACHE_DIR": str(tmp_path / "cache")}
    common = ["--host", sandbox.url, "--api-key", sandbox.api_key, "--retry", "0"]
    jobs = _bl_without_fcntl([*common, "jobs", "download", "-g", "G1", "-o", str(out)], env)
    assert jobs.returncode == 0, jobs.stderr
    artifacts = _bl_without_fcntl([*common, "artifacts", "download", "-j", "G1-J0001", "-o", str(out)], env)
    assert artifacts.returncode == 0, artifacts.stderr
    again = _bl_without_fcntl([*common, "artifacts", "download", "-j", "G1-J0001", "--skip-existing",
                               "-o", str(out)], env)
    assert again.returncode == 0, again.stderr

    files = final_files(out)
    listed = json.loads(files["G1/job_list.json"])
    assert listed, "the job list was written"
    assert any(name.startswith("G1-J0001") or "/G1-J0001" in name for name in files), sorted(files)
    assert leftovers(out) == [], "no temp file survives, the killed run's leftover included"
    assert not stale.exists()


def test_config_set_works_without_fcntl(tmp_path):
    """``config set`` locks its file with ``flock`` where there is one; without it the write
    is still made, atomically, and no lock file is left behind."""
    config = tmp_path / "home" / "config.toml"
    env = {**os.environ, "BENCHLOOP_NO_UPDATE_CHECK": "1", "HOME": str(tmp_path / "home"),
           "BENCHLOOP_CACHE_DIR": str(tmp_path / "cache")}
    made = _bl_without_fcntl(["config", "set", "--config", str(config), "--host", "http://127.0.0.1:9",
                              "--api-key", "portable-key"], env)
    assert made.returncode == 0, made.stderr
    text = config.read_text(encoding="utf-8")
    assert "http://127.0.0.1:9" in text and "portable-key" in text
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.toml"]


def test_the_blocker_really_blocks(tmp_path):
    """The child above does run without ``fcntl``: without the blocker's guard ``import fcntl``
    would have ended it before ``bl`` started."""
    probe = subprocess.run([sys.executable, "-c", _BLOCKED.split("from benchloop")[0]
                            + "import importlib\ntry:\n    importlib.import_module('fcntl')\n"
                            "except ImportError:\n    print('blocked')\n"],
                           capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "blocked", probe.stderr
