"""An endpoint that answers text or bytes (``response: {text|binary: ...}``) is a YAML-only file.

A request part of such an endpoint streams the body into its ``file:`` (the download path:
temp file, rename, ``--skip-existing``), for one job and in a group's fan-out, instead of
reading it as JSON (it failed every id with ``API error 200: <the body>``).  The lints refuse
such a part where it cannot be a file (a printing action, a pagination).  The table here is
the real one plus a text endpoint and a resource using it, as a maintainer would add them; the
sandbox answers the new endpoint from its declaration.
"""

from __future__ import annotations

import shutil

import httpx
import pytest
from support import ROOT, tree

from benchloop.cli import commands
from benchloop.sandbox import start_sandbox
from benchloop.table import load as specload
from benchloop.table.load import SpecError, load_model

ENDPOINT = """  job_console:
    method: GET
    path: /openapi/jobs/{job}/console
    response: {text: [text/plain]}
    help: The agent's console log of one job.
"""
RESOURCE = """  consoles:
    help: Console logs of jobs.
    actions:
      download:
        help: Write each job's console log to <job>/console.txt under the output root.
        writer: files
        options: {output_dir: output_dir, skip_existing: skip_existing}
        dimensions:
          job:
            parts:
              log: {request: job_console, file: "{job}/console.txt"}
          group:
            parts:
              logs: {each: group_jobs, request: job_console, file: "{group}/{job}/console.txt"}
"""
PRINTED = """  consoles:
    help: Console logs of jobs.
    actions:
      get:
        help: Print each job's console log.
        writer: stdout
        dimensions:
          job:
            element: part
            parts:
              log: {request: job_console}
"""


@pytest.fixture
def table(tmp_path, monkeypatch):
    def install(resource: str) -> None:
        spec = tmp_path / "spec"
        spec.mkdir()
        shutil.copy(ROOT / "spec" / "benchloop.schema.json", spec / "benchloop.schema.json")
        text = (ROOT / "spec" / "benchloop.yaml").read_text(encoding="utf-8")
        text = text.replace("\nendpoints:\n", "\nendpoints:\n" + ENDPOINT, 1)
        (spec / "benchloop.yaml").write_text(text.rstrip("\n") + "\n" + resource, encoding="utf-8")
        monkeypatch.setenv("BENCHLOOP_SPEC_DIR", str(spec))
        monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setattr(specload, "_MEMO", {})

    yield install
    vars(commands).pop("res__consoles", None)


def test_a_text_answer_is_written_to_its_file(table, bl, tmp_path):
    table(RESOURCE)
    with start_sandbox(groups=1, jobs_per_group=4, compare_jobs=0) as box:
        def run(*args: str):
            return bl("--host", box.url, "--api-key", box.api_key, "--retry", "0", *args)

        out = tmp_path / "out"
        one = run("consoles", "download", "-j", "G1-J0001", "-o", str(out))
        assert one.code == 0, one.err
        direct = httpx.get(f"{box.url}/openapi/jobs/G1-J0001/console", headers={"X-API-Key": box.api_key})
        assert direct.status_code == 200 and "G1-J0001" in direct.text
        assert tree(out) == {"G1-J0001/console.txt": direct.text}  # the body as it came, not JSON
        assert f"wrote {out / 'G1-J0001' / 'console.txt'}" in one.err

        group = run("consoles", "download", "-g", "G1", "-o", str(out))
        assert group.code == 0, group.err
        written = sorted(k for k in tree(out) if k.startswith("G1/"))
        assert written == [f"G1/G1-J000{i}/console.txt" for i in range(1, 5)]

        again = run("consoles", "download", "-j", "G1-J0001", "-o", str(out), "--skip-existing")
        assert again.code == 0 and "skip existing" in again.err


def test_a_printed_text_endpoint_is_refused_by_the_lints(table):
    table(PRINTED)
    with pytest.raises(SpecError, match=r"consoles\.actions\.get\.dimensions\.job\.parts\.log: endpoint "
                                        r"'job_console' answers text, not JSON: its part writes it to a "
                                        r"`file:` of a files action \(no pagination, items or shape\)"):
        load_model()
