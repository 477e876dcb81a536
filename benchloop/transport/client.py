"""One HTTP client per service: every request of ``bl`` goes through an :class:`Http`.

JSON API calls, POST triggers and streamed downloads (artifacts, export files,
media, artifact proxies and the presigned URLs they redirect to) share one
keep-alive pool, with or without a proxy, so each rule holds in one place:

- the API key (``X-API-Key``, or the ``auth_header`` given) is sent only to the
  configured origin; JSON requests never follow redirects, downloads follow
  them by hand (:mod:`._download`) with the key only on hops that stay on that
  origin; an HTTPS to HTTP redirect is refused, and there is no HTTPS to HTTP
  fallback anywhere;
- TLS is always verified (:mod:`._trust`), its context made only for ``https://`` hosts;
- ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` apply to every
  request alike (:mod:`._proxies`);
- ``--timeout`` bounds each attempt as a whole and a cancel (Ctrl-C, a 401
  elsewhere) ends blocked reads at once (:mod:`._streams`);
- bodies are decoded within limits (:mod:`._decoding`); a redirect to one of the
  service's ``login_hosts`` is an authentication failure (:mod:`.urls`);
- failures are retried as :mod:`.retry` says; requests in flight are bounded by
  the worker pool's slots (:mod:`.slots`).

A direct connection speaks HTTP/1.1 through :mod:`._h1` (the request written and
the answer read by a small codec of ours: h11 under httpcore, then the ``email``
header parser under ``http.client``, were most of the client's CPU per request)
over a socket of :mod:`._streams`; proxied requests use httpcore's proxy pools
(:mod:`._bridge`, httpcore's network backend under the same deadlines and cancel
switch).  Failures are the classes of :mod:`._errors` either way (httpcore's
names and messages); only public APIs of httpcore and the standard library are
used.  This module is imported when a command builds its client, and nothing is
connected before the first request; httpcore is imported only when a request
goes through a proxy (``bl --help`` and a plain-HTTP command never import it).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from ..base.errors import ApiError, AuthError, Cancelled, NetworkError
from ..version import __version__
from ._decoding import Undecodable, error_body, json_body, read_json_body
from ._download import Download
from ._pool import Answer, Connections
from ._streams import TRANSPORT_ERRORS, Deadline, Switchboard
from .retry import AUTH, SENT, Failed, RetryPolicy, classify_status, classify_transport, retry_after
from .slots import slot
from .urls import import_httpx as import_httpx  # for the update check and the tests
from .urls import is_absolute, is_login_url, shown_url, with_query


class _CancelSwitch(threading.Event):
    """The shared cancel switch; setting it also shuts every connection of the client down."""

    def __init__(self) -> None:
        super().__init__()
        self.on_set: Any = None

    def set(self) -> None:
        first = not self.is_set()
        super().set()
        if first and self.on_set is not None:
            self.on_set()


def _raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.encode("ascii"), value.encode("ascii")) for name, value in headers.items()]


class Http:
    """The HTTP client of one service; thread-safe, shared by every worker."""

    def __init__(self, host: str, api_key: str | None, timeout: float, retry: int, pool: int, log: Any,
                 ca_bundle: str | None = None, *, auth_header: str = "X-API-Key",
                 auth_statuses: tuple[int, ...] = (401,), login_hosts: tuple[str, ...] = ()):
        """``auth_header`` carries ``api_key`` (to this origin only); ``auth_statuses`` are the
        answers that mean "authentication failed" (a second service may count 403 too); a
        redirect to one of ``login_hosts`` (the service's SSO, from the table) is one too.
        ``pool`` is the caller's ``--concurrency``: the slots bound the connections, not a size."""
        del pool
        self.host, self.api_key, self.auth_header = host.rstrip("/"), api_key, auth_header
        self.auth_statuses, self.login_hosts = auth_statuses, tuple(login_hosts)
        self.timeout, self.ca_bundle, self.log = timeout, ca_bundle, log
        self.cancelled = _CancelSwitch()
        self.policy = RetryPolicy(max(0, retry), self.cancelled, log)
        self._key = {auth_header: api_key} if api_key else {}
        self._defaults = {"Accept": "application/json", "Accept-Encoding": "gzip, deflate",
                          "User-Agent": f"benchloop-client/{__version__}"}
        self._json_headers = _raw({**self._defaults, **self._key})
        self._wire: Connections | None = None
        self._ssl: Any = None
        self._lock = threading.Lock()

    # -- the wire ------------------------------------------------------------------
    def ssl_context(self) -> Any:
        """The TLS context (made at the first https:// connection, see ``_trust``)."""
        with self._lock:
            if self._ssl is None:
                from ._trust import make_trust

                self._ssl = make_trust(self.ca_bundle)
            return self._ssl

    @property
    def wire(self) -> Connections:
        """The connections (``_pool.Connections``), made at the first request."""
        if self._wire is None:
            with self._lock:
                if self._wire is None:
                    board = Switchboard(self.cancelled)
                    self.cancelled.on_set = board.abort
                    self._wire = Connections(board, self.ssl_context, self.timeout)
        return self._wire

    @property
    def closed(self) -> bool:
        return self._wire is not None and self._wire.closed

    def send(self, method: str, url: str, headers: dict[str, str], content: bytes | None = None) -> Answer:
        """One request on the wire (no retry, no redirect): its answer, body unread."""
        merged = {name.lower(): (name, value) for name, value in self._defaults.items()}
        merged.update((name.lower(), (name, value)) for name, value in headers.items())
        return self.wire.request(method.encode("ascii"), url, _raw(dict(merged.values())), content)

    def close(self) -> None:
        if self._wire is not None:
            self._wire.close()

    def failed(self, kind: str, exc: BaseException) -> BaseException:
        """A transport error as the policy's ``Failed``; ``Cancelled`` once the work was cancelled."""
        if self.cancelled.is_set():
            return Cancelled("cancelled")
        return Failed(kind, NetworkError(str(exc) or type(exc).__name__))

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; a cancel (a 401 elsewhere, Ctrl-C) ends it with ``Cancelled``."""
        self.policy.sleep(seconds)

    _sleep = sleep  # the old name, until every caller uses ``sleep``

    # -- JSON ------------------------------------------------------------------------
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
        url = with_query(self.host + path, params)
        content = json_body(body) if method == "POST" else None
        if content is None and not headers:
            return self.policy.run(method, lambda: shown_url(self.host + path, params),
                                   lambda: self._json_attempt(method, url, None, None))
        extra = {**(headers or {}), **self._key}
        if content is not None:
            extra["content-type"] = "application/json"
        return self.policy.run(method, lambda: shown_url(self.host + path, params),
                               lambda: self._json_attempt(method, url, extra, content))

    def _json_attempt(self, method: str, url: str, headers: dict[str, str] | None, content: bytes | None) -> Any:
        with slot():  # on the wire: one of the --concurrency request slots
            self.policy.check()  # once the slot is ours
            with Deadline(self.timeout):
                status, answer_headers, content, problem = self._exchange(method, url, headers, content)
        kind = classify_status(status, self.auth_statuses)
        if kind is not None:  # the status decides, even over a body we could not decode
            error = (AuthError(f"authentication failed (HTTP {status})") if kind == AUTH
                     else ApiError(status, error_body(content, self.api_key)))
            raise Failed(kind, error, retry_after(answer_headers.get("retry-after")))
        if problem:
            raise ApiError(status, problem)  # the server's answer, not the network
        if 300 <= status < 400:
            self._refuse_login_redirect(url, answer_headers)
        if status >= 300:
            raise ApiError(status, error_body(content, self.api_key))
        try:
            return json.loads(content)
        except ValueError:
            raise ApiError(status, error_body(content, self.api_key)) from None
        except RecursionError:
            raise ApiError(status, "the JSON answer is nested too deeply to parse") from None

    def _refuse_login_redirect(self, url: str, headers: Any) -> None:
        """An API call redirected to the service's login page was refused its key: an
        authentication failure (exit 3, ``AuthError``), as on a download, not an API error of
        the redirect.  The redirect itself is never followed."""
        from urllib.parse import urljoin

        location = headers.get("location") or ""
        try:
            nxt = urljoin(url, location) if location else ""
        except ValueError:
            return
        if nxt and is_login_url(nxt, self.login_hosts, self.host):
            raise Failed(AUTH, AuthError(f"redirected to a login page ({nxt.split('?')[0]}); "
                                         "the API key was not accepted"))

    def _exchange(self, method: str, url: str, headers: dict[str, str] | None,
                  content: bytes | None) -> tuple[int, dict[str, str], bytes, str | None]:
        """One request: ``(status, headers, body, problem)``; ``problem`` says why the body is unusable."""
        try:
            if headers is None:
                answer = self.wire.request(method.encode("ascii"), url, self._json_headers)
            else:
                answer = self.send(method, url, headers, content)
        except TRANSPORT_ERRORS as exc:
            raise self.failed(classify_transport(exc), exc) from None
        problem = None
        try:
            body = read_json_body(answer.iter_raw(), answer.headers)
        except Undecodable as exc:
            body, problem = b"", str(exc)
        except TRANSPORT_ERRORS as exc:
            raise self.failed(SENT, exc) from None
        finally:
            answer.close()
        return answer.status, answer.headers, body, problem

    # -- downloads -------------------------------------------------------------------
    def download(self, target: str, dest: str, *, params: dict[str, Any] | None = None,
                 on_bytes: Any = None, check: Any = None) -> int:
        """Stream ``target`` (a path on the backend or an absolute URL) into ``dest``; the bytes written.

        See :mod:`._download`: redirects with the key on our origin only, a temp file
        renamed when complete, resume after a cut, retries as :mod:`.retry` says.
        ``check(status, headers, url)`` sees every answer but a 401 (or another of
        ``auth_statuses``) after redirects (``url`` is the final one), before any body
        byte is saved; any exception it raises propagates unchanged and the temp file
        is removed.
        """
        from ..base.files import replacing

        url = target if is_absolute(target) else self.host + target
        # The body is written through its own handle (attempts may append); the
        # descriptor of ``replacing`` holds the writer's lock until the rename.
        with replacing(dest, ".part") as (_fd, tmp):
            return Download(self, url, params, tmp, on_bytes, check).run()
