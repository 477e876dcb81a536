"""Reliability and security, round two: what a hostile world found.

Each test plays one hostile server (the scripted server, ``support.Origin``, or a raw socket
on loopback) or a hostile local file system, and fails on the code before its fix.  Nothing
in httpx is mocked; nothing leaves loopback.  docs/reliability.md ("Round two") lists them.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest
from support import API_KEY, ROOT, final_files, leftovers, run_inprocess

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

OBJECT = bytes(range(256)) * 800  # 200 kB
REPORT = "/openapi/jobs/{}/report"


def report(job: str, **extra) -> Reply:
    return json_reply({"job_id": job, "summary": "ok", **extra})


def bl(url: str, *args: str, stdin: str = "", retry: str = "0"):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", retry, *args, stdin=stdin)


# ------------------------------------------------------------ raw socket servers
class RawServer:
    """A loopback TCP server whose ``handle(conn)`` does anything a real server would not."""

    def __init__(self, handle):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.handle = handle
        self.stopped = threading.Event()
        self.requests = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            self.requests += 1
            self.handle(conn, self)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()


def drip(conn: socket.socket, server: RawServer) -> None:
    """Headers at once, then the body one byte every 0.2 s (1,000 bytes: 200 s)."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    for _ in range(1000):
        if server.stopped.is_set():
            return
        conn.sendall(b" ")
        time.sleep(0.2)


def stall(conn: socket.socket, server: RawServer) -> None:
    """Read the request, never answer."""
    server.stopped.wait(120)


@pytest.fixture
def raw():
    started: list[RawServer] = []

    def start(handle) -> RawServer:
        server = RawServer(handle)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# ====================================================== one bad id never takes the others down
def nested(depth: int) -> bytes:
    return b'{"job_id": "J2", "x": ' + b"[" * depth + b"]" * depth + b"}"


def test_very_deeply_nested_json_fails_only_its_id():
    routes = {REPORT.format("J1"): report("J1"), REPORT.format("J2"): Reply(200, nested(100_000)),
              REPORT.format("J3"): report("J3")}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1,J2,J3")
    assert result.code == 1, result.err
    assert "unexpected error" not in result.err
    assert result.failed == ["J2"] and "nested too deeply" in result.err
    assert [e["job_id"] for e in json.loads(result.out)] == ["J1", "J3"]


def test_an_id_on_stdin_that_is_not_utf8_fails_only_itself():
    routes = {REPORT.format("J1"): report("J1"), REPORT.format("J3"): report("J3")}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "get", "-j", "-", stdin="J1 J\udcff2 J3")
    assert result.code == 1, result.err
    assert "unexpected error" not in result.err and "not valid UTF-8" in result.err
    assert [e["job_id"] for e in json.loads(result.out)] == ["J1", "J3"]


def test_a_value_error_of_one_job_fails_only_that_job(tmp_path):
    # J1's artifact proxy redirects to a URL whose port is not a number (httpx: an invalid URL).
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {
        "/openapi/jobs/J1/artifacts": json_reply(listing),
        "/openapi/jobs/J2/artifacts": json_reply(listing),
        "/openapi/jobs/J1/artifacts/download": Reply(302, b"", headers={"Location": "http://127.0.0.1:port/x"}),
        "/openapi/jobs/J2/artifacts/download": Reply(200, OBJECT, "application/octet-stream"),
    }
    with start_scripted(routes) as srv:
        result = bl(srv.url, "--concurrency", "1", "artifacts", "download", "-j", "J1,J2", "-o", str(tmp_path))
    assert result.code == 1, result.err
    assert "unexpected error" not in result.err and "Invalid port: 'port'" in result.err
    assert result.failed == ["J1:result.tgz"]
    assert final_files(tmp_path) == {"J2/result.tgz": OBJECT}


def media_task_routes(uri: str) -> dict:
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


def test_a_media_name_too_long_for_the_file_system_fails_only_that_archive_entry(tmp_path):
    with start_scripted(media_task_routes("oss://bucket/" + "m" * 300 + ".png")) as srv:
        result = bl(srv.url, "trajectory", "download", "--task-id", "TX", "-o", str(tmp_path))
    assert "unexpected error" not in result.err, result.err
    assert result.code == 1, result.err
    with zipfile.ZipFile(tmp_path / "TX_trajectories.zip") as archive:
        manifest = json.loads(archive.read("manifest.json"))
        names = archive.namelist()
    assert manifest["success_job_ids"] == ["J1", "J2"]
    assert [f["job_id"] for f in manifest["source_failures"]] == ["J1"]
    assert "file name too long" in manifest["source_failures"][0]["error"]
    assert "trajectories/J1_trajectory.json" in names and "trajectories/J2_trajectory.json" in names
    assert leftovers(tmp_path) == []


def test_an_output_path_that_is_a_file_names_the_path_and_is_not_unexpected(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    routes = {REPORT.format(j): report(j, reports=[{"content": f"# {j}"}]) for j in ("J1", "J2")}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "download", "-j", "J1,J2", "-o", str(blocker / "out"))
    assert result.code == 1, result.err
    assert "unexpected" not in result.err
    assert f"cannot write {blocker / 'out'}" in result.err and "not a directory" in result.err
    assert sorted(result.failed) == ["J1", "J2"]


def test_a_full_disk_stops_the_command_with_one_clear_error(sandbox, tmp_path, monkeypatch):
    # Every rename under the output root fails with ENOSPC, as on a full disk.
    real_replace, calls = os.replace, []

    def full(src, dst, *args, **kwargs):
        if str(dst).startswith(str(tmp_path)):
            calls.append(dst)
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", full)
    result = run_inprocess("--host", sandbox.url, "--api-key", sandbox.api_key, "--concurrency", "2",
                           "report", "download", "-g", "G1", "-o", str(tmp_path))
    assert result.code == 1, result.err
    assert "unexpected" not in result.err
    errors = [line for line in result.err.splitlines() if "no space left on device" in line]
    assert len(errors) == 1 and "stopped" in errors[0] and str(tmp_path) in errors[0], result.err
    assert len(calls) < 10  # failed fast: not 41 writes
    assert leftovers(tmp_path) == []


# ====================================================== downloads are the bytes of one object
def test_a_gzip_encoded_download_is_saved_decoded_and_identity_is_asked(tmp_path):
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": Reply(200, gzip.compress(OBJECT), "application/octet-stream",
                                                           headers={"Content-Encoding": "gzip"})}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
        sent = [s.headers.get("accept-encoding") for s in srv.seen if s.path.endswith("/download")]
    assert result.code == 0, result.err
    assert final_files(tmp_path) == {"J1/result.tgz": OBJECT}
    assert sent == ["identity"]


V1, V2 = b"1" * 200_000, b"2" * 200_000


def resume_routes(second: Reply) -> dict:
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    first = Reply(200, V1, "application/octet-stream", headers={"ETag": '"v1"'}, cut="truncate", send=100_000)
    return {"/openapi/jobs/J1/artifacts": json_reply(listing), "/openapi/jobs/J1/artifacts/download": [first, second]}


def test_a_resume_sends_if_range_and_takes_a_changed_object_whole(tmp_path):
    # The object changed between the cut and the resume: a server honouring If-Range answers 200.
    second = Reply(200, V2, "application/octet-stream", headers={"ETag": '"v2"'})
    with start_scripted(resume_routes(second)) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path), retry="2")
        resumed = [s.headers for s in srv.seen if s.path.endswith("/download")][1]
    assert result.code == 0, result.err
    assert resumed.get("if-range") == '"v1"' and resumed.get("range") == "bytes=100000-"
    assert final_files(tmp_path) == {"J1/result.tgz": V2}


def test_a_206_of_an_object_of_another_length_is_never_glued(tmp_path):
    # A server that ignores If-Range sends the rest of a new, longer version: the total differs.
    rest = (V2 + b"2" * 50_000)[100_000:]
    second = Reply(206, rest, "application/octet-stream",
                   headers={"Content-Range": f"bytes 100000-249999/{250_000}", "ETag": '"v2"'})
    third = Reply(200, V2 + b"2" * 50_000, "application/octet-stream", headers={"ETag": '"v2"'})
    routes = resume_routes(second)
    routes["/openapi/jobs/J1/artifacts/download"].append(third)
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path), retry="3")
    assert result.code == 0, result.err
    saved = final_files(tmp_path)["J1/result.tgz"]
    assert saved == V2 + b"2" * 50_000  # never 100,000 ones followed by twos


OLD_DATE, NEW_DATE = "Mon, 30 Nov 2026 10:00:00 GMT", "Tue, 01 Dec 2026 10:00:00 GMT"


@pytest.mark.parametrize("sent, answered", [
    ({"ETag": '"v1"'}, {"ETag": '"v2"'}),
    ({"Last-Modified": OLD_DATE}, {"Last-Modified": NEW_DATE}),
    ({"ETag": '"v1"'}, {}),  # a 206 must carry the validator it answers to
], ids=["etag", "last-modified", "none"])
def test_a_206_under_another_validator_is_never_glued(tmp_path, sent, answered):
    # Issue 22: a server that ignores If-Range sends the rest of a new version of the same
    # length. Appending it would save the first 100,000 bytes of v1 and the rest of v2.
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    first = Reply(200, V1, "application/octet-stream", headers=sent, cut="truncate", send=100_000)
    rest = Reply(206, V2[100_000:], "application/octet-stream",
                 headers={"Content-Range": "bytes 100000-199999/200000", **answered})
    whole = Reply(200, V2, "application/octet-stream", headers=answered)
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": [first, rest, whole]}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path), retry="3")
        asked = [s.headers for s in srv.seen if s.path.endswith("/download")]
    assert result.code == 0, result.err
    assert asked[1].get("if-range") == next(iter(sent.values()))
    assert [h.get("range") for h in asked] == [None, "bytes=100000-", None]  # started over
    assert final_files(tmp_path) == {"J1/result.tgz": V2}


def test_a_206_under_the_same_validator_is_appended(tmp_path):
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    first = Reply(200, V1, "application/octet-stream", headers={"ETag": '"v1"'}, cut="truncate", send=100_000)
    rest = Reply(206, V1[100_000:], "application/octet-stream",
                 headers={"Content-Range": "bytes 100000-199999/200000", "ETag": '"v1"'})
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": [first, rest]}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path), retry="3")
        asked = [s.headers.get("range") for s in srv.seen if s.path.endswith("/download")]
    assert result.code == 0, result.err
    assert asked == [None, "bytes=100000-"]
    assert final_files(tmp_path) == {"J1/result.tgz": V1}


def test_an_artifact_named_like_another_ones_temp_file_is_kept(tmp_path):
    listing = {"artifacts": [{"name": ".result.tgz.part", "url": "x"}, {"name": "result.tgz", "url": "x"}]}

    def answer(seen):
        name = seen.target.split("name=")[-1]
        return Reply(200, b"A" * 1000 if name == "result.tgz" else b"P" * 500, "application/octet-stream")

    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing), "/openapi/jobs/J1/artifacts/download": answer}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "--concurrency", "1", "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert (tmp_path / "J1" / ".result.tgz.part").read_bytes() == b"P" * 500
    assert (tmp_path / "J1" / "result.tgz").read_bytes() == b"A" * 1000


def test_a_users_file_named_like_a_temp_file_is_never_truncated_or_taken_over(tmp_path):
    mine = tmp_path / ".J1_report.md.tmp"
    mine.write_text("my notes")
    with start_scripted({REPORT.format("J1"): report("J1", reports=[{"content": "# J1"}])}) as srv:
        result = bl(srv.url, "report", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert mine.read_text() == "my notes"
    assert (tmp_path / "J1_report.md").exists()


def test_a_killed_runs_leftovers_are_found_by_pattern_and_lock(tmp_path):
    from benchloop.base import files as writers

    dead = tmp_path / ".J1_report.md.%tmp-0123456789abcdef.tmp"
    dead.write_text("half")
    writers._swept.discard(str(tmp_path))
    with start_scripted({REPORT.format("J1"): report("J1", reports=[{"content": "# J1"}])}) as srv:
        result = bl(srv.url, "report", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert not dead.exists() and leftovers(tmp_path) == []


def fifo_run(tmp_path: Path, fifo: Path) -> subprocess.CompletedProcess:
    os.mkfifo(fifo)
    with start_scripted({REPORT.format("J1"): report("J1", reports=[{"content": "# J1"}])}) as srv:
        try:
            return subprocess.run([sys.executable, "-m", "benchloop", "--host", srv.url, "--api-key", API_KEY,
                                   "--retry", "0", "report", "download", "-j", "J1", "-o", str(tmp_path)],
                                  capture_output=True, text=True, timeout=30, cwd=ROOT,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        except subprocess.TimeoutExpired:
            pytest.fail("a FIFO made the run hang")


def test_a_fifo_at_the_old_temp_name_is_never_opened(tmp_path):
    fifo = tmp_path / ".J1_report.md.tmp"
    done = fifo_run(tmp_path, fifo)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert (tmp_path / "J1_report.md").is_file()


def test_a_fifo_at_the_final_path_is_refused(tmp_path):
    fifo = tmp_path / "J1_report.md"
    done = fifo_run(tmp_path, fifo)
    assert done.returncode == 1, done.stderr
    assert "not a regular file" in done.stderr and str(fifo) in done.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still the FIFO: never replaced, never opened
    assert leftovers(tmp_path) == []


# ====================================================== redirects: scheme and login pages


@pytest.mark.parametrize("scheme", ["http", "HTTP", "Http"])
def test_a_redirect_from_https_to_cleartext_is_refused_whatever_the_case(cert, tmp_path, scheme):
    with start_scripted({"/obj": Reply(200, OBJECT, "application/octet-stream")}) as plain:
        target = plain.url.replace("http", scheme, 1) + "/obj"
        listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
        routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
                  "/openapi/jobs/J1/artifacts/download": Reply(302, b"", headers={"Location": target})}
        with start_scripted(routes, tls=cert) as secure:
            result = run_inprocess("--host", secure.url, "--api-key", API_KEY, "--ca-bundle", cert[0],
                                   "--retry", "0", "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
        assert plain.seen == []
    assert result.code == 1, result.err
    assert "refusing redirect from https" in result.err
    assert final_files(tmp_path) == {}


@pytest.mark.parametrize("name", ["login.tgz", "ssologin.tgz"])
def test_an_artifact_named_login_behind_a_presigned_url_is_data(tmp_path, name):
    with start_scripted({f"/bucket/{name}": Reply(200, OBJECT, "application/octet-stream")}) as store:
        listing = {"artifacts": [{"name": name, "url": "x"}]}
        routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
                  "/openapi/jobs/J1/artifacts/download": Reply(
                      302, b"", headers={"Location": f"{store.url}/bucket/{name}?Signature=abc&login=1"})}
        with start_scripted(routes) as srv:
            result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert final_files(tmp_path) == {f"J1/{name}": OBJECT}


def test_a_media_file_named_login_png_is_data(tmp_path):
    routes = media_task_routes("oss://bucket/login.png")
    with start_scripted({"/login/login.png": Reply(200, b"\x89PNG login", "image/png")}) as store:
        routes["/openapi/getTrajV2/mediaFile"] = Reply(302, b"", headers={"Location": f"{store.url}/login/login.png"})
        with start_scripted(routes) as srv:
            result = bl(srv.url, "trajectory", "download", "--task-id", "TX", "-o", str(tmp_path))
    assert result.code == 0, result.err
    with zipfile.ZipFile(tmp_path / "TX_trajectories.zip") as archive:
        assert archive.read("source/J1/login.png") == b"\x89PNG login"


def test_the_configured_sso_host_is_still_an_authentication_failure(tmp_path):
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": Reply(
                  302, b"", headers={"Location": "https://login.alibaba-inc.com/ssoLogin.htm?back=x"})}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 3, result.err
    assert "login page" in result.err and final_files(tmp_path) == {}


# ====================================================== time and size are bounded
@pytest.mark.serial  # timing: run alone (make test runs these after the parallel part)
def test_timeout_bounds_a_request_that_drips_one_byte_at_a_time(raw):
    server = raw(drip)
    started = time.monotonic()
    result = bl(server.url, "--timeout", "2", "report", "get", "-j", "J1")
    elapsed = time.monotonic() - started
    assert elapsed < 6, (elapsed, result.err)
    assert result.code == 4, result.err
    assert "--timeout 2" in result.err


def ctrl_c(url: str, *args: str, signals: int = 1) -> tuple[int, float, str]:
    process = subprocess.Popen([sys.executable, "-m", "benchloop", "--host", url, "--api-key", API_KEY,
                                "--retry", "0", *args], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)  # requests are out and stalled in their reads
    sent = time.monotonic()
    for _ in range(signals):
        process.send_signal(signal.SIGINT)
        time.sleep(0.05)
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("Ctrl-C did not end the command within 20 s")
    return process.returncode, time.monotonic() - sent, err


@pytest.mark.serial  # timing: run alone (make test runs these after the parallel part)
@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_ctrl_c_ends_a_command_stalled_in_reads_within_a_second(raw, tmp_path, concurrency):
    server = raw(stall)
    code, took, err = ctrl_c(server.url, "--concurrency", concurrency, "report", "download", "-j",
                             "J1,J2,J3,J4", "-o", str(tmp_path))
    assert code == 130, err
    assert took < 1.5, took
    assert "interrupted" in err and "Traceback" not in err
    assert "rerun with --skip-existing to continue" in err  # a download has the option
    assert leftovers(tmp_path) == []


@pytest.mark.serial  # timing: run alone (make test runs these after the parallel part)
def test_sigterm_leaves_no_temp_file_and_exits_143(raw, tmp_path):
    # Found by the second round-four attack: SIGTERM during a download left `.name.%tmp-*.part`.
    def listing_then_a_dripped_artifact(conn: socket.socket, server: RawServer) -> None:
        if server.requests == 1:  # the artifact listing
            body = json.dumps({"job_id": "J1", "artifacts": [{"name": "r.bin", "url": "x"}]}).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            server.stopped.wait(120)
            return
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n"
                     + b"x" * 5000)  # the temp file holds the start; the rest never comes
        server.stopped.wait(120)

    server = raw(listing_then_a_dripped_artifact)
    process = subprocess.Popen([sys.executable, "-m", "benchloop", "--host", server.url, "--api-key", API_KEY,
                                "--retry", "0", "--timeout", "60", "artifacts", "download", "-j", "J1",
                                "-o", str(tmp_path)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 15
    while not leftovers(tmp_path) and time.monotonic() < deadline:  # the download's temp file is there
        time.sleep(0.05)
    assert leftovers(tmp_path), "the download never started"
    process.send_signal(signal.SIGTERM)
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("SIGTERM did not end the command within 20 s")
    assert process.returncode == 143, err
    assert leftovers(tmp_path) == []


@pytest.mark.serial  # timing: run alone (make test runs these after the parallel part)
def test_a_second_ctrl_c_is_never_ignored(raw, tmp_path):
    server = raw(stall)
    code, took, err = ctrl_c(server.url, "--concurrency", "4", "report", "get", "-j", "J1,J2,J3,J4", signals=2)
    assert code == 130 and took < 1.5, (took, err)
    # a printing command writes no files and has no --skip-existing: nothing to suggest
    assert "interrupted: unfinished work was abandoned\n" in err and "--skip-existing" not in err, err


def _compress(coding: str, data: bytes) -> bytes:
    if coding == "gzip":
        return gzip.compress(data, 9)
    if coding == "br":
        import brotli

        return brotli.compress(data, quality=5)
    import zstandard

    return zstandard.ZstdCompressor(level=19).compress(data)


BOMB_CODINGS = ["gzip", "br", "zstd"]


@pytest.mark.parametrize("coding", BOMB_CODINGS)
def test_a_bomb_json_answer_is_refused_clearly(coding):
    # br and zstd are decoded too (round four: the compression extra), within the same limits.
    bomb = _compress(coding, b"[" + b" " * (150 << 20) + b"]")  # 150 MB of JSON in at most ~150 kB
    assert len(bomb) < 200_000
    with start_scripted({REPORT.format("J1"): Reply(200, bomb, headers={"Content-Encoding": coding}),
                         REPORT.format("J2"): report("J2")}) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1,J2")
    assert result.code == 1, result.err
    assert result.failed == ["J1"] and "decompression bomb" in result.err
    assert [e["job_id"] for e in json.loads(result.out)] == ["J2"]


@pytest.mark.parametrize("coding", BOMB_CODINGS)
def test_a_bomb_download_is_refused_within_bounded_memory_and_leaves_nothing(tmp_path, coding):
    bomb = _compress(coding, b"\0" * (150 << 20))
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": Reply(200, bomb, "application/octet-stream",
                                                           headers={"Content-Encoding": coding})}
    with start_scripted(routes) as srv:
        # The peak is this process's own (VmHWM; ru_maxrss would carry the forking test's over).
        done = subprocess.run([sys.executable, "-c", "import sys, runpy; sys.argv = ['bl'] + sys.argv[1:]; "
                               "code = 0\ntry:\n    runpy.run_module('benchloop', run_name='__main__')\n"
                               "except SystemExit as e:\n    code = e.code\n"
                               "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
                               "print(hwm.split()[1], file=sys.stderr); sys.exit(code)",
                               "--host", srv.url, "--api-key", API_KEY, "--retry", "0", "artifacts", "download",
                               "-j", "J1", "-o", str(tmp_path)], capture_output=True, text=True, timeout=120,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 1 and "decompression bomb" in done.stderr, done.stderr
    assert final_files(tmp_path) == {} and leftovers(tmp_path) == []
    assert peak_kib < 100 * 1024, peak_kib  # decoded in pieces: nowhere near the 150 MB


@pytest.mark.parametrize("download", [False, True])
def test_a_huge_error_page_is_cut_on_stderr(tmp_path, download):
    page = b"<html>" + b"x" * (4 << 20) + b"</html>"
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {REPORT.format("J1"): Reply(404, page, "text/html"),
              "/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": Reply(500, page, "text/html")}
    args = ("artifacts", "download", "-j", "J1", "-o", str(tmp_path)) if download else ("report", "get", "-j", "J1")
    with start_scripted(routes) as srv:
        result = bl(srv.url, *args)
    assert result.code == 1, result.err[:500]
    assert len(result.err) < 10_000 and "cut" in result.err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf"])
def test_a_timeout_that_cannot_work_is_a_usage_error_before_any_request(value):
    with start_scripted({REPORT.format("J1"): report("J1")}) as srv:
        result = bl(srv.url, "--timeout", value, "report", "get", "-j", "J1")
        seen = srv.seen
    assert result.code == 2, result.err
    assert "--timeout" in result.err and seen == []


def test_a_ca_bundle_that_is_not_pem_is_a_usage_error_before_any_request(tmp_path):
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(b"\x00\x01 not a certificate")
    with start_scripted({REPORT.format("J1"): report("J1")}) as srv:
        result = bl(srv.url, "--ca-bundle", str(bundle), "report", "get", "-j", "J1")
        seen = srv.seen
    assert result.code == 2, result.err
    assert "not a PEM file" in result.err and seen == []


# ====================================================== nothing hostile reaches the terminal
def test_c1_control_characters_from_a_server_are_escaped_on_stderr():
    with start_scripted({REPORT.format("J1"): json_reply({"error": "bad \x9b31m\x1b[2J \x85"}, 500)}) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1")
    assert result.code == 1
    assert not any(0x80 <= ord(c) <= 0x9F or c == "\x1b" for c in result.err), repr(result.err)
    assert "\\x9b31m" in result.err


def test_table_cells_escape_server_strings(tmp_path):
    with start_scripted({REPORT.format("J1"): report("J1", summary="\x1b]0;pwned\x07 \x9b2J")}) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1", "--output", "table")
    assert result.code == 0, result.err
    assert not any(c in result.out for c in "\x1b\x07\x9b"), repr(result.out)


@pytest.mark.parametrize("key", ['key"with"quotes-1234', "key\\with\\backslash-1234"])
def test_a_key_with_quotes_or_backslashes_is_redacted_in_json_errors(key):
    with start_scripted({REPORT.format("J1"): json_reply({"error": f"bad key {key}"}, 500)}) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", key, "--retry", "0", "--error-format", "json",
                               "report", "get", "-j", "J1")
    assert result.code == 1
    escaped = json.dumps(key)[1:-1]
    assert key not in result.err and escaped not in result.err, result.err
    assert "***" in result.err


class _Index:
    """A package index answering one hostile version list."""

    def __init__(self, versions: list[str]):
        body = json.dumps({"name": "benchloop-client", "versions": versions}).encode()
        self.server = start_scripted({"/simple/benchloop-client/": Reply(
            200, body, "application/vnd.pypi.simple.v1+json")})

    def url(self, credentials: str = "") -> str:
        return self.server.url.replace("://", f"://{credentials}", 1) + "/simple"


@pytest.fixture
def checks_enabled(monkeypatch):
    monkeypatch.delenv("BENCHLOOP_NO_UPDATE_CHECK", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)


def wait_for_cache():
    from benchloop.cli import update_check

    for _ in range(100):
        if update_check.cache_file().exists():
            return update_check.cache_file()
        time.sleep(0.05)
    raise AssertionError("no update cache written")


def test_an_update_notice_never_prints_escape_sequences(checks_enabled, monkeypatch):
    index = _Index(["99.0.0+\x1b]0;pwned\x07\x1b[2J"])
    monkeypatch.setenv("BENCHLOOP_INDEX_URL", index.url())
    try:
        with start_scripted({REPORT.format("J1"): report("J1")}) as srv:
            bl(srv.url, "report", "get", "-j", "J1")
            wait_for_cache()
            second = bl(srv.url, "report", "get", "-j", "J1")
    finally:
        index.server.stop()
    assert "\x1b" not in second.err and "\x07" not in second.err, repr(second.err)


def test_an_index_url_with_credentials_is_not_cached_in_clear_and_the_cache_is_private(checks_enabled,
                                                                                       monkeypatch):
    index = _Index(["99.0.0"])
    monkeypatch.setenv("BENCHLOOP_INDEX_URL", index.url("user:s3cret-token@"))
    try:
        with start_scripted({REPORT.format("J1"): report("J1")}) as srv:
            bl(srv.url, "report", "get", "-j", "J1")
            cache = wait_for_cache()
            time.sleep(0.1)
            second = bl(srv.url, "report", "get", "-j", "J1")
    finally:
        index.server.stop()
    assert "s3cret-token" not in cache.read_text()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert "99.0.0 is available" in second.err and "s3cret-token" not in second.err


def test_stdin_helper_accepts_surrogates():
    # (self-check) the in-process runner passes a non-UTF-8 id through unchanged
    assert io.StringIO("J\udcff").read() == "J\udcff"


def test_a_fifo_at_a_path_is_a_file_error_of_that_path_before_the_download(tmp_path):
    from benchloop.base import files as writers
    from benchloop.base.errors import BenchloopError

    os.mkfifo(tmp_path / "J1_report.md")
    with pytest.raises(BenchloopError) as caught:
        writers.join_under(str(tmp_path), "J1_report.md")
    assert "not a regular file" in str(caught.value) and "J1_report.md" in str(caught.value)


# ------------------------------------------------------------ text UTF-8 cannot carry
def test_a_lone_surrogate_from_the_backend_is_printed_and_saved_as_its_escape(tmp_path):
    # JSON may escape half of a surrogate pair ("\ud800"); UTF-8 has no form for it, so
    # printing it raw failed ("unexpected error") and saving it failed the id.  A real
    # process with a real pipe: what a script reading stdout gets.
    body = {"job_id": "J1", "metrics": {"note": "a\ud800b", "\udfff": 1}}
    with start_scripted({"/openapi/metrics/J1": json_reply(body)}) as srv:
        base = [sys.executable, "-m", "benchloop", "--host", srv.url, "--api-key", API_KEY, "--retry", "0"]
        runs = {flags: subprocess.run([*base, *flags[:1], "metrics", "get", "-j", "J1", *flags[1:]],
                                      capture_output=True, cwd=tmp_path, timeout=60)
                for flags in ((), ("--no-pretty",), ("--pretty", "--output", "jsonl"))}
        saved = subprocess.run([*base, "-o", str(tmp_path / "out"), "metrics", "download", "-j", "J1"],
                               capture_output=True, cwd=tmp_path, timeout=60)
    for flags, proc in runs.items():
        assert proc.returncode == 0, (flags, proc.stderr)
        text = proc.stdout.decode("utf-8")  # valid UTF-8
        assert "\\ud800" in text and "\\udfff" in text
        doc = json.loads(text)
        element = doc if "jsonl" in flags else doc[0]
        assert element["metrics"] == {"note": "a\ud800b", "\udfff": 1}  # reads back the same
    assert saved.returncode == 0, saved.stderr
    (written,) = (tmp_path / "out").rglob("*.json")
    assert json.loads(written.read_bytes().decode("utf-8"))["metrics"]["note"] == "a\ud800b"
