"""Time and size are bounded: ``--timeout`` ends a request dripped a byte at a time, Ctrl-C and
SIGTERM end a command stalled in reads at once (no temp file left), a second Ctrl-C is never
ignored, compressed bombs are refused within bounded memory, a huge error page is cut on
stderr, and a timeout or CA bundle that cannot work is a usage error before any request.

Each runs ``bl`` against a raw loopback socket or the scripted server. Found in round two of the
reliability review (docs/reliability.md, "Round two"): each test fails on the code before its
fix. Nothing in httpx is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from support import API_KEY, ROOT, final_files, leftovers, run_inprocess

from benchloop.sandbox.scripted import RawServer, Reply, json_reply, start_raw, start_scripted

REPORT = "/openapi/jobs/{}/report"


def report(job: str, **extra) -> Reply:
    return json_reply({"job_id": job, "summary": "ok", **extra})


def bl(url: str, *args: str, stdin: str = "", retry: str = "0"):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", retry, *args, stdin=stdin)


# ------------------------------------------------------------ raw socket servers
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
    """``raw(handle)``: the scripted server's raw-bytes mode (``handle(conn, server)`` writes what it likes)."""
    started: list[RawServer] = []

    def start(handle) -> RawServer:
        server = start_raw(handle)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


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
