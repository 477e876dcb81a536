"""Our connections: a deadline and a cancel switch over plain sockets.

``--timeout`` bounds each attempt as a whole (connect, redirects, headers and
body): every read and write of a connection gets only the time left to the
calling thread's deadline, so a server that drips one byte at a time cannot
keep a request alive.  A cancel (Ctrl-C, a 401 elsewhere) shuts every
connection of the client down, so reads blocked in other threads end at once.

This is the network backend of direct connections (:mod:`._h1`), and the one
module of the client that opens sockets.  It does what httpcore's sync backend
does (``socket.create_connection``, ``TCP_NODELAY``, ``SSLContext.wrap_socket``,
the same errors and messages) and two things it does not: a plain-TCP socket is
non-blocking and waits with ``poll`` only when it has nothing to give (httpcore
sets the socket's timeout before every read and write: one more system call
each, and one more release of the GIL, which at 16 requests in flight is a
measurable share of the client's CPU); and importing it costs no httpcore
(~60 ms: h11, ssl, logging) for a command whose host is plain HTTP.
Connections through a proxy are httpcore's (:mod:`._bridge`), under the same
switchboard and deadlines.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from typing import Any

from ._errors import (
    TRANSPORT_ERRORS as TRANSPORT_ERRORS,
)
from ._errors import (
    ConnectError,
    ConnectTimeout,
    ReadError,
    ReadTimeout,
    WriteError,
    WriteTimeout,
)

_when = threading.local()  # .deadline: the monotonic time the calling thread's attempt must end by


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
    return ReadTimeout(f"timed out: the request took longer than --timeout {_when.budget:g}s")


def _past_deadline() -> bool:
    deadline = getattr(_when, "deadline", None)
    return deadline is not None and time.monotonic() >= deadline


class Switchboard:
    """The open connections of one client and its cancel switch: ``abort`` shuts them all down."""

    def __init__(self, cancelled: threading.Event):
        self.cancelled = cancelled
        self._streams: set[Any] = set()  # ours, and httpcore's through a proxy (_bridge)
        self._lock = threading.Lock()

    def track(self, stream: Any) -> Any:
        with self._lock:
            self._streams.add(stream)
        if self.cancelled.is_set():
            stream.abort()
        return stream

    def untrack(self, stream: Any) -> None:
        with self._lock:
            self._streams.discard(stream)

    def abort(self) -> None:
        """Shut down every open connection: reads blocked in other threads end now."""
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            stream.abort()


class Stream:
    """One connection: reads and writes get only the time left; a cancel ends them.

    Over plain TCP the socket is non-blocking: a read polls first only when the
    answer to a request just sent is awaited, a write only when the socket's
    buffer is full.  Over TLS the socket keeps a timeout, set before each call.
    """

    def __init__(self, sock: Any, board: Switchboard):
        self._sock, self._board = sock, board
        self._tls = False
        self._sent = False  # a request was just written: its answer is awaited, poll before reading
        sock.setblocking(False)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._board.cancelled.is_set():
            raise ReadError("cancelled")
        try:
            return self._read_tls(max_bytes, timeout) if self._tls else self._read(max_bytes, timeout)
        except Exception:
            if _past_deadline():
                raise overdue() from None
            raise

    def _read(self, max_bytes: int, timeout: float | None) -> bytes:
        sock = self._sock
        wait, self._sent = self._sent, False
        while True:
            # The deadline is checked at every read, data waiting or not: a server sending
            # without end faster than we consume is cut at --timeout like a slow one.
            left = time_left(timeout)
            if wait and not _ready(sock, select.POLLIN, left):
                raise ReadTimeout("timed out")
            try:
                return sock.recv(max_bytes)
            except BlockingIOError:
                wait = True
            except OSError as exc:
                raise ReadError(str(exc)) from exc

    def _read_tls(self, max_bytes: int, timeout: float | None) -> bytes:
        try:
            self._sock.settimeout(time_left(timeout))
            return self._sock.recv(max_bytes)
        except TimeoutError as exc:
            raise ReadTimeout(str(exc)) from exc
        except OSError as exc:
            raise ReadError(str(exc)) from exc

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self._board.cancelled.is_set():
            raise WriteError("cancelled")
        sock = self._sock
        if self._tls:
            try:
                sock.settimeout(time_left(timeout))
                sock.sendall(buffer)
            except TimeoutError as exc:
                raise WriteTimeout(str(exc)) from exc
            except OSError as exc:
                raise WriteError(str(exc)) from exc
            return
        view = memoryview(buffer)
        self._sent = True
        while view:
            time_left(timeout)  # past the deadline: no further send
            try:
                view = view[sock.send(view):]
                continue
            except BlockingIOError:
                pass
            except OSError as exc:
                raise WriteError(str(exc)) from exc
            if not _ready(sock, select.POLLOUT, time_left(timeout)):
                raise WriteTimeout("timed out")

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> Stream:
        """TLS over this connection (certificate and host name checked by ``ssl_context``)."""
        try:
            self._sock.settimeout(time_left(timeout))
            self._sock = ssl_context.wrap_socket(self._sock, server_hostname=server_hostname)
        except TimeoutError as exc:
            self.close()
            raise ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            self.close()
            raise ConnectError(str(exc)) from exc
        except BaseException:
            self.close()
            raise
        self._tls = True
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "socket":
            return self._sock
        if info == "ssl_object":
            return self._sock if self._tls else None
        if info == "is_readable":
            return readable(self._sock)
        return None

    def close(self) -> None:
        self._board.untrack(self)
        self._sock.close()

    def abort(self) -> None:
        """Shut the socket down: a read blocked on it in another thread returns at once."""
        shut(self._sock)


def shut(sock: Any) -> None:
    """``shutdown(SHUT_RDWR)``, whatever state the socket is in."""
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, AttributeError, ValueError):
        pass


def readable(sock: Any) -> bool:
    """Whether an idle connection has something to read: for an idle keep-alive connection,
    that the server closed it (or broke the protocol).  A closed socket counts as readable."""
    if sock is None or sock.fileno() < 0:
        return True
    return _ready(sock, select.POLLIN, 0)


_LONGEST_POLL_MS = 2**31 - 1  # poll() takes an int of milliseconds (~24.8 days); a longer wait polls again


def _ready(sock: Any, event: int, timeout: float | None) -> bool:
    """Wait until ``sock`` can be read (or written), at most ``timeout`` seconds (None: no limit).

    A socket closed meanwhile (a cancel closing the client) counts as ready: the read or
    write that follows fails with the system's EBADF, as the wire error it is."""
    if sock.fileno() < 0:
        return True
    poller = select.poll()
    poller.register(sock, event)
    if timeout is None:
        return bool(poller.poll(None))
    ms = max(0, int(timeout * 1000 + 0.999))
    while ms > _LONGEST_POLL_MS:
        if poller.poll(_LONGEST_POLL_MS):
            return True
        ms -= _LONGEST_POLL_MS
    return bool(poller.poll(ms))


class Backend:
    """Opens the client's direct connections: :class:`Stream` s of one switchboard."""

    def __init__(self, board: Switchboard):
        self._board = board

    def connect_tcp(self, host: str, port: int, timeout: float | None = None) -> Stream:
        try:
            sock = socket.create_connection((host, port), time_left(timeout))
        except TimeoutError as exc:
            raise ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise ConnectError(str(exc)) from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass  # not TCP (a test's socketpair): nothing to turn off
        return self._board.track(Stream(sock, self._board))
