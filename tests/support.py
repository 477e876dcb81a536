"""Helpers shared by the test modules (a plain module: fixtures live in conftest.py).

Test modules import from here (``from support import ...``; pytest puts tests/
on ``sys.path``), never from conftest or from one another.  Nothing here ships
in the wheel.

* ``ROOT``, ``TESTS``: the repository and its tests/ folder (test modules sit in
  sub-folders, so they never compute these from their own ``__file__``).
* ``API_KEY``: the key of the session sandbox and of the stand-in origins.
* ``Result`` and ``run_inprocess``: ``bl ARGS`` in this process with captured
  streams, usable outside a fixture (module-scoped setups); the ``bl`` fixture
  returns the same ``Result``.
* ``run_on_terminal``: ``bl ARGS`` as a process with stdout or stderr on a
  pseudo-terminal (what a person sees) and the other stream a pipe.
* ``final_files``, ``leftovers``, ``is_hidden``, ``all_paths``, ``tree``: what a
  run left under an output root.
* ``pretty``, ``compact``: the two JSON renderings ``bl`` prints.
* ``argv(resource, action)``: the words of a command of the endpoint table.
* ``Origin`` with ``js``, ``binary``, ``redirect``, ``NOT_FOUND``: a tiny stdlib
  HTTP server that plays the backend or another origin and records every
  request's headers (the ``origins`` fixture starts and stops them).
* ``media_task_routes(uri)``: the scripted server's routes of a task archive whose one
  media file has that URI.
* ``CONTRACT_ANSWERS``: the contract's example answers of every JSON endpoint
  (docs/contract.md section 9), and ``with_new_fields(answer)``: the same
  answer with fields the table does not know in every object.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from benchloop.sandbox.scripted import RawServer, Reply, start_scripted

API_KEY = "test-key"
# The tests' folder and the repository it is in, wherever a test module sits below it.
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


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


def run_on_terminal(args: list[str], terminal: str = "stdout", stdin: str = "", columns: int = 80,
                    raw: bool = False) -> tuple[int, bytes, bytes]:
    """``python -m benchloop ARGS`` with ``terminal`` ("stdout" or "stderr") on a pseudo-terminal
    ``columns`` wide and the other stream a pipe: (exit code, what the terminal got, the pipe's
    bytes).  ``raw``: the terminal in raw mode, so its bytes are exactly what bl wrote (no line
    feed turned into CR LF).  POSIX only (the ``pty`` module)."""
    import fcntl
    import pty
    import struct
    import subprocess
    import termios
    import tty

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    if raw:
        tty.setraw(slave)
    env = {**os.environ, "COLUMNS": str(columns)}
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, terminal: slave}
    proc = subprocess.Popen([sys.executable, "-m", "benchloop", *args], stdin=subprocess.PIPE, env=env, **streams)
    os.close(slave)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the other side closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read)
    reader.start()
    out, err = proc.communicate(stdin.encode())
    reader.join(timeout=30)
    os.close(master)
    return proc.returncode, b"".join(chunks), (err if terminal == "stdout" else out) or b""


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


def cli_words(action, kwargs: dict) -> list[str]:
    """The command line of an action called with Python keywords (the Python client's and the
    MCP tools' arguments): ``resource action --flag value ...``; ``query`` is ``--query``."""
    words = argv(action.resource, action.name)
    for name, value in kwargs.items():
        if name == "query":
            words += ["--query", value]
            continue
        opt = action.option(name)
        if opt.kind.is_flag:
            words += [opt.flag] if value else []
        elif isinstance(value, list):
            words += [opt.flag, ",".join(str(v) for v in value)]
        else:
            words += [opt.flag, str(value)]
    return words


# ---------------------------------------------------- stand-in HTTP origins
Answer = tuple[int, dict[str, str], bytes]


class Origin:
    """A stand-in origin on 127.0.0.1 (the scripted server) answering ``answer(path, query)``
    with ``(status, headers, body)``; ``seen`` lists the requests (``.path``, ``.target``,
    ``.headers`` with case-insensitive names).

    With ``require_key`` every ``/openapi/`` request without the right
    X-API-Key gets 401, like the real backend.
    """

    def __init__(self, answer: Callable[[str, dict[str, str]], Answer], require_key: bool = False):
        def route(seen) -> Reply:
            parts = urlsplit(seen.target)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            if require_key and parts.path.startswith("/openapi/") and seen.headers.get("x-api-key") != API_KEY:
                return Reply(401, b'{"error": "bad key"}', "application/json")
            status, extra, body = answer(parts.path, query)
            headers = dict(extra)
            kind = next((headers.pop(k) for k in list(headers) if k.lower() == "content-type"), None)
            return Reply(status, body, kind, headers)

        self._server = start_scripted({"*": route})
        self.url = self._server.url

    @property
    def seen(self) -> list[Any]:
        return self._server.seen

    def stop(self) -> None:
        self._server.stop()


def js(value) -> Answer:
    return 200, {"Content-Type": "application/json"}, json.dumps(value, ensure_ascii=False).encode()


def binary(data: bytes, content_type: str = "application/octet-stream") -> Answer:
    return 200, {"Content-Type": content_type}, data


NOT_FOUND: Answer = (404, {"Content-Type": "application/json"}, b'{"error": "not found"}')


def redirect(location: str) -> Answer:
    return 302, {"Location": location, "Content-Type": "text/plain"}, b""


# ------------------------------------------------------------ contract answers
# The contract's example answers, one or more per JSON endpoint (docs/contract.md 9).
CONTRACT_ANSWERS = {
    "download_task": [{"task_id": "T1", "group_id": "G1", "job_count": 2, "job_ids": ["J1", "J2"],
                       "created_at": "2026-07-14T10:00:00"},
                      {"task_id": "T9", "group_id": "G1", "job_count": 0, "job_ids": []}],
    "job_metrics": [
        {"job_id": "J1", "metrics": [{"type": "eval", "data": {"task_score": 0.85}}],
         "run_metrics": [{"duration_s": "12.5", "thinking_total_length": "900", "tokens_sent": "100",
                          "context_peak": "200"}],
         "tokenized_metrics": [{"schema_version": "v1.1", "tokenizer_class": "Qwen2Tokenizer",
                                "tokenizer_output_total": 42, "llm_calls": 3}]},
        {"job_id": "J2", "metrics": [], "run_metrics": {"duration_s": 2, "tokens_sent": 99},
         "tokenized_metrics": {"llm_calls": 1}},
        {"job_id": None, "metrics": [2]},
    ],
    "group_metrics_overall": [
        {"group_id": "G1", "run_metrics": {"job_count": 3, "avg_duration_s": 12.5, "avg_thinking_length": 456.0,
                                           "avg_tokens_sent": 100.0},
         "tokenized_metrics": {"tokenized_job_count": 3, "avg_tokenizer_output_total": 42.0,
                               "max_tokenizer_output_total": 50.0, "total_tokenizer_output_total": 126.0,
                               "internal_debug_field": "hidden"}},
        {"group_id": "G1", "run_metrics": [{"job_count": 3}], "tokenized_metrics": [{"avg_llm_calls": 4.0}]},
    ],
    "group_metrics_detail": [{"total": 3, "metrics": [
        {"job_id": "J1", "metrics": [{"type": "eval", "data": {"task_score": 1}}]},
        {"job_id": "J2", "metrics": [2]}], "tokenized_metrics": {"tokenized_job_count": 1, "avg_llm_calls": 4.0,
                                                                   "hidden_aggregate": 9}}],
    "job_list": [{"jobs": [{"job_id": "J1", "created_at": "2026-07-22T04:00:00"},
                           {"job_id": "J2", "created_at": "2026-07-22T03:00:00"}], "total": 6}],
    "group_tasks": [{"tasks": [{"task_id": "T1"}, {"task_id": "T2"}], "total": 3},
                    {"tasks": [{"id": "T1"}], "total": 1}],
    "group_eval_summary": [{"score": 0.8}],
    "job": [{"job_id": "J1", "group_id": "G1"}],
    "job_stats": [{"total": 5}],
    "job_trajectory": [
        {"job_id": "J1", "trajectory": [{"step": "J1"}]},
        {"steps": [{"t": 1}, {"t": 2}]},
        {"job_id": "J1", "trajectory": [{"messages": [{"role": "tool", "parts": [{"response": [
            {"type": "input_image", "trace_media": {"mime_type": "image/png",
                                                    "oss_uri": "oss://bucket/a/b/shot.png"}}]}]}]}]},
    ],
    "group_trace_export": [{"status": "waiting_for_data", "retry_after_seconds": 15},
                           {"status": "running", "download_job_name": "sls-1"},
                           {"status": "succeeded", "download_url": "https://oss.example/trace.gz"},
                           {"status": "Succeeded", "downloadUrl": "https://oss.example/trace.gz"}],
    "group_trace_export_status": [{"status": "running"},
                                  {"status": "succeeded", "download_url": "https://oss.example/trace.gz"}],
    "group_job_ids": [{"group_id": "G1", "total": 3, "job_ids": ["J1", "J2", "J3"]}],
    "job_meta": [{"job_id": "J1", "model": "qwen-max", "tags": ["t1"]}],
    "job_artifacts": [
        {"job_id": "J1", "artifacts": [{"name": "result.tgz", "url": "https://oss.example.com/J1/result.tgz"}]},
        {"job_id": "J1", "artifacts": [{"name": "result.tgz", "error_code": "artifact_sign_failed"},
                                       {"error_code": "no_artifact"}]},
        {"artifacts": []},
    ],
    "job_report": [{"job_id": "J1", "reports": [{"content": "# J1", "fail_reason": "model",
                                                 "sub_fail_reason": "reason-a"}]},
                   {"reports": []}],
    "group_report": [{"group_id": "G1", "reports": [{"content": "# Group Report"}], "stats": {"fail_reason": {
        "model": {"count": 1, "sub_fail_reason": {"timeout": 1}},
        "environment": {"count": 1, "sub_fail_reason": {"timeout": 1}}}}}],
    "job_report_trigger": [{"status": "triggered"}],
    "group_report_trigger": [{"status": "triggered"}],
    "job_rsi_trigger": [{"status": "creating", "accepted": True}],
    "group_rsi_trigger": [{"status": "creating", "accepted": True}],
    "job_rsi": [{"entity_type": "job", "job_id": "J1", "status": "not_created", "report": None, "request": None},
                {"status": "creating", "report": None},
                {"status": "created", "report": {"report_md": "# job rsi"}}],
    "group_rsi": [{"entity_type": "group", "group_id": "G1", "status": "created",
                   "report": {"summary_md": "# group"}, "request": None}],
    "behavior_steps": [{"hasStep": True, "steps": [10, 20, 30], "samplingMode": "step"},
                       {"hasStep": False, "steps": [], "samplingMode": "all_jobs", "candidateCount": 8},
                       {"has_step": True, "steps": [{"step": 10}, 20.0]}],
    "behavior_create": [{"uid": "uid-1"}, {"uid": "uid-1", "task_id": "tsearch-uid:1"}],
    "behavior_task": [{"uid": "uid-1", "status": "Running"},
                      {"uid": "uid-1", "status": "Finished", "task_id": "tsearch-uid:9"}],
    "behavior_analysis": [{"summary": {"totalSamples": 3, "averageOverallScore": 4.2},
                           "categoryScores": [{"category": "A", "scoreSum": 1.5}],
                           "behaviorPatterns": {"positive": [{"id": "P1", "triggerRate": 0.1}],
                                                "negative": [{"id": "N1", "triggerRate": 0.2}]},
                           "samplingMode": "step"}],
    "behavior_list": [[{"uid": "uid-1", "groupId": "G1", "status": "Finished"},
                       {"uid": "uid-2", "groupId": "G1", "status": "Running"}],
                      {"tasks": [{"uid": "uid-1"}]}, {"uid": "uid-3"}],
    "group": [{"group_id": "G1"}, {"cluster": "EVAL-HK-PROD-1"}],
    "ap_group": [{"group_id": "G123", "template": "my-template", "name": "my-suite", "dataset": "my-dataset",
                  "agenthub_revision": "rev1", "max_concurrency": 4, "queue_id": "q1",
                  "submission_context": {"params": {"model": "qwen3.7-max", "model_api_key": "k"},
                                         "overrides": {"resources": {"cpu": "2"}}, "batch_size": 100}},
                 {"group_id": "G124", "profile_id": "prof1", "profile_version": 2,
                  "submission_context": {"trials": 3}}],
    "ap_template": [{"params_schema": {"model": {"default": "qwen3.7-max", "required": False},
                                       "model_api_key": {"default": "", "required": False}}}],
    "ap_profile": [{"profile_id": "prof1", "name": "prof", "version": 2, "spec": {
        "template": "my-template", "agenthub_revision": "rev0", "concurrency": 2, "dataset": "other-dataset",
        "trials": 1, "params": {"temperature": 0.5}, "overrides": {"resources": {"cpu": "2"}}}}],
    "ap_group_jobs": [{"jobs": [{"job_id": "job1"}]}],
    "ap_job": [{"job_spec_data": {"spec": {"env": {"model": "qwen3.7-max", "INSTANCE_ID": "i1", "DATASET": "d1",
                                                   "SPLIT": "test"}}}}],
    "ap_dataset_instances": [{"instances": []}],
}


def with_new_fields(value):
    """The same answer with fields the table does not know in every object (maps included)."""
    if isinstance(value, dict):
        return {**{k: with_new_fields(v) for k, v in value.items()}, "added_later": {"any": [1, None, "x"]},
                "added_text": "x", "added_null": None}
    if isinstance(value, list):
        return [with_new_fields(v) for v in value]
    return value


class RecordingLog:
    """A log for an ``Http`` built by hand in a test: every line it gets, whatever its level."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def debug(self, message: str) -> None:
        self.lines.append(message)

    info = warn = progress = debug


class KeptAlive(RawServer):
    """A loopback server that reads the requests of each kept-alive connection in turn (their
    heads; no request here has a body) and hands each to ``answer(conn, head, n)``, with ``n``
    the request's number on its connection, which writes any bytes it likes.  Returning True,
    or raising ``ConnectionAbortedError``, closes the connection.  ``heads`` and
    ``connections`` say what came and on how many connections.  The scripted server's
    raw-bytes mode, kept alive."""

    def __init__(self, answer: Callable[[socket.socket, bytes, int], bool | None]):
        self.answer = answer
        super().__init__(answer, keep_alive=True)


# ------------------------------------------------------------- scripted routes
def media_task_routes(uri: str) -> dict:
    """Routes of the scripted server for a task archive (task TX, jobs J1 and J2) whose one
    media file has ``uri``: what a trace media name does to the archive and to login checks."""
    from benchloop.sandbox.scripted import Reply, json_reply

    trajectory = {"steps": [{"content": [{"type": "input_image",
                                          "trace_media": {"oss_uri": uri, "mime_type": "image/png"}}]}]}
    return {
        "/openapi/trajectory-download-tasks/TX": json_reply({"task_id": "TX", "group_id": "G",
                                                             "job_ids": ["J1", "J2"]}),
        "/openapi/jobs/J1/trajectory": json_reply(trajectory),
        "/openapi/jobs/J2/trajectory": json_reply({"steps": []}),
        "/openapi/jobs/J1/meta": json_reply({"job_id": "J1"}),
        "/openapi/jobs/J2/meta": json_reply({"job_id": "J2"}),
        "/openapi/getTrajV2/mediaFile": Reply(200, b"\x89PNG media", "image/png"),
    }
