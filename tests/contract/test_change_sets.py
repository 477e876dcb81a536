"""The guide's worked examples, applied as whole change sets to a copy of the repository.

docs/adding-an-endpoint.md promises that a new endpoint, resource or waiter is a change of
``spec/benchloop.yaml`` alone: edit the table, ``make docs``, ``pytest --snapshot-update``,
done.  This test keeps that promise honest the way a maintainer would meet it: it copies the
repository, applies the guide's YAML blocks (read out of the guide, between its example
markers) and nothing else, runs the docs generator, then runs the suite's sweeps (the tests
that derive what they check from the table) in the copy with ``--snapshot-update``, then the
docs drift check.  A test that lists today's commands, a generator that assumes every resource
is in an MCP toolset, or an endpoint the sandbox cannot answer without a handler fails here.

It costs a few minutes (a second run of the sweeps), so it runs once, in its own process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

GUIDE = ROOT / "docs" / "adding-an-endpoint.md"
# The modules that check every command, endpoint, tool or page of the table (they list none).
SWEEPS = ("test_wire.py", "test_outputs.py", "test_describe.py", "test_openapi.py", "test_cli_help.py",
          "test_mcp_tools.py", "test_mcp_toolsets.py", "test_sdk_parity.py", "test_surface.py",
          "test_spec.py", "test_model.py", "test_sandbox_generated.py", "test_docs_truth.py")


def sweep_paths() -> list[str]:
    """The SWEEPS' paths under tests/, wherever the layout puts them (each name once)."""
    paths = [sorted((ROOT / "tests").rglob(name)) for name in SWEEPS]
    assert all(len(found) == 1 for found in paths), dict(zip(SWEEPS, paths, strict=True))
    return [found[0].relative_to(ROOT).as_posix() for found in paths]


_SKIP = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache", "demo-out"}


def guide_block(name: str) -> str:
    text = GUIDE.read_text(encoding="utf-8")
    found = re.search(rf"<!-- example:{name}:start -->\s*```yaml\n(.*?)```\s*<!-- example:{name}:end -->", text, re.S)
    assert found, f"no example:{name} block in {GUIDE.name}"
    return found.group(1)


def _insert_after(text: str, anchor: str, block: str) -> str:
    assert anchor in text, f"the table has no {anchor.strip()!r} where the guide puts its example"
    return text.replace(anchor, anchor + block, 1)


def changed_table(text: str) -> str:
    """The table with the guide's examples: a new endpoint with its schema and an action using it,
    a new resource (appended, as the guide says), and a waiter with the action that waits."""
    text = _insert_after(text, "\nendpoints:\n", guide_block("new-endpoint"))
    text = _insert_after(text, "\nschemas:\n", guide_block("new-schema"))
    text = _insert_after(text, "\n  jobs:\n    help: Job lists of groups.\n    actions:\n", guide_block("new-action"))
    text = _insert_after(text, "\nwaiters:\n", guide_block("waiter").removeprefix("waiters:\n"))
    text = _insert_after(text, "\n  brm:\n    help: Behaviour analyses (BRM) of groups.\n    actions:\n",
                         guide_block("wait-action"))
    return text.rstrip("\n") + "\n" + guide_block("resource")


def copy_repository(dest: Path) -> None:
    def ignore(_dir: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _SKIP or n.endswith(".pyc")}

    for entry in ROOT.iterdir():
        if entry.name in _SKIP:
            continue
        if entry.is_dir():
            shutil.copytree(entry, dest / entry.name, ignore=ignore, symlinks=True)
        else:
            shutil.copy2(entry, dest / entry.name)


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.mark.serial
@pytest.mark.timeout(1800)  # a second run of the sweeps: the suite's 300 s is too short on a loaded machine
def test_the_guides_examples_are_yaml_only_change_sets(tmp_path):
    copy = tmp_path / "repo"
    copy.mkdir()
    copy_repository(copy)
    table = copy / "spec" / "benchloop.yaml"
    table.write_text(changed_table(table.read_text(encoding="utf-8")), encoding="utf-8")
    # The copy's package, table and tests, whatever is installed; a cache of its own.
    env = {**os.environ, "PYTHONPATH": str(copy), "BENCHLOOP_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("BENCHLOOP_SPEC_DIR", None)

    docs = run([sys.executable, "-m", "codegen.docs"], copy, env, 300)
    assert docs.returncode == 0, docs.stdout + docs.stderr
    assert (copy / "docs" / "reference" / "job-meta.md").exists()

    sweeps = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                  "--snapshot-update", *sweep_paths()], copy, env, 1500)
    tail = "\n".join(sweeps.stdout.splitlines()[-40:])
    assert sweeps.returncode == 0, tail + sweeps.stderr[-2000:]
    assert "failed" not in sweeps.stdout.splitlines()[-1], tail

    check = run([sys.executable, "-m", "codegen.docs", "--check"], copy, env, 300)
    assert check.returncode == 0, check.stdout + check.stderr

    # The new command runs against the copy's sandbox, its endpoint answered from the declared shape.
    script = (
        "import subprocess, sys\n"
        "from benchloop.sandbox import start_sandbox\n"
        "box = start_sandbox(groups=1, jobs_per_group=3, compare_jobs=0)\n"
        "try:\n"
        "    done = subprocess.run([sys.executable, '-m', 'benchloop', '--host', box.url, '--api-key',\n"
        "                           box.app.config.api_key, 'jobs', 'notes', '-j', 'G1-J0001'],\n"
        "                          capture_output=True, text=True, timeout=120)\n"
        "finally:\n"
        "    box.stop()\n"
        "sys.stdout.write(done.stdout); sys.stderr.write(done.stderr); sys.exit(done.returncode)\n")
    out = run([sys.executable, "-c", script], copy, env, 180)
    assert out.returncode == 0, out.stderr
    assert '"job_id": "G1-J0001"' in out.stdout
