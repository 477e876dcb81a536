"""The peer of issues 32 and 36: the official client, ``benchloop_client==0.2.25``.

The benchmark installs it itself, as a user would: a virtual environment of
its own (``python -m venv`` with the interpreter that runs the benchmark, so
both clients start the same Python) and ``pip install benchloop_client==0.2.25``
through pip's own configuration (index, proxy, certificates: nothing here
names an index).  The environment is cached under the benchmark cache
directory (``BENCH_CACHE_DIR``, else the user cache) and reused by later runs;
``BENCH_OFFICIAL=/path/to/bmcli`` uses another installation instead.

When it cannot be installed (no network, no such version on the index), the
run says so in the report and measures ``bl`` alone: the targets against the
official client are then "n/a", never met by default.

Its update check (docs/contract.md, the official client's section 5.6) would
spawn a child asking the package index at every subcommand; :func:`quiet_update_check`
gives it a fresh cache of its own so it never does, as on a user's machine
that checked less than a day ago (``bl`` runs with ``BENCHLOOP_NO_UPDATE_CHECK=1``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "benchloop_client"
VERSION = "0.2.25"
SCRIPT = "bmcli"
INSTALL_TIMEOUT_S = 900


@dataclass
class Official:
    path: str | None  # its bmcli, or None when it is not available
    note: str  # where it came from, or why it is missing (for the report)


def _cache_root() -> Path:
    from .sandbox_launcher import cache_dir

    return cache_dir()


def _tail(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"


def _installed_version(python: Path) -> str | None:
    try:
        done = subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({PACKAGE!r}))"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def locate(log: Callable[[str], None]) -> Official:
    """The official client's ``bmcli``: ``BENCH_OFFICIAL``, the cached venv, or a new install."""
    override = os.environ.get("BENCH_OFFICIAL")
    if override:
        if not os.access(override, os.X_OK):
            return Official(None, f"`BENCH_OFFICIAL={override}` is not executable")
        return Official(override, f"`BENCH_OFFICIAL={override}`")
    venv = _cache_root() / f"official-{VERSION}-py{sys.version_info[0]}{sys.version_info[1]}"
    python, script, stamp = venv / "bin" / "python", venv / "bin" / SCRIPT, venv / ".installed"
    how = f"`python -m venv`, then `pip install {PACKAGE}=={VERSION}` with pip's own configuration"
    if stamp.is_file() and os.access(script, os.X_OK):
        return Official(str(script), f"installed earlier into the cached virtual environment {venv} ({how})")
    shutil.rmtree(venv, ignore_errors=True)
    log(f"official client: installing {PACKAGE}=={VERSION} into {venv} (cached for later runs)")
    started = time.monotonic()
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300,
                       check=True)
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", f"{PACKAGE}=={VERSION}"],
                              capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(venv, ignore_errors=True)
        return Official(None, f"`python -m venv` failed: {_tail(exc.stderr)}")
    except (OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(venv, ignore_errors=True)
        return Official(None, f"`pip install {PACKAGE}=={VERSION}` did not finish: {exc}")
    version = _installed_version(python) if done.returncode == 0 else None
    if version != VERSION or not os.access(script, os.X_OK):
        shutil.rmtree(venv, ignore_errors=True)
        why = _tail(done.stderr) if done.returncode else f"installed version {version!r}, no {SCRIPT}"
        return Official(None, f"`pip install {PACKAGE}=={VERSION}` failed ({why})")
    stamp.write_text(json.dumps({"package": PACKAGE, "version": VERSION, "python": sys.version.split()[0]}))
    log(f"official client: installed in {time.monotonic() - started:.0f} s")
    return Official(str(script), f"installed by this run into the virtual environment {venv} ({how}), "
                                 "cached for later runs")


def quiet_update_check(xdg_cache_home: Path) -> None:
    """A fresh version-check cache under ``xdg_cache_home``: the official client then neither
    asks the index nor prints a notice (it reads ``$XDG_CACHE_HOME/benchloop/version-check.json``)."""
    path = xdg_cache_home / "benchloop" / "version-check.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"checked_at": time.time(), "latest_version": VERSION}))
