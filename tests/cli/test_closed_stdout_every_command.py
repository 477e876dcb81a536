"""Every command ends quietly with exit 141 when the reader of its stdout goes away (a real pipe
to a real ``bl`` process, closed early), whichever entry point started it.

Against the scripted server. Found in round three of the reliability review
(docs/reliability.md, "Round three: the engine and the client"): each test fails on the code
before its fix. Nothing in httpx is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import API_KEY, ROOT, run_inprocess

ENV = {**os.environ, "BENCHLOOP_NO_UPDATE_CHECK": "1", "PYTHONPATH": str(ROOT)}


def bl(url: str, *args: str, stdin: str = ""):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", "0", *args, stdin=stdin)


# ======================================================================= closed pipes
ENTRY = [sys.executable, "-c", "import sys; from benchloop.entry import main; sys.argv[0] = 'bl'; main()"]
MODULE = [sys.executable, "-m", "benchloop"]


@pytest.mark.parametrize("command", [
    [*ENTRY, "--version"], [*MODULE, "--version"], [*ENTRY, "--help"], [*MODULE, "help", "jobs", "get"],
    [*MODULE, "jobs"], [*MODULE, "describe"], [*MODULE, "describe", "--openapi"],
    [*MODULE, "completion", "bash"], [*MODULE, "config", "show"], [*MODULE, "config", "path"],
], ids=["entry-version", "version", "entry-help", "help", "resource-page", "describe", "openapi",
        "completion", "config-show", "config-path"])
def test_every_command_ends_quietly_with_141_when_the_reader_closes_stdout(command, tmp_path):
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env={**ENV, "HOME": str(tmp_path)})
    proc.stdout.close()  # the reader is gone before the first byte
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141, err.decode()
    assert err == b"", err.decode()
