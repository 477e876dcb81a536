"""Polling waiters: repeat a request until its answer says the work is done.

The table declares a waiter on a part (``wait:``); the backend's export flow
is the one user today.  The waiter asks ``request``; the answer's ``status``
field (compared lower-cased) decides:

* a ``success`` value ends the wait; the part's value is the first non-empty
  ``result`` field of that answer;
* a ``retry`` value means "not yet": wait the answer's hint (the first
  ``hint`` field that is a number, clamped to ``wait_range``; else
  ``default_wait``) and ask ``request`` again;
* a ``poll`` value switches to polling another endpoint, bound to a field of
  the answer (``poll.binds`` = the first non-empty ``poll.fields``), with the
  same hint rule between polls, until it reports success;
* anything else fails the id: ``unknown <label> status: <status>``.

The whole wait is bounded by the ``timeout`` option (seconds in total); the
sleeps go through the HTTP client, so a cancel (401 elsewhere, Ctrl-C)
interrupts them at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..base.errors import StepError
from ..table.model import Endpoint, Waiter


def _field(body: dict[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if name in body:
            return body[name]
    return None


class Polling:
    """One waiter at work: asks, waits the hint, asks again (or polls), until done or the deadline."""

    def __init__(self, waiter: Waiter, request: Callable[[Endpoint, dict[str, Any]], Any],
                 sleep: Callable[[float], None], log: Callable[[str], None], timeout: float):
        self.w = waiter
        self.request = request  # (endpoint, extra template variables) -> answer
        self.sleep = sleep
        self.log = log
        self.deadline = time.monotonic() + timeout

    def status(self, body: Any) -> str:
        if not isinstance(body, dict):
            raise StepError(f"{self.w.label} response must be a JSON object")
        return str(body.get(self.w.status) or "").strip().lower()

    def unknown(self, status: str) -> StepError:
        return StepError(f"unknown {self.w.label} status: {status or '<missing>'}")

    def hint(self, body: dict[str, Any]) -> float:
        low, high = self.w.wait_range
        try:
            seconds = float(_field(body, self.w.hint))
        except (TypeError, ValueError):
            return self.w.default_wait
        return min(high, max(low, seconds))

    def pause(self, seconds: float) -> None:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise StepError(f"{self.w.label} total timeout exceeded")
        self.sleep(min(seconds, remaining))

    def required(self, body: dict[str, Any], names: tuple[str, ...]) -> str:
        value = _field(body, names)
        if not isinstance(value, str) or not value.strip():
            raise StepError(f"{self.w.label} response has no {names[0]}")
        return value.strip()

    def run(self, announce: Callable[[float], str | None]) -> str:
        w = self.w
        while True:
            body = self.request(w.request, {})
            status = self.status(body)
            if status in w.success:
                return self.required(body, w.result)
            if status in w.retry:
                wait = self.hint(body)
                line = announce(wait)
                if line:
                    self.log(line)
                self.pause(wait)
                continue
            if w.poll is not None and status in w.poll.values:
                return self.poll(self.required(body, w.poll.fields))
            raise self.unknown(status)

    def poll(self, bound: str) -> str:
        poll = self.w.poll
        assert poll is not None
        while True:
            body = self.request(poll.request, {poll.binds: bound})
            status = self.status(body)
            if status in self.w.success:
                return self.required(body, self.w.result)
            if status not in poll.values:
                raise self.unknown(status)
            self.pause(self.hint(body))
