"""Helpers of the MCP tests: a real ``bl mcp serve`` subprocess, driven by the SDK's client.

* ``StdioServer(args)``: the parameters of ``bl ARGS mcp serve ...`` over stdio,
  with the server's stderr kept in a file (``.err()``) so a test can read it.
* ``HttpServer(args)``: ``bl ARGS mcp serve --http 0 ...`` started, its URL and
  token read from the two lines it prints on stderr; ``.client(token=...)`` is
  the SDK's ``Client`` over streamable HTTP with ``Authorization: Bearer``.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

BL = [sys.executable, "-m", "benchloop"]


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out.update(extra)
    return out


class StdioServer:
    """``bl ARGS`` (ending in ``mcp serve ...``) as a stdio MCP server; stderr kept in a file."""

    def __init__(self, args: list[str], environ: dict[str, str] | None = None):
        self._err = tempfile.NamedTemporaryFile("w+", encoding="utf-8", suffix=".err", delete=False)  # noqa: SIM115
        self.params = StdioServerParameters(command=BL[0], args=[*BL[1:], *args], env=environ or env())

    def client(self, **kwargs: Any) -> Client:
        from mcp.client.stdio import stdio_client

        return Client(stdio_client(self.params, errlog=self._err), **kwargs)

    def err(self) -> str:
        return Path(self._err.name).read_text(encoding="utf-8", errors="replace")


class HttpServer:
    """``bl ARGS`` (ending in ``mcp serve ...``) with ``--http 0``: started, URL and token read."""

    def __init__(self, args: list[str], environ: dict[str, str] | None = None):
        self.proc = subprocess.Popen([*BL, *args, "--http", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, stdin=subprocess.DEVNULL, env=environ or env())
        self._lines: queue.Queue[str] = queue.Queue()
        self._rest: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        first, second = self._line(60), self._line(10)
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", first)
        if not found:
            self.stop()
            raise AssertionError(f"no URL on stderr: {first + second}")
        self.url = found.group(1)
        self.lines = [first, second]
        token = re.search(r"mcp token: (\S+) \(", second)
        self.token = token.group(1) if token and token.group(1) != "from" else None

    def _read(self) -> None:
        for line in self.proc.stderr:
            self._lines.put(line)
        self._lines.put("")

    def _line(self, seconds: float) -> str:
        try:
            line = self._lines.get(timeout=seconds)
        except queue.Empty:
            return ""
        if not line:
            self._lines.put("")  # the end, for the next reader too
        return line

    def client(self, token: str | None = None, **kwargs: Any) -> Client:
        token = token or self.token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
        return Client(streamable_http_client(self.url, http_client=http), **kwargs)

    def stop(self) -> tuple[str, str]:
        """Stop the server: ``(stdout, the rest of stderr)``."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        out = self.proc.stdout.read()
        rest = []
        while (line := self._line(5)) != "":
            rest.append(line)
        return out, "".join(rest)

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.stop()
