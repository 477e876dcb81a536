"""Answers a hostile server gives, refused or kept apart (found in round four of the hostile
world: docs/reliability.md "Round four").

Each test runs a real ``bl`` process against a loopback server that misbehaves on purpose:

- an answer saved under another id: an extra answer glued after the real one on a kept-alive
  connection, in a fan-out download of 20 trajectories;
- empty answers saved as downloads: 204, 205, 304 or a redirect without ``Location`` answered
  to a download, which ``--skip-existing`` then kept forever;
- a legal non-ASCII ``ETag`` (obs-text) that failed the resume with a misleading message;
- an uncompressed JSON answer with no size cap.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable

import pytest
from support import ROOT, KeptAlive

KEY = "round-four-key-0123"
JOBS = [f"J{n:02d}" for n in range(1, 21)]


def run(url: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCHLOOP_NO_UPDATE_CHECK": "1"}
    return subprocess.run([sys.executable, "-m", "benchloop", "--host", url, "--api-key", KEY, *args],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, input=stdin)


def answer(status: int, body: bytes, *headers: str) -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    reason = {200: "OK", 204: "No Content", 205: "Reset Content", 206: "Partial Content", 302: "Found",
              304: "Not Modified"}.get(status, "X")
    return f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\n{head}\r\n".encode("latin-1") + body


class KeepAlive(KeptAlive):
    """Answers each request with ``respond(path, headers, n)`` (``n``: the request's number on its
    connection); an answer saying ``Connection: close`` closes it after what was sent."""

    def __init__(self, respond: Callable[[str, dict[str, bytes], int], bytes]):
        self.respond = respond
        self.paths: list[str] = []
        super().__init__(self._answer)

    def _answer(self, conn: socket.socket, head: bytes, n: int) -> bool:
        lines = head.split(b"\r\n")
        path = lines[0].split(b" ")[1].decode()
        headers = {k.strip().lower().decode(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
        with self.lock:
            self.paths.append(path)
        reply = self.respond(path, headers, n)
        conn.sendall(reply)
        return b"\r\nconnection: close\r\n" in reply.partition(b"\r\n\r\n")[0].lower() + b"\r\n"


@pytest.fixture
def keep_alive():
    started: list[KeepAlive] = []

    def start(respond) -> KeepAlive:
        started.append(KeepAlive(respond))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def trajectory(job: str) -> bytes:
    return json.dumps({"job_id": job, "trajectory": [{"step": 0, "content": f"the steps of {job}"}]}).encode()


def job_of(path: str) -> str:
    match = re.search(r"/jobs/([^/]+)/", path)
    assert match, path
    return match.group(1)


# ------------------------------------------------------------ an answer saved under another id
def test_a_glued_extra_answer_never_lands_in_another_jobs_file(keep_alive, tmp_path):
    # The first answer of every connection carries, glued behind it, the trajectory of the next
    # job in the list: whichever request comes next on that connection reads it as its own.
    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        job = job_of(path)
        real = answer(200, trajectory(job), "Content-Type: application/json")
        if n == 0:
            other = JOBS[(JOBS.index(job) + 1) % len(JOBS)]
            return real + answer(200, trajectory(other), "Content-Type: application/json")
        return real

    server = keep_alive(respond)
    result = run(server.url, "--retry", "0", "--concurrency", "4", "trajectory", "download", "-j", ",".join(JOBS),
                 "-o", str(tmp_path))
    for job in JOBS:
        saved = tmp_path / f"{job}_trajectory.json"
        if saved.exists():
            assert json.loads(saved.read_text())["job_id"] == job, job
    written = sorted(p.name for p in tmp_path.iterdir())
    failed = re.findall(r"- (J\d\d): .*names", result.stderr)
    assert len(written) + len(failed) == len(JOBS), result.stderr
    assert result.returncode == (1 if failed else 0), result.stderr
    assert "names" in result.stderr and "new connection" in result.stderr  # the glue was seen, and asked again


def test_a_server_that_always_answers_another_job_fails_those_ids_and_writes_nothing(keep_alive, tmp_path):
    server = keep_alive(lambda path, headers, n: answer(200, trajectory("J99"), "Content-Type: application/json"))
    result = run(server.url, "--retry", "0", "trajectory", "download", "-j", "J01,J02", "-o", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert list(tmp_path.iterdir()) == []
    assert result.stderr.count("names 'J99'") >= 2 and "twice" in result.stderr
    assert "unexpected error" not in result.stderr


def test_metrics_of_another_job_are_not_printed_as_this_jobs(keep_alive):
    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        asked = path.split("/metrics/")[1].split("?")[0]
        body = {"job_id": "J02" if asked == "J01" else asked, "metrics": []}
        return answer(200, json.dumps(body).encode(), "Content-Type: application/json")

    server = keep_alive(respond)
    result = run(server.url, "--retry", "0", "metrics", "get", "-j", "J01,J03")
    assert result.returncode == 1, result.stderr
    assert [m["job_id"] for m in json.loads(result.stdout)] == ["J03"]
    assert "J01" in result.stderr and "names 'J02'" in result.stderr


# ------------------------------------------------------------ empty answers are not downloads
@pytest.mark.parametrize("reply", [
    answer(204, b""),
    answer(205, b""),
    answer(304, b"", 'ETag: "x"'),
    answer(302, b"moved"),  # a redirect without Location
    answer(200, b"", "X: y").replace(b"200 OK", b"299 Odd"),
], ids=["204", "205", "304", "302-no-location", "299"])
def test_only_a_200_is_saved_as_an_artifact_and_skip_existing_asks_again(keep_alive, tmp_path, reply):
    listing = answer(200, json.dumps({"job_id": "J1", "artifacts": [{"name": "r.bin", "url": "x"}]}).encode(),
                     "Content-Type: application/json")
    replies = {"first": reply}

    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        if path.endswith("/artifacts"):
            return listing
        return replies["first"]

    server = keep_alive(respond)
    first = run(server.url, "--retry", "0", "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    status = reply.split(b" ")[1].decode()
    assert first.returncode == 1, first.stderr
    assert f"API error {status}" in first.stderr and "downloaded" not in first.stderr
    assert not (tmp_path / "J1" / "r.bin").exists()
    replies["first"] = answer(200, b"the artifact", "Content-Type: application/octet-stream")
    second = run(server.url, "--retry", "0", "artifacts", "download", "-j", "J1", "-o", str(tmp_path),
                 "--skip-existing")
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "J1" / "r.bin").read_bytes() == b"the artifact"


# ------------------------------------------------------------ a non-ASCII ETag resumes
def test_a_download_cut_short_resumes_with_a_non_ascii_etag_sent_back_byte_for_byte(keep_alive, tmp_path):
    whole = bytes(range(256)) * 64
    etag = '"caf\xe9-\u00fc"'.encode("latin-1")  # obs-text, legal in an ETag (RFC 9110 8.8.3)
    seen: list[dict[str, bytes]] = []

    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        if path.endswith("/artifacts"):
            return answer(200, json.dumps({"job_id": "J1", "artifacts": [{"name": "r.bin", "url": "x"}]}).encode())
        seen.append(headers)
        if "range" not in headers:
            # the whole length announced, half of it sent, then the connection closes
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(whole)}\r\nConnection: close\r\n".encode()
            return head + b"ETag: " + etag + b"\r\n\r\n" + whole[:5000]
        start = int(headers["range"].decode().split("=")[1].rstrip("-"))
        if headers.get("if-range") != etag:
            return answer(200, whole, "ETag: " + etag.decode("latin-1"))
        return (f"HTTP/1.1 206 Partial Content\r\nContent-Length: {len(whole) - start}\r\n"
                f"Content-Range: bytes {start}-{len(whole) - 1}/{len(whole)}\r\n").encode() \
            + b"ETag: " + etag + b"\r\n\r\n" + whole[start:]

    server = keep_alive(respond)
    result = run(server.url, "--retry", "1", "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "J1" / "r.bin").read_bytes() == whole
    assert [h.get("range") for h in seen] == [None, b"bytes=5000-"]
    assert seen[1].get("if-range") == etag  # the validator went back as it came, not re-encoded


# ------------------------------------------------------------ a long plain JSON answer is capped
def test_an_uncompressed_json_answer_without_a_length_is_capped(keep_alive, monkeypatch):
    # Close-delimited (no Content-Length): only reading stops it.  The cap is lowered for the
    # test through the same module attribute the compressed case uses.
    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n[" + b" " * (3 << 20)

    server = keep_alive(respond)
    code = ("import sys, benchloop.transport.decoding as d; d.MAX_JSON_BYTES = 1 << 20; "
            "from benchloop.entry import main; sys.exit(main())")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BENCHLOOP_NO_UPDATE_CHECK": "1"}
    result = subprocess.run([sys.executable, "-c", code, "--host", server.url, "--api-key", KEY, "--retry", "0",
                             "report", "get", "-j", "J1"], capture_output=True, text=True, env=env, cwd=ROOT,
                            timeout=60)
    assert result.returncode == 1, result.stderr
    assert "the JSON answer is larger than 1048576 bytes (decoded); refused" in result.stderr


def test_a_job_list_page_of_another_group_is_not_saved_as_this_groups(keep_alive, tmp_path):
    # Identity over rows: every job of a job list page must be of the group asked for.
    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        group = "G1" if "group_id=G1" in path else "G2"
        jobs = [{"job_id": f"{group}-J1", "group_id": "G2", "created_at": "2026-07-01T00:00:00"}]
        return answer(200, json.dumps({"jobs": jobs, "total": 1}).encode(), "Content-Type: application/json")

    server = keep_alive(respond)
    result = run(server.url, "--retry", "0", "jobs", "download", "-g", "G1,G2", "-o", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert not (tmp_path / "G1").exists()
    assert json.loads((tmp_path / "G2" / "job_list.json").read_text())["jobs"][0]["group_id"] == "G2"
    assert "jobs.*.group_id 'G1' names 'G2'" in result.stderr


# ------------------------------------------------------------ glue where no id can be checked
# Found by a second, independent attack: an answer that names no id (a task page), a file (an
# artifact), or an answer without its id field, read on a kept-alive connection, took whatever a
# server had glued behind the answer before it.
def glue_first(real: Callable[[str], bytes]) -> Callable[[str, dict[str, bytes], int], bytes]:
    """Each connection's first answer carries a copy of itself glued behind it."""
    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        return real(path) * 2 if n == 0 else real(path)
    return respond


def tasks_of(path: str) -> bytes:
    group = re.search(r"/groups/([^/]+)/", path).group(1)
    tasks = [{"task_id": f"{group}-T{i}", "name": f"inst-{i}", "status": "passed", "score": 1.0} for i in range(2)]
    return answer(200, json.dumps({"tasks": tasks, "total": 2}).encode(), "Content-Type: application/json")


def test_a_task_page_glued_behind_another_never_becomes_the_next_groups(keep_alive, tmp_path):
    server = keep_alive(glue_first(tasks_of))
    result = run(server.url, "--retry", "0", "--concurrency", "1", "tasks", "download", "-g", "G1,G2",
                 "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for group in ("G1", "G2"):
        saved = json.loads((tmp_path / group / "task_list.json").read_text())
        ids = [t["task_id"] for t in (saved["tasks"] if isinstance(saved, dict) else saved)]
        assert ids and all(i.startswith(group + "-") for i in ids), (group, ids)


def test_an_artifact_glued_behind_another_never_becomes_the_next_jobs(keep_alive, tmp_path):
    def real(path: str) -> bytes:
        job = job_of(path)
        if path.endswith("/artifacts"):
            body = {"job_id": job, "artifacts": [{"name": "r.bin", "url": "x"}]}
            return answer(200, json.dumps(body).encode(), "Content-Type: application/json")
        return answer(200, f"the artifact of {job}".encode(), "Content-Type: application/octet-stream")

    server = keep_alive(glue_first(real))
    result = run(server.url, "--retry", "0", "--concurrency", "1", "artifacts", "download", "-j", "J1,J2",
                 "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for job in ("J1", "J2"):
        assert (tmp_path / job / "r.bin").read_bytes() == f"the artifact of {job}".encode()


def test_an_answer_without_its_id_on_a_used_connection_is_asked_again_on_a_new_one(keep_alive):
    # G1's overall metrics leave group_id out (allowed) and carry a copy glued behind: on the
    # kept connection, G2's request reads that copy; it names no group, so it is asked again.
    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        group = re.search(r"/groups/([^/]+)/", path).group(1)
        body = json.dumps({"run_metrics": {"avg_duration_s": 10.0 if group == "G1" else 20.0}}).encode()
        one = answer(200, body, "Content-Type: application/json")
        return one * 2 if n == 0 else one

    server = keep_alive(respond)
    result = run(server.url, "--retry", "0", "--concurrency", "1", "metrics", "get", "-g", "G1,G2", "--scope", "overall")
    assert result.returncode == 0, result.stderr
    printed = {e["group_id"]: e for e in json.loads(result.stdout)}
    assert json.dumps(printed["G2"]).count("20.0") == 1 and "10.0" not in json.dumps(printed["G2"]), printed


def test_a_group_rsi_of_another_group_is_refused(keep_alive, tmp_path):
    body = {"entity_type": "group", "group_id": "G1", "status": "created", "report": {"summary_md": "# G1"}}
    server = keep_alive(lambda path, headers, n: answer(200, json.dumps(body).encode(),
                                                        "Content-Type: application/json"))
    result = run(server.url, "--retry", "0", "rsi", "download", "-g", "G2", "-o", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "names 'G1'" in result.stderr
    assert not any(p.is_file() for p in tmp_path.rglob("*")), list(tmp_path.rglob("*"))


def test_an_export_of_another_group_is_not_saved_as_this_groups(keep_alive, tmp_path):
    # The export's download_url points at G1's rows while G2 is asked for: no row is of a G2 job.
    rows = b"".join(json.dumps({"job_id": f"G1-J{n}", "step": 0}).encode() + b"\n" for n in range(3))

    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        if path.endswith("/job-ids"):
            body = {"group_id": "G2", "total": 2, "job_ids": ["G2-J1", "G2-J2"]}
        elif "/trace-trajectory/download" in path:
            body = {"status": "succeeded", "download_url": "/_export/G1.jsonl"}
        else:
            return answer(200, rows, "Content-Type: application/x-ndjson")
        return answer(200, json.dumps(body).encode(), "Content-Type: application/json")

    server = keep_alive(respond)
    result = run(server.url, "--retry", "0", "trajectory", "download", "-g", "G2", "-o", str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "name none of the group's 2 job(s)" in result.stderr
    assert not any(p.is_file() for p in tmp_path.rglob("*")), list(tmp_path.rglob("*"))


def test_an_empty_page_glued_behind_another_is_not_taken_as_the_next_groups(keep_alive, tmp_path):
    # An empty page names no group: read on a used connection it proves nothing, and is asked again.
    def respond(path: str, headers: dict[str, bytes], n: int) -> bytes:
        group = "G1" if "group_id=G1" in path else "G2"
        jobs = [{"job_id": f"{group}-J1", "group_id": group, "created_at": "2026-07-01T00:00:00"}]
        real = answer(200, json.dumps({"jobs": jobs, "total": 1}).encode(), "Content-Type: application/json")
        empty = answer(200, json.dumps({"jobs": [], "total": 0}).encode(), "Content-Type: application/json")
        return real + empty if n == 0 else real

    server = keep_alive(respond)
    result = run(server.url, "--retry", "0", "--concurrency", "1", "jobs", "download", "-g", "G1,G2",
                 "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for group in ("G1", "G2"):
        listed = json.loads((tmp_path / group / "job_list.json").read_text())["jobs"]
        assert [j["job_id"] for j in listed] == [f"{group}-J1"], (group, listed)
