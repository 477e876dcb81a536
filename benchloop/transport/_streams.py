"""Connections that obey a deadline and a cancel switch.

``--timeout`` bounds each attempt as a whole (connect, redirects, headers and
body): every read and write of a connection gets only the time left to the
calling thread's deadline, so a server that drips one byte at a time cannot
keep a request alive.  A cancel (Ctrl-C, a 401 elsewhere) shuts every
connection of the client down, so reads blocked in other threads end at once.

Both are a wrapper around httpcore's network backend, the public seam httpcore
offers for this (``network_backend=``): every connection the client opens,
direct (:mod:`._h1`) or through a proxy (httpcore's pools), is a :class:`Stream`
registered with its :class:`Switchboard`.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpcore

_when = threading.local()  # .deadline: the monotonic time the calling thread's attempt must end by

# Every error of the wire: what a request can fail with once handed to a connection (ours or httpcore's).
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    httpcore.NetworkError, httpcore.TimeoutException, httpcore.ProtocolError, httpcore.ProxyError,
    httpcore.UnsupportedProtocol)


class Deadline:
    """``with Deadline(seconds):`` the calling thread's attempt must end within ``seconds``."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self) -> None:
        _when.budget = self.seconds
        _when.deadline = time.monotonic() + self.seconds

    def __exit__(self, *exc: object) -> None:
        _when.deadline = None


def time_left(timeout: float | None) -> float | None:
    """``timeout`` cut to what is left of the calling thread's deadline."""
    deadline = getattr(_when, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise overdue()
    return left if timeout is None else min(timeout, left)


def overdue() -> BaseException:
    return httpcore.ReadTimeout(f"timed out: the request took longer than --timeout {_when.budget:g}s")


def _past_deadline() -> bool:
    deadline = getattr(_when, "deadline", None)
    return deadline is not None and time.monotonic() >= deadline


class Switchboard:
    """The open connections of one client and its cancel switch: ``abort`` shuts them all down."""

    def __init__(self, cancelled: threading.Event):
        self.cancelled = cancelled
        self._streams: set[Stream] = set()
        self._lock = threading.Lock()

    def track(self, stream: Stream) -> Stream:
        with self._lock:
            self._streams.add(stream)
        if self.cancelled.is_set():
            stream.abort()
        return stream

    def untrack(self, stream: Stream) -> None:
        with self._lock:
            self._streams.discard(stream)

    def abort(self) -> None:
        """Shut down every open connection: reads blocked in other threads end now."""
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            stream.abort()


class Stream(httpcore.NetworkStream):
    """One connection: reads and writes get only the time left; a cancel ends them."""

    def __init__(self, inner: httpcore.NetworkStream, board: Switchboard):
        self._inner, self._board = inner, board

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._board.cancelled.is_set():
            raise httpcore.ReadError("cancelled")
        try:
            return self._inner.read(max_bytes, time_left(timeout))
        except Exception:
            if _past_deadline():
                raise overdue() from None
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self._board.cancelled.is_set():
            raise httpcore.WriteError("cancelled")
        self._inner.write(buffer, time_left(timeout))

    def close(self) -> None:
        self._board.untrack(self)
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        self._inner = self._inner.start_tls(ssl_context, server_hostname, time_left(timeout))
        return self

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)

    def abort(self) -> None:
        """Shut the socket down: a read blocked on it in another thread returns at once."""
        try:
            sock = self._inner.get_extra_info("socket")
            if sock is not None:
                sock.shutdown(2)  # SHUT_RDWR
        except (OSError, AttributeError, ValueError):
            pass


class Backend(httpcore.NetworkBackend):
    """httpcore's sync network backend whose connections are :class:`Stream` s of one board."""

    def __init__(self, board: Switchboard):
        self._inner = httpcore.SyncBackend()
        self._board = board

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        inner = self._inner.connect_tcp(host, port, time_left(timeout), local_address, socket_options)
        return self._board.track(Stream(inner, self._board))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        inner = self._inner.connect_unix_socket(path, time_left(timeout), socket_options)
        return self._board.track(Stream(inner, self._board))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)
