"""One HTTP client per process: one httpx client, one retry policy, a cancel switch.

Every request - JSON API calls, POST triggers, streamed downloads (artifacts,
export files, media, artifact proxies and the presigned URLs they redirect
to) - goes through one shared ``httpx.Client``, with or without a proxy, so
each security rule holds in exactly one place:

- the API key (``X-API-Key``, or the ``auth_header`` given) is sent only to the configured origin; JSON
  requests never follow redirects, downloads follow them by hand and attach
  the key only on hops that stay on that origin; an HTTPS to HTTP redirect is
  refused, and there is no HTTPS to HTTP fallback anywhere;
- TLS is always verified, against ``--ca-bundle``, else ``SSL_CERT_FILE``,
  else ``SSL_CERT_DIR``, else certifi (loaded at the first TLS handshake, so
  a plain-HTTP backend never pays for it);
- ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` apply to
  every request alike (httpx reads them once, per URL);
- ``--timeout`` bounds each request as a whole (an attempt: connect, redirects, headers and
  body): every read and write of the connection gets only the time left, so a server that
  drips one byte at a time cannot keep a request alive;
- a cancel (Ctrl-C, a 401 elsewhere) shuts the client's connections down, so reads blocked
  in other threads end at once;
- a redirect to a login page is recognised by the login hosts the table names for the
  service (``login_hosts``), never by words in a URL.

The client is built at the first request (``bl --help`` and friends never
import httpx).  Retries follow :mod:`benchloop.transport.retry`, one policy for every
kind of request.

Requests in flight are bounded by ``--concurrency`` through the slots of the
worker pool (``use_slots``), held only while a request is on the wire.  The
connection pool itself has no limit (see ``pool_limits``): a request never
waits in httpcore's queue, where a known race (encode/httpcore#1110) can
close the connection a queued request was just given and leave it hanging
until its read timeout.  The slots keep the number of connections at about
the number of requests in flight.

Bodies: JSON answers may be gzip/deflate-encoded (decoded here, capped at
``MAX_JSON_BYTES`` decoded); downloads ask for ``Accept-Encoding: identity``
and are decoded anyway if the server compresses, so a saved file holds the
object's bytes.  Decoding is done in pieces of at most ``PIECE`` bytes and a
body that expands more than ``BOMB_RATIO``-fold past ``BOMB_FLOOR`` bytes is
refused (a decompression bomb).  An error body is cut to ``MAX_ERROR_TEXT``
characters before it becomes a message.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from contextlib import nullcontext
from typing import Any
from urllib.parse import quote

from ..base.errors import ApiError, AuthError, Cancelled, NetworkError
from ..version import __version__
from .retry import (
    AUTH,
    MAX_RETRY_AFTER,  # noqa: F401 - re-exported (tests fuzz it through this module)
    RESTART,
    SENT,
    Failed,
    RetryPolicy,
    classify_status,
    classify_transport,
    retry_after,
)

_retry_after = retry_after  # the old private name, still used by tests

# A decoded (gzip/deflate) JSON answer larger than this is refused: a small
# compressed body must not be able to exhaust memory.
MAX_JSON_BYTES = 256 << 20
# Decoding stops as a bomb once the output passes BOMB_FLOOR bytes and BOMB_RATIO times the input.
BOMB_FLOOR = 16 << 20
BOMB_RATIO = 200
PIECE = 1 << 20  # at most this much decoded output at a time
# An error answer's body is cut to this many characters in a message (stderr is for people).
MAX_ERROR_TEXT = 2000
# Idle keep-alive connections are closed after this many seconds (httpx's default).
KEEPALIVE_EXPIRY = 5.0
CHUNK = 65536


def quote_segment(value: str) -> str:
    """One URL path segment: every reserved character encoded, and '.'/'..' too
    (they would otherwise be removed as dot segments and change the path)."""
    if value in (".", ".."):
        return value.replace(".", "%2E")
    return quote(value, safe="")


_slots = threading.local()


def use_slots(gate: threading.Semaphore | None) -> None:
    """Make the calling thread's requests hold a slot of ``gate`` while on the wire.

    A worker pool runs a few more threads than ``--concurrency`` and gives them
    one gate of ``--concurrency`` slots: requests in flight never exceed the
    option, and a thread that is decoding or writing its last answer does not
    keep the next request waiting.
    """
    _slots.gate = gate


def current_slots() -> threading.Semaphore | None:
    """The gate of the pool the calling thread works for, if any."""
    return getattr(_slots, "gate", None)


def _slot() -> Any:
    gate = current_slots()
    return gate if gate is not None else nullcontext()


def same_origin(a: str, b: str) -> bool:
    from urllib.parse import urlsplit

    x, y = urlsplit(a), urlsplit(b)
    return (x.scheme.lower(), x.hostname, x.port or _default_port(x.scheme)) == (
        y.scheme.lower(), y.hostname, y.port or _default_port(y.scheme))


def _default_port(scheme: str) -> int:
    return 443 if scheme.lower() == "https" else 80


class ArtifactMissing(Exception):
    """The download endpoint says there is nothing to download (404 or an HTML page)."""


def _missing_check(status: int, headers: Any, url: str) -> None:
    """The check behind ``download(missing_ok=True)``: 404 or an HTML page means "no artifact".
    (A redirect to a login page is an authentication failure before any check runs.)"""
    if status == 404:
        raise ArtifactMissing("artifact not found (HTTP 404)")
    if status < 400 and "text/html" in headers.get("content-type", ""):
        raise ArtifactMissing("download returned an html error page (artifact missing?)")


def is_login_url(url: str, login_hosts: tuple[str, ...], origin: str | None = None) -> bool:
    """Whether ``url`` is a login page: its host is one of ``login_hosts`` (case-insensitive),
    or, on ``origin`` itself, its path starts with ``/_sso/<login host>/`` or ``/<login host>/``
    (the forms in which the sandbox and test backends serve a stand-in SSO page).  Words such as
    "login" in a path, a file name or a query mean nothing."""
    from urllib.parse import urlsplit

    if not login_hosts:
        return False
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    hosts = {h.lower() for h in login_hosts}
    if host in hosts:
        return True
    try:
        here = origin is not None and same_origin(url, origin)
    except ValueError:
        here = False
    if here:
        segments = parts.path.split("/")[1:3]
        if segments[:1] == ["_sso"]:
            segments = segments[1:]
        return bool(segments) and segments[0].lower() in hosts
    return False


def _scheme(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).scheme.lower()
    except ValueError:
        return ""


def import_httpx():
    """Import httpx without its optional command line.

    httpx's ``__init__`` imports ``httpx._main`` (click, rich, pygments) whenever
    click is installed, which costs ~55 ms per ``bl`` start for a CLI we never
    use.  Marking that one submodule unavailable makes httpx take its own
    documented fallback.
    """
    import sys

    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx

    return httpx


def pool_limits(httpx: Any) -> Any:
    """The connection pool's limits: none on the number of connections.

    httpcore 1.0.9 can close a connection it has just assigned to a waiting
    request - to make room at ``max_connections``, or as a surplus over
    ``max_keepalive_connections`` - and that request then hangs until its read
    timeout (encode/httpcore#1110, open).  Both closes need a full pool.  An
    unlimited pool is never full, so no request ever waits in httpcore's queue
    and neither close happens.  The number of connections is bounded where
    it is decided anyway: by the request slots (``--concurrency`` per pool,
    nested pools included), never by how many threads exist.
    """
    return httpx.Limits(max_connections=None, max_keepalive_connections=None, keepalive_expiry=KEEPALIVE_EXPIRY)


# ------------------------------------------------------------------ bodies
class _Undecodable(ValueError):
    """A body in a Content-Encoding we cannot (or failed to) decode, or too large decoded."""


_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class _Decoder:
    """Incremental gzip/deflate decoding (deflate with or without its zlib wrapper)."""

    def __init__(self, coding: str):
        self.coding = coding
        self._z = zlib.decompressobj(_WBITS[coding])
        self._head = b""  # deflate: the first bytes, until the wrapper is recognised
        self._sniffed = coding != "deflate"
        self.taken = 0  # encoded bytes fed
        self.given = 0  # decoded bytes produced

    def feed(self, data: bytes, limit: int | None = None) -> bytes:
        """Decoded bytes of ``data``; with ``limit``, more than ``limit`` of them is an error."""
        return b"".join(self.pieces(data, limit))

    def pieces(self, data: bytes, limit: int | None = None):
        """The decoded bytes of ``data`` in pieces of at most ``PIECE`` bytes (memory stays
        bounded whatever the ratio); a decompression bomb or more than ``limit`` is an error."""
        try:
            if not self._sniffed:
                data, self._head = self._head + data, b""
                if len(data) < 2:
                    self._head = data
                    return
                if (data[0] & 0x0F) != 8 or ((data[0] << 8) | data[1]) % 31:
                    self._z = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as some servers send
                self._sniffed = True
            self.taken += len(data)
            produced = 0
            while data:
                piece = self._z.decompress(data, PIECE)
                data = self._z.unconsumed_tail
                if self._z.eof and self._z.unused_data and self.coding != "deflate":
                    data = self._z.unused_data + data  # another gzip member follows
                    self._z = zlib.decompressobj(_WBITS[self.coding])
                elif self._z.eof:
                    data = b""
                produced += len(piece)
                self.given += len(piece)
                if limit is not None and produced > limit:
                    raise _Undecodable(f"{self.coding} body decodes to more than {MAX_JSON_BYTES} bytes")
                if self.given > BOMB_FLOOR and self.given > BOMB_RATIO * self.taken:
                    raise _Undecodable(f"{self.coding} body expands more than {BOMB_RATIO}-fold "
                                       f"(over {self.given} bytes from {self.taken}); refused as a "
                                       "decompression bomb")
                if piece:
                    yield piece
        except zlib.error as exc:
            raise _Undecodable(f"corrupt {self.coding} body: {exc}") from None

    def finish(self) -> bytes:
        if not self._sniffed:
            raise _Undecodable(f"corrupt {self.coding} body: too short")
        try:
            tail = self._z.flush()
        except zlib.error as exc:
            raise _Undecodable(f"corrupt {self.coding} body: {exc}") from None
        if not self._z.eof:
            raise _Undecodable(f"corrupt {self.coding} body: the compressed stream is incomplete")
        return tail


def _decoder(headers: Any) -> _Decoder | None:
    """The decoder a response's Content-Encoding needs (None for none or identity)."""
    value = headers.get("content-encoding")
    if not value:
        return None
    codings = [c for c in (t.strip().lower() for t in value.split(",")) if c and c != "identity"]
    if not codings:
        return None
    if len(codings) > 1 or codings[0] not in _WBITS:
        raise _Undecodable(f"unsupported Content-Encoding: {value.strip()}")
    return _Decoder(codings[0])


def _query(params: dict[str, Any]) -> str:
    """The query string exactly as httpx's ``params=`` encodes it: booleans lower-case,
    None empty, lists repeated, ``urlencode`` quoting."""
    from urllib.parse import urlencode

    def text(value: Any) -> str:
        return "true" if value is True else "false" if value is False else "" if value is None else str(value)

    return urlencode([(key, text(item)) for key, value in params.items()
                      for item in (value if isinstance(value, (list, tuple)) else [value])])


def _cut(text: str, size: int | None = None) -> str:
    """An error body as a message: at most ``MAX_ERROR_TEXT`` characters, saying what was cut."""
    if len(text) <= MAX_ERROR_TEXT:
        return text
    total = f"{size} bytes" if size is not None else f"{len(text)} characters"
    return f"{text[:MAX_ERROR_TEXT]}... (cut: the answer has {total})"


def _redact(content: bytes, secret: str | None) -> bytes:
    """``content`` without ``secret``, raw or JSON-escaped: redacted before anything escapes it."""
    if secret:
        for form in {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}:
            content = content.replace(form.encode("utf-8", "surrogatepass"), b"***")
    return content


def _error_body(content: bytes, secret: str | None = None) -> Any:
    """An error answer's body for ``ApiError``: its JSON when small, else the start of its text."""
    content = _redact(content, secret)
    if len(content) <= MAX_ERROR_TEXT:
        return _parsed_or_text(content)
    return _cut(content[:MAX_ERROR_TEXT * 4].decode("utf-8", "replace"), len(content))


def _json_body(body: Any) -> bytes:
    return json.dumps(body if body is not None else {}, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _make_trust(cafile: str | None, capath: str | None):
    """An SSL context that loads its trust store at the first handshake, not before.

    Loading certifi's bundle costs ~25 ms; a plain-HTTP backend never needs it.
    Otherwise it is ``ssl.create_default_context(cafile=..., capath=...)``:
    certificates and host names always verified.
    """
    import ssl

    lock = threading.Lock()

    class LazyTrust(ssl.SSLContext):
        loaded = False

        def _load(self) -> None:
            with lock:
                if self.loaded:
                    return
                if capath:
                    self.load_verify_locations(capath=capath)
                elif cafile:
                    self.load_verify_locations(cafile=cafile)
                else:
                    import certifi

                    self.load_verify_locations(cafile=certifi.where())
                self.loaded = True

        def wrap_socket(self, *args: Any, **kwargs: Any):  # type: ignore[override]
            if not self.loaded:
                self._load()
            return super().wrap_socket(*args, **kwargs)

        def wrap_bio(self, *args: Any, **kwargs: Any):  # type: ignore[override]
            if not self.loaded:
                self._load()
            return super().wrap_bio(*args, **kwargs)

    return LazyTrust(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname: always verified


_when = threading.local()  # .deadline: the monotonic time the calling thread's request must end by


def _time_left(timeout: float | None) -> float | None:
    """``timeout`` cut to what is left of the calling thread's request deadline."""
    deadline = getattr(_when, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise _overdue()
    return left if timeout is None else min(timeout, left)


def _overdue() -> BaseException:
    import httpx

    return httpx.ReadTimeout(f"timed out: the request took longer than --timeout {_when.budget:g}s")


class _Stream:
    """One connection of the pool: every read and write gets only the time left to the
    request's deadline; registered with its client, which can shut it down (cancel)."""

    def __init__(self, inner: Any, owner: Http):
        self._inner, self._owner = inner, owner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._owner.cancelled.is_set():
            raise self._owner._cancelled_error()
        try:
            return self._inner.read(max_bytes, _time_left(timeout))
        except Exception:
            if getattr(_when, "deadline", None) is not None and time.monotonic() >= _when.deadline:
                raise _overdue() from None
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self._owner.cancelled.is_set():
            raise self._owner._cancelled_error()
        self._inner.write(buffer, _time_left(timeout))

    def close(self) -> None:
        self._owner._untrack(self)
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None):
        self._inner = self._inner.start_tls(ssl_context, server_hostname, _time_left(timeout))
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


class _Backend:
    """httpcore's network backend of a connection pool, wrapped: connections are ``_Stream``s."""

    def __init__(self, inner: Any, owner: Http):
        self._inner, self._owner = inner, owner

    def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["timeout"] = _time_left(kwargs.get("timeout"))
        return self._owner._track(_Stream(self._inner.connect_tcp(*args, **kwargs), self._owner))

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["timeout"] = _time_left(kwargs.get("timeout"))
        return self._owner._track(_Stream(self._inner.connect_unix_socket(*args, **kwargs), self._owner))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _CancelSwitch(threading.Event):
    """The shared cancel switch; setting it also shuts every connection of the client down."""

    def __init__(self, on_set: Any):
        super().__init__()
        self._on_set = on_set

    def set(self) -> None:
        first = not self.is_set()
        super().set()
        if first:
            self._on_set()


class Http:
    """The process's HTTP client; thread-safe, shared by every worker."""

    def __init__(self, host: str, api_key: str | None, timeout: float, retry: int, pool: int, log,
                 ca_bundle: str | None = None, *, auth_header: str = "X-API-Key",
                 auth_statuses: tuple[int, ...] = (401,), login_hosts: tuple[str, ...] = ()):
        """``auth_header`` carries ``api_key`` (to this origin only); ``auth_statuses`` are the
        answers that mean "authentication failed" (a second service may count 403 too);
        a redirect to one of ``login_hosts`` (the service's SSO, from the table) is one too."""
        self.host = host.rstrip("/")
        self.auth_statuses = auth_statuses
        self.api_key = api_key
        self.retry = max(0, retry)
        self.log = log
        self.login_hosts = tuple(login_hosts)
        self._streams: set[_Stream] = set()
        self._streams_lock = threading.Lock()
        self.cancelled = _CancelSwitch(self.abort)
        self.policy = RetryPolicy(self.retry, self.cancelled, log)
        self.timeout = timeout
        # The pool is not sized from this any more (see ``pool_limits``); kept for the callers.
        self.pool_size = pool
        self.ca_bundle = ca_bundle
        self.headers = {"Accept": "application/json", "Accept-Encoding": "gzip, deflate",
                        "User-Agent": f"benchloop-client/{__version__}"}
        self.auth_header = auth_header
        self._key = {auth_header: api_key} if api_key else {}
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._ssl: Any = None
        self._transport_error: type[BaseException] = Exception
        self._request_class: Any = None
        self._extensions: dict[str, Any] = {}
        self._defaults: dict[str, str] = {}

    # -- the client ----------------------------------------------------------
    def ssl_context(self):
        """The trust store: --ca-bundle, else SSL_CERT_FILE, else SSL_CERT_DIR, else certifi."""
        import os

        if self._ssl is None:
            cafile = self.ca_bundle or os.environ.get("SSL_CERT_FILE") or None
            capath = None if cafile else os.environ.get("SSL_CERT_DIR") or None
            self._ssl = _make_trust(cafile, capath)
        return self._ssl

    @property
    def client(self):
        """The one httpx client, made at the first request."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    httpx = import_httpx()
                    self._transport_error = httpx.TransportError
                    client = httpx.Client(timeout=self.timeout, headers=self.headers, limits=pool_limits(httpx),
                                          follow_redirects=False, verify=self.ssl_context(), trust_env=True)
                    self._request_class = httpx.Request
                    self._extensions = {"timeout": client.timeout.as_dict()}
                    self._defaults = dict(client.headers)  # httpx's defaults with ours on top
                    for transport in (client._transport, *getattr(client, "_mounts", {}).values()):
                        pool = getattr(transport, "_pool", None)  # httpcore's pool (private: guarded)
                        backend = getattr(pool, "_network_backend", None)
                        if backend is not None:
                            pool._network_backend = _Backend(backend, self)
                    self._client = client
        return self._client

    def _request(self, method: str, url: str, params: dict[str, Any] | None, headers: dict[str, str],
                 content: bytes | None = None):
        """An httpx request with the client's headers and timeouts (what ``build_request`` makes,
        without merging cookies: the client keeps none)."""
        merged = dict(self._defaults)  # lower-case names, as httpx keeps them: ours replace its defaults
        for name, value in headers.items():
            merged[name.lower()] = value
        if params:  # encoded here, so that httpx parses the URL once instead of twice
            url += ("&" if "?" in url else "?") + _query(params)
        return self._request_class(method, url, headers=merged, content=content, extensions=self._extensions)

    def _send(self, request: Any):
        """Send on the client's own transport for the URL - the proxy or the direct pool, as the
        client chose from HTTP(S)_PROXY / NO_PROXY - and stream the answer.

        This is ``client.send(request, stream=True)`` minus what we never use: auth, redirects
        (followed by hand in ``_open``), cookies and event hooks, about a third of the CPU
        httpx spends per request."""
        client = self.client
        transport_for_url = getattr(client, "_transport_for_url", None)
        if transport_for_url is None:  # another httpx version: the public path
            return client.send(request, stream=True)
        response = transport_for_url(request.url).handle_request(request)
        response.request = request
        return response

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    # -- deadlines and cancel ------------------------------------------------
    def _track(self, stream: _Stream) -> _Stream:
        with self._streams_lock:
            self._streams.add(stream)
        if self.cancelled.is_set():
            stream.abort()
        return stream

    def _untrack(self, stream: _Stream) -> None:
        with self._streams_lock:
            self._streams.discard(stream)

    def abort(self) -> None:
        """Shut down every open connection: reads blocked in other threads end now (a cancel)."""
        with self._streams_lock:
            streams = list(self._streams)
        for stream in streams:
            stream.abort()

    def _cancelled_error(self) -> BaseException:
        import httpx

        return httpx.ReadError("cancelled")

    def _deadline(self) -> Any:
        """The calling thread's current attempt must end within ``timeout`` seconds."""
        return _Deadline(self.timeout)

    def _failed(self, kind: str, exc: BaseException) -> BaseException:
        """A transport error as the policy's ``Failed``; ``Cancelled`` once the work was cancelled."""
        if self.cancelled.is_set():
            return Cancelled("cancelled")
        return Failed(kind, NetworkError(_describe(exc)))

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; a cancel (a 401 elsewhere, Ctrl-C) ends it with ``Cancelled``."""
        self.policy.sleep(seconds)

    _sleep = sleep  # the old name, until every caller uses ``sleep``

    # -- JSON ------------------------------------------------------------------
    def request_json(self, method: str, path: str, params: dict[str, Any] | None = None,
                     body: Any = None, headers: dict[str, str] | None = None) -> Any:
        """``method`` ``path`` (relative to the host) -> the parsed JSON answer.

        ``headers`` are extra request headers (a service's rendered headers).
        Raises ``ApiError`` (an answer that is an error or not JSON), ``AuthError``
        (401 or another of ``auth_statuses``: cancels everything else too),
        ``NetworkError`` and ``Cancelled``.
        """
        if not path.startswith("/"):
            raise ValueError(f"not a path on the backend: {path!r}")
        self.client  # noqa: B018 - built at the first request
        headers = {**headers, **self._key} if headers else self._key
        content = None
        if method == "POST":
            content = _json_body(body)
            headers = {**headers, "content-type": "application/json"}
        request = self._request(method, self.host + path, params, headers, content)

        def attempt() -> Any:
            with _slot():  # on the wire: one of the --concurrency request slots
                self.policy.check()  # once the slot is ours
                with self._deadline():
                    status, response_headers, content, problem = self._exchange(request)
            kind = classify_status(status, self.auth_statuses)
            if kind is not None:  # the status decides, even over a body we could not decode
                error = (AuthError(f"authentication failed (HTTP {status})") if kind == AUTH
                         else ApiError(status, _error_body(content, self.api_key)))
                raise Failed(kind, error, retry_after(response_headers.get("retry-after")))
            if problem:
                raise ApiError(status, problem)  # the server's answer, not the network
            if 300 <= status < 400:
                self._refuse_login_redirect(request, response_headers)
            if status >= 300:
                raise ApiError(status, _error_body(content, self.api_key))
            try:
                value = json.loads(content)
            except ValueError:
                raise ApiError(status, _error_body(content, self.api_key)) from None
            except RecursionError:
                raise ApiError(status, "the JSON answer is nested too deeply to parse") from None
            return value

        return self.policy.run(method, shown_url(self.host + path, params), attempt)

    def _refuse_login_redirect(self, request: Any, headers: Any) -> None:
        """An API call redirected to the service's login page was refused its key: an
        authentication failure (exit 3, ``AuthError``), as on a download, not an API error of
        the redirect.  The redirect itself is never followed."""
        from urllib.parse import urljoin

        location = headers.get("location") or ""
        try:
            nxt = urljoin(str(request.url), location) if location else ""
        except ValueError:
            return
        if nxt and is_login_url(nxt, self.login_hosts, self.host):
            raise Failed(AUTH, AuthError(f"redirected to a login page ({nxt.split('?')[0]}); "
                                         "the API key was not accepted"))

    def _exchange(self, request: Any) -> tuple[int, Any, bytes, str | None]:
        """One request: ``(status, headers, body, problem)``; ``problem`` says why the body is unusable."""
        try:
            response = self._send(request)
        except self._transport_error as exc:
            raise self._failed(classify_transport(exc), exc) from None
        problem = None
        try:
            decoder = _decoder(response.headers)
            if decoder is None:
                content = b"".join(response.iter_raw())
            else:
                parts, left = [], MAX_JSON_BYTES
                for chunk in response.iter_raw():
                    part = decoder.feed(chunk, left)
                    left -= len(part)
                    parts.append(part)
                parts.append(decoder.finish())
                content = b"".join(parts)
        except _Undecodable as exc:
            content, problem = b"", str(exc)
        except self._transport_error as exc:
            raise self._failed(SENT, exc) from None
        finally:
            response.close()
        return response.status_code, response.headers, content, problem

    # -- downloads -----------------------------------------------------------
    def download(self, target: str, dest: str, *, params: dict[str, Any] | None = None,
                 on_bytes=None, missing_ok: bool = False, check=None) -> int:
        """Stream ``target`` (a path on the backend or an absolute URL) into ``dest``.

        The body goes to a temp file beside ``dest`` and is renamed only when
        complete and of the announced length.  Redirects are followed by hand so
        the API key is attached only while the URL stays on the configured
        origin, never over a scheme downgrade; a redirect to a login page is an
        authentication failure.  Failures are retried as :mod:`benchloop.transport.retry`
        says; after a cut, the next attempt asks for the rest with ``Range`` and
        appends when the server answers 206 with the matching ``Content-Range``,
        otherwise it starts over.  A compressed body (asked for ``identity``, got
        gzip anyway) is decoded: the file holds the object's bytes.  Returns the
        bytes written.

        ``check(status, headers, url)`` sees every answer but a 401 (or another of
        ``auth_statuses``) after redirects (``url`` is the final one), before any
        body byte is saved; any exception it raises propagates unchanged and the
        temp file is removed.
        ``missing_ok=True`` adds the built-in check: 404 or an HTML page raises
        ``ArtifactMissing``.

        A resumed attempt continues the same object only: it sends ``If-Range`` with the
        first answer's validator (``ETag``, else ``Last-Modified``) when it had one, and appends only when
        the ``Content-Range`` starts where the file stops and its total is the length the
        first answer announced; otherwise it starts over.
        """
        from ..base.files import replacing

        if missing_ok:
            check = _missing_check if check is None else _both(_missing_check, check)
        url = target if _scheme(target) in ("http", "https") and "://" in target[:8] else self.host + target
        # The body is written through its own handle (attempts may append); the
        # descriptor of ``replacing`` holds the writer's lock until the rename.
        with replacing(dest, ".part") as (_fd, tmp):
            return _Download(self, url, params, tmp, on_bytes, check).run()

    def _open(self, url: str, params: dict[str, Any] | None, headers: dict[str, str]):
        """Send a GET, following redirects by hand with the API key only on our origin."""
        from urllib.parse import urljoin

        self.client  # noqa: B018 - built at the first request
        hop_url, hop_params = url, params
        for _hop in range(10):
            hop_headers = dict(headers)
            if self.api_key and same_origin(hop_url, self.host):
                hop_headers[self.auth_header] = self.api_key
            request = self._request("GET", hop_url, hop_params, hop_headers)
            response = self._send(request)
            if not response.is_redirect:
                return response
            location = response.headers.get("location", "")
            _release(response)
            nxt = urljoin(str(request.url), location)
            if is_login_url(nxt, self.login_hosts, self.host):
                raise Failed(AUTH, AuthError(f"redirected to a login page ({nxt.split('?')[0]}); "
                                             "the API key was not accepted"))
            if _scheme(hop_url) == "https" and _scheme(nxt) != "https":
                raise ApiError(response.status_code, f"refusing redirect from https to {_scheme(nxt) or 'an unknown scheme'}: {nxt}")
            hop_url, hop_params = nxt, None
        raise ApiError(310, "too many redirects")


class _Deadline:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self) -> None:
        _when.budget = self.seconds
        _when.deadline = time.monotonic() + self.seconds

    def __exit__(self, *exc: object) -> None:
        _when.deadline = None


def shown_url(url: str, params: dict[str, Any] | None = None) -> str:
    """A URL as ``-v`` shows it: whole, with the query of an API call (never a presigned
    download's, whose query is a credential) and any ``user:password@`` masked."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)
        parts = parts._replace(netloc=f"{parts.username}:***@{netloc[-1]}")
    shown = urlunsplit(parts)
    return shown + ("?" + _query(params) if params else "")


def _both(first, second):
    def check(status: int, headers: Any, url: str) -> None:
        first(status, headers, url)
        second(status, headers, url)

    return check


def _parsed_or_text(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content.decode("utf-8", "replace")


def _release(response: Any) -> None:
    """Close a streamed response, reading a small unread rest first (a redirect, an
    error page) so that its connection goes back to the pool instead of being dropped."""
    try:
        if not response.is_stream_consumed:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) <= CHUNK:
                for _chunk in response.iter_raw():
                    pass
    except Exception:  # noqa: BLE001 - a broken rest only costs the connection
        pass
    finally:
        response.close()


def _error_text(response: Any, transport_error: type[BaseException], limit: int = MAX_ERROR_TEXT * 4,
                secret: str | None = None) -> str:
    """The start of an error answer's body, as text (decoded if compressed), cut for a message."""
    data = b""
    try:
        for chunk in response.iter_raw():
            data += chunk
            if len(data) >= limit:
                break
    except transport_error:
        pass  # the status is what matters; keep what came
    try:
        decoder = _decoder(response.headers)
        if decoder is not None:
            data = decoder.feed(data, limit)
    except _Undecodable:
        pass
    declared = response.headers.get("content-length", "")
    return _cut(_redact(data[:limit], secret).decode("utf-8", "replace"),
                int(declared) if declared.isdigit() else None)


class _Download:
    """The attempts of one download; ``have`` is what the temp file holds so far."""

    def __init__(self, http: Http, url: str, params: dict[str, Any] | None, tmp: str, on_bytes, check):
        self.http, self.url, self.params, self.tmp = http, url, params, tmp
        self.on_bytes, self.check = on_bytes, check
        self.have = 0
        self.validator: str | None = None  # the first answer's ETag or Last-Modified
        self.length: int | None = None  # the whole object's length the first answer announced

    def run(self) -> int:
        import os

        self.http.policy.run("GET", shown_url(self.url.split("?")[0]), self.attempt)
        return os.path.getsize(self.tmp)

    def attempt(self) -> None:
        http = self.http
        headers = {"Accept": "*/*", "Accept-Encoding": "identity"}
        if self.have:
            if self.length is None:
                self.have = 0  # the first answer announced no length: nothing to check a rest against
            else:
                headers["Range"] = f"bytes={self.have}-"
                if self.validator is not None:  # a changed object answers 200 (the whole new one)
                    headers["If-Range"] = self.validator
        with _slot(), http._deadline():  # on the wire: one slot; the attempt within --timeout
            http.policy.check()  # once the slot is ours
            try:
                response = http._open(self.url, self.params, headers)
            except http._transport_error as exc:
                raise http._failed(classify_transport(exc), exc) from None
            try:
                self.save(response)
            except http._transport_error as exc:
                raise http._failed(SENT, exc) from None
            finally:
                _release(response)

    def save(self, response: Any) -> None:
        """Write one answer's body to the temp file, or raise what the answer means."""
        self.refuse(response)
        status = response.status_code
        try:
            decoder = _decoder(response.headers)
        except _Undecodable as exc:
            raise ApiError(status, str(exc)) from None
        declared = response.headers.get("content-length", "")
        length = int(declared) if declared.isdigit() else None  # this answer's raw (encoded) length
        mode, total = self.placement(response, decoder, length)
        raw = self.stream(response, decoder, mode)
        if length is not None and raw != length:
            if decoder is not None:
                self.have = 0
            raise Failed(SENT, NetworkError(f"body cut short: {raw} of {length} bytes"))
        if total is not None and self.have != total:
            raise Failed(SENT, NetworkError(f"body cut short: {self.have} of {total} bytes"))

    def refuse(self, response: Any) -> None:
        """Raise for an answer that carries no body to save (auth, the caller's check, errors)."""
        http = self.http
        status = response.status_code
        if status in http.auth_statuses:
            raise Failed(AUTH, AuthError(f"authentication failed (HTTP {status})"))
        if self.check is not None:
            self.check(status, response.headers, str(response.url))
        if status == 416 and self.have:
            self.have = 0  # our partial file is useless: start over
            raise Failed(RESTART, ApiError(status, _error_text(response, http._transport_error, secret=http.api_key)))
        kind = classify_status(status)
        if kind is not None:
            raise Failed(kind, ApiError(status, _error_text(response, http._transport_error, secret=http.api_key)),
                         retry_after(response.headers.get("retry-after")))
        if status >= 400:
            raise ApiError(status, _error_text(response, http._transport_error, secret=http.api_key))

    def placement(self, response: Any, decoder: Any, length: int | None) -> tuple[str, int | None]:
        """``(file mode, whole length)``: append a 206 that continues the same object, else start over."""
        import re

        if response.status_code == 206:
            match = re.match(r"bytes (\d+)-(\d+)/(\d+|\*)", response.headers.get("content-range", ""))
            if (decoder is not None or not match or int(match.group(1)) != self.have or not self.have
                    or match.group(3) == "*" or int(match.group(3)) != self.length):
                # Partial content that does not continue our file - another start, another
                # object (its total is not the length announced first): never glue it to
                # what we have; drop that and ask again without Range.
                self.have = 0
                raise Failed(RESTART, NetworkError("partial content (HTTP 206) that does not continue "
                                                   "the same object; starting over"))
            return "ab", int(match.group(3))
        if self.have:
            self.http.log.debug(f"{self.url.split('?')[0]}: the object changed or no resume support; "
                                "starting over")
        self.have = 0
        headers = response.headers
        self.validator = headers.get("etag") or headers.get("last-modified") or None
        if self.validator is not None and self.validator.startswith("W/"):
            self.validator = None  # a weak ETag cannot validate a byte range (RFC 9110 13.1.5)
        self.length = length if decoder is None else None
        return "wb", None

    def stream(self, response: Any, decoder: Any, mode: str) -> int:
        """Copy the body (decoded when it came compressed) into the temp file; the raw bytes read."""
        raw = 0
        try:
            with open(self.tmp, mode) as handle:
                for chunk in response.iter_raw():  # as received: a cut keeps every byte that came
                    raw += len(chunk)
                    for data in (decoder.pieces(chunk) if decoder is not None else (chunk,)):
                        self.keep(handle, data)
                    if self.http.cancelled.is_set():
                        raise Cancelled("cancelled")
                if decoder is not None:
                    self.keep(handle, decoder.finish())
        except _Undecodable as exc:
            self.have = 0
            raise ApiError(response.status_code, str(exc)) from None
        except BaseException:
            if decoder is not None:
                self.have = 0  # decoded bytes cannot be resumed with a Range of encoded ones
            raise
        return raw

    def keep(self, handle: Any, data: bytes) -> None:
        if data:
            handle.write(data)
            self.have += len(data)
            if self.on_bytes:
                self.on_bytes(len(data))
