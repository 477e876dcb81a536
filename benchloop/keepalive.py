"""Keep-alive HTTP/1.1 connections to the backend origin, on the standard library.

Why this exists next to httpx: API calls (small JSON requests to the one
configured backend) are the hot path of every fan-out, and on a 2-core machine
the client's CPU per request decides how close a run gets to its latency
bound.  httpx's request path (URL model, cookies, auth and redirect layers,
httpcore and h11) costs about 0.35 ms of CPU per request; ``http.client`` on a
pooled connection costs about a third of that, and importing it costs nothing
like httpx's ~80 ms (import plus client set-up) at start.  Everything else -
streamed downloads, redirects to other origins (presigned and export URLs),
Range resume, and any backend reached through a proxy - stays on httpx.

The pool holds idle connections to one origin (scheme, host, port).  A thread
takes one (or opens one), sends, reads the whole answer and gives it back
unless the server said it would close.  An idle connection the server has
closed meanwhile is seen as readable before reuse and dropped, the check
httpcore makes too.  Failures come out as :class:`Failure`, which says
whether the request may have reached the server (``sent``): a connection
that could not be opened never carried it.
"""

from __future__ import annotations

import http.client
import select
import socket
import threading
import zlib
from typing import Any
from urllib.parse import quote, urlsplit


class Failure(Exception):
    """A transport failure; ``sent`` is False when the request never left."""

    def __init__(self, detail: str, sent: bool):
        super().__init__(detail)
        self.sent = sent


class Undecodable(ValueError):
    """The body came in a Content-Encoding we cannot (or failed to) decode."""

    status = 0  # the answer's status and headers, set by OriginPool.request
    headers: Any = None


def proxied() -> bool:
    """True when any HTTP(S) proxy is configured (environment, or the system settings
    on macOS and Windows).  httpx then carries every request and decides per URL,
    ``NO_PROXY`` included, exactly as it always did: no second opinion here."""
    from urllib.request import getproxies

    proxies = getproxies()
    return any(proxies.get(key) for key in ("http", "https", "all"))


def _decode(body: bytes, encoding: str | None) -> bytes:
    encoding = (encoding or "").strip().lower()
    if not encoding or encoding == "identity":
        return body
    try:
        if encoding in ("gzip", "x-gzip"):
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        if encoding == "deflate":
            try:
                return zlib.decompress(body)
            except zlib.error:
                return zlib.decompress(body, -zlib.MAX_WBITS)  # raw deflate, as some servers send
    except zlib.error as exc:
        raise Undecodable(f"corrupt {encoding} body: {exc}") from None
    raise Undecodable(f"unsupported Content-Encoding: {encoding}")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "server disconnected without sending a response"
    if isinstance(exc, http.client.IncompleteRead):
        return f"body cut short: {len(exc.partial)} bytes read, {exc.expected} more expected"
    return str(exc) or type(exc).__name__


class OriginPool:
    """Pooled keep-alive connections to the origin of ``base`` (a URL that may carry a path prefix)."""

    ACCEPT_ENCODING = "gzip, deflate"

    def __init__(self, base: str, timeout: float, ssl_context_factory=None):
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base}")
        self.https = parts.scheme == "https"
        self.hostname = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        # http.client sends the target as given: encode what a URL path cannot hold
        # (spaces, non-ASCII), keep what is already encoded.
        self.prefix = quote(parts.path.rstrip("/"), safe="/%:@!$&'()*+,;=~")
        self.timeout = timeout
        self._ssl_context_factory = ssl_context_factory  # called per connection: it should cache
        self._idle: list[http.client.HTTPConnection] = []
        self._all: set[http.client.HTTPConnection] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.opened = 0  # connections opened (the tests read it)

    # -- connections ---------------------------------------------------------
    def _open(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if self.https:
            conn = http.client.HTTPSConnection(self.hostname, self.port, timeout=self.timeout,
                                               context=self._ssl_context_factory())
        else:
            conn = http.client.HTTPConnection(self.hostname, self.port, timeout=self.timeout)
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise Failure(_describe(exc), sent=False) from None
        if conn.sock is not None:
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            self._all.add(conn)
            self.opened += 1
        return conn

    def _take(self) -> http.client.HTTPConnection:
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return self._open()
            if conn.sock is not None and not _readable(conn.sock):
                return conn
            self._discard(conn)  # closed by the server while idle (or it sent something unasked)

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(conn)
                return
        self._discard(conn)

    def _discard(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        with self._lock:
            self._all.discard(conn)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._all, self._idle = list(self._all), set(), []
        for conn in conns:
            conn.close()

    # -- requests --------------------------------------------------------------
    def request(self, method: str, target: str, headers: dict[str, str],
                body: bytes | None = None) -> tuple[int, http.client.HTTPMessage, bytes]:
        """Send one request and read the whole answer: ``(status, headers, body)``.

        ``target`` is the path and query below the base URL's path.  Raises
        :class:`Failure` for transport errors and :class:`Undecodable` (after the
        connection went back to the pool) for a body it cannot decode.
        """
        conn = self._take()
        sent = False
        try:
            headers = {"Accept-Encoding": self.ACCEPT_ENCODING, **headers}
            sent = True
            conn.request(method, self.prefix + target, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self._discard(conn)
            raise Failure(_describe(exc), sent=sent) from None
        except BaseException:
            self._discard(conn)
            raise
        if response.will_close:
            self._discard(conn)
        else:
            self._give_back(conn)
        try:
            data = _decode(data, response.getheader("Content-Encoding"))
        except Undecodable as exc:
            exc.status, exc.headers = response.status, response.headers
            raise
        return response.status, response.headers, data


def _readable(sock: socket.socket) -> bool:
    """A socket with something to read while idle: the server closed it (EOF) or misbehaved."""
    try:
        poller = select.poll()  # not select(): no FD_SETSIZE limit
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True
