"""A pool per request in flight (transport/lanes.py), the request on the worker's own thread, a lazy TLS context.

Against the real sandbox and loopback servers:

- each request in flight has a pool (a lane) of its own, given back with its
  connection kept alive when the answer is closed: concurrent requests open a
  connection each, later ones (other threads too) reuse them;
- a request of a worker thread on a kept connection runs on that thread (no
  wire thread) and still ends at its deadline when the server drips its head,
  or at once at a cancel from another thread;
- a plain-http host never builds the TLS context; an https one builds it once.
"""

from __future__ import annotations

import threading
import time

import pytest
from support import KeptAlive, RecordingLog

from benchloop.base.errors import Cancelled, NetworkError
from benchloop.transport import deadline
from benchloop.transport.client import Http

KEY = "lanes-key"


def get(http: Http, job: str = "G1-J0001"):
    return http.request_json("GET", f"/openapi/jobs/{job}", expect=lambda value, reused: None)


def in_thread(work):
    """Run ``work()`` on a new (worker) thread; its result or its exception."""
    box: dict = {}

    def run():
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive()
    return box


def test_each_worker_thread_keeps_its_own_connection(make_sandbox):
    sb = make_sandbox(groups=1, jobs_per_group=40)
    http = Http(sb.url, sb.api_key, 10, 0, 4, RecordingLog())
    try:
        sb.reset_stats()
        barrier = threading.Barrier(4)

        def work():
            barrier.wait()
            for n in range(1, 6):
                get(http, f"G1-J{n:04d}")
            barrier.wait()  # every thread alive until all are done: four lanes at once

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sb.stats["requests"] == 20
        assert sb.stats["connections"] == 4
        # Threads that come after those ended take their lanes: no new connection.
        for _ in range(3):
            assert "error" not in in_thread(lambda: [get(http) for _ in range(3)])
        assert sb.stats["connections"] == 4
    finally:
        http.close()


def test_a_worker_request_on_a_kept_connection_runs_on_its_own_thread(make_sandbox, monkeypatch):
    sb = make_sandbox(groups=1, jobs_per_group=5)
    http = Http(sb.url, sb.api_key, 10, 0, 1, RecordingLog())
    handed: list = []
    original = deadline._threads.run
    monkeypatch.setattr(deadline._threads, "run", lambda job: (handed.append(job), original(job)))
    try:
        box = in_thread(lambda: [get(http) for _ in range(5)])
        assert "error" not in box, box
        assert len(handed) == 1  # the first request only: its thread had no connection yet
        box = in_thread(lambda: get(http))  # the main thread never sends a request itself
        handed.clear()
        get(http)
        assert len(handed) == 1
    finally:
        http.close()


def dripping_second_answer(conn, head, n):
    """The first answer whole; the second one's head a byte every 0.2 s (never finished)."""
    body = b'{"job_id": "G1-J0001"}'
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    if n == 0:
        conn.sendall(answer)
        return False
    for byte in answer[:-10]:
        conn.sendall(bytes([byte]))
        time.sleep(0.2)
    return True


def test_a_dripped_head_on_a_kept_connection_ends_at_the_deadline_on_the_workers_thread():
    server = KeptAlive(dripping_second_answer)
    http = Http(server.url, KEY, 1.5, 0, 1, RecordingLog())
    try:
        def work():
            get(http)
            started = time.monotonic()
            try:
                get(http)
            except NetworkError as exc:
                return time.monotonic() - started, str(exc)
            return None

        box = in_thread(work)
        assert "error" not in box, box
        took, message = box["value"]
        assert "timed out" in message
        assert 1.4 < took < 3.0, took
        assert server.connections == 1
    finally:
        http.close()


def test_a_cancel_ends_a_workers_request_on_a_kept_connection_at_once():
    server = KeptAlive(dripping_second_answer)
    http = Http(server.url, KEY, 60, 0, 1, RecordingLog())
    try:
        def work():
            get(http)
            threading.Timer(0.5, http.cancelled.set).start()
            started = time.monotonic()
            with pytest.raises(Cancelled):
                get(http)
            return time.monotonic() - started

        box = in_thread(work)
        assert "error" not in box, box
        assert box["value"] < 3.0
    finally:
        http.close()


def test_a_plain_http_host_never_builds_the_tls_context(make_sandbox):
    sb = make_sandbox(groups=1, jobs_per_group=5)
    http = Http(sb.url, sb.api_key, 10, 0, 1, RecordingLog())
    try:
        get(http)
        in_thread(lambda: get(http))
        assert http.tls._real is None
    finally:
        http.close()


def test_an_https_host_builds_the_tls_context_once_and_verifies_with_it(make_sandbox, cert):
    sb = make_sandbox(groups=1, jobs_per_group=5, tls=cert)
    assert sb.url.startswith("https://")
    http = Http(sb.url, sb.api_key, 10, 0, 1, RecordingLog(), ca_bundle=cert[0])
    try:
        get(http)
        made = http.tls._real
        assert made is not None and made.cert_store_stats()["x509_ca"] == 1
        assert "error" not in in_thread(lambda: [get(http) for _ in range(3)])
        assert http.tls._real is made
    finally:
        http.close()
    untrusted = Http(sb.url, sb.api_key, 10, 0, 1, RecordingLog())  # the system's store: not our CA
    try:
        with pytest.raises(NetworkError, match="(?i)certificate"):
            get(untrusted)
    finally:
        untrusted.close()
