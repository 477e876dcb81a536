"""A reader that closes stdout (``bl ... | head``) stops the command quietly.

The closed pipe is not the failure of an id, nor a local-file error: no
``[error]`` line, exit 141 (128 + SIGPIPE, as a shell reports it), in the
streamed ``jsonl`` format (written by a worker) and in the plain array alike.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_a_closed_stdout_ends_quietly(sandbox, fmt):
    env = {**os.environ, "BENCHLOOP_NO_UPDATE_CHECK": "1"}
    argv = [sys.executable, "-m", "benchloop", "--host", sandbox.url, "--api-key", sandbox.api_key, "-q",
            "jobs", "get", "-g", "G1,G2,G3", "--all", "--output", fmt]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.close()  # the reader is gone before the first byte
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141, err.decode()
    assert b"[error]" not in err and b"Traceback" not in err, err.decode()
