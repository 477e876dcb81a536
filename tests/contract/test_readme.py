"""Every shell example of README.md runs against a sandbox (newcomer issue, item 9).

The README's ``bash`` blocks are run as written, one block per bash script
(``set -e -o pipefail``), in a scratch directory, against a sandbox started
here with the README's data (``bl sandbox serve``'s defaults: seed 7, 3 groups of
40 jobs, the comparison groups of 160 jobs, the live group of 12 and the live comparison groups
of 40, key ``sandbox-key``);
only the sandbox's port differs, substituted for 8765, and the live group's pace (0.1 s).  A
line ending with ``# exit N ...`` must exit with N.  A block preceded by
``<!-- readme-test: skip (why) -->`` is not run: it installs, starts the
sandbox itself, or writes to a real backend or to the shell's setup.  So an
example that stops working, or an id the sandbox does not have, fails here.
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

README = ROOT / "README.md"
BLOCK = re.compile(r"(<!-- readme-test: skip[^>]*-->\n)?```bash\n(.*?)```", re.S)
EXPECT = re.compile(r"#\s*exit (\d+)\b")

pytestmark = pytest.mark.skipif(shutil.which("jq") is None or sys.platform == "win32",
                                reason="the README's examples use bash and jq")


def blocks() -> list[tuple[int, str]]:
    """(line number, script) of each bash block that the test runs."""
    text = README.read_text(encoding="utf-8")
    found = []
    for match in BLOCK.finditer(text):
        if match.group(1) is None:
            found.append((text[:match.start(2)].count("\n") + 1, match.group(2)))
    return found


def test_the_readme_has_examples_and_few_skips():
    text = README.read_text(encoding="utf-8")
    assert len(blocks()) >= 6
    assert text.count("<!-- readme-test: skip") <= 5


def script(body: str) -> str:
    lines = ["set -e -o pipefail"]
    for line in body.splitlines():
        expect = EXPECT.search(line)
        if expect and not line.lstrip().startswith("#"):
            command = line[:expect.start()].rstrip()
            lines.append(f"rc=0; {command} || rc=$?; [ \"$rc\" = {expect.group(1)} ] || "
                         f"{{ echo 'expected exit {expect.group(1)}, got '$rc': {command!r}' >&2; exit 99; }}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def readme_sandbox(make_sandbox):
    # The live groups as `bl sandbox serve` has them, faster (its pace is a timing, not data).
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, api_key="sandbox-key",
                        compare_jobs=160, live_jobs=12, live_compare=40, live_pace=0.1)


@pytest.mark.parametrize(("line", "body"), blocks(), ids=[f"README.md:{n}" for n, _ in blocks()])
def test_readme_block_runs(readme_sandbox, tmp_path, line, body):
    env = {**os.environ, "BENCHLOOP_HOST": readme_sandbox.url, "BENCHLOOP_API_KEY": "sandbox-key",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    code = script(body.replace("http://127.0.0.1:8765", readme_sandbox.url))
    done = subprocess.run(["bash", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"README.md:{line}\n{body}\nstdout:\n{done.stdout[-2000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr
