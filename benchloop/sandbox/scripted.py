"""A scripted loopback HTTP server that records what it receives.

Why next to the sandbox: the sandbox serves a *correct* backend; reliability
and security tests also need a *wrong* one - a foreign host that must never
see the API key, a backend that answers HTML, truncated or wrongly typed
JSON, a redirect to somewhere else, a 206 with the wrong ``Content-Range``.
This module answers each request from a small script and keeps a log of
every request (method, target, headers), so a test can assert both what the
client got and what it sent.

    with start_scripted({"/openapi/jobs/J1/report": Reply(200, b"<html>", "text/html")}) as srv:
        ... srv.url ... srv.seen ...

A route is a :class:`Reply`, a list of replies (used in turn, the last one
repeats) or a callable ``(request) -> Reply``; the route ``"*"`` answers every
path no other route names.  Unknown paths answer 404 JSON.  A reply whose
``content_type`` is None sends no ``Content-Type``.  ``tls=(certfile, keyfile)``
serves HTTPS instead of HTTP.  ``connections`` counts the TCP connections
accepted and ``Seen.peer`` names the one that carried a request, so a test can
tell reuse from reconnection.

Raw bytes, for what no HTTP server would send (a body dripped a byte at a time,
an answer that never comes, framing no library writes): :func:`start_raw` reads
each request's head and hands the connection to ``handle(conn, server)``, which
writes whatever it likes (``keep_alive=True``: ``handle(conn, head, n)`` for each
request of a kept-alive connection); ``server.stopped`` is set when the server
stops, so a handler that waits ends with it.

    with start_raw(lambda conn, server: server.stopped.wait(60)) as srv:  # never answers
        ... srv.url ... srv.requests ...
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from .server import QuietHTTPServer
from .state import Headers


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | Any = b""
    content_type: str | None = "application/json"  # None: no Content-Type header
    headers: dict[str, str] = field(default_factory=dict)
    # "reset": abort the connection; "truncate": announce the full length, send ``send`` bytes;
    # "close_after": answer as if keeping the connection alive, then close it (an idle timeout);
    # "unframed": no Content-Length, ``send`` bytes (default all), then close (HTTP/1.0 framing).
    cut: str | None = None
    send: int | None = None
    delay: float = 0.0  # seconds to wait before answering

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")


def json_reply(value: Any, status: int = 200, **headers: str) -> Reply:
    return Reply(status, json.dumps(value).encode("utf-8"), "application/json", dict(headers))


@dataclass
class Seen:
    method: str
    target: str
    headers: Headers
    peer: Any = None  # the client's (host, port): one per connection

    @property
    def path(self) -> str:
        return urlsplit(self.target).path


Route = Reply | list[Reply] | Callable[[Seen], Reply]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scripted/1"
    sys_version = ""
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()
        super().setup()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        seen = Seen(self.command, self.path, Headers(self.headers.items()), self.client_address)
        reply = self.server.reply_for(seen)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.cut == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        body = reply.payload()
        self.send_response(reply.status)
        if reply.content_type is not None:
            self.send_header("Content-Type", reply.content_type)
        if reply.cut == "unframed":
            self.send_header("Connection", "close")
            self.close_connection = True
            body = body[: reply.send if reply.send is not None else len(body)]
        elif "Content-Length" not in reply.headers:
            self.send_header("Content-Length", str(len(body)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        if reply.cut == "truncate":
            self.send_header("Connection", "close")
            self.close_connection = True
            body = body[: reply.send if reply.send is not None else len(body) // 2]
        self.end_headers()
        self.wfile.write(body)
        if reply.cut == "close_after":
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve


class _Server(QuietHTTPServer):
    def __init__(self, address: tuple[str, int], routes: dict[str, Route]):
        self.routes = dict(routes)
        self.seen: list[Seen] = []
        self.counts: dict[str, int] = {}
        self.connections = 0
        self.lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.lock:
            self.connections += 1
        super().process_request(request, client_address)

    def reply_for(self, seen: Seen) -> Reply:
        with self.lock:
            self.seen.append(seen)
            route = self.routes.get(seen.path)
            if route is None:
                route = self.routes.get("*")
            n = self.counts.get(seen.path, 0)
            self.counts[seen.path] = n + 1
        if route is None:
            return json_reply({"error": "not found"}, 404)
        if isinstance(route, Reply):
            return route
        if isinstance(route, list):
            return route[min(n, len(route) - 1)]
        return route(seen)


class Scripted:
    def __init__(self, server: _Server, thread: threading.Thread, scheme: str):
        self._server = server
        self._thread = thread
        host, port = server.server_address[:2]
        self.host, self.port = str(host), int(port)
        self.url = f"{scheme}://{self.host}:{self.port}"

    @property
    def seen(self) -> list[Seen]:
        with self._server.lock:
            return list(self._server.seen)

    def forget(self) -> None:
        """Clear what was seen so far (a property test reuses one server for many examples)."""
        with self._server.lock:
            self._server.seen.clear()
            self._server.counts.clear()

    @property
    def connections(self) -> int:
        """TCP connections accepted so far."""
        with self._server.lock:
            return self._server.connections

    @property
    def routes(self) -> dict[str, Route]:
        return self._server.routes

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Scripted:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_scripted(routes: dict[str, Route] | None = None, host: str = "127.0.0.1", port: int = 0,
                   tls: tuple[str, str] | None = None) -> Scripted:
    from .server import serve_in_thread

    server = _Server((host, port), routes or {})
    thread, scheme = serve_in_thread(server, tls, "scripted")
    return Scripted(server, thread, scheme)


# ------------------------------------------------------------------ raw bytes
RawHandle = Callable[..., Any]


class RawServer:
    """A loopback TCP server that reads request heads (up to the blank line; no body is read) and
    hands the connection to a handler that writes any bytes it likes.

    By default ``handle(conn, server)`` runs once, after the first head, and the connection is
    closed when it returns.  With ``keep_alive=True`` the connection's requests are read in turn
    and ``handle(conn, head, n)`` answers each (``head`` without its blank line, ``n`` its number
    on the connection); returning True, or raising ``ConnectionAbortedError``, closes it.
    ``heads`` lists the heads read (``requests`` counts them, the current one included while its
    handler runs), ``connections`` the connections accepted; ``stopped`` is set by :meth:`stop`,
    which also ends the connections waiting for a request."""

    def __init__(self, handle: RawHandle, host: str = "127.0.0.1", port: int = 0, keep_alive: bool = False):
        self.handle = handle
        self.keep_alive = keep_alive
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(128)
        self.host, self.port = host, int(self.sock.getsockname()[1])
        self.url = f"http://{host}:{self.port}"
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.heads: list[bytes] = []
        self.connections = 0
        threading.Thread(target=self._accept, name="scripted-raw", daemon=True).start()

    @property
    def requests(self) -> int:
        with self.lock:
            return len(self.heads)

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _head(self, conn: socket.socket, buffered: bytes) -> tuple[bytes, bytes] | None:
        """The next request head and what was read after it; None when the client closed or the
        server stopped.  Read in steps of 0.1 s, so that stop() ends a waiting connection."""
        conn.settimeout(0.1)
        while b"\r\n\r\n" not in buffered:
            if self.stopped.is_set():
                return None
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                return None
            buffered += chunk
        conn.settimeout(None)
        head, _, rest = buffered.partition(b"\r\n\r\n")
        with self.lock:
            self.heads.append(head)
        return head, rest

    def _serve(self, conn: socket.socket) -> None:
        buffered, n = b"", 0
        try:
            while True:
                got = self._head(conn, buffered)
                if got is None:
                    return
                head, buffered = got
                if not self.keep_alive:
                    self.handle(conn, self)
                    return
                if self.handle(conn, head, n):
                    return
                n += 1
        except OSError:  # ConnectionAbortedError included: the handler closes the connection
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_raw(handle: RawHandle, host: str = "127.0.0.1", port: int = 0, keep_alive: bool = False) -> RawServer:
    """A :class:`RawServer` on loopback, serving from daemon threads until stopped."""
    return RawServer(handle, host, port, keep_alive)
