"""A missing artifact's placeholder: exactly the bytes the README names, and marked as one.

When the artifact proxy answers 404 (or an HTML page) for an artifact the listing has, ``bl``
writes the official client's placeholder, an empty ``.tar.gz``, so that scripts unpacking every
file keep working.  A script must be able to tell it from a real result: the Python client's
``DownloadResult.placeholders`` (and the MCP download tools' ``placeholders``) list it, and
its bytes are the fixed ones README.md and docs/contract.md 3.5 describe.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import tarfile
from pathlib import Path

from support import ROOT

import benchloop
from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

BODY = b"a real artifact"


def _routes() -> dict:
    listing = {"job_id": "J1", "artifacts": [{"name": "gone.tgz", "url": "x"},
                                            {"name": "real.tgz", "url": "x", "size": len(BODY)}]}

    def download(seen):
        if "name=real.tgz" in seen.target:
            return Reply(200, BODY, "application/gzip")
        return json_reply({"error": "no artifact for job: J1"}, 404)

    return {"/openapi/jobs/J1/artifacts": json_reply(listing), "/openapi/jobs/J1/artifacts/download": download}


def test_the_python_client_marks_the_placeholder(tmp_path):
    with start_scripted(_routes()) as srv, benchloop.Client(host=srv.url, api_key="k", retry=0) as client:
        result = client.artifacts.download(job="J1", output_dir=str(tmp_path))
    gone, real = str(tmp_path / "J1" / "gone.tgz"), str(tmp_path / "J1" / "real.tgz")
    assert sorted(result.paths) == sorted([gone, real])
    assert result.placeholders == [gone]
    assert Path(real).read_bytes() == BODY


def test_the_cli_warns_and_writes_exactly_what_the_readme_says(bl, tmp_path):
    with start_scripted(_routes()) as srv:
        result = bl("--host", srv.url, "--api-key", "k", "--retry", "0", "artifacts", "download", "-j", "J1",
                    "-o", str(tmp_path))
    assert result.code == 0, result.err
    path = tmp_path / "J1" / "gone.tgz"
    assert f"[warn] no artifact for job=J1, wrote empty {path} (artifact not found (HTTP 404))" in result.err
    data = path.read_bytes()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    size = int(re.search(r"placeholder, as the official client does.*?exactly (\d+) bytes", readme, re.S).group(1))
    head, tail = re.search(r"sha256 `([0-9a-f]+)\.\.\.([0-9a-f]+)`", readme).groups()
    digest = hashlib.sha256(data).hexdigest()
    assert len(data) == size and digest.startswith(head) and digest.endswith(tail)
    assert digest in (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    assert data[3] == 0 and data[4:8] == b"\0\0\0\0"  # no file name, modification time 0
    assert gzip.decompress(data) == bytes(10240)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        assert archive.getmembers() == []


def test_the_mcp_download_tool_marks_the_placeholder(tmp_path):
    import anyio
    from mcp import Client

    from benchloop.mcp_server.serve import build_runner
    from benchloop.mcp_server.server import build_server

    with start_scripted(_routes()) as srv:
        runner = build_runner({"http": None, "tools": None, "toolsets": "artifacts", "allow_writes": False,
                               "allow_downloads": str(tmp_path), "max_chars": 60_000},
                              {"host": srv.url, "api_key": "k", "retry": 0})

        async def main():
            async with Client(build_server(runner)) as client:
                return await client.call_tool("artifacts_download", {"job": ["J1"]})

        try:
            result = anyio.run(main)
        finally:
            runner.close()
    assert not result.is_error, result.content
    written = result.structured_content["result"]
    assert written["placeholders"] == [str(tmp_path / "J1" / "gone.tgz")]
    assert sorted(written["paths"]) == sorted(str(tmp_path / "J1" / n) for n in ("gone.tgz", "real.tgz"))
