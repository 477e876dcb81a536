"""One HTTP client per service: every request of ``bl`` goes through an :class:`Http`.

Every request - JSON API calls, POST triggers, streamed downloads (artifacts,
export files, media, the presigned URLs they redirect to), direct or through a
proxy - is sent through httpx's public API: a pool per thread keeps connections
alive (:mod:`.lanes`, an httpx transport), proxies come from ``HTTP_PROXY``/
``HTTPS_PROXY``/``ALL_PROXY`` with ``NO_PROXY`` honoured (``httpx.Client``'s own
routing, which a request takes whenever a proxy may apply), TLS verifies
certificates and host names (:func:`tls_context`, built at the first handshake).  What httpx lacks is added in small modules,
each saying why: a total deadline and a cancel switch (:mod:`.deadline`),
decoding within limits (:mod:`.decoding`), redirects with the key kept to its
origin, resume and temp files (:mod:`.download`), one retry policy
(:mod:`.retry`), the requests in flight per worker pool (:mod:`.slots`).

The rules that hold in this one place:

- the API key (``X-API-Key``, or the ``auth_header`` given) goes only to the
  configured origin, decided from the same ``httpx.URL`` the request is sent
  to, and never to a URL with user info (:mod:`.urls`); JSON requests never
  follow redirects; an HTTPS to HTTP redirect is refused;
- an answer is refused when httpx let through what it should not: a status
  outside 100-599, a header value holding a control character (an obsolete
  folded line skips h11's check); its connection is never reused, nor that
  of an answer whose framing may leave bytes behind (a length or chunked
  body on a 1xx, 204 or 304; ``Transfer-Encoding`` beside ``Content-Length``:
  RFC 9112 6.3 says close it);
- an endpoint that names the id its answer must carry (``identity`` in the
  table) has an answer naming another id refused, and asked once more on a
  fresh connection (:meth:`Http.request_json` ``expect``).

httpx is imported when the first client is built (a command's first request),
never for ``--help`` or ``--version``.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from ..base import jsontext
from ..base.errors import (
    ApiError,
    AuthError,
    Cancelled,
    IdentityMismatch,
    IdentityUnverified,
    NetworkError,
    UsageError,
)
from ..version import __version__
from .deadline import NEW_CONNECTION, Abandoned, Overdue, Switchboard
from .decoding import Undecodable, error_body, json_body, read_json_body
from .lanes import LANE, LazyTLS, lanes_transport
from .retry import AUTH, SENT, UNSENT, Failed, RetryPolicy, classify_status, retry_after
from .slots import slot
from .urls import (
    carries_key,
    import_httpx,
    login_message,
    origin,
    request_line,
    shown_url,
    without_userinfo,
)

KEEPALIVE_EXPIRY = 5.0  # idle keep-alive connections are closed after this many seconds (httpx's default)
_NO_BODY = frozenset({204, 304})
_LANES = "benchloop.lanes"  # in a request's extensions: the Lanes its lane goes back to
NO_REUSE = "benchloop.no_reuse"  # marks (in a response's extensions) a connection in doubt
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")  # in a header value: any control character but tab


def tls_context(ca_bundle: str | None) -> Any:
    """What ``https://`` hosts must chain to.

    ``--ca-bundle``, else ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``: exactly those
    certificates (``ssl.create_default_context``).  Else the system's trust store through
    ``truststore`` (as pip does: an internal CA installed on the machine works without
    ``--ca-bundle``), or certifi's bundle when ``BENCHLOOP_TRUSTSTORE=0`` or truststore is not
    installed.  Certificates and host names are always verified."""
    import ssl

    cafile = ca_bundle or os.environ.get("SSL_CERT_FILE") or None
    capath = None if cafile else os.environ.get("SSL_CERT_DIR") or None
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    if os.environ.get("BENCHLOOP_TRUSTSTORE", "1").strip().lower() not in ("0", "false", "no", "off"):
        try:
            import truststore
        except ImportError:
            pass
        else:
            return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


def proxies_may_apply() -> bool:
    """Whether httpx's ``trust_env`` may route a request through a proxy: a proxy variable is
    set (in either case), or the platform has system proxy settings that httpx reads too
    (Windows' registry, macOS's configuration).  On Linux httpx reads the variables only."""
    import sys

    if sys.platform in ("win32", "darwin"):
        return True
    return any(os.environ.get(name) or os.environ.get(name.lower()) for name in _PROXY_VARIABLES)


class _CancelSwitch(threading.Event):
    """The shared cancel switch; setting it also ends every wait and read of the client."""

    def __init__(self) -> None:
        super().__init__()
        self.on_set: Callable[[], None] | None = None

    def set(self) -> None:
        first = not self.is_set()
        super().set()
        if first and self.on_set is not None:
            self.on_set()


class Http:
    """The HTTP client of one service; thread-safe, shared by every worker."""

    def __init__(self, host: str, api_key: str | None, timeout: float, retry: int, pool: int, log: Any,
                 ca_bundle: str | None = None, *, auth_header: str = "X-API-Key",
                 auth_statuses: tuple[int, ...] = (401,), login_hosts: tuple[str, ...] = ()):
        """``auth_header`` carries ``api_key`` (to this origin only); ``auth_statuses`` are the
        answers that mean "authentication failed" (a second service may count 403 too); a
        redirect to one of ``login_hosts`` (the service's SSO, from the table) is one too.
        ``pool`` is the caller's ``--concurrency`` (the request slots bound the connections)."""
        self.httpx = import_httpx()
        self.host, self.api_key, self.auth_header = host.rstrip("/"), api_key, auth_header
        try:
            base = self.httpx.URL(self.host)
        except self.httpx.InvalidURL as exc:
            raise UsageError(f"invalid backend URL: {exc}") from None
        if base.userinfo:
            raise UsageError("invalid backend URL: it has user info ('user@'); give the host only")
        if base.scheme not in ("http", "https") or not base.host:
            raise UsageError("invalid backend URL: expected http://HOST[:PORT] or https://HOST[:PORT]")
        self.home = origin(base)
        self.auth_statuses, self.login_hosts = auth_statuses, tuple(login_hosts)
        self.timeout, self.ca_bundle, self.log = timeout, ca_bundle, log
        del pool
        self.cancelled = _CancelSwitch()
        self.board = Switchboard(self.cancelled)
        self.cancelled.on_set = self.board.abort
        self.policy = RetryPolicy(max(0, retry), self.cancelled, log)
        self._defaults: dict[str, tuple[Any, Any]] = {name.lower(): (name.encode(), value.encode()) for name, value in (
            ("Accept", "application/json"), ("Accept-Encoding", "gzip, deflate"),
            ("User-Agent", f"benchloop-client/{__version__}"))}
        self._client: Any = None
        self._file_client: Any = None
        self._lanes: dict[int, Any] = {}  # id(an httpx client) -> its per-thread pools (.lanes)
        self._lock = threading.Lock()
        self.closed = False
        # Made at the first TLS handshake only: a plain-http host never loads a certificate.
        self.tls = LazyTLS(lambda: tls_context(self.ca_bundle))
        # Where no proxy can apply, a request goes straight to its thread's pool (.lanes) rather
        # than through httpx.Client.send: no proxy routing, cookie jar, auth or redirect steps,
        # none of which a request of ours uses (a sixth of the CPU per request).
        self._direct = not proxies_may_apply()

    # -- the httpx client --------------------------------------------------------
    def _make_client(self, keepalive: bool = True) -> Any:
        from http.cookiejar import CookieJar, DefaultCookiePolicy

        httpx = self.httpx
        # No limit of httpx's own: the connections in use are bounded where that is decided
        # anyway, by the request slots (--concurrency per worker pool, or the threads of a
        # Python client), so a request never queues for one (the stall of
        # encode/httpcore#1110 needs a full pool), never waits for one an abandoned exchange
        # still holds, and every connection a burst opened is kept (idle ones close after 5 s).
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None if keepalive else 0,
                              keepalive_expiry=KEEPALIVE_EXPIRY)
        # A pool per thread (.lanes): no request scans or locks another thread's connections.
        # Mounted as "all://", the pattern httpx tries last: the proxies httpx finds itself
        # (trust_env: HTTP_PROXY and HTTPS_PROXY, the system's settings) are mounted for their
        # schemes and win, NO_PROXY hosts go to httpx's default transport.  ALL_PROXY is mounted
        # as "all://" too: then httpx routes every request as it would alone.
        all_proxy = os.environ.get("ALL_PROXY") or os.environ.get("all_proxy")
        lanes = None if all_proxy else lanes_transport(
            httpx, lambda: httpx.HTTPTransport(verify=self.tls, limits=limits))
        client = httpx.Client(
            verify=self.tls, trust_env=True, follow_redirects=False,
            mounts={"all://": lanes} if lanes is not None else None,
            timeout=httpx.Timeout(self.timeout), limits=limits,
            # Stateless, as every request was before: no cookie is kept from any answer.
            cookies=CookieJar(DefaultCookiePolicy(allowed_domains=[])))
        if lanes is not None:
            self._lanes[id(client)] = lanes
        return client

    def _lazy(self, name: str, keepalive: bool) -> Any:
        """The client kept as ``name``, made at its first use."""
        made = getattr(self, name)
        if made is None:
            with self._lock:
                if self.closed:
                    raise NetworkError("the HTTP client was closed")
                made = getattr(self, name)
                if made is None:
                    made = self._make_client(keepalive=keepalive)
                    setattr(self, name, made)
        return made

    @property
    def client(self) -> Any:
        """The ``httpx.Client`` of JSON calls (made at the first request): connections kept alive."""
        return self._lazy("_client", keepalive=True)

    @property
    def file_client(self) -> Any:
        """The ``httpx.Client`` of downloads and of answers that name no id: a new connection for
        every request, closed after it.  Such an answer carries no id to check (``identity``),
        so no byte a server sent on a connection before or after it can become it."""
        return self._lazy("_file_client", keepalive=False)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            clients, self._client, self._file_client = (self._client, self._file_client), None, None
        for client in clients:
            if client is not None:
                client.close()  # its transport too: every thread's pool

    # -- one exchange ------------------------------------------------------------
    def parse(self, url: str | Any, params: dict[str, Any] | None = None) -> Any:
        """``url`` as the ``httpx.URL`` a request is sent to, ``params`` encoded into its query by
        httpx; user info kept (it is :meth:`build` that refuses it the key)."""
        httpx = self.httpx
        if isinstance(url, httpx.URL):
            return url.copy_merge_params(params) if params else url
        return httpx.URL(url, params=params) if params else httpx.URL(url)

    def build(self, method: str, url: str | Any, headers: dict[str, Any] | None = None, *,
              params: dict[str, Any] | None = None, content: bytes | None = None) -> Any:
        """The request to send: its URL parsed once (:meth:`parse`), user info dropped, and the
        API key attached when that same URL is on our origin.  An ``httpx.Request`` made
        directly rather than by ``Client.build_request``, which would merge the client's
        cookies and defaults again (a fifth of the client's CPU per request);
        ``Client.send`` takes either."""
        target = self.parse(url, params)
        merged: dict[str, tuple[Any, Any]] = dict(self._defaults)  # a caller's header replaces a default
        if headers:
            merged.update((name.lower(), (name, value)) for name, value in headers.items())
        if target.userinfo:
            target = without_userinfo(target)  # never a Basic header for whoever wrote the URL
        elif self.api_key and carries_key(target, self.home):
            merged[self.auth_header.lower()] = (self.auth_header, self.api_key)
        return self.httpx.Request(method, target, headers=list(merged.values()), content=content)

    def send(self, request: Any, deadline: float, client: Any = None) -> Any:
        """Send ``request`` (no retry, no redirect); its response with the body unread, checked
        (:meth:`inspect`).  Raises ``Failed`` or ``Cancelled``; a head that has not come by
        ``deadline`` is a timeout whatever the server drips."""
        client = client or self.client
        left = deadline - time.monotonic()
        if left <= 0:
            raise self.overdue()
        request.extensions["timeout"] = self.httpx.Timeout(left).as_dict()
        lanes = self._lanes.get(id(client))
        lane = lanes.take(origin(request.url)) if lanes is not None else None
        if lane is not None:  # the request's own pool until its answer is closed (finish)
            request.extensions[LANE] = lane
            request.extensions[_LANES] = lanes

        direct = lanes if self._direct else None

        def exchange(ex: Any) -> Any:
            request.extensions["trace"] = ex.trace
            if direct is None:
                return client.send(request, stream=True)
            response = direct.handle_request(request)
            response.request = request
            return response

        started = time.monotonic()
        try:
            response = self.board.send(exchange, deadline, lane, origin(request.url))
        except BaseException as exc:
            self.give_back(request)
            if isinstance(exc, Abandoned):
                raise Cancelled("cancelled") from None
            if isinstance(exc, Overdue):
                self.trace(request, "timed out", started)
                raise self.overdue() from None
            if isinstance(exc, self.httpx.HTTPError):
                self.trace(request, f"failed: {type(exc).__name__}", started)
                raise self.failed(exc, deadline) from None
            raise
        self.trace(request, str(response.status_code), started)
        self.inspect(response)
        return response

    def trace(self, request: Any, outcome: str, started: float) -> None:
        """``-v``: one ``[debug]`` line per request sent, every redirect hop and retry included."""
        if getattr(self.log, "verbose", False):
            self.log.debug(request_line(request.method, request.url, self.home, outcome, time.monotonic() - started))

    @staticmethod
    def give_back(request: Any) -> None:
        """Free the lane of ``request`` (once: its answer is closed, or it failed)."""
        extensions = request.extensions
        lane, lanes = extensions.pop(LANE, None), extensions.pop(_LANES, None)
        if lane is not None and lanes is not None:
            lanes.give(lane)

    def inspect(self, response: Any) -> None:
        """Refuse what httpx let through, and never reuse a connection whose framing is in doubt."""
        status = response.status_code
        raw = response.headers.raw
        problem = None
        if not 100 <= status <= 599:
            problem = f"the status {status} is outside 100-599"
        elif any(_CONTROL.search(value) for _, value in raw):
            problem = "a header value holds a control character"
        if problem is not None:
            self.drop(response)
            response.close()
            self.give_back(response.request)
            raise Failed(SENT, NetworkError(f"malformed answer from the server: {problem}"))
        names = {name.lower() for name, _ in raw}
        framed = b"content-length" in names or b"transfer-encoding" in names
        if (framed and (status < 200 or status in _NO_BODY)) or (
                b"transfer-encoding" in names and b"content-length" in names):
            response.extensions[NO_REUSE] = True

    @staticmethod
    def drop(response: Any) -> None:
        """Make sure the connection of ``response`` is never used again (closed once read)."""
        stream = response.extensions.get("network_stream")
        if stream is not None:
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - closed already
                pass

    def finish(self, response: Any) -> None:
        """Close a response; a connection in doubt (see :meth:`inspect`) goes with it."""
        if response.extensions.get(NO_REUSE):
            self.drop(response)
        response.close()
        self.give_back(response.request)

    def read(self, response: Any, deadline: float) -> Any:
        """``response.iter_raw()`` under the deadline and the cancel switch: a read blocked past
        either ends at once (its socket is shut down by the watchdog)."""
        stream = response.extensions.get("network_stream")
        token = self.board.watch(stream, deadline) if stream is not None else None
        try:
            yield from response.iter_raw()
        except self.httpx.HTTPError as exc:
            raise self.failed(exc, deadline) from None
        finally:
            if token is not None:
                self.board.unwatch(token)

    def overdue(self) -> Failed:
        return Failed(SENT, NetworkError(f"timed out: the request took longer than --timeout {self.timeout:g}s"))

    def failed(self, exc: BaseException, deadline: float | None = None) -> BaseException:
        """An httpx error as the policy's ``Failed`` (``Cancelled`` once the work was cancelled,
        a timeout once the deadline passed: the watchdog's shutdown is what ended the read)."""
        httpx = self.httpx
        if self.cancelled.is_set():
            return Cancelled("cancelled")
        if deadline is not None and time.monotonic() >= deadline:
            return self.overdue()
        text = str(exc) or type(exc).__name__
        if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL, httpx.LocalProtocolError)):
            return NetworkError(text)  # final: no attempt can do better
        unsent = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ProxyError)
        return Failed(UNSENT if isinstance(exc, unsent) else SENT, NetworkError(text))

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; a cancel (a 401 elsewhere, Ctrl-C) ends it with ``Cancelled``."""
        self.policy.sleep(seconds)

    # -- JSON ----------------------------------------------------------------------
    def request_json(self, method: str, path: str, params: dict[str, Any] | None = None,
                     body: Any = None, headers: dict[str, str] | None = None,
                     expect: Callable[[Any, bool], None] | None = None) -> Any:
        """``method`` ``path`` (relative to the host) -> the parsed JSON answer.

        ``headers`` are extra request headers (a service's rendered headers).  ``expect``
        checks the parsed answer (and whether it was read on a connection used before) and
        raises :class:`IdentityMismatch` when it names another id than the one asked for: that
        answer is dropped, asked once more on a fresh connection (never one the pool kept), and
        a second mismatch is an ``ApiError``; :class:`IdentityUnverified` (no id to check, on a
        used connection) is asked once more likewise, without a warning.  Without ``expect``
        the answer names nothing that could be checked: it is asked on a new connection, closed
        after it (``file_client``), so no byte left on a kept connection can become it.
        Raises ``ApiError`` (an answer that is an error or not JSON), ``AuthError``
        (401 or another of ``auth_statuses``: cancels everything else too),
        ``NetworkError`` and ``Cancelled``.
        """
        if not path.startswith("/"):
            raise ValueError(f"not a path on the backend: {path!r}")
        url = self.host + path
        content = json_body(body) if method == "POST" else None
        extra = dict(headers or {})
        if content is not None:
            extra["Content-Type"] = "application/json"

        def label() -> str:
            return shown_url(self.build(method, url, params=params).url)

        def attempt(client: Any = None) -> Any:
            if expect is None and client is None:
                client = self.file_client
            value, reused = self._json_attempt(method, url, params, extra, content, client)
            if expect is not None:
                expect(value, reused)
            return value

        try:
            return self.policy.run(method, label, attempt)
        except IdentityUnverified as first:
            self.log.debug(f"{label()}: {first} (on a connection used before); asking again on a new connection")
        except IdentityMismatch as first:
            self.log.warn(f"{label()}: {first}; asking again on a new connection")
        fresh = self.file_client  # a new connection for every request, closed after it
        try:
            return self.policy.run(method, label, lambda: attempt(fresh))
        except IdentityMismatch as second:
            raise ApiError(200, f"{second} (twice, the second time on a new connection)") from None

    def _json_attempt(self, method: str, url: str, params: dict[str, Any] | None, headers: dict[str, str],
                      content: bytes | None, client: Any) -> tuple[Any, bool]:
        """One exchange: the parsed answer, and whether it came on a connection used before."""
        with slot():  # on the wire: one of the --concurrency request slots
            self.policy.check()  # once the slot is ours
            deadline = time.monotonic() + self.timeout
            request = self.build(method, url, headers, params=params, content=content)
            response = self.send(request, deadline, client)
            problem = None
            try:
                content = read_json_body(self.read(response, deadline), response.headers)
            except Undecodable as exc:
                content, problem = b"", str(exc)
            finally:
                self.finish(response)
        status, answer_headers = response.status_code, response.headers
        kind = classify_status(status, self.auth_statuses)
        if kind is not None:  # the status decides, even over a body we could not decode
            error = (AuthError(f"authentication failed (HTTP {status})", status) if kind == AUTH
                     else ApiError(status, error_body(content, self.api_key)))
            raise Failed(kind, error, retry_after(answer_headers.get("retry-after")))
        if problem:
            raise ApiError(status, problem)  # the server's answer, not the network
        if 300 <= status < 400:
            self._refuse_login_redirect(request.url, answer_headers)
        if status >= 300 or status < 200 or status in _NO_BODY:
            raise ApiError(status, error_body(content, self.api_key) if content else "no JSON answer")
        try:
            return jsontext.loads(content), not response.extensions.get(NEW_CONNECTION, False)
        except ValueError:
            raise ApiError(status, error_body(content, self.api_key)) from None
        except RecursionError:
            raise ApiError(status, "the JSON answer is nested too deeply to parse") from None

    def _refuse_login_redirect(self, url: Any, headers: Any) -> None:
        """An API call redirected to the service's login page was refused its key: an
        authentication failure (exit 3, ``AuthError``), as on a download, not an API error of
        the redirect.  The redirect itself is never followed."""
        location = headers.get("location") or ""
        try:
            nxt = url.join(location) if location else None
        except self.httpx.InvalidURL:
            return
        refusal = login_message(nxt, self.login_hosts, self.home) if nxt is not None else None
        if refusal is not None:
            raise Failed(AUTH, AuthError(refusal))

    # -- downloads -------------------------------------------------------------------
    def download(self, target: str, dest: str, *, params: dict[str, Any] | None = None,
                 on_bytes: Any = None, check: Any = None, headers: dict[str, str] | None = None,
                 size: int | None = None) -> int:
        """Stream ``target`` (a path on the backend or an absolute URL) into ``dest``; the bytes written.

        See :mod:`.download`: redirects with the key on our origin only, a temp file
        renamed when complete, resume after a cut, retries as :mod:`.retry` says.
        ``check(status, headers, url)`` sees every answer but a 401 (or another of
        ``auth_statuses``) after redirects (``url`` is the final one), before any body
        byte is saved; any exception it raises propagates unchanged and the temp file
        is removed.  ``headers`` are extra request headers (an ``Accept``).  ``size`` is the
        object's size announced elsewhere (an artifact listing): a body of another size fails.
        """
        from ..base.files import replacing
        from .download import Download

        url = target if target.lower().startswith(("http://", "https://")) else self.host + target
        # The body is written through its own handle (attempts may append); the
        # descriptor of ``replacing`` holds the writer's lock until the rename.
        with replacing(dest, ".part") as (_fd, tmp):
            return Download(self, url, params, tmp, on_bytes, check, headers, size).run()
