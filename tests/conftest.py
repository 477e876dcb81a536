"""Shared fixtures: a sandbox backend on loopback and an in-process `bl` runner.

Every test runs the real CLI entry point (``benchloop.cli.main``) against the
real sandbox over HTTP; nothing in httpx is mocked.  The environment is
isolated per test: no user config, no user cache, no update checks.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from benchloop.cli import main
from benchloop.sandbox import start_sandbox

API_KEY = "test-key"


@pytest.fixture(scope="session")
def sandbox():
    """One sandbox for the session: 3 groups x 40 jobs, 25 tasks each, seed 7."""
    with start_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, api_key=API_KEY) as sb:
        yield sb


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path_factory):
    for name in ("BENCHLOOP_API_KEY", "BENCHMARK_API_KEY", "BENCHLOOP_HOST", "BENCHLOOP_OUTPUT_DIR",
                 "BENCHLOOP_CONFIG", "BENCHLOOP_PROFILE", "BENCHLOOP_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("BENCHLOOP_NO_UPDATE_CHECK", "1")
    monkeypatch.setenv("COLUMNS", "100")
    # One shared compile cache for the session keeps the suite fast.
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(Path(tmp_path_factory.getbasetemp()) / "spec-cache"))


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def bl(capsys, monkeypatch):
    """Run `bl ARGS...` in-process; returns Result(code, out, err)."""

    def run(*args: str, stdin: str | None = None) -> Result:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def api(sandbox, bl):
    """Like ``bl`` but pointed at the session sandbox with the right key."""

    def run(*args: str, stdin: str | None = None) -> Result:
        return bl("--host", sandbox.url, "--api-key", API_KEY, "--retry", "0", *args, stdin=stdin)

    return run


@pytest.fixture
def backend(sandbox):
    """GET a path from the sandbox directly (the expected, unshaped body)."""
    client = httpx.Client(base_url=sandbox.url, headers={"X-API-Key": API_KEY})

    def get(path: str, **params):
        response = client.get(path, params=params or None)
        assert response.status_code == 200, response.text
        return response.json()

    yield get
    client.close()


class TextSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot):
    return snapshot.use_extension(TextSnapshotExtension)


def tree(root: Path) -> dict[str, str]:
    """A file tree as {relative path: text}, for snapshots and comparisons."""
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
