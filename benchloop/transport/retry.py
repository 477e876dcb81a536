"""The one retry policy of every request: JSON calls, triggers, downloads.

Every attempt that fails is classified as one of:

- ``UNSENT``    - a transport error before the request could reach the server
  (connection refused, connect timeout, TLS handshake, no pooled connection,
  a proxy that refused the tunnel);
- ``SENT``      - a transport error after the request may have reached it
  (reset, read timeout, a body cut short, a server that closed the connection);
- ``SERVER``    - an HTTP 5xx answer;
- ``THROTTLED`` - HTTP 429, with its ``Retry-After`` if any;
- ``AUTH``      - HTTP 401 (or a login page): the API key was refused;
- ``RESTART``   - the answer says our resume state is stale (416 to a Range
  request, a 206 that does not continue the partial file): ask again at once
  from the start;
- anything else is final and never reaches the policy (a 404 is an answer).

The rules (``retry`` = ``--retry``; at most ``retry + 1`` attempts):

1. ``AUTH`` is never retried.  Its ``AuthError`` cancels all remaining work
   once it reaches the worker pool, which sets the shared cancel switch
   (``cancelled``): every other worker stops at its next request, chunk or
   backoff sleep (exit 3).  A step that expects a 401 (task metadata) can
   catch it before.
2. ``UNSENT`` and ``THROTTLED`` are retried for every method, a POST too: the
   server never saw the request, or said explicitly to come back.
3. ``SENT`` and ``SERVER`` are retried only for GET (and HEAD): a POST
   (a trigger) that may have reached the server is never repeated, so it is
   never duplicated.
4. The wait before attempt ``n + 1`` is ``Retry-After`` when the server sent
   one (capped at 60 s), else exponential backoff with jitter (a random
   factor between 0.5 and 1, so that workers that failed together do not
   come back together): ``0.5 s * 2**n * uniform(0.5, 1.0)``.  ``RESTART``
   waits nothing.
5. Waits are slept outside the concurrency slot (an attempt holds its slot
   only while its request is on the wire) and a cancel interrupts them.
6. When no attempt is left, the failure's own error is raised: ``network:
   ...`` for transport errors, ``API error <status>: <body>`` for answers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..base.errors import BenchloopError, Cancelled

BACKOFF_BASE = 0.5
MAX_RETRY_AFTER = 60.0

UNSENT, SENT, SERVER, THROTTLED, AUTH, RESTART = "unsent", "sent", "server", "throttled", "auth", "restart"
# Methods that may be repeated once they may have reached the server.
REPEATABLE = frozenset({"GET", "HEAD"})

T = TypeVar("T")


class Failed(Exception):
    """One attempt's failure, classified; ``error`` is what the caller gets when it is final."""

    def __init__(self, kind: str, error: BenchloopError, retry_after: float | None = None):
        super().__init__(str(error))
        self.kind = kind
        self.error = error
        self.retry_after = retry_after


def retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds (the delta form), within 0..60; None when absent or not a number."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


def classify_status(status: int, auth: tuple[int, ...] = (401,)) -> str | None:
    """The kind of failure an HTTP status is, or None when it is an answer to hand back;
    ``auth`` are the statuses that mean "authentication failed"."""
    if status in auth:
        return AUTH
    if status == 429:
        return THROTTLED
    if status >= 500:
        return SERVER
    return None


class RetryPolicy:
    """Decides, waits and repeats; shared by every request of one client."""

    def __init__(self, retry: int, cancelled: threading.Event, log: Any = None,
                 uniform: Callable[[float, float], float] | None = None):
        self.retry = max(0, int(retry))
        self.cancelled = cancelled
        self.log = log
        self._uniform = uniform

    @property
    def attempts(self) -> int:
        return self.retry + 1

    def check(self) -> None:
        """Raise ``Cancelled`` once the work was cancelled (a 401 elsewhere, Ctrl-C)."""
        if self.cancelled.is_set():
            raise Cancelled("cancelled")

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``; a cancel ends the wait at once with ``Cancelled``."""
        if self.cancelled.wait(max(0.0, seconds)):
            raise Cancelled("cancelled")

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter before attempt ``attempt + 1`` (0-based ``attempt``)."""
        if self._uniform is None:
            import random

            self._uniform = random.uniform
        return BACKOFF_BASE * (2 ** attempt) * self._uniform(0.5, 1.0)

    def decide(self, method: str, failure: Failed, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None when ``failure`` is final."""
        kind = failure.kind
        if kind == AUTH or attempt + 1 >= self.attempts:
            return None
        if kind == RESTART:
            return 0.0
        if kind in (UNSENT, THROTTLED) or (kind in (SENT, SERVER) and method in REPEATABLE):
            return failure.retry_after if failure.retry_after is not None else self.backoff(attempt)
        return None

    def run(self, method: str, label: str | Callable[[], str], attempt: Callable[[], T]) -> T:
        """Call ``attempt`` until it returns, raises something final, or the budget is spent.

        ``attempt`` raises :class:`Failed` for a failure the policy judges; any
        other exception passes through unchanged.  ``label`` names the request in the
        log (a function: made only when a retry is logged).
        """
        for n in range(self.attempts):
            try:
                return attempt()
            except Failed as failure:
                wait = self.decide(method, failure, n)
                if wait is None:
                    raise failure.error from None
                if self.log is not None:
                    shown = label() if callable(label) else label
                    self.log.debug(f"{method} {shown}: {failure.error}; retrying in {wait:.1f}s")
                self.sleep(wait)  # outside the slot: the attempt released it
        raise AssertionError("unreachable: the last attempt's failure is final")
