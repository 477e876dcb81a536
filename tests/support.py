"""Helpers shared by the test modules (a plain module: fixtures live in conftest.py).

Test modules import from here (``from support import ...``; pytest puts tests/
on ``sys.path``), never from conftest or from one another.  Nothing here ships
in the wheel.

* ``API_KEY``: the key of the session sandbox and of the stand-in origins.
* ``Result`` and ``run_inprocess``: ``bl ARGS`` in this process with captured
  streams, usable outside a fixture (module-scoped setups); the ``bl`` fixture
  returns the same ``Result``.
* ``final_files``, ``leftovers``, ``is_hidden``, ``all_paths``, ``tree``: what a
  run left under an output root.
* ``pretty``, ``compact``: the two JSON renderings ``bl`` prints.
* ``argv(resource, action)``: the words of a command of the endpoint table.
* ``Origin`` with ``js``, ``binary``, ``redirect``, ``NOT_FOUND``: a tiny stdlib
  HTTP server that plays the backend or another origin and records every
  request's headers (the ``origins`` fixture starts and stops them).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

from benchloop.sandbox.server import QuietHTTPServer

API_KEY = "test-key"


# ------------------------------------------------------------- running bl
_FAILED = re.compile(r"^\[error\]   - (.+?): ", re.M)


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def failed(self) -> list[str]:
        """Ids (labels) named in the failure summary, in order."""
        return _FAILED.findall(self.err)


def run_inprocess(*args: str, stdin: str = "") -> Result:
    """``bl ARGS`` in this process, stdin/stdout/stderr replaced by strings."""
    from benchloop.cli.app import main

    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = main(list(args))
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Result(code, out.getvalue(), err.getvalue())


# ------------------------------------------------------------ output trees
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


def comparable_files(root: str | os.PathLike[str]) -> dict[str, object]:
    """``final_files`` with each zip archive given by its entries (zip headers carry times)."""
    import zipfile

    root = Path(root)
    out: dict[str, object] = {}
    for rel, data in final_files(root).items():
        if rel.endswith(".zip"):
            with zipfile.ZipFile(root / rel) as archive:
                out[rel] = {n: archive.read(n) for n in sorted(archive.namelist())}
        else:
            out[rel] = data
    return out


def leftovers(root: str | os.PathLike[str]) -> list[str]:
    """Hidden entries (``.x.tmp``, ``.x.part``, staging dirs) under ``root``."""
    root = Path(root)
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if is_hidden(str(p.relative_to(root))))


def all_paths(root: str | os.PathLike[str]) -> list[str]:
    """Every entry under ``root`` (files and directories, hidden ones included), relative, sorted."""
    root = Path(root)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def tree(root: Path) -> dict[str, str]:
    """A file tree as {relative path: text}, for snapshots and comparisons."""
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# -------------------------------------------------------------- JSON output
def pretty(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


# ------------------------------------------------------------ the table
@cache
def _table_resources() -> dict:
    from benchloop.table.load import load_spec

    return load_spec()["resources"]


def argv(resource: str, action: str) -> list[str]:
    """`bl RES ACT`, or `bl RES` for a single-command resource (`command: true`)."""
    return [resource] if _table_resources()[resource].get("command") else [resource, action]


# ---------------------------------------------------- stand-in HTTP origins
Answer = tuple[int, dict[str, str], bytes]


class Seen(NamedTuple):
    method: str
    target: str  # raw request target, path and query as received
    headers: dict[str, str]  # lower-cased names

    @property
    def path(self) -> str:
        return urlsplit(self.target).path


class Origin:
    """A threaded HTTP/1.1 server on 127.0.0.1 answering ``answer(path, query)``.

    With ``require_key`` every ``/openapi/`` request without the right
    X-API-Key gets 401, like the real backend.
    """

    def __init__(self, answer: Callable[[str, dict[str, str]], Answer], require_key: bool = False):
        self.seen: list[Seen] = []
        self._answer = answer
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802 - stdlib name
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.seen.append(Seen(self.command, self.path, headers))
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                if require_key and parts.path.startswith("/openapi/") and headers.get("x-api-key") != API_KEY:
                    status, extra, body = 401, {"Content-Type": "application/json"}, b'{"error": "bad key"}'
                else:
                    status, extra, body = owner._answer(parts.path, query)
                self.send_response(status)
                for key, value in extra.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = QuietHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def js(value) -> Answer:
    return 200, {"Content-Type": "application/json"}, json.dumps(value, ensure_ascii=False).encode()


def binary(data: bytes, content_type: str = "application/octet-stream") -> Answer:
    return 200, {"Content-Type": content_type}, data


NOT_FOUND: Answer = (404, {"Content-Type": "application/json"}, b'{"error": "not found"}')


def redirect(location: str) -> Answer:
    return 302, {"Location": location, "Content-Type": "text/plain"}, b""
