"""Performance facts that are true or false, never timings (those live in benchmarks/).

1. Import hygiene: the fast paths (``--version``, ``--help``, a resource's and
   an action's ``--help``) must not import the HTTP stack, the YAML parser,
   the schema validator or the template engine; ``--version`` not even
   Cyclopts, and a command that prints no help never imports rich.  Checked in a fresh
   interpreter, on the warm path: the same command runs once first with the
   same ``BENCHLOOP_CACHE_DIR`` so the compiled table is already cached (the
   cold path legitimately parses and validates the YAML once).
2. Connection reuse: one HTTP client per process, so sequential requests
   share one TCP connection, and concurrent ones at most ``--concurrency``
   plus one.  The sandbox counts accepted connections.
3. ``--concurrency`` bounds the requests in flight, although the worker pool
   has spare threads: the sandbox records the peak it answered at once.
4. One HTTP stack: JSON calls and streamed downloads go through one
   client and share its keep-alive connections.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from benchloop.sandbox import start_sandbox

HEAVY = ("httpx", "httpcore", "yaml", "jsonschema", "jinja2")
FRAMEWORK = ("rich", "cyclopts")

_CHECK = r"""
import contextlib, io, json, sys
argv, watched = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["bl", *argv]
from benchloop.cli.app import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(watched))
print("MODULES=" + json.dumps(loaded))
"""

FAST_PATHS = [
    pytest.param(["--version"], id="version"),
    pytest.param(["--help"], id="help"),
    pytest.param(["metrics", "--help"], id="resource-help"),
    pytest.param(["metrics", "get", "--help"], id="action-help"),
]


def _imported(argv: list[str], watched: tuple[str, ...]) -> list[str]:
    """Top-level packages of ``watched`` imported by ``bl ARGV`` in a fresh interpreter (warm cache)."""
    command = [sys.executable, "-c", _CHECK, json.dumps(argv), json.dumps(list(watched))]
    for _ in range(2):  # the first run fills the compiled-spec cache; the second is the warm path
        done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ), timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("MODULES=")]
    assert lines, f"no result from the check (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(lines[-1][len("MODULES="):])


@pytest.mark.parametrize("argv", FAST_PATHS)
def test_fast_paths_import_no_heavy_modules(argv):
    assert _imported(argv, HEAVY) == []


def test_version_skips_the_cli_framework():
    # Issue 36: `bl --version` is answered before the app is built (cli/fast_version.py).
    assert _imported(["--version"], FRAMEWORK) == []


# ---------------------------------------------------------------- connection reuse
_IDS = ",".join(f"G1-J{n:04d}" for n in range(1, 11))


@pytest.fixture(scope="module")
def slow_sandbox():
    # A little latency keeps requests in flight together, as they would be on a
    # real network; it makes an extra connection show up whenever one is opened.
    with start_sandbox(seed=7, groups=1, jobs_per_group=20, api_key="facts-key", latency_ms=30) as sb:
        yield sb


def _connections(sb, concurrency: int) -> int:
    sb.reset_stats()
    done = subprocess.run(
        [sys.executable, "-m", "benchloop", "--host", sb.url, "--api-key", "facts-key", "--retry", "0",
         "--concurrency", str(concurrency), "-q", "report", "get", "-j", _IDS],
        capture_output=True, text=True, env=dict(os.environ), timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    stats = sb.stats
    assert stats["job_report"] == 10
    return stats["connections"]


def test_sequential_requests_share_one_connection(slow_sandbox):
    assert _connections(slow_sandbox, 1) == 1


def test_concurrent_requests_open_at_most_concurrency_plus_one(slow_sandbox):
    counts = [_connections(slow_sandbox, 4) for _ in range(3)]
    assert max(counts) <= 4 + 1, counts


@pytest.mark.parametrize("concurrency", [1, 3])
def test_requests_in_flight_never_exceed_concurrency(slow_sandbox, concurrency):
    # 10 ids, more worker threads than slots: the spare threads only decode and write.
    _connections(slow_sandbox, concurrency)
    assert slow_sandbox.stats["max_in_flight"] == concurrency


def test_nested_pools_do_not_multiply_the_spare_threads(tmp_path):
    # pull runs its sections side by side (2 here), each over the groups with --concurrency 2,
    # each group fanning out over its jobs: at most 2 x 2 requests in flight, as before the
    # spare threads existed - a nested pool holds one slot of its caller's pool while it runs.
    with start_sandbox(seed=7, groups=3, jobs_per_group=12, api_key="facts-key", latency_ms=30) as sb:
        done = subprocess.run(
            [sys.executable, "-m", "benchloop", "--host", sb.url, "--api-key", "facts-key", "--retry", "0",
             "--concurrency", "2", "-q", "-o", str(tmp_path), "pull", "-g", "G1,G2,G3", "--with", "report,jobs"],
            capture_output=True, text=True, env=dict(os.environ), timeout=120,
        )
        stats = sb.stats
    assert done.returncode == 0, done.stderr[-2000:]
    assert stats["job_report"] == 36
    assert 2 < stats["max_in_flight"] <= 4, stats["max_in_flight"]


def test_checked_json_calls_share_a_connection_and_a_download_gets_its_own(tmp_path):
    # The artifact listing (JSON, whose answer names its job) and the artifact itself (a streamed
    # download: a file names no id, so it never shares a connection), one after the other.
    with start_sandbox(seed=7, groups=1, jobs_per_group=3, api_key="facts-key") as sb:
        done = subprocess.run(
            [sys.executable, "-m", "benchloop", "--host", sb.url, "--api-key", "facts-key", "--retry", "0",
             "--concurrency", "1", "-q", "-o", str(tmp_path), "artifacts", "download", "-j", "G1-J0001"],
            capture_output=True, text=True, env=dict(os.environ), timeout=120,
        )
        stats = sb.stats
    assert done.returncode == 0, done.stderr[-2000:]
    assert stats["job_artifacts"] == 1 and stats["job_artifact_download"] == 1, stats
    assert stats["connections"] == 2, stats


# ---------------------------------------------------------------- what a start pays for
# Issue 25: a start pays only for what the command uses.
_MODULES = r"""
import contextlib, io, json, sys
argv, count = json.loads(sys.argv[1]), "--count-assemblies" in sys.argv[2:]
sys.argv = ["bl", *argv]
counts = {"assemblies": 0}
if count:
    from cyclopts import core
    original = core.App.assemble_argument_collection
    def counting(self, *args, **kwargs):
        counts["assemblies"] += 1
        return original(self, *args, **kwargs)
    core.App.assemble_argument_collection = counting
from benchloop.cli.app import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
print("RESULT=" + json.dumps({"modules": sorted(sys.modules), **counts}))
"""


def _run_fresh(argv: list[str], *extra: str) -> dict:
    """``bl ARGV`` in a fresh interpreter, run twice (the second start is the warm one): what it
    imported and how many argument collections Cyclopts assembled."""
    command = [sys.executable, "-c", _MODULES, json.dumps(argv), *extra]
    for _ in range(2):
        done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ), timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT=")]
    assert lines, f"no result (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(lines[-1][len("RESULT="):])


# httpx (with ssl, httpcore, h11, hashlib, mimetypes) is what a request needs: imported at the
# first request, never for --help or --version (see the HEAVY test above).
UNUSED_BY_GET = ("sqlite3", "zipfile", "tarfile", "gzip", "configparser", "difflib",
                 "concurrent.futures", "yaml", "jsonschema", "jinja2", "jmespath",
                 "rich", "cyclopts.help", "cyclopts.completion", "docstring_parser",  # help and completion only
                 "benchloop.cli.errors", "benchloop.engine.archive", "benchloop.engine.compose",
                 "benchloop.engine.steps.ap_rebuild", "benchloop.engine.steps.trace_export",
                 "benchloop.engine.steps.trace_media", "benchloop.engine.combines.comparison")


def test_metrics_get_imports_only_what_it_uses(slow_sandbox):
    result = _run_fresh(["--host", slow_sandbox.url, "--api-key", "facts-key", "--retry", "0", "metrics", "get",
                         "-j", "G1-J0001"])
    assert "benchloop.engine.pipeline" in result["modules"]  # it did run the command
    assert sorted(set(result["modules"]) & set(UNUSED_BY_GET)) == []


def test_cyclopts_assembles_no_more_than_the_meta_app_needs(slow_sandbox):
    # The meta app assembles the global options (~4 ms each time) once per run of options it
    # looks for commands in (here two: before the resource and after the action), once to parse
    # them; the command twice (to scope the tokens, then its own parse).  ``app.meta(tokens)``
    # would walk the tokens twice more (seven assemblies of the global options in all).
    result = _run_fresh(["--host", slow_sandbox.url, "--api-key", "facts-key", "--retry", "0", "metrics", "get",
                         "-j", "G1-J0001"], "--count-assemblies")
    assert "benchloop.engine.pipeline" in result["modules"]
    assert result["assemblies"] == 5
