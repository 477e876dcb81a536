"""A connection pool per request in flight, and a TLS context made only when an https URL needs it.

Why: one ``httpx.HTTPTransport`` shared by every worker is one pool shared by
every worker, and httpcore's pool takes its lock and walks every connection on
each request and each close (``_assign_requests_to_connections``: a third of
the client's CPU per request at ``--concurrency 16``).  :class:`Lanes` is an
``httpx`` transport (public API: ``httpx.BaseTransport``) that gives each
request in flight a pool of its own (a *lane*): a request scans only the one or
two connections of its lane, and never waits for another request's lock.
A lane is taken per request and given back when its answer is closed, its
connections kept alive: a command opens no more connections to an origin than
it has requests on the wire at once.

A lane also remembers the network streams of the connections it opened, per
origin: while its request waits for the answer's head on one of them, :mod:`.deadline` can shut them down at the deadline or at a cancel, so
the request can run on the worker's own thread rather than be handed to a wire
thread (:meth:`Lane.ready`).

:class:`LazyTLS` is the ``verify`` of every pool: an ``ssl.SSLContext`` that
builds the real one (``client.tls_context``: the system's trust store, or the
given bundle) once, at the first TLS handshake; a plain-http host never loads a
certificate.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from typing import Any

Origin = tuple[str, str, int]
LANE = "benchloop.lane"  # in a request's extensions: the lane it goes on


class LazyTLS(ssl.SSLContext):
    """An ``ssl.SSLContext`` whose handshakes go through ``make()``'s context, made at the first."""

    _make: Callable[[], ssl.SSLContext]
    _real: ssl.SSLContext | None
    _alpn: list[str] | None
    _lock: threading.Lock

    def __new__(cls, make: Callable[[], ssl.SSLContext]) -> LazyTLS:
        self = super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)
        self._make, self._real, self._alpn, self._lock = make, None, None, threading.Lock()
        return self

    def __init__(self, make: Callable[[], ssl.SSLContext]) -> None:
        pass  # everything is set in __new__ (ssl.SSLContext.__init__ takes no arguments)

    def real(self) -> ssl.SSLContext:
        """The context that verifies, made once."""
        made = self._real
        if made is None:
            with self._lock:
                made = self._real
                if made is None:
                    made = self._make()
                    if self._alpn is not None:
                        made.set_alpn_protocols(self._alpn)
                    self._real = made
        return made

    def set_alpn_protocols(self, alpn_protocols: Any) -> None:
        self._alpn = list(alpn_protocols)
        if self._real is not None:
            self._real.set_alpn_protocols(self._alpn)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
        return self.real().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
        return self.real().wrap_bio(*args, **kwargs)


def _open(stream: Any) -> bool:
    try:
        sock = stream.get_extra_info("socket")
        return sock is not None and sock.fileno() != -1
    except Exception:  # noqa: BLE001 - closed
        return False


class Lane:
    """One pool, serving one request at a time, and the streams of the connections it opened."""

    __slots__ = ("transport", "streams")

    def __init__(self, transport: Any):
        self.transport = transport
        self.streams: dict[Origin, list[Any]] = {}

    def opened(self, origin: Origin, stream: Any) -> None:
        """A connection was made to ``origin`` for a request of this lane."""
        kept = [s for s in self.streams.get(origin, ()) if _open(s)]
        kept.append(stream)
        self.streams[origin] = kept

    def ready(self, origin: Origin) -> bool:
        """Whether a connection to ``origin`` is open in this lane (the next request likely uses it)."""
        return any(_open(s) for s in self.streams.get(origin, ()))

    def of(self, origin: Origin) -> list[Any]:
        return list(self.streams.get(origin, ()))


class Lanes:
    """An httpx transport (``handle_request``, ``close``) whose requests each take a lane.

    A lane is taken for a request (:meth:`take`: a free one that has a connection to the
    request's origin if any, else any free one, else a new one) and given back once its
    answer is closed (:meth:`give`): a lane serves one request at a time, so its pool holds
    one or two connections and is scanned and locked by that request only, and there are no
    more lanes (nor connections to an origin) than requests on the wire at once."""

    def __init__(self, make: Callable[[], Any]):
        self._make = make
        self._free: list[Lane] = []
        self._every: list[Lane] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self, origin: Origin) -> Lane:
        with self._lock:
            if self._closed:  # as httpx.Client.send says of a closed client
                raise RuntimeError("Cannot send a request, as the client has been closed.")
            free = self._free
            for index in range(len(free) - 1, -1, -1):  # the most recently given back first
                if origin in free[index].streams:
                    return free.pop(index)
            if free:
                return free.pop()
            lane = Lane(self._make())
            self._every.append(lane)
            return lane

    def give(self, lane: Lane) -> None:
        with self._lock:
            if not self._closed:
                self._free.append(lane)

    def handle_request(self, request: Any) -> Any:
        if self._closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        lane = request.extensions.get(LANE)
        if lane is not None:
            return lane.transport.handle_request(request)
        # A request sent without a lane of its own: one for the exchange of its head.
        url = request.url
        lane = self.take((url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80)))
        try:
            return lane.transport.handle_request(request)
        finally:
            self.give(lane)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            lanes, self._every, self._free = self._every, [], []
        for lane in lanes:
            lane.transport.close()

    def __enter__(self) -> Lanes:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def lanes_transport(httpx: Any, make: Callable[[], Any]) -> Any:
    """:class:`Lanes` as an ``httpx.BaseTransport`` (httpx is imported only by the first client)."""

    class HttpxLanes(Lanes, httpx.BaseTransport):
        pass

    return HttpxLanes(make)
