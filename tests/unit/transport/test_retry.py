"""``transport/retry.py``: the one retry policy, on its own (its rules on the wire, through the
client and a scripted server: test_http_stack.py).

Each rule of the module's docstring is checked by calling the policy as the client does:
``decide`` for a failure of each kind and method, ``backoff`` and ``Retry-After`` for the
waits, ``run`` for the loop (how many attempts, what is raised at the end, what passes
through, what the log says), a cancel for the sleeps.  The waits of ``run`` are made zero
through the policy's own ``uniform`` (the jitter's source); nothing else is replaced.
"""

from __future__ import annotations

import threading
import time

import pytest
from support import RecordingLog

from benchloop.base.errors import ApiError, AuthError, Cancelled, NetworkError
from benchloop.transport import retry
from benchloop.transport.retry import Failed, RetryPolicy, classify_status, retry_after


def _failed(kind: str, retry_after: float | None = None) -> retry.Failed:
    return retry.Failed(kind, ApiError(500, "x"), retry_after)


def policy(retries: int, log: RecordingLog | None = None, cancelled: threading.Event | None = None) -> RetryPolicy:
    return RetryPolicy(retries, cancelled or threading.Event(), log, uniform=lambda a, b: 0.0)


@pytest.mark.parametrize("kind, method, retried", [
    (retry.UNSENT, "GET", True), (retry.UNSENT, "POST", True),
    (retry.SENT, "GET", True), (retry.SENT, "POST", False),
    (retry.SERVER, "GET", True), (retry.SERVER, "POST", False),
    (retry.THROTTLED, "GET", True), (retry.THROTTLED, "POST", True),
    (retry.AUTH, "GET", False), (retry.RESTART, "GET", True),
])
def test_the_policy_decides_by_kind_and_method(kind, method, retried):
    policy = retry.RetryPolicy(3, threading.Event(), uniform=lambda a, b: b)
    assert (policy.decide(method, _failed(kind), 0) is not None) is retried
    assert policy.decide(method, _failed(kind), 3) is None  # the budget is spent


def test_backoff_is_exponential_with_jitter_and_retry_after_wins():
    low = retry.RetryPolicy(4, threading.Event(), uniform=lambda a, b: a)
    high = retry.RetryPolicy(4, threading.Event(), uniform=lambda a, b: b)
    assert [low.backoff(n) for n in range(4)] == [0.25, 0.5, 1.0, 2.0]
    assert [high.backoff(n) for n in range(4)] == [0.5, 1.0, 2.0, 4.0]
    assert high.decide("GET", _failed(retry.THROTTLED, 7.0), 0) == 7.0
    assert high.decide("GET", _failed(retry.RESTART), 0) == 0.0
    assert retry.retry_after("120") == retry.MAX_RETRY_AFTER
    assert retry.retry_after("-3") == 0.0
    assert retry.retry_after("nan") is None and retry.retry_after("Wed, 21 Oct 2015") is None


def test_the_default_jitter_stays_between_half_and_the_whole_step():
    waits = [RetryPolicy(5, threading.Event()).backoff(2) for _ in range(200)]
    step = retry.BACKOFF_BASE * 4
    assert all(step * 0.5 <= wait <= step for wait in waits)
    assert len(set(waits)) > 100  # random: workers that failed together come back apart


@pytest.mark.parametrize("value, seconds", [
    (None, None), ("", None), ("0", 0.0), ("1.5", 1.5), ("60", 60.0), ("61", 60.0), ("1e9", 60.0),
    ("-1", 0.0), ("nan", None), ("soon", None), ("Wed, 21 Oct 2015 07:28:00 GMT", None),
])
def test_retry_after_is_the_delta_form_within_zero_and_sixty_seconds(value, seconds):
    assert retry_after(value) == seconds


@pytest.mark.parametrize("status, auth, kind", [
    (401, (401,), retry.AUTH), (403, (401,), None), (403, (401, 403), retry.AUTH),
    (429, (401,), retry.THROTTLED), (500, (401,), retry.SERVER), (503, (401,), retry.SERVER),
    (599, (401,), retry.SERVER), (404, (401,), None), (400, (401,), None), (302, (401,), None),
    (200, (401,), None),
])
def test_a_status_is_a_failure_of_its_kind_or_an_answer(status, auth, kind):
    assert classify_status(status, auth) == kind


def test_run_makes_retry_plus_one_attempts_then_raises_the_last_failures_own_error():
    errors = [NetworkError(f"reset {n}") for n in range(4)]
    attempts = iter(errors)

    def attempt():
        raise Failed(retry.SENT, next(attempts))

    log = RecordingLog()
    with pytest.raises(NetworkError) as caught:
        policy(3, log).run("GET", "/x", attempt)
    assert caught.value is errors[3]  # the error itself, never the policy's Failed
    assert len(log.lines) == 3 and all(line.startswith("GET /x: network: reset") for line in log.lines)
    assert "retrying in 0.0s" in log.lines[0]


def test_run_returns_the_first_attempt_that_succeeds():
    results = iter([Failed(retry.SERVER, ApiError(503, "busy")), Failed(retry.UNSENT, NetworkError("refused")), "ok"])

    def attempt():
        value = next(results)
        if isinstance(value, Failed):
            raise value
        return value

    assert policy(5).run("GET", "/x", attempt) == "ok"
    assert next(results, "spent") == "spent"  # three attempts, no more


def test_a_post_that_may_have_reached_the_server_is_attempted_once():
    calls = []

    def attempt():
        calls.append(1)
        raise Failed(retry.SENT, NetworkError("reset"))

    with pytest.raises(NetworkError):
        policy(5).run("POST", "/trigger", attempt)
    assert len(calls) == 1


def test_an_auth_failure_ends_the_loop_at_once():
    calls = []

    def attempt():
        calls.append(1)
        raise Failed(retry.AUTH, AuthError("authentication failed (HTTP 401)", 401))

    with pytest.raises(AuthError):
        policy(5).run("GET", "/x", attempt)
    assert len(calls) == 1


def test_an_exception_the_policy_does_not_judge_passes_through_unchanged():
    calls = []

    class Broken(Exception):
        pass

    def attempt():
        calls.append(1)
        raise Broken("not a Failed")

    with pytest.raises(Broken):
        policy(5).run("GET", "/x", attempt)
    assert len(calls) == 1


def test_the_label_is_made_only_when_a_retry_is_logged():
    made = []

    def label() -> str:
        made.append(1)
        return "/made"

    outcomes = iter([Failed(retry.SERVER, ApiError(500, "x")), "ok"])

    def attempt():
        value = next(outcomes)
        if isinstance(value, Failed):
            raise value
        return value

    assert policy(2, log=None).run("GET", label, attempt) == "ok"
    assert made == []  # no log: never made
    log = RecordingLog()
    outcomes = iter([Failed(retry.SERVER, ApiError(500, "x")), "ok"])
    assert policy(2, log).run("GET", label, attempt) == "ok"
    assert made == [1] and log.lines[0].startswith("GET /made: API error 500")


def test_a_negative_budget_is_one_attempt():
    assert RetryPolicy(-3, threading.Event()).attempts == 1


def test_a_cancel_interrupts_the_backoff_sleep():
    cancelled = threading.Event()
    timer = threading.Timer(0.1, cancelled.set)
    timer.start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        RetryPolicy(3, cancelled).sleep(30)
    timer.join()
    assert time.monotonic() - started < 5


def test_after_a_cancel_check_raises_and_no_wait_is_slept():
    cancelled = threading.Event()
    cancelled.set()
    stopped = RetryPolicy(3, cancelled)
    with pytest.raises(Cancelled):
        stopped.check()

    def attempt():
        raise Failed(retry.SERVER, ApiError(500, "x"), 30.0)

    started = time.monotonic()
    with pytest.raises(Cancelled):
        stopped.run("GET", "/x", attempt)
    assert time.monotonic() - started < 5  # the 30 s Retry-After was never slept
