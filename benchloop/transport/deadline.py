"""A total deadline and a cancel switch for requests made through httpx.

What httpx lacks: its timeouts bound each network operation (a connect, one
read, one write, a wait for the pool), never a request as a whole, so a server
that drips one byte of its head or body at a time keeps a request alive as
long as it likes (measured: 6-60 s where ``--timeout 2`` was asked).  And a
sync httpx request cannot be stopped from another thread, while a 401 on one
worker or a Ctrl-C must end every other request at once.  Two small pieces
add that, through httpx's public API only:

- **The head** of an answer is awaited on a wire thread (:meth:`Switchboard.send`):
  the caller stops waiting at its deadline or at a cancel, whatever the server
  does.  The exchange it leaves behind is ended at its next step (the
  request's ``trace`` extension raises once it is abandoned) or at once, by
  shutting its socket down, when its connection is known (a new connection
  announces itself through ``trace``).
- **Or on the caller's own thread**, when that is a worker (not the main
  thread, which must stay free for Ctrl-C) and the request's lane (:mod:`.lanes`,
  its own pool) holds an open connection to the origin: the request
  likely goes on it, and the lane knows its socket.  The watchdog then shuts
  the lane's sockets to that origin down at the deadline or at a cancel (and a
  new connection made meanwhile is known through ``trace``): the blocked read
  ends at once, as on a wire thread, without two thread hand-offs per request.
- **A body** is read by the caller.  While it reads, the connection's socket
  (the response's ``network_stream`` extension) is watched
  (:meth:`Switchboard.watch`): one watchdog thread shuts it down at the
  deadline, and a cancel shuts every watched one down, so a read blocked in
  any thread ends at once.

A socket is shut down with ``shutdown(SHUT_RDWR)`` (the value 2 on every
platform), which wakes a read blocked in another thread; closing it would not.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

_SHUT_RDWR = 2  # socket.SHUT_RDWR (SD_BOTH on Windows)
NEW_CONNECTION = "benchloop.new_connection"  # in a response's extensions: made for this request
IDLE_SECONDS = 30.0  # a wire thread with nothing to do for this long ends
# The endings of the trace events whose return value is the connection's network stream
# (``connection.``, ``http11.``, ``socks.``: a new connection, direct or through a proxy).
_STREAM_EVENTS = (".connect_tcp.complete", ".start_tls.complete")
# The close of an answer that came after its caller left goes through: raising there would
# leave its connection open and kill the wire thread that closes it.
_CLOSE_EVENTS = (".response_closed.started", ".response_closed.complete")


class Abandoned(Exception):
    """Raised inside an exchange its caller stopped waiting for, and to a caller at a cancel."""


class Overdue(Exception):
    """The deadline passed before the answer's head came."""


def shut(stream: Any) -> None:
    """Shut a network stream's socket down, whatever state it is in: a read blocked on it in
    another thread returns at once, and its connection is never reused."""
    try:
        sock = stream.get_extra_info("socket")
        if sock is not None:
            sock.shutdown(_SHUT_RDWR)
    except Exception:  # noqa: BLE001 - closed already, or not a socket: nothing left to stop
        pass


class _WireThreads:
    """Daemon threads that run exchanges: one stuck in an abandoned exchange never holds up the
    process's exit (a ThreadPoolExecutor's threads would be joined at exit)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def run(self, job: Callable[[], None]) -> None:
        with self._lock:
            spawn = self._idle == 0
            self._idle -= 0 if spawn else 1
            self._jobs.put(job)
        if spawn:
            threading.Thread(target=self._loop, name="bl-wire", daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():  # nothing was put for this thread meanwhile
                        self._idle -= 1
                        return
                continue
            try:
                job()
            finally:
                with self._lock:
                    self._idle += 1


class _Watchdog:
    """One thread that runs the watched actions (a stream's shutdown) at their deadlines."""

    def __init__(self) -> None:
        self.lock = threading.Condition(threading.Lock())
        self.watched: dict[int, Any] = {}
        self._heap: list[tuple[float, int]] = []
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, action: Callable[[], None], deadline: float) -> int:
        token = next(self._ids)
        with self.lock:
            self.watched[token] = action
            heapq.heappush(self._heap, (deadline, token))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="bl-watchdog", daemon=True)
                self._thread.start()
            elif self._heap[0][1] == token:
                self.lock.notify()  # the earliest deadline now
        return token

    def unwatch(self, token: int) -> None:
        with self.lock:
            self.watched.pop(token, None)

    def _run(self) -> None:
        with self.lock:
            while True:
                while self._heap and self._heap[0][1] not in self.watched:
                    heapq.heappop(self._heap)  # unwatched already
                left = self._heap[0][0] - time.monotonic() if self._heap else None
                if left is None or left > 0:
                    self.lock.wait(left)
                    continue
                self.watched.pop(heapq.heappop(self._heap)[1])()


_threads, _watchdog = _WireThreads(), _Watchdog()


def _forked() -> None:
    """In a forked child none of the parent's threads exist: start afresh."""
    global _threads, _watchdog
    _threads, _watchdog = _WireThreads(), _Watchdog()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


class Exchange:
    """One request's head on a wire thread: what came back, or what it failed with."""

    __slots__ = ("send", "done", "response", "error", "finished", "abandoned", "stream", "_lock", "lane",
                 "origin")

    def __init__(self, send: Callable[[Exchange], Any], lane: Any = None, origin: Any = None):
        self.send = send
        self.lane, self.origin = lane, origin
        self.done = threading.Event()
        self.response: Any = None
        self.error: BaseException | None = None
        self.finished = self.abandoned = False
        self.stream: Any = None
        self._lock = threading.Lock()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpx's ``trace`` extension: learn the connection, and stop once abandoned."""
        made = event.endswith(_STREAM_EVENTS)
        if made:
            self.stream = info.get("return_value")
            if self.lane is not None and self.stream is not None:
                self.lane.opened(self.origin, self.stream)
        if self.abandoned and not event.endswith(_CLOSE_EVENTS):
            if made and self.stream is not None:
                self.stream.close()  # made but not yet the connection's: nobody else closes it
            raise Abandoned(event)

    def __call__(self) -> None:
        response = None
        try:
            response = self.send(self)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as it is
            self.error = exc
        with self._lock:
            self.finished = True
            if not self.abandoned:
                self.response, response = response, None
        if response is not None:
            response.close()  # nobody reads it: the connection is dropped, never reused
        self.done.set()

    def abandon(self) -> None:
        with self._lock:
            self.abandoned = True
            response, self.response = self.response, None
        if response is not None:
            response.close()
        if self.stream is not None:
            shut(self.stream)

    def abandon_here(self) -> None:
        """End the exchange running on its caller's thread: every socket its lane opened to its
        origin is shut down (the one it waits on among them), and its next step raises."""
        with self._lock:
            self.abandoned = True
        for stream in ([self.stream] if self.stream is not None else []) + self.lane.of(self.origin):
            shut(stream)


class Switchboard:
    """The deadlines and the cancel switch of one client's requests."""

    def __init__(self, cancelled: threading.Event):
        self.cancelled = cancelled
        self._lock = threading.Lock()
        self._waiting: set[Exchange] = set()
        self._watching: set[int] = set()

    def send(self, send: Callable[[Exchange], Any], deadline: float, lane: Any = None, origin: Any = None) -> Any:
        """``send(exchange)`` on a wire thread (it passes ``exchange.trace`` as the request's
        ``trace`` extension); its response, or its error.  Raises :class:`Overdue` at the
        deadline and :class:`Abandoned` at a cancel, leaving the exchange to end by itself.
        On the caller's thread instead when it is a worker whose ``lane`` has a connection to
        ``origin`` open (see the module's docstring)."""
        exchange = Exchange(send, lane, origin)
        if lane is not None and lane.ready(origin) and threading.current_thread() is not threading.main_thread():
            return self._send_here(exchange, deadline)
        with self._lock:
            self._waiting.add(exchange)
        try:
            if not self.cancelled.is_set():
                _threads.run(exchange)
                exchange.done.wait(max(0.0, deadline - time.monotonic()))
            if self.cancelled.is_set() or not exchange.finished:
                exchange.abandon()
                raise Abandoned("cancelled") if self.cancelled.is_set() else Overdue()
        finally:
            with self._lock:
                self._waiting.discard(exchange)
        if exchange.error is not None:
            raise exchange.error
        exchange.response.extensions[NEW_CONNECTION] = exchange.stream is not None
        return exchange.response

    def _send_here(self, exchange: Exchange, deadline: float) -> Any:
        token = _watchdog.watch(exchange.abandon_here, deadline)
        with self._lock:
            self._watching.add(token)
        try:
            if self.cancelled.is_set():
                raise Abandoned("cancelled")
            try:
                response = exchange.send(exchange)
            except Abandoned:
                raise (Abandoned("cancelled") if self.cancelled.is_set() else Overdue()) from None
            if exchange.abandoned:  # the deadline or a cancel came with the head: too late
                response.close()
                raise Abandoned("cancelled") if self.cancelled.is_set() else Overdue()
        finally:
            self.unwatch(token)
        response.extensions[NEW_CONNECTION] = exchange.stream is not None
        return response

    def watch(self, stream: Any, deadline: float) -> int:
        """Shut ``stream`` down at ``deadline`` or at a cancel, until :meth:`unwatch`."""
        token = _watchdog.watch(functools.partial(shut, stream), deadline)
        with self._lock:
            self._watching.add(token)
        if self.cancelled.is_set():
            shut(stream)
        return token

    def unwatch(self, token: int) -> None:
        _watchdog.unwatch(token)
        with self._lock:
            self._watching.discard(token)

    def abort(self) -> None:
        """The cancel: every waiting caller stops now, every watched read ends."""
        with self._lock:
            waiting, tokens = list(self._waiting), list(self._watching)
        with _watchdog.lock:
            actions = [_watchdog.watched.get(token) for token in tokens]
        for exchange in waiting:
            exchange.done.set()
        for action in actions:
            if action is not None:
                action()
