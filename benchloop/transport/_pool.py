"""The connections of one client: a keep-alive pool per origin, proxies, TLS on demand.

A direct request takes an idle HTTP/1.1 connection (:mod:`._h1`: our own small
HTTP/1.1 codec) of its origin (dropping any
the server closed or that idled past ``KEEPALIVE_EXPIRY``) or opens one, and
gives it back once its answer was read to the end.  The pool never queues a
request and has no limit: the number of connections is bounded where it is
decided anyway, by the request slots (``--concurrency`` per worker pool), and
a request can never wait for a connection another one is about to release
(the stall of encode/httpcore#1110 needs a full pool).

A request whose URL the proxy rules (:mod:`._proxies`) send through a proxy
goes through httpcore's own ``HTTPProxy`` pool for that proxy, unlimited too.
Every connection, direct (:mod:`._streams`) or proxied (:mod:`._bridge`), is
registered with the client's one switchboard: deadlines and cancel hold alike.  The TLS context is made
at the first ``https://`` connection, never for a plain-HTTP backend.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from . import _proxies
from ._errors import ConnectError
from ._h1 import Connection
from ._streams import Backend, Switchboard
from ._wire import Place, split

# Idle keep-alive connections are closed after this many seconds (httpx's default).
KEEPALIVE_EXPIRY = 5.0
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _text(value: bytes) -> str:
    try:
        return value.decode("ascii")
    except UnicodeDecodeError:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("latin-1")


def header_map(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """Response headers by lower-case name; repeated ones joined with ", " (as httpx's ``get``)."""
    headers: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1").lower()
        headers[key] = f"{headers[key]}, {_text(value)}" if key in headers else _text(value)
    return headers


class Answer:
    """One answer being read: status, headers (lower-case names), the URL asked, the body."""

    __slots__ = ("status", "headers", "url", "consumed", "_response", "_done")

    def __init__(self, response: Any, url: str, done: Callable[[], None] | None):
        self.status: int = response.status
        self.headers = header_map(response.headers)
        self.url = url
        self.consumed = False
        self._response = response
        self._done = done

    @property
    def is_redirect(self) -> bool:
        return self.status in _REDIRECTS and "location" in self.headers

    def iter_raw(self) -> Iterator[bytes]:
        """The body as it arrives (still encoded if the server compressed it)."""
        yield from self._response.stream
        self.consumed = True

    def close(self) -> None:
        """Close the answer; its connection goes back to the pool if the answer was read whole."""
        try:
            self._response.close()
        finally:
            done, self._done = self._done, None
            if done is not None:
                done()


class Connections:
    """Every connection of one client; thread-safe."""

    def __init__(self, board: Switchboard, trust: Callable[[], Any], timeout: float):
        self._board = board
        self._backend = Backend(board)
        self._trust = trust
        self.timeout = timeout
        self._lock = threading.Lock()
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._open: set[Connection] = set()
        self._rules: list[_proxies.Rule] | None = None
        self._routes: dict[tuple[str, str, int | None], str | None] = {}
        self._proxies: dict[tuple[str, str], Any] = {}
        self.closed = False

    def request(self, method: bytes, url: str, headers: list[tuple[bytes, bytes]],
                content: bytes | None = None) -> Answer:
        """Send one request and return its answer with the body still to read."""
        place, target = split(url)
        headers = [(b"Host", place.host_header), *headers]
        if content is not None:
            headers.append((b"Content-Length", b"%d" % len(content)))
        proxy = self._route(place)
        if proxy is not None:
            from ._bridge import send  # a proxy: httpcore's pools, loaded now

            return Answer(send(self._proxy_pool(proxy, place.scheme), method, place, target, headers, content,
                               self.timeout), url, None)
        connection = self._idle_connection(place.key) or self._connect(place)
        try:
            response = connection.request(method, target, headers, content)
        except BaseException:
            connection.close()
            self._forget(connection)
            raise
        return Answer(response, url, partial(self._release, place.key, connection))

    # -- direct connections ------------------------------------------------------
    def _idle_connection(self, origin: tuple[str, str, int]) -> Connection | None:
        while True:
            with self._lock:
                idle = self._idle.get(origin)
                if not idle:
                    return None
                connection = idle.pop()
            if connection.has_expired():  # the server closed it, or it idled too long
                connection.close()
                self._forget(connection)
                continue
            return connection

    def _connect(self, place: Place) -> Connection:
        if self.closed:
            raise ConnectError("the HTTP client was closed")
        stream = self._backend.connect_tcp(place.host, place.port, timeout=self.timeout)
        try:
            if place.scheme == "https":
                stream = stream.start_tls(self._trust(), server_hostname=place.host, timeout=self.timeout)
        except BaseException:
            stream.close()
            raise
        connection = Connection(stream, self.timeout, KEEPALIVE_EXPIRY)
        with self._lock:
            self._open.add(connection)
        return connection

    def _release(self, origin: tuple[str, str, int], connection: Connection) -> None:
        if connection.is_idle() and not self.closed:
            with self._lock:
                self._idle.setdefault(origin, []).append(connection)
        else:
            connection.close()
            self._forget(connection)

    def _forget(self, connection: Connection) -> None:
        with self._lock:
            self._open.discard(connection)

    # -- proxies -------------------------------------------------------------------
    def _route(self, place: Place) -> str | None:
        key = (place.scheme, place.host, place.url_port)
        try:
            return self._routes[key]
        except KeyError:
            pass
        if self._rules is None:
            self._rules = _proxies.rules()
        proxy = self._routes[key] = _proxies.proxy_for(self._rules, *key)
        return proxy

    def _proxy_pool(self, proxy: str, scheme: str) -> Any:
        with self._lock:
            pool = self._proxies.get((proxy, scheme))
            if pool is None:
                pool = self._proxies[(proxy, scheme)] = self._make_proxy(proxy, scheme)
            return pool

    def _make_proxy(self, proxy: str, scheme: str) -> Any:
        from ._bridge import proxy_pool

        return proxy_pool(proxy, scheme, self._board, self._trust, KEEPALIVE_EXPIRY)

    def close(self) -> None:
        self.closed = True
        with self._lock:
            connections, self._open, self._idle = list(self._open), set(), {}
            proxies = list(self._proxies.values())
            self._proxies.clear()
        for connection in connections:
            connection.close()
        for pool in proxies:
            pool.close()
