"""Waiters at work: ask until an answer says the work is done (``waiters:`` in the table).

A waiter of the table (``table.model.Waiter``, botocore's waiters as the model) names
what it asks - one endpoint, or every page of an enumeration (the answer is then the
list of items) - and its acceptors.  After each answer the acceptors are tried in
order; the first whose matcher holds decides:

* ``success`` ends the wait; the waiter produces the first non-empty string of its
  ``result`` fields (``<label> response has no <field>`` without one), its counts
  (``result: counts``), or the answer itself;
* ``failure`` fails the id: ``unknown <label> status: <value>`` (the value of the
  first acceptor's argument), or the request's own error for an ``error`` matcher;
* ``retry`` waits (``delay``) and asks again;
* ``follow`` hands over to another waiter at once, its request's variables bound to
  fields of the answer (the export: a ``running`` answer names the export to poll).

When no acceptor holds, ``otherwise`` decides (``retry`` unless the table says
``failure``).  A waiter with ``counts`` counts the values of its argument in each
answer (jobs by status) and shows the counts whenever they change: a live line on a
terminal, a ``[progress]`` line otherwise, nothing with ``-q``.

The delay between answers is the answer's hint (clamped), or the interval option,
grown by ``backoff`` after each answer that changed nothing and spread by ``jitter``,
so that many waiters started together do not keep asking together.  The whole wait is
bounded by the ``timeout`` option, one clock from the first request (followed waiters
share it): before each wait the deadline is checked and the wait shortened to what
remains, and ``ask`` is handed :meth:`Polling.check` to call before each request of a
look (each page of an enumeration), so that one look over a list that never ends, or
pages that come slowly, cannot outlast it; past it the wait ends with
:class:`WaitTimeout`.  The sleeps go through the HTTP client, so a cancel (401
elsewhere, Ctrl-C) interrupts them at once.

Reuse (another command that waits, ``compare --watch``): build a ``Polling`` with the
table's waiter and an ``ask(waiter, variables, check)`` that makes its requests through
the engine (``Pipeline.wait`` is the one the pipeline uses) and calls ``check()`` before
each; ``run(variables)`` returns what the waiter produces or raises (``WaitTimeout``,
the request's error, ``unknown <label> status``).  ``on_answer`` (optional) sees every
answer with its counts, before the acceptors decide: a caller that acts while the work
goes on (``pull --sync --until-done`` syncs the jobs that finished) does it there.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..base.errors import ApiError, StepError
from ..table.model import MISSING, Delay, Waiter


class WaitTimeout(StepError):
    """The wait's deadline passed before an acceptor said success (exit 124 for a command
    whose purpose is to wait, ``bl jobs wait``; a failure of the id elsewhere)."""

    timed_out = True


def _field(body: Any, names: tuple[str, ...]) -> Any:
    if not isinstance(body, dict):
        return None
    for name in names:
        if name in body:
            return body[name]
    return None


def counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {status}" for status, n in counts.items())


class Backoff:
    """The waits of one waiter: its answers' hints, or the interval grown after answers that
    changed nothing (reset when one did), spread by the jitter."""

    def __init__(self, delay: Delay, options: Mapping[str, Any], rng: Callable[[], float]):
        self.delay = delay
        base = delay.seconds if delay.seconds is not None else options.get(delay.option) if delay.option else None
        self.base = float(base) if base is not None else None
        self.current = self.base
        self.rng = rng

    def next(self, answer: Any, changed: bool) -> float:
        d = self.delay
        if self.base is None:  # the answer's hint, clamped
            high = d.high if d.high is not None else float("inf")
            try:
                seconds = float(_field(answer, d.hint))
            except (TypeError, ValueError):
                return d.default if d.default is not None else high if d.high is not None else d.low
            return min(high, max(d.low, seconds))
        if changed or self.current is None:
            self.current = self.base
        seconds = self.current
        cap = max(self.base, d.high) if d.high is not None else float("inf")
        self.current = min(cap, seconds * d.backoff)
        if d.jitter:
            seconds *= 1 + d.jitter * (2 * self.rng() - 1)
        return max(d.low, seconds)


class Polling:
    """One wait at work: the table's waiter (and those it follows), asked through ``ask``.

    ``ask(waiter, variables, check)`` returns the waiter's answer for the id (the request's,
    or the enumeration's items), calling ``check()`` before each request it makes (it raises
    :class:`WaitTimeout` once the whole wait's time is up); ``render(template, variables)``
    renders a message of the table for the id; ``log`` draws the counts line.
    ``on_answer(answer, counts)``, when given, is called with every answer that is not an
    error (``counts``: this answer's, with ``counts:``, else None) before the acceptors
    decide; what it raises ends the wait.
    """

    def __init__(self, waiter: Waiter, ask: Callable[[Waiter, dict[str, Any], Callable[[], float]], Any], *,
                 sleep: Callable[[float], None], log: Any, timeout: float, options: Mapping[str, Any],
                 render: Callable[[str, dict[str, Any]], str], rng: Callable[[], float] = random.random,
                 on_answer: Callable[[Any, dict[str, int] | None], None] | None = None):
        self.root = waiter
        self.ask = ask
        self.on_answer = on_answer
        self.current = waiter  # the waiter asking now (a followed one after a follow)
        self.sleep = sleep
        self.log = log
        self.options = options
        self.render = render
        self.rng = rng
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.counts: dict[str, int] | None = None
        self.requests = 0  # the requests of the current look (check())
        self.warned: set[str] = set()

    # -- one answer -------------------------------------------------------
    def answer(self, waiter: Waiter, variables: dict[str, Any]) -> tuple[Any, ApiError | None]:
        """``(answer, None)``, or ``(error body, error)`` of a failed request an ``error``
        acceptor of the waiter expects; any other failure is raised."""
        self.current, self.requests = waiter, 0
        try:
            answer = self.ask(waiter, variables, self.check)
        except ApiError as exc:
            if any(a.matcher == "error" and exc.status in a.expected for a in waiter.acceptors):
                return exc.body, exc
            raise
        if waiter.request is not None and not isinstance(answer, dict):
            raise StepError(f"{waiter.label} response must be a JSON object")
        return answer, None

    def required(self, waiter: Waiter, answer: Any, names: tuple[str, ...]) -> str:
        value = _field(answer, names)
        if not isinstance(value, str) or not value.strip():
            raise StepError(f"{waiter.label} response has no {names[0]}")
        return value.strip()

    def unknown(self, waiter: Waiter, answer: Any) -> StepError:
        first = next((a for a in waiter.acceptors if a.matcher != "error"), None)
        value = first.value(answer) if first is not None else None
        return StepError(f"unknown {waiter.label} status: {value if value not in (None, '') else '<missing>'}")

    # -- counts -----------------------------------------------------------
    def count(self, waiter: Waiter, answer: Any, variables: dict[str, Any]) -> bool:
        """Count the answer; show the counts when they changed (True then)."""
        counts = waiter.counts
        assert counts is not None
        found = counts.tally(answer)
        changed = found != self.counts
        self.counts = found
        if counts.statuses is not None:
            for value in found:
                if value not in counts.statuses.values and value not in self.warned:
                    self.warned.add(value)
                    if value == MISSING:
                        self.log.warn(f"{self.label(waiter, variables)}: {found[value]} {counts.noun} with no status "
                                      f"(null or missing), counted as {MISSING} and not final")
                        continue
                    self.log.warn(f"{self.label(waiter, variables)}: status {value!r} is not one the table knows "
                                  f"({', '.join(counts.statuses.values)}); counted as not final")
        if changed:
            self.show(waiter, variables, final=False)
        return changed

    def label(self, waiter: Waiter, variables: dict[str, Any]) -> str:
        return self.render(waiter.progress or waiter.label, variables)

    def line(self, waiter: Waiter, variables: dict[str, Any]) -> str:
        counts = self.counts or {}
        noun = waiter.counts.noun if waiter.counts else "items"
        total = sum(counts.values())
        return f"{self.label(waiter, variables)}: {total} {noun}" + (f", {counts_text(counts)}" if counts else "")

    def show(self, waiter: Waiter, variables: dict[str, Any], final: bool) -> None:
        """The counts: a live line on a terminal (a ``[progress]`` line when the wait ends),
        else a ``[progress]`` line each time they change."""
        log = self.log
        if log.quiet:
            return
        if not log.tty:
            if not final:
                log.progress(self.line(waiter, variables))
            return
        if final:
            log.live("")
            log.progress(self.line(waiter, variables))
        else:
            log.live(self.line(waiter, variables))

    def result(self, waiter: Waiter, answer: Any) -> Any:
        if waiter.result == "counts":
            counts = self.counts or {}
            return {"total": sum(counts.values()), "by_status": dict(counts)}
        if isinstance(waiter.result, tuple):
            return self.required(waiter, answer, waiter.result)
        return answer

    # -- the wait ---------------------------------------------------------
    def check(self) -> float:
        """The seconds left of the whole wait; past the deadline :class:`WaitTimeout` (the
        counts of the last look in its message).  The first request of a look always goes:
        a look starts only after a wait that the deadline had not passed (shortened to end
        there, so the last look is at the deadline, as the official client's is); every
        further request of that look (its next pages) is refused past it."""
        self.requests += 1
        remaining = self.deadline - time.monotonic()
        if remaining <= 0 and self.requests > 1:
            # Without counts, the official client's words (the export's timeout) as they were.
            detail = f" (after {self.timeout:g}s: {counts_text(self.counts)})" if self.counts else ""
            raise WaitTimeout(f"{self.current.label} total timeout exceeded{detail}")
        return remaining

    def pause(self, waiter: Waiter, seconds: float) -> None:
        self.current, self.requests = waiter, 1  # strict: no wait starts past the deadline
        self.sleep(min(seconds, self.check()))

    def run(self, variables: dict[str, Any] | None = None) -> Any:
        """Wait; what the waiter produces (``variables``: the id's, for messages)."""
        waiter, bound = self.root, dict(variables or {})
        backoff = Backoff(waiter.delay, self.options, self.rng)
        while True:
            answer, error = self.answer(waiter, bound)
            changed = True
            if waiter.counts is not None and error is None:
                changed = self.count(waiter, answer, bound)
            if self.on_answer is not None and error is None:
                self.on_answer(answer, self.counts if waiter.counts is not None else None)
            status = error.status if error is not None else None
            acceptor = next((a for a in waiter.acceptors if a.matches(answer, status)), None)
            state = acceptor.state if acceptor is not None else waiter.otherwise
            if state == "success":
                if waiter.counts is not None:
                    self.show(waiter, bound, final=True)
                return self.result(waiter, answer)
            if state == "failure":
                if error is not None:
                    raise error
                raise self.unknown(waiter, answer)
            if state == "follow":
                assert acceptor is not None and acceptor.follow is not None
                bound = {**bound, **{var: self.required(waiter, answer, fields)
                                     for var, fields in acceptor.binds.items()}}
                waiter = waiter.followed[acceptor.follow]
                backoff = Backoff(waiter.delay, self.options, self.rng)
                continue  # the followed waiter asks at once
            seconds = backoff.next(answer, changed)
            if waiter.message:
                self.log.info(self.render(waiter.message, {**bound, "wait": f"{seconds:.1f}"}))
            self.pause(waiter, seconds)
