"""The HTTP stack (httpx, and what ``benchloop/transport`` adds) against servers that send exact bytes.

Each server here is a loopback socket that answers the n-th request it reads with
the n-th answer of its script - bytes that no well-behaved server library would
produce: chunked bodies cut into odd pieces, bodies delimited by the close, 1xx
before the answer, heads over 16 KiB, bodies cut short, framing that contradicts
itself, an extra answer glued after the real one, statuses outside 100-599,
control characters smuggled in folded header lines, drips.  Every request goes
through the client's public path (``Http``), never a mock; each assertion fails
if the stack is wrong.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from support import KeptAlive, RecordingLog

from benchloop.base.errors import ApiError, IdentityMismatch, NetworkError
from benchloop.sandbox.scripted import RawServer, start_raw
from benchloop.transport.client import Http

REPORT = {"job_id": "J1", "summary": "ok", "words": ["ünïcode", "b"]}
BODY = json.dumps(REPORT).encode()
KEY = "h1-key"

Answer = bytes | Callable[[socket.socket], None]


def ok(body: bytes = BODY, *headers: str) -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{head}\r\n".encode() + body


def chunked(body: bytes, sizes: list[int]) -> bytes:
    out, at = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", 0
    for size in sizes + [len(body)]:
        piece, at = body[at:at + size], at + size
        if piece:
            out += b"%x;ext=1\r\n%s\r\n" % (len(piece), piece)
    return out + b"0\r\nX-Trailer: t\r\n\r\n"


def close_after(data: bytes) -> Callable[[socket.socket], None]:
    """Send ``data`` and close the connection (a close-delimited body, or a cut)."""
    def send(conn: socket.socket) -> None:
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        raise ConnectionAbortedError
    return send


def hang_up(conn: socket.socket) -> None:
    """Read the request, close without answering (a keep-alive timeout racing the request)."""
    raise ConnectionAbortedError


class Server(KeptAlive):
    """Answers the n-th request (over all connections) with ``script[n]`` (the last one repeats)."""

    def __init__(self, script: list[Answer]):
        self.script = script
        super().__init__(self._next)

    def _next(self, conn: socket.socket, head: bytes, n: int) -> None:
        with self.lock:
            answer = self.script[min(len(self.heads), len(self.script)) - 1]
        if callable(answer):
            answer(conn)
        else:
            conn.sendall(answer)

    @property
    def requests(self) -> list[bytes]:
        return self.heads


@pytest.fixture
def server():
    started: list[Server] = []

    def start(*script: Answer) -> Server:
        started.append(Server(list(script)))
        return started[-1]

    yield start
    for s in started:
        s.stop()




@contextmanager
def client(url: str, retry_count: int = 0) -> Iterator[Http]:
    """A client of ``url`` (no retry unless asked), closed after the block."""
    http = Http(url, KEY, 10, retry_count, 1, RecordingLog())
    try:
        yield http
    finally:
        http.close()


def checked(answer: object, reused: bool = False) -> None:
    """The identity check of an endpoint whose answers name their id (here always the right
    one): its calls share kept-alive connections (an unchecked call gets a new one each)."""


def get(http: Http, n: int = 1) -> list:
    return [http.request_json("GET", f"/openapi/jobs/J{i}/report", expect=checked) for i in range(n)]


def failure(url: str, retry_count: int = 0) -> tuple[NetworkError, list[str]]:
    with client(url, retry_count) as http:
        with pytest.raises(NetworkError) as caught:
            get(http)
    return caught.value, http.log.lines


# ------------------------------------------------------------------ bodies
def test_a_chunked_body_in_odd_pieces_with_extensions_and_a_trailer_is_whole_and_keeps_the_connection(server):
    srv = server(chunked(BODY, [1, 2, 7, 30]))
    with client(srv.url) as http:
        assert get(http, 3) == [REPORT] * 3
    assert srv.connections == 1


def test_a_close_delimited_body_is_read_to_the_close_and_its_connection_never_reused(server):
    srv = server(close_after(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + BODY))
    with client(srv.url) as http:
        assert get(http, 2) == [REPORT] * 2
    assert srv.connections == 2


@pytest.mark.parametrize("answer", [ok(BODY, "Connection: close"), ok(BODY).replace(b"HTTP/1.1", b"HTTP/1.0")],
                         ids=["connection-close", "http-1.0"])
def test_an_answer_saying_the_connection_closes_is_never_reused_even_if_the_socket_stays_open(server, answer):
    srv = server(answer)  # this server would answer on the same connection: only the client decides
    with client(srv.url) as http:
        assert get(http, 2) == [REPORT] * 2
    assert srv.connections == 2


@pytest.mark.parametrize("interim", [
    b"HTTP/1.1 100 Continue\r\n\r\n",
    b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n",
    b"HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
], ids=["100", "103", "102+103"])
def test_interim_answers_before_the_answer_are_skipped(server, interim):
    srv = server(interim + ok())
    with client(srv.url) as http:
        assert get(http, 2) == [REPORT] * 2
    assert srv.connections == 1


def test_an_obsolete_folded_header_without_control_characters_is_accepted(server):
    srv = server(ok(BODY, "X-Folded: one\r\n two", "X-Padded: \t padded  "))
    with client(srv.url) as http:
        assert get(http, 2) == [REPORT] * 2
    assert srv.connections == 1


# ------------------------------------------------------------------ connections
def test_a_keep_alive_connection_the_server_closed_while_idle_is_replaced_without_a_retry(server):
    def answer_then_close(conn: socket.socket) -> None:
        conn.sendall(ok())
        conn.shutdown(socket.SHUT_RDWR)
        raise ConnectionAbortedError

    srv = server(answer_then_close)
    with client(srv.url, retry_count=0) as http:
        first = get(http)
        time.sleep(0.2)  # the FIN arrives
        second = get(http)
    assert first == second == [REPORT]
    assert srv.connections == 2 and len(srv.requests) == 2
    assert http.log.lines == []  # no failed attempt, nothing retried


def test_a_server_hanging_up_on_a_reused_connection_is_a_sent_failure_retried_for_get(server):
    srv = server(ok(), hang_up, ok())
    with client(srv.url, retry_count=1) as http:
        assert get(http, 2) == [REPORT] * 2
    assert srv.connections == 2 and len(srv.requests) == 3
    assert len(http.log.lines) == 1 and "Server disconnected without sending a response" in http.log.lines[0]


# ------------------------------------------------------------------ refused answers
# httpx (httpcore) buffers an incomplete head up to 100 KiB (plus the read that passed it): a
# server cannot make the client buffer a head without end.
@pytest.mark.parametrize("answer", [
    ok(BODY, *[f"X-Pad-{n}: {'p' * 2000}" for n in range(150)]),
    ok(BODY, f"X-Long: {'p' * 300000}"),
], ids=["many-2k-headers", "one-300k-line"])
def test_a_head_over_the_limit_is_refused(server, answer):
    error, log = failure(server(answer).url, retry_count=1)
    assert len(log) == 1 and "retrying" in log[0]


def test_a_head_of_90_kib_is_accepted(server):
    srv = server(ok(BODY, *[f"X-Pad-{n}: {'p' * 1900}" for n in range(47)]))
    with client(srv.url) as http:
        assert get(http) == [REPORT]


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nno colon here\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello world\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Bad: a\x00b\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Folded: a\r\n \x1b[31mred\r\n\r\nhello",
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Folded: a\r\n b\x00c\r\n\r\nhello",
    b"HTTP/1.1 099 Low\r\nContent-Length: 5\r\n\r\nhello",
    b"HTTP/1.1 600 High\r\nContent-Length: 5\r\n\r\nhello",
    b"HTTP/1.1 999 High\r\nContent-Length: 5\r\n\r\nhello",
    b"HTTP/2 200\r\nContent-Length: 5\r\n\r\nhello",
    b"SSH-2.0-OpenSSH\r\n\r\n",
], ids=["two-lengths", "length-not-a-number", "negative-length", "gzip-coding", "no-colon", "negative-chunk",
        "bad-chunk-size", "chunk-over-its-size", "nul-in-value", "esc-in-a-folded-line", "nul-in-a-folded-line",
        "status-99", "status-600", "status-999", "http2", "not-http"])
def test_a_malformed_answer_is_refused_and_retried_as_sent(server, answer):
    # Round four: a folded line smuggled ESC and NUL past the control-character check of the
    # first line, and a status outside 100-599 was taken as an answer.
    srv = server(answer)
    error, log = failure(srv.url, retry_count=1)
    assert len(log) == 1 and "retrying" in log[0]  # SENT: a GET is retried
    assert len(srv.requests) == 2
    assert "\x1b" not in str(error) and "\x00" not in str(error)


@pytest.mark.parametrize("answer", [
    close_after(ok(BODY)[:-10]),
    close_after(chunked(BODY, [20])[:-40]),
    close_after(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"),
    close_after(b""),
], ids=["length", "chunked", "inside-head", "nothing"])
def test_an_answer_cut_short_is_a_failure_of_a_sent_request(server, answer):
    srv = server(answer)
    error, log = failure(srv.url, retry_count=2)
    assert len(log) == 2 and len(srv.requests) == 3
    assert "peer closed" in str(error) or "Server disconnected" in str(error) or "incomplete" in str(error)


def test_a_request_header_with_a_line_break_is_refused_before_anything_is_sent(server):
    srv = server(ok())
    with client(srv.url) as http:
        for headers in ({"X-Evil": "a\r\nInjected: 1"}, {"X Bad Name": "v"}):
            with pytest.raises((NetworkError, ValueError)):
                http.request_json("GET", "/x", headers=headers)
        assert get(http) == [REPORT]  # the pool is unharmed
    assert len(srv.requests) == 1


def test_an_error_status_with_a_chunked_body_is_an_api_error_with_its_text(server):
    srv = server(chunked(b'{"error": "no such job"}', [3]).replace(b"200 OK", b"404 Not Found"))
    with client(srv.url) as http:
        with pytest.raises(ApiError) as caught:
            get(http)
    assert "no such job" in str(caught.value)


@pytest.mark.parametrize("status", [b"200 OK", b"500 Internal Server Error"])
def test_a_binary_body_where_json_was_asked_is_named_by_its_size_not_printed(server, status):
    blob = bytes(range(256)) * 12  # 3 KiB that no terminal should get
    srv = server(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/octet-stream\r\nContent-Length: "
                 + str(len(blob)).encode() + b"\r\n\r\n" + blob)
    with client(srv.url) as http:
        with pytest.raises(ApiError) as caught:
            get(http)
    assert "(3072 bytes of binary data, not text)" in str(caught.value)
    assert len(str(caught.value)) < 200


# ------------------------------------------------------------------ answers glued together (round four)
def glued(*answers: bytes) -> bytes:
    return b"".join(answers)


EVIL = b'{"job_id": "J9", "evil": true}'


@pytest.mark.parametrize("first, status", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
     + chunked(BODY, [9]).split(b"\r\n\r\n", 1)[1] + ok(EVIL), 200),
    (b"HTTP/1.1 204 No Content\r\nContent-Length: 30\r\n\r\n" + ok(EVIL), 204),
    (b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n" + ok(EVIL), 304),
    (b"HTTP/1.1 204 No Content\r\n\r\n" + ok(EVIL), None),
], ids=["te-and-cl", "204-with-length", "304-chunked", "204-plain"])
def test_bytes_left_behind_an_answer_in_doubt_are_never_read_as_the_next_answer(server, first, status):
    # Round four: what a server sends beyond an answer whose framing is in doubt must die with
    # its connection (RFC 9112 6.3), never become the answer to the next request.
    srv = server(first, ok())
    with client(srv.url) as http:
        answers: list = []
        for n in range(2):
            try:
                answers.append(http.request_json("GET", f"/openapi/jobs/J{n + 1}/report"))
            except ApiError as exc:
                answers.append(exc.status)
    if status is None:
        # A 204 that announces no body: nothing is in doubt, and what follows it on the wire is
        # the next answer as far as any HTTP stack can tell; identity (below) is what refuses it.
        assert answers[0] == 204
        return
    assert answers == [REPORT if status == 200 else status, REPORT]
    assert srv.connections == 2


def expect_job(want: str) -> Callable[[object], None]:
    def check(answer: object, reused: bool = False) -> None:
        got = answer.get("job_id") if isinstance(answer, dict) else None
        if got is not None and got != want:
            raise IdentityMismatch(f"the answer for job_id {want!r} names {got!r}")
    return check


def test_an_extra_answer_glued_after_a_real_one_is_refused_by_identity_and_asked_on_a_new_connection(server):
    # Round four: a well-framed answer with another one glued behind it.  No HTTP stack can see
    # the glue (the extra bytes wait in its buffer); the table's identity can.
    j2 = {"job_id": "J2", "summary": "two"}
    srv = server(ok(BODY) + ok(EVIL), ok(json.dumps(j2).encode()))
    with client(srv.url) as http:
        first = http.request_json("GET", "/openapi/jobs/J1/report", expect=expect_job("J1"))
        second = http.request_json("GET", "/openapi/jobs/J2/report", expect=expect_job("J2"))
        warned = http.log.lines
    assert first == REPORT and second == j2
    assert srv.connections == 2  # the second answer came on a new connection
    assert any("names 'J9'" in line and "new connection" in line for line in warned), warned


def test_an_answer_naming_another_id_twice_fails_that_id(server):
    srv = server(ok(EVIL))
    with client(srv.url) as http:
        with pytest.raises(ApiError) as caught:
            http.request_json("GET", "/openapi/jobs/J1/report", expect=expect_job("J1"))
    assert "names 'J9'" in str(caught.value) and "twice" in str(caught.value)
    assert srv.connections == 2 and len(srv.requests) == 2


# ------------------------------------------------------------------ deadlines (transport/deadline.py)
# httpx bounds each read and write, never a request: a head or a body dripped a byte at a time,
# an answer that never comes, a body nobody reads, must all end at --timeout, and data must
# not be lost.
@contextmanager
def silent_server() -> Iterator[str]:
    """The URL of a server that accepts connections and never reads from them nor answers."""
    sock = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            held.append(conn)
    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()
        for conn in held:
            conn.close()


def failure_after(url: str, timeout: float, method: str, body: object = None) -> tuple[str, float]:
    """``method`` to ``url`` under ``--timeout``: the network failure's text and the seconds it took."""
    http = Http(url, KEY, timeout, 0, 1, RecordingLog())
    started = time.monotonic()
    try:
        with pytest.raises(NetworkError) as caught:
            http.request_json(method, "/openapi/jobs/J1/report", body=body)
    finally:
        http.close()
    return str(caught.value), time.monotonic() - started


def test_a_body_the_server_never_reads_ends_at_the_deadline():
    # 32 MiB cannot fit the socket buffers: the write must wait for room, and give up at --timeout.
    with silent_server() as url:
        text, took = failure_after(url, 1.0, "POST", {"blob": "x" * (32 << 20)})
    assert "timed out" in text
    assert took < 5


def test_an_answer_that_never_comes_ends_at_the_deadline():
    with silent_server() as url:
        text, took = failure_after(url, 0.5, "GET")
    assert "timed out" in text
    assert 0.4 < took < 3


def test_an_answer_dripped_in_small_pieces_arrives_whole():
    # Every piece is a separate recv after a wait: nothing lost, nothing read twice.
    body = json.dumps({"job_id": "J1", "words": ["ünïcode"] * 2000}).encode()
    whole = ok(body)

    def drip(conn: socket.socket) -> None:
        for at in range(0, len(whole), 997):
            conn.sendall(whole[at:at + 997])
            if at % (997 * 8) == 0:
                time.sleep(0.002)

    server = Server([drip])
    try:
        with client(server.url) as http:
            assert get(http) == [json.loads(body)]
    finally:
        server.stop()


def test_a_body_sent_without_end_faster_than_it_is_consumed_ends_at_the_deadline(tmp_path):
    # The socket always has data: a read never waits, yet --timeout still ends the attempt.
    def endless(conn: socket.socket, server: RawServer) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (1 << 40))
        while not server.stopped.is_set():
            conn.sendall(b"x" * 65536)  # until the client hangs up (OSError ends the handler)

    server = start_raw(endless)
    http = Http(server.url, KEY, 1.0, 0, 1, RecordingLog())
    started = time.monotonic()

    def slow_consumer(_n: int) -> None:
        time.sleep(0.001)
        assert time.monotonic() - started < 6, "still downloading long after --timeout 1"
    try:
        with pytest.raises(NetworkError) as caught:
            http.download("/x", str(tmp_path / "x.bin"), on_bytes=slow_consumer)
    finally:
        http.close()
        server.stop()
    assert "took longer than --timeout 1s" in str(caught.value)
    assert time.monotonic() - started < 4


def test_a_huge_timeout_is_honoured():
    # People write huge timeouts for "no limit" (a poll() takes at most ~24.8 days).
    server = Server([ok()])
    try:
        http = Http(server.url, KEY, 3_000_000.0, 0, 1, RecordingLog())
        try:
            assert get(http) == [REPORT]
        finally:
            http.close()
    finally:
        server.stop()


def test_a_head_dripped_one_byte_at_a_time_ends_at_the_deadline():
    # Each byte comes well within a read timeout, so only a deadline over the whole head stops it.
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Drip-%d: %s\r\n" % (n, b"d" * 40) for n in range(100))

    def drip(conn: socket.socket) -> None:
        for byte in head:
            conn.sendall(bytes([byte]))
            time.sleep(0.05)

    server = Server([drip])
    try:
        text, took = failure_after(server.url, 1.0, "GET")
    finally:
        server.stop()
    assert "took longer than --timeout 1s" in text
    assert took < 2.5


def test_a_body_dripped_one_byte_at_a_time_ends_at_the_deadline(tmp_path):
    def drip(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        for _ in range(1000):
            conn.sendall(b"x")
            time.sleep(0.05)

    server = Server([drip])
    http = Http(server.url, KEY, 1.0, 0, 1, RecordingLog())
    started = time.monotonic()
    try:
        with pytest.raises(NetworkError) as caught:
            http.download("/x", str(tmp_path / "x.bin"))
    finally:
        http.close()
        server.stop()
    assert "took longer than --timeout 1s" in str(caught.value)
    assert time.monotonic() - started < 2.5
    assert list(tmp_path.iterdir()) == []


def test_a_cancel_ends_reads_blocked_in_other_threads_at_once(tmp_path):
    # A 401 elsewhere (or Ctrl-C) sets the client's cancel switch: a head awaited and a body
    # being read, in two other threads, both end now, not at --timeout.
    def never(conn: socket.socket) -> None:
        time.sleep(30)

    def slow_body(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nx")
        time.sleep(30)

    heads, bodies = Server([never]), Server([slow_body])
    http = Http(heads.url, KEY, 60.0, 0, 1, RecordingLog())
    errors: list[BaseException] = []

    def run(work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(lambda: http.request_json("GET", "/x"),)),
               threading.Thread(target=run, args=(lambda: http.download(f"{bodies.url}/y", str(tmp_path / "y")),))]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    http.cancelled.set()
    for thread in threads:
        thread.join(5)
    took = time.monotonic() - started
    http.close()
    heads.stop()
    bodies.stop()
    assert took < 1.5, took
    assert [type(e).__name__ for e in errors] == ["Cancelled", "Cancelled"]
