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
