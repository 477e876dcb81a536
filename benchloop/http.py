"""One HTTP client per process, with retries and a cancel switch.

Why one client: the reference client built a new httpx client (new TCP and TLS
handshake) for every request and every retry.  Here one :class:`Http` is
shared by all worker threads and keeps its connections alive:

- API calls (JSON, to the configured backend) go through a pool of keep-alive
  connections on the standard library (``keepalive.OriginPool``): a third of
  httpx's CPU per request, and no httpx import for commands that make only
  API calls.  When any proxy is configured they go through httpx, which
  applies it (and ``NO_PROXY``) as it always did.
- Streamed downloads (artifacts, exports, media; other origins, redirects,
  Range) go through one ``httpx.Client``, created on first use.

Requests in flight are bounded by ``--concurrency`` through the slots of the
worker pool (``use_slots``), held only while a request is on the wire.

Retries (attempts = retry + 1): transport errors, 5xx and 429 on GET, with
exponential backoff and full jitter, honouring ``Retry-After``.  A POST is
retried only when the server cannot have received it (connection refused or
connect timeout) or answered 429; a 5xx or a broken connection after sending
is final, so a trigger is never duplicated.

The API key travels only to the configured origin: redirects are not followed
for API requests, and there is no silent HTTPS to HTTP fallback.
"""

from __future__ import annotations

import json
import random
import threading
from contextlib import nullcontext
from typing import Any
from urllib.parse import quote

from . import __version__
from .errors import ApiError, AuthError, Cancelled, NetworkError

BACKOFF_BASE = 0.5
MAX_RETRY_AFTER = 60.0


def quote_segment(value: str) -> str:
    """One URL path segment: every reserved character encoded, and '.'/'..' too
    (they would otherwise be removed as dot segments and change the path)."""
    if value in (".", ".."):
        return value.replace(".", "%2E")
    return quote(value, safe="")


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, min(float(value), MAX_RETRY_AFTER))
    except ValueError:
        return None


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


class _Unsent(Exception):
    """The request never reached the server (no connection): safe to repeat, even a POST."""


class _Sent(Exception):
    """The connection broke after the request may have been sent."""


def _query(params: dict[str, Any]) -> str:
    """The query string as httpx would encode it (booleans lower-case, None empty)."""
    from urllib.parse import urlencode

    def text(value: Any) -> str:
        return "true" if value is True else "false" if value is False else "" if value is None else str(value)

    return urlencode([(k, text(item)) for k, v in params.items()
                      for item in (v if isinstance(v, (list, tuple)) else [v])])


def _json_body(body: Any) -> bytes:
    return json.dumps(body if body is not None else {}, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


class ArtifactMissing(Exception):
    """The download endpoint says there is nothing to download (404 or an HTML page)."""


def same_origin(a: str, b: str) -> bool:
    from urllib.parse import urlsplit

    x, y = urlsplit(a), urlsplit(b)
    return (x.scheme, x.hostname, x.port or _default_port(x.scheme)) == (
        y.scheme, y.hostname, y.port or _default_port(y.scheme))


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def looks_like_login(url: str) -> bool:
    lowered = url.lower()
    return "login." in lowered or "ssologin" in lowered or "/login" in lowered




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


class Http:
    def __init__(self, host: str, api_key: str | None, timeout: float, retry: int, pool: int, log,
                 ca_bundle: str | None = None):
        from .keepalive import OriginPool, proxied

        self.host = host.rstrip("/")
        self.api_key = api_key
        self.retry = max(0, retry)
        self.log = log
        self.cancelled = threading.Event()
        self.timeout = timeout
        self.pool_size = pool
        self.ca_bundle = ca_bundle
        self.headers = {"Accept": "application/json", "User-Agent": f"benchloop-client/{__version__}"}
        # API calls take the lean keep-alive pool unless a proxy is configured (httpx implements proxies).
        self.api_pool: OriginPool | None = None
        if not proxied():
            self.api_pool = OriginPool(self.host, timeout, self.ssl_context)
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._ssl: Any = None
        self._ssl_lock = threading.Lock()

    def ssl_context(self):
        """The trust store for both stacks, built once, chosen as httpx chooses it:
        --ca-bundle, else SSL_CERT_FILE, else SSL_CERT_DIR, else certifi.
        Verification is always on."""
        import os
        import ssl

        with self._ssl_lock:
            if self._ssl is None:
                cafile = self.ca_bundle or os.environ.get("SSL_CERT_FILE")
                if not cafile and os.environ.get("SSL_CERT_DIR"):
                    self._ssl = ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
                else:
                    if not cafile:
                        import certifi

                        cafile = certifi.where()
                    self._ssl = ssl.create_default_context(cafile=cafile)
            return self._ssl

    @property
    def client(self):
        """The httpx client (downloads, other origins, proxies), made on first use."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    httpx = import_httpx()
                    limits = httpx.Limits(max_connections=self.pool_size + 2,
                                          max_keepalive_connections=self.pool_size + 2)
                    self._client = httpx.Client(timeout=self.timeout, headers=self.headers, limits=limits,
                                                follow_redirects=False, verify=self.ssl_context())
        return self._client

    @property
    def _httpx(self):
        return import_httpx()

    def close(self) -> None:
        if self.api_pool is not None:
            self.api_pool.close()
        if self._client is not None:
            self._client.close()

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return BACKOFF_BASE * (2**attempt) * random.uniform(0.5, 1.0)

    def _sleep(self, seconds: float) -> None:
        if self.cancelled.wait(seconds):
            raise Cancelled("cancelled")

    def request_json(self, method: str, path: str, params: dict[str, Any] | None = None,
                     body: Any = None) -> Any:
        send = self._send_pooled if self.api_pool is not None else self._send_httpx
        attempts = self.retry + 1
        for attempt in range(attempts):
            last = attempt + 1 >= attempts
            try:
                with _slot():  # on the wire: one of the --concurrency request slots
                    if self.cancelled.is_set():  # checked once the slot is ours
                        raise Cancelled("cancelled")
                    status, headers, content = send(method, path, params, body)
            except (_Unsent, _Sent) as exc:
                # Only a GET is repeated once it may have reached the server.
                if last or (isinstance(exc, _Sent) and method != "GET"):
                    raise NetworkError(str(exc)) from None
                self.log.debug(f"{method} {path}: {exc}; retrying")
                self._sleep(self._delay(attempt, None))
                continue
            if status == 401:
                raise AuthError("authentication failed (HTTP 401)")
            retriable = status == 429 or (status >= 500 and method == "GET")
            if retriable and not last:
                wait = self._delay(attempt, _retry_after(headers.get("retry-after")))
                self.log.debug(f"{method} {path}: HTTP {status}; retrying in {wait:.1f}s")
                self._sleep(wait)
                continue
            try:
                value = json.loads(content)
                parsed = True
            except ValueError:
                value, parsed = content.decode("utf-8", "replace"), False
            if status >= 400 or not parsed:
                raise ApiError(status, value)
            return value
        raise AssertionError("unreachable")

    def _send_pooled(self, method: str, path: str, params: dict[str, Any] | None, body: Any):
        from .keepalive import Failure, Undecodable

        headers = dict(self.headers)
        if self.api_key:
            headers["X-API-Key"] = self.api_key
        data = None
        if method == "POST":
            data = _json_body(body)
            headers["Content-Type"] = "application/json"
        target = path + ("?" + _query(params) if params else "")
        try:
            return self.api_pool.request(method, target, headers, data)  # type: ignore[union-attr]
        except Failure as exc:
            raise (_Sent if exc.sent else _Unsent)(str(exc)) from None
        except Undecodable as exc:
            if exc.status in (401, 429) or exc.status >= 500:
                return exc.status, exc.headers, b""  # the status decides (auth error, retry)
            raise ApiError(exc.status, str(exc)) from None  # the server's answer, not the network

    def _send_httpx(self, method: str, path: str, params: dict[str, Any] | None, body: Any):
        httpx = self._httpx
        headers = {"X-API-Key": self.api_key} if self.api_key else {}
        kwargs: dict[str, Any] = {"params": params, "headers": headers}
        if method == "POST":
            kwargs["json"] = body if body is not None else {}
        try:
            response = self.client.request(method, self.host + path, **kwargs)
        except httpx.TransportError as exc:
            detail = str(exc) or type(exc).__name__
            unsent = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
            raise (_Unsent if unsent else _Sent)(detail) from None
        return response.status_code, response.headers, response.content

    def download(self, target: str, dest: str, *, params: dict[str, Any] | None = None,
                 on_bytes=None, missing_ok: bool = False) -> int:
        """Stream ``target`` (a path on the backend or an absolute URL) into ``dest``.

        The body goes to a temp file beside ``dest`` and is renamed only when
        complete and of the announced length.  Redirects are followed by hand so
        the API key is attached only while the URL stays on the configured
        origin, never over a scheme downgrade; a redirect to a login page is an
        authentication failure.  Transport errors (including a body cut short)
        and 5xx/429 are retried; after a cut, the next attempt asks for the rest
        with ``Range`` and appends when the server answers 206 with the matching
        ``Content-Range``, otherwise it starts over.  Returns the bytes written.
        With ``missing_ok``, 404 and HTML bodies raise ``ArtifactMissing``.
        """
        from .writers import replacing

        url = target if target.startswith(("http://", "https://")) else self.host + target
        # The body is written through its own handle (attempts may append); the
        # descriptor of ``replacing`` holds the writer's lock until the rename.
        with replacing(dest, ".part") as (_fd, tmp):
            return self._download_attempts(url, params, tmp, on_bytes, missing_ok)

    def _open(self, url: str, params: dict[str, Any] | None, headers: dict[str, str]):
        """Send a GET, following redirects by hand with the API key only on our origin."""
        from urllib.parse import urljoin

        hop_url, hop_params = url, params
        for _hop in range(10):
            hop_headers = dict(headers)
            if self.api_key and same_origin(hop_url, self.host):
                hop_headers["X-API-Key"] = self.api_key
            request = self.client.build_request("GET", hop_url, params=hop_params, headers=hop_headers)
            response = self.client.send(request, stream=True)
            if not response.is_redirect:
                return response
            location = response.headers.get("location", "")
            response.close()
            nxt = urljoin(str(request.url), location)
            if looks_like_login(nxt):
                raise AuthError(f"redirected to a login page ({nxt.split('?')[0]}); the API key was not accepted")
            if hop_url.startswith("https://") and nxt.startswith("http://"):
                raise ApiError(response.status_code, f"refusing redirect from https to http: {nxt}")
            hop_url, hop_params = nxt, None
        raise ApiError(310, "too many redirects")

    def _download_attempts(self, url: str, params, tmp: str, on_bytes, missing_ok: bool) -> int:
        import os
        import re

        httpx = self._httpx
        attempts = self.retry + 1
        have = 0
        pause = 0.0  # backoff, slept outside the request slot
        for attempt in range(attempts):
            if pause:
                self._sleep(pause)
                pause = 0.0
            last = attempt + 1 >= attempts
            headers = {"Accept": "*/*"}
            if have:
                headers["Range"] = f"bytes={have}-"
            with _slot():  # on the wire: one of the --concurrency request slots
                if self.cancelled.is_set():  # checked once the slot is ours
                    raise Cancelled("cancelled")
                try:
                    response = self._open(url, params, headers)
                    try:
                        status = response.status_code
                        if status == 401:
                            raise AuthError("authentication failed (HTTP 401)")
                        if status == 416 and have:
                            have = 0  # our partial file is useless: start over
                            continue
                        if (status >= 500 or status == 429) and not last:
                            pause = self._delay(attempt, _retry_after(response.headers.get("retry-after")))
                            continue
                        if status == 404 and missing_ok:
                            body = response.read()[:200].decode("utf-8", "replace")
                            raise ArtifactMissing(f"artifact not found (HTTP 404): {body}")
                        if status >= 400:
                            raise ApiError(status, response.read().decode("utf-8", "replace"))
                        if "text/html" in response.headers.get("content-type", ""):
                            if looks_like_login(str(response.url)):
                                raise AuthError("redirected to a login page; the API key was not accepted")
                            if missing_ok:
                                raise ArtifactMissing("download returned an html error page (artifact missing?)")
                        expected = None
                        mode = "wb"
                        match = re.match(r"bytes (\d+)-(\d+)/(\d+|\*)", response.headers.get("content-range", ""))
                        if status == 206 and match and int(match.group(1)) == have:
                            mode = "ab"
                            expected = int(match.group(3)) if match.group(3) != "*" else None
                        elif status == 206:
                            # Partial content that does not continue our file: never save it as
                            # the whole; drop what we have and ask again without Range.
                            have = 0
                            if last:
                                raise NetworkError("unexpected partial content (HTTP 206) for a full download")
                            continue
                        else:
                            if have:
                                self.log.debug(f"{url.split('?')[0]}: no resume support; starting over")
                            have = 0
                            length = response.headers.get("content-length", "")
                            if length.isdigit() and not response.headers.get("content-encoding"):
                                expected = int(length)
                        with open(tmp, mode) as handle:
                            for chunk in response.iter_raw(65536):
                                handle.write(chunk)
                                have += len(chunk)
                                if on_bytes:
                                    on_bytes(len(chunk))
                                if self.cancelled.is_set():
                                    raise Cancelled("cancelled")
                        if expected is not None and have != expected:
                            raise httpx.ReadError(f"body cut short: {have} of {expected} bytes")
                        return os.path.getsize(tmp)
                    finally:
                        response.close()
                except httpx.TransportError as exc:
                    detail = str(exc) or type(exc).__name__
                    if last:
                        raise NetworkError(detail) from None
                    self.log.debug(f"GET {url.split('?')[0]}: {detail}; retrying")
                    pause = self._delay(attempt, None)
        raise NetworkError("download failed")
