"""The HTTP side of the sandbox: a threaded HTTP/1.1 server and its handle.

Why a real server: the client under test must go through its real HTTP stack
(connection pooling, keep-alive, timeouts, streaming, redirects), so the
sandbox listens on loopback like any backend.  ``protocol_version`` is
HTTP/1.1 and every response carries ``Content-Length``, so one client
connection serves many requests - ``Sandbox.stats["connections"]`` counts
accepted TCP connections to make that observable.

Every method reaches the app, which answers 405 with ``Allow`` for a path
that has other methods; the stdlib's own refusals (a malformed request, a
header too long) are JSON too, so no answer of the sandbox is an HTML page,
and a HEAD answer carries no body.

``start_sandbox()`` generates the dataset, binds (port 0 = any free port) and
serves from a daemon thread; the returned :class:`Sandbox` is a context
manager whose ``stop()`` also cuts idle keep-alive connections.
"""

from __future__ import annotations

import socket
import socketserver
import ssl
import struct
import threading
import time
from collections.abc import Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .app import App, Config
from .dataset import Dataset
from .faults import RATE_KINDS, FaultPlan
from .handlers import Response, error_response
from .state import Fault, Headers, LoggedRequest, State

_FAULT_KINDS = ("status", "reset", "truncate", "slow")
SLOW_PIECES = 4


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "benchloop-sandbox/1"
    sys_version = ""
    # Buffer each answer and send it at once with Nagle off: header and body in
    # separate small segments would meet the peer's delayed ACK (~40 ms a request).
    wbufsize = 65536
    disable_nagle_algorithm = True
    server: _Server

    def setup(self) -> None:
        if isinstance(self.request, ssl.SSLSocket):
            self.request.do_handshake()  # here, not in accept(): a bad client stalls only itself
        super().setup()
        self.server.app.state.count("connections")
        self.server.track(self.connection)
        if self.server.connect_latency_s:
            # The round trip of a TCP handshake, paid once per connection before its first request.
            time.sleep(self.server.connect_latency_s)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        self.server.untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # quiet: tests and the demo own stderr

    def _serve(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self._write(error_response(400, "invalid Content-Length"))
            return
        raw_body = self.rfile.read(length) if length else b""
        headers = Headers(self.headers.items())
        app = self.server.app
        entry = LoggedRequest(self.command, self.path, headers, raw_body)
        app.state.record_request(entry)
        app.state.enter()
        try:
            read_at = time.monotonic()
            try:
                resp = app.handle(self.command, self.path, headers, raw_body)
            except Exception as exc:  # noqa: BLE001 - always answer something
                resp = error_response(500, f"sandbox failure: {exc!r}")
            if self.server.latency_s:
                # The answer leaves latency_s after its request was read, as from a backend across a
                # network whose own work fits in that round trip: the work of requests that came
                # together is not added to it one after another (it is here, on the client's cores).
                time.sleep(max(0.0, self.server.latency_s - (time.monotonic() - read_at)))
            entry.answered(resp.status, resp.content_type, resp.body if resp.chunks is None else None)
            self._write(resp)
            self.wfile.flush()  # sent now rather than just after we return: leave() times the answer
        finally:
            app.state.leave()

    def __getattr__(self, name: str) -> Any:
        """Every method reaches the app (``do_GET``, ``do_TRACE``, ``do_FOO``...): it answers 405
        with ``Allow`` for a path that has other methods, like any error, in JSON."""
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The stdlib's own refusals (a malformed request line, headers too long) as JSON, not HTML."""
        self.close_connection = True
        try:
            self._write(error_response(code, message or self.responses.get(code, ("error",))[0]))
        except OSError:
            pass

    def _write(self, resp: Response) -> None:
        if resp.fault == "reset":
            # RST instead of an answer: linger 0 makes close() abort the connection.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        length = resp.length if resp.chunks is not None else len(resp.body)
        self.send_response(resp.status)
        self.send_header("Content-Type", resp.content_type)
        self.send_header("Content-Length", str(length))
        for key, value in resp.headers.items():
            self.send_header(key, value)
        if resp.fault == "truncate":
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command == "HEAD" or resp.status in (204, 304) or resp.status < 200:
            return  # no body, whatever Content-Length says (RFC 9110 9.3.2)
        if resp.fault == "truncate":
            body = resp.body if resp.chunks is None else b"".join(resp.chunks)
            self.wfile.write(body[: max(0, len(body) // 2)])
            return
        if resp.fault == "slow":
            # The whole answer, in a few pieces with pauses (a slow link or a busy server).
            body = resp.body if resp.chunks is None else b"".join(resp.chunks)
            step = max(1, -(-len(body) // SLOW_PIECES))
            for start in range(0, len(body), step):
                self.wfile.write(body[start:start + step])
                self.wfile.flush()
                time.sleep(self.server.app.fault_plan.slow_pause_s)
            return
        if resp.chunks is None:
            self.wfile.write(resp.body)
        else:
            for chunk in resp.chunks:
                self.wfile.write(chunk)


class QuietHTTPServer(ThreadingHTTPServer):
    """A threaded loopback server for tests and the sandbox: daemon threads, no
    reverse DNS lookup at bind, and quiet about clients that hang up."""

    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up or resets mid-request is normal here (fault tests,
        killed clients, a timed-out update check): stay quiet about it; anything
        else is still reported."""
        import sys

        # OSError covers resets, timeouts and TLS failures; ValueError is a socket
        # file closed under a daemon thread while the interpreter shuts down.
        if isinstance(sys.exc_info()[1], (OSError, ValueError)):
            return
        super().handle_error(request, client_address)

    def server_bind(self) -> None:
        # Skip HTTPServer.server_bind: its getfqdn() reverse lookup can stall.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)


class _Server(QuietHTTPServer):
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: App, latency_ms: float, connect_latency_ms: float = 0):
        self.app = app
        self.latency_s = max(0.0, latency_ms) / 1000.0
        self.connect_latency_s = max(0.0, connect_latency_ms) / 1000.0
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _RequestHandler)

    def track(self, sock: socket.socket) -> None:
        with self._open_lock:
            self._open.add(sock)

    def untrack(self, sock: socket.socket) -> None:
        with self._open_lock:
            self._open.discard(sock)

    def close_open_connections(self) -> None:
        with self._open_lock:
            socks, self._open = list(self._open), set()
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Sandbox:
    """A running sandbox backend (see :func:`start_sandbox`)."""

    def __init__(self, app: App, server: _Server, thread: threading.Thread, scheme: str = "http"):
        self.app = app
        self._server = server
        self._thread = thread
        host, port = server.server_address[:2]
        self.host, self.port = str(host), int(port)
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"{scheme}://{shown}:{self.port}"
        app.scheme = scheme
        app.default_base_url = self.url
        self._stopped = False

    # -------------------------------------------------------------- access
    @property
    def api_key(self) -> str:
        return self.app.config.api_key

    @property
    def ap_api_key(self) -> str:
        """The key of the AgentPlatform endpoints (``ap-cmd``)."""
        return self.app.config.ap_api_key

    @property
    def dataset(self) -> Dataset:
        return self.app.dataset

    @property
    def live(self) -> Any:
        """The live group's clock (``live.LiveGroup``): ``advance(n)``, ``restart()``."""
        return self.app.live

    @property
    def seed(self) -> int:
        return self.app.dataset.seed

    @property
    def stats(self) -> dict[str, Any]:
        """Snapshot: connections, requests, max_in_flight (the peak of requests
        answered at once), unauthorized, not_found, one count per endpoint name
        (and ``_export``/``_oss``/``_sso``), ``triggers`` and ``posts`` (lists of
        ``{endpoint, params, body}``), and ``first_request_monotonic`` /
        ``last_answer_monotonic``: this process's ``time.monotonic()`` when the
        first request was read and the last answer sent (None before any), so a
        benchmark can time a client's requests without its start-up."""
        return self.app.state.snapshot()

    @property
    def requests_log(self) -> list[LoggedRequest]:
        """Recent requests (bounded): ``(method, path_with_query, headers)``."""
        return self.app.state.requests_log()

    def reset_stats(self) -> None:
        self.app.state.reset_stats()

    def reset_state(self) -> None:
        """Restart the export/RSI/behaviour flows and drop pending faults."""
        self.app.reset_state()

    def inject_fault(
        self,
        endpoint: str | None = None,
        *,
        kind: str = "status",
        status: int = 503,
        retry_after: float | None = None,
        count: int = 1,
    ) -> None:
        """Make the next ``count`` requests to ``endpoint`` (None: any) fail.

        ``kind``: ``status`` answers ``status`` with a JSON error (and
        ``Retry-After`` when given), ``reset`` aborts the connection without an
        answer, ``truncate`` sends half of the real body then closes, ``slow``
        sends the real body in pieces with pauses.
        """
        if kind not in _FAULT_KINDS:
            raise ValueError(f"kind must be one of {_FAULT_KINDS}")
        self.app.state.add_fault(Fault(endpoint, kind, status, retry_after, count))

    @contextmanager
    def faulted(self, endpoint: str | None = None, **fault: Any):
        """``with sb.faulted("job_report", status=503): ...``: fresh counters, one
        injected fault (see ``inject_fault``), and the flows and pending faults
        restored afterwards, so a shared sandbox stays clean for the next test."""
        self.reset_stats()
        self.inject_fault(endpoint, **fault)
        try:
            yield self
        finally:
            self.reset_state()

    def configure_faults(self, rate: float | None = None, *, seed: int | None = None,
                         kinds: Sequence[str] | None = None, slow_pause_s: float | None = None) -> None:
        """Change the seeded random faults (see :mod:`benchloop.sandbox.faults`).

        Also forgets how often each request was seen, so the same client run
        meets the same faults again.
        """
        old = self.app.fault_plan
        self.app.fault_plan = FaultPlan(
            rate=old.rate if rate is None else rate,
            seed=old.seed if seed is None else seed,
            kinds=old.kinds if kinds is None else tuple(kinds),
            slow_pause_s=old.slow_pause_s if slow_pause_s is None else slow_pause_s,
        )
        with self.app.state.lock:
            self.app.state.occurrences = {}

    @property
    def range_support(self) -> bool:
        return self.app.config.range_support

    @range_support.setter
    def range_support(self, value: bool) -> None:
        self.app.config.range_support = bool(value)

    # ------------------------------------------------------------ lifetime
    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.close_open_connections()
        self._server.server_close()
        self._thread.join(timeout=5)
        self.app.dataset.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<Sandbox {self.url} seed={self.seed}>"


def serve_in_thread(server: ThreadingHTTPServer, tls: tuple[str, str] | None,
                    name: str) -> tuple[threading.Thread, str]:
    """Wrap ``server`` in TLS when a (cert, key) pair is given and serve it from a
    daemon thread; returns the thread and the URL scheme."""
    scheme = "http"
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True,
                                            do_handshake_on_connect=False)
        scheme = "https"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name=f"{name}:{server.server_address[1]}", daemon=True)
    thread.start()
    return thread, scheme


def start_sandbox(
    seed: int = 7,
    groups: int = 3,
    jobs_per_group: int | Sequence[int] = 40,
    tasks_per_group: int | Sequence[int] = 25,
    api_key: str = "sandbox-key",
    latency_ms: float = 0,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    connect_latency_ms: float = 0,
    ap_api_key: str = "ap-sandbox-key",
    trajectory_steps: int = 0,
    artifact_bytes: int = 4096,
    export_waiting: int = 1,
    export_running: int = 1,
    behavior_running_polls: int = 1,
    db_path: str = ":memory:",
    fault_rate: float = 0.0,
    fault_seed: int = 0,
    fault_kinds: Sequence[str] = RATE_KINDS,
    range_support: bool = True,
    hostile: bool = False,
    compare_jobs: int = 0,
    live_jobs: int = 0,
    live_compare: int = 0,
    live_pace: float = 2.0,
    live_unsigned: int = 0,
    scale_jobs: int = 0,
    object_store_url: str | None = None,
    redirect_artifacts: bool = False,
    tls: tuple[str, str] | None = None,
) -> Sandbox:
    """Generate the dataset and serve it on ``host:port`` from a daemon thread.

    ``latency_ms`` delays every answer (one round trip); ``connect_latency_ms``
    delays a new connection once, before its first request is read (the round
    trip of a TCP handshake): with both at 50, a client that opens a connection
    per request waits twice as long as one that keeps its connections alive.

    ``jobs_per_group``/``tasks_per_group`` take one size for every group or a
    sequence with one size per group.  ``export_waiting``/``export_running`` set
    how many ``waiting_for_data`` create answers and ``running`` status polls
    the trace export gives before succeeding (0 makes the flow instant).

    ``fault_rate``/``fault_seed``/``fault_kinds``: every request except a
    failed authentication is faulted with probability ``fault_rate``, decided
    by a hash of the seed and the request (see :mod:`benchloop.sandbox.faults`).
    ``range_support=False`` makes the binary endpoints ignore ``Range``.
    ``hostile=True`` adds the group ``GHOSTILE`` (job ids and artifact names
    with ``../``, absolute paths, NUL, backslashes, control characters, 1,000
    characters) and the download task ``THOSTILE`` over its jobs.
    ``trajectory_steps=0`` gives every job its story (as many turns as its report says,
    :mod:`benchloop.sandbox.trajectories`); N > 0 gives N steps of it (load tests).
    ``compare_jobs=N`` adds the groups ``BASE``, ``CAND``, ``CAND2``, ``REPO-BASE``
    and ``REPO-CAND`` of N jobs each: runs of one benchmark for ``bl compare`` (0,
    the default, keeps the dataset's totals as they are).  ``live_jobs=N`` adds the live
    group ``GLIVE``: N running jobs, one more finishing every ``live_pace`` seconds once a
    request names the group (``live.py``; ``Sandbox.live.advance(n)`` finishes n at once);
    ``live_compare=N`` adds the live comparison groups ``GLIVE-BASE``, ``GLIVE-CAND`` and
    ``GLIVE-SAME`` (N running jobs each, finishing with the same clock).
    ``live_unsigned=N`` makes the artifact of its job N unsignable once it finished.
    ``scale_jobs=N`` adds the scale groups ``GSCALE`` and ``GSCALE2`` of N jobs each, generated
    page by page and never stored (``scale.py``: 10^6 jobs cost nothing at start).
    """
    plan = FaultPlan(rate=fault_rate, seed=fault_seed, kinds=tuple(fault_kinds))
    dataset = Dataset(seed, groups, jobs_per_group, tasks_per_group, db_path=db_path,
                      hostile=hostile, compare_jobs=compare_jobs, live_jobs=live_jobs,
                      live_compare=live_compare, scale_jobs=scale_jobs)
    state = State(export_waiting=export_waiting, export_running=export_running,
                  behavior_running_polls=behavior_running_polls)
    app = App(dataset, Config(api_key=api_key, ap_api_key=ap_api_key, trajectory_steps=trajectory_steps,
                              artifact_bytes=artifact_bytes, range_support=range_support,
                              object_store_url=object_store_url, redirect_artifacts=redirect_artifacts,
                              live_pace=live_pace, live_unsigned=live_unsigned), state)
    app.fault_plan = plan
    server = _Server((host, port), app, latency_ms, connect_latency_ms)
    thread, scheme = serve_in_thread(server, tls, "benchloop-sandbox")
    return Sandbox(app, server, thread, scheme)
