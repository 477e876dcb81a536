"""One HTTP client per process, with retries and a cancel switch.

Why one client: the reference client built a new httpx client (new TCP and TLS
handshake) for every request and every retry.  Here a single ``httpx.Client``
with a connection pool sized to ``--concurrency`` is shared by all worker
threads, so connections are kept alive and reused.

Retries (attempts = retry + 1): transport errors, 5xx and 429 on GET, with
exponential backoff and full jitter, honouring ``Retry-After``.  A POST is
retried only when the server cannot have received it (connection refused or
connect timeout) or answered 429; a 5xx or a broken connection after sending
is final, so a trigger is never duplicated.

The API key travels only to the configured origin: redirects are not followed
for API requests, and there is no silent HTTPS to HTTP fallback.
"""

from __future__ import annotations

import random
import threading
from typing import Any
from urllib.parse import quote

from . import __version__
from .errors import ApiError, AuthError, Cancelled, NetworkError

BACKOFF_BASE = 0.5
MAX_RETRY_AFTER = 60.0


def quote_segment(value: str) -> str:
    return quote(value, safe="")


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, min(float(value), MAX_RETRY_AFTER))
    except ValueError:
        return None


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




def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


class Http:
    def __init__(self, host: str, api_key: str | None, timeout: float, retry: int, pool: int, log):
        import httpx

        self._httpx = httpx
        self.host = host.rstrip("/")
        self.api_key = api_key
        self.retry = max(0, retry)
        self.log = log
        self.cancelled = threading.Event()
        headers = {"Accept": "application/json", "User-Agent": f"benchloop-client/{__version__}"}
        limits = httpx.Limits(max_connections=pool + 2, max_keepalive_connections=pool + 2)
        self.client = httpx.Client(timeout=timeout, headers=headers, limits=limits, follow_redirects=False)

    def close(self) -> None:
        self.client.close()

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        return BACKOFF_BASE * (2**attempt) * random.uniform(0.5, 1.0)

    def _sleep(self, seconds: float) -> None:
        if self.cancelled.wait(seconds):
            raise Cancelled("cancelled")

    def request_json(self, method: str, path: str, params: dict[str, Any] | None = None,
                     body: Any = None) -> Any:
        httpx = self._httpx
        url = self.host + path
        headers = {"X-API-Key": self.api_key} if self.api_key else {}
        attempts = self.retry + 1
        for attempt in range(attempts):
            if self.cancelled.is_set():
                raise Cancelled("cancelled")
            last = attempt + 1 >= attempts
            try:
                kwargs: dict[str, Any] = {"params": params, "headers": headers}
                if method == "POST":
                    kwargs["json"] = body if body is not None else {}
                response = self.client.request(method, url, **kwargs)
            except httpx.TransportError as exc:
                safe_to_repeat = method == "GET" or isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout))
                detail = str(exc) or type(exc).__name__
                if last or not safe_to_repeat:
                    raise NetworkError(detail) from None
                self.log.debug(f"{method} {path}: {detail}; retrying")
                self._sleep(self._delay(attempt, None))
                continue
            status = response.status_code
            if status == 401:
                raise AuthError("authentication failed (HTTP 401)")
            retriable = status == 429 or (status >= 500 and method == "GET")
            if retriable and not last:
                wait = self._delay(attempt, _retry_after(response.headers.get("retry-after")))
                self.log.debug(f"{method} {path}: HTTP {status}; retrying in {wait:.1f}s")
                self._sleep(wait)
                continue
            try:
                value = response.json()
                parsed = True
            except ValueError:
                value, parsed = response.text, False
            if status >= 400 or not parsed:
                raise ApiError(status, value)
            return value
        raise AssertionError("unreachable")

    def download(self, target: str, dest: str, *, params: dict[str, Any] | None = None,
                  on_bytes=None, missing_ok: bool = False) -> int:
        """Stream ``target`` (a path on the backend or an absolute URL) into ``dest``.

        The body goes to a temp file beside ``dest`` and is renamed only when
        complete.  Redirects are followed by hand so the API key is attached only
        while the URL stays on the configured origin and never over a scheme
        downgrade; a redirect to a login page is an authentication failure.
        Transport errors and 5xx/429 are retried like JSON requests.  Returns the
        number of bytes written.  With ``missing_ok``, 404 and HTML bodies raise
        ``ArtifactMissing`` (the caller writes a placeholder).
        """
        import os
        import tempfile
        from urllib.parse import urljoin

        httpx = self._httpx
        url = target if target.startswith(("http://", "https://")) else self.host + target
        attempts = self.retry + 1
        for attempt in range(attempts):
            if self.cancelled.is_set():
                raise Cancelled("cancelled")
            last = attempt + 1 >= attempts
            hop_url, hop_params = url, params
            try:
                for _hop in range(10):
                    headers = {"Accept": "*/*"}
                    if self.api_key and same_origin(hop_url, self.host):
                        headers["X-API-Key"] = self.api_key
                    request = self.client.build_request("GET", hop_url, params=hop_params, headers=headers)
                    response = self.client.send(request, stream=True)
                    if response.is_redirect:
                        location = response.headers.get("location", "")
                        response.close()
                        nxt = urljoin(str(request.url), location)
                        if looks_like_login(nxt):
                            raise AuthError(f"redirected to a login page ({nxt.split('?')[0]}); the API key was not accepted")
                        if hop_url.startswith("https://") and nxt.startswith("http://"):
                            raise ApiError(response.status_code, f"refusing redirect from https to http: {nxt}")
                        hop_url, hop_params = nxt, None
                        continue
                    break
                else:
                    raise ApiError(310, "too many redirects")
                try:
                    status = response.status_code
                    if status == 401:
                        raise AuthError("authentication failed (HTTP 401)")
                    if (status >= 500 or status == 429) and not last:
                        wait = self._delay(attempt, _retry_after(response.headers.get("retry-after")))
                        self._sleep(wait)
                        continue
                    if status == 404 and missing_ok:
                        raise ArtifactMissing(f"artifact not found (HTTP 404): {response.read()[:200].decode('utf-8', 'replace')}")
                    if status >= 400:
                        text = response.read().decode("utf-8", "replace")
                        raise ApiError(status, text)
                    if "text/html" in response.headers.get("content-type", ""):
                        if looks_like_login(str(response.url)):
                            raise AuthError("redirected to a login page; the API key was not accepted")
                        if missing_ok:
                            raise ArtifactMissing("download returned an html error page (artifact missing?)")
                    directory = os.path.dirname(dest) or "."
                    os.makedirs(directory, exist_ok=True)
                    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(dest)[:60]}.", suffix=".part", dir=directory)
                    written = 0
                    try:
                        with os.fdopen(fd, "wb") as handle:
                            for chunk in response.iter_raw(65536):
                                handle.write(chunk)
                                written += len(chunk)
                                if on_bytes:
                                    on_bytes(len(chunk))
                                if self.cancelled.is_set():
                                    raise Cancelled("cancelled")
                        expected = response.headers.get("content-length", "")
                        if expected.isdigit() and int(expected) != written and not response.headers.get("content-encoding"):
                            raise httpx.ReadError(f"body cut short: {written} of {expected} bytes")
                        os.chmod(tmp, 0o666 & ~_umask())
                        os.replace(tmp, dest)
                    except BaseException:
                        try:
                            os.unlink(tmp)
                        except OSError:
                            pass
                        raise
                    return written
                finally:
                    response.close()
            except httpx.TransportError as exc:
                detail = str(exc) or type(exc).__name__
                if last:
                    raise NetworkError(detail) from None
                self.log.debug(f"GET {hop_url.split('?')[0]}: {detail}; retrying")
                self._sleep(self._delay(attempt, None))
        raise AssertionError("unreachable")
