"""Helpers for tests that drive ``bl`` against the sandbox and inspect what it wrote.

Why here: the reliability tests (faults, crashes, hostile input) in several
test modules need the same few tools - run the CLI in-process with captured
streams, read an output tree byte for byte, find temp leftovers, list the
failed ids of a summary - and they are useful for ad-hoc experiments with the
sandbox too.
"""

from __future__ import annotations

import io
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

_FAILED = re.compile(r"^\[error\]   - (.+?): ", re.M)


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def failed(self) -> list[str]:
        """Ids (labels) named in the failure summary, in order."""
        return _FAILED.findall(self.err)


def run_inprocess(*args: str, stdin: str = "") -> Run:
    """``bl ARGS`` in this process, stdin/stdout/stderr replaced by strings."""
    from benchloop.cli import main

    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = main(list(args))
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Run(code, out.getvalue(), err.getvalue())


# What bl's writers create besides final files: ``.<name>.tmp`` / ``.part`` beside a
# destination (``.<name>.tmp.<pid>-<thread>-<n>`` while another writer holds that one), and
# staging directories ``.<task>-<kind>-<pid>-XXXXXXXX`` / ``.trace-trajectory-<pid>-XXXXXXXX``
# (tempfile.mkdtemp).  A final file may start with '.' too (an id like ``..%2Fx``), so a leading
# dot alone is not enough.
_TEMP_FILE = re.compile(r"^\..+\.(tmp|part)(\.[0-9-]+)?$")
_STAGING_DIR = re.compile(r"^\.(?!\.)[^/]*-[A-Za-z0-9_]{8}$")


def is_hidden(rel: str) -> bool:
    """Part of a temp file, partial download or staging directory (see the patterns above)."""
    return any(_TEMP_FILE.match(part) or _STAGING_DIR.match(part) for part in Path(rel).parts)


def final_files(root: str | os.PathLike[str]) -> dict[str, bytes]:
    """Every non-hidden file under ``root`` as {relative path: bytes}."""
    root = Path(root)
    if not root.exists():
        return {}
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_file() and not is_hidden(rel):
            out[rel] = path.read_bytes()
    return out


def leftovers(root: str | os.PathLike[str]) -> list[str]:
    """Hidden entries (``.x.tmp``, ``.x.part``, staging dirs) under ``root``."""
    root = Path(root)
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if is_hidden(str(p.relative_to(root))))


def all_paths(root: str | os.PathLike[str]) -> list[str]:
    """Every entry under ``root`` (files and directories), relative, sorted."""
    root = Path(root)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []
