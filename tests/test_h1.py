"""Our HTTP/1.1 connection (``benchloop/transport/_h1.py``) against servers that send exact bytes.

Each server here is a loopback socket that answers the n-th request it reads with
the n-th answer of its script - bytes that no well-behaved server library would
produce: chunked bodies cut into odd pieces, bodies delimited by the close, 1xx
before the answer, heads over 16 KiB, bodies cut short, framing that contradicts
itself.  Every request goes through the client's public path (``Http``) or the
pool (``Connections``), never a mock; each assertion fails if the codec is wrong.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from support import RecordingLog

from benchloop.base.errors import ApiError, NetworkError
from benchloop.transport import retry
from benchloop.transport._errors import LocalProtocolError, RemoteProtocolError
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


class Server:
    """Answers the n-th request (over all connections) with ``script[n]`` (the last one repeats)."""

    def __init__(self, script: list[Answer]):
        self.script = script
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffered = b""
        try:
            while True:
                while b"\r\n\r\n" not in buffered:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffered += data
                head, _, buffered = buffered.partition(b"\r\n\r\n")
                with self.lock:
                    self.requests.append(head)
                    answer = self.script[min(len(self.requests), len(self.script)) - 1]
                if callable(answer):
                    answer(conn)
                else:
                    conn.sendall(answer)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self.sock.close()


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


def get(http: Http, n: int = 1) -> list:
    return [http.request_json("GET", f"/openapi/jobs/J{i}/report") for i in range(n)]


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


def test_a_head_answer_announcing_a_length_has_no_body_and_keeps_the_connection(server):
    srv = server(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", ok())
    with client(srv.url) as http:
        answer = http.send("HEAD", srv.url + "/object", {})
        try:
            assert answer.status == 200 and answer.headers["content-length"] == "1000"
            assert b"".join(answer.iter_raw()) == b""
        finally:
            answer.close()
        assert get(http) == [REPORT]
    assert srv.connections == 1


def test_a_compressed_body_comes_off_the_wire_still_compressed(server):
    packed = gzip.compress(BODY)
    srv = server(ok(packed, "Content-Encoding: gzip"))
    with client(srv.url) as http:
        answer = http.send("GET", srv.url + "/x", {})
        try:
            raw = b"".join(answer.iter_raw())
        finally:
            answer.close()
        assert raw == packed  # decoding is _decoding's, within its limits
        assert get(http) == [REPORT]


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


def test_an_obsolete_folded_header_is_one_line_and_values_lose_their_padding(server):
    srv = server(ok(BODY, "X-Folded: one\r\n two", "X-Padded: \t padded  "))
    with client(srv.url) as http:
        answer = http.send("GET", srv.url + "/x", {})
        answer.close()
    assert answer.headers["x-folded"] == "one two"
    assert answer.headers["x-padded"] == "padded"


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
@pytest.mark.parametrize("answer, message", [
    (ok(BODY, *[f"X-Pad-{n}: {'p' * 2000}" for n in range(9)]), "headers are longer than 16384 bytes"),
    (ok(BODY, f"X-Long: {'p' * 17000}"), "headers are longer than 16384 bytes"),
    (ok(BODY, *[f"X-N{n}: v" for n in range(101)]), "more than 100 headers"),
], ids=["many-2k-headers", "one-17k-line", "101-headers"])
def test_a_head_over_the_limits_is_refused(server, answer, message):
    error, _ = failure(server(answer).url)
    assert message in str(error)


def test_a_head_just_under_16_kib_is_accepted(server):
    srv = server(ok(BODY, *[f"X-Pad-{n}: {'p' * 1900}" for n in range(8)]))
    with client(srv.url) as http:
        assert get(http) == [REPORT]


@pytest.mark.parametrize("answer, message", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", "Content-Length"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello", "Content-Length"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello", "Content-Length"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello", "Transfer-Encoding"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nno colon here\r\n\r\nhello", "not 'name: value'"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", "chunk size"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", "a bad chunk size 'zz'"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello world\r\n0\r\n\r\n",
     "a chunk longer than its size"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Bad: a\x00b\r\n\r\nhello", "not 'name: value'"),
    (b"HTTP/2 200\r\nContent-Length: 5\r\n\r\nhello", "not an HTTP/1.x status line: 'HTTP/2 200'"),
    (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x status line"),
], ids=["two-lengths", "length-not-a-number", "negative-length", "gzip-coding", "no-colon", "negative-chunk",
        "bad-chunk-size", "chunk-over-its-size", "nul-in-value", "http2", "not-http"])
def test_a_malformed_answer_is_a_protocol_error_retried_as_sent(server, answer, message):
    error, log = failure(server(answer).url, retry_count=1)
    assert message in str(error)
    assert len(log) == 1 and "retrying" in log[0]  # SENT: a GET is retried, as for h11's errors


@pytest.mark.parametrize("answer", [
    close_after(ok(BODY)[:-10]),
    close_after(chunked(BODY, [20])[:-40]),
    close_after(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n"),
    close_after(b""),
], ids=["length", "chunked", "inside-head", "nothing"])
def test_an_answer_cut_short_is_a_remote_protocol_error_of_a_sent_request(server, answer):
    srv = server(answer)
    with client(srv.url) as http:
        with pytest.raises(RemoteProtocolError) as caught:
            reply = http.send("GET", srv.url + "/x", {})
            try:
                b"".join(reply.iter_raw())
            finally:
                reply.close()
    assert retry.classify_transport(caught.value) == retry.SENT
    error, log = failure(srv.url, retry_count=2)
    assert len(log) == 2 and ("peer closed" in str(error) or "Server disconnected" in str(error))


def test_a_request_header_with_a_line_break_is_refused_before_anything_is_sent(server):
    srv = server(ok())
    with client(srv.url) as http:
        for headers in ({"X-Evil": "a\r\nInjected: 1"}, {"X Bad Name": "v"}, {"X-Trailing": "v "}):
            with pytest.raises(LocalProtocolError):
                http.send("GET", srv.url + "/x", headers)
        assert get(http) == [REPORT]  # the pool is unharmed
    assert len(srv.requests) == 1


def test_an_error_status_with_a_chunked_body_is_an_api_error_with_its_text(server):
    srv = server(chunked(b'{"error": "no such job"}', [3]).replace(b"200 OK", b"404 Not Found"))
    with client(srv.url) as http:
        with pytest.raises(ApiError) as caught:
            get(http)
    assert "no such job" in str(caught.value)


# ------------------------------------------------------------------ the socket's own waits
# A plain-TCP connection is non-blocking and waits with poll only when the socket has nothing
# to give (_streams.Stream): the waits must still end at the deadline, and data must not be lost.
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
    sock = socket.create_server(("127.0.0.1", 0))

    def endless() -> None:
        conn, _ = sock.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (1 << 40))
        try:
            while True:
                conn.sendall(b"x" * 65536)
        except OSError:
            pass
        finally:
            conn.close()
    threading.Thread(target=endless, daemon=True).start()
    http = Http(f"http://127.0.0.1:{sock.getsockname()[1]}", KEY, 1.0, 0, 1, RecordingLog())
    started = time.monotonic()

    def slow_consumer(_n: int) -> None:
        time.sleep(0.001)
        assert time.monotonic() - started < 6, "still downloading long after --timeout 1"
    try:
        with pytest.raises(NetworkError) as caught:
            http.download("/x", str(tmp_path / "x.bin"), on_bytes=slow_consumer)
    finally:
        http.close()
        sock.close()
    assert "took longer than --timeout 1s" in str(caught.value)
    assert time.monotonic() - started < 4


def test_a_timeout_longer_than_poll_can_wait_is_honoured():
    # poll() takes at most 2**31-1 ms (~24.8 days); people write huge timeouts for "no limit".
    server = Server([ok()])
    try:
        http = Http(server.url, KEY, 3_000_000.0, 0, 1, RecordingLog())
        try:
            assert get(http) == [REPORT]
        finally:
            http.close()
    finally:
        server.stop()
