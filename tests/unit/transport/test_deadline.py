"""``transport/deadline.py``: a request's total deadline and the cancel switch, on loopback.

The server is the scripted one (``benchloop.sandbox.scripted``): a head that comes late
(``Reply.delay``), and a body that stops short of its ``Content-Length`` on a kept-alive
connection (the server then waits for the next request, so the client's read blocks).  The
requests are real httpx ones with httpx's own timeouts far beyond the deadlines here: what
ends each wait is the ``Switchboard`` (a head awaited on a wire thread, a body's socket shut
down by the watchdog), never httpx.  Nothing is mocked.
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted
from benchloop.transport.deadline import (
    NEW_CONNECTION,
    Abandoned,
    Exchange,
    Overdue,
    Switchboard,
    shut,
)

SLOW = 3.0  # seconds the slow route waits before its head
BODY = b"x" * 10
STALLED_LENGTH = 100_000  # announced; only BODY is sent, and the connection stays open


@pytest.fixture(scope="module")
def server():
    with start_scripted({
        "/slow": Reply(200, b"{}", delay=SLOW),
        "/fast": json_reply({"ok": True}),
        "/stalled": Reply(200, BODY, "application/octet-stream", {"Content-Length": str(STALLED_LENGTH)}),
    }) as srv:
        yield srv


@pytest.fixture
def http():
    with httpx.Client(timeout=httpx.Timeout(30.0)) as client:
        yield client


def sender(http: httpx.Client, url: str):
    """What ``Http.send`` hands the switchboard: the request, with the exchange's ``trace``."""
    def send(exchange: Exchange) -> httpx.Response:
        request = http.build_request("GET", url, extensions={"trace": exchange.trace})
        return http.send(request, stream=True)
    return send


def later(seconds: float, action) -> threading.Thread:
    thread = threading.Timer(seconds, action)
    thread.start()
    return thread


# ------------------------------------------------------------------ the head
def test_a_head_later_than_the_deadline_is_overdue_at_the_deadline(server, http):
    board = Switchboard(threading.Event())
    started = time.monotonic()
    with pytest.raises(Overdue):
        board.send(sender(http, server.url + "/slow"), started + 0.3)
    took = time.monotonic() - started
    assert 0.3 <= took < SLOW - 1, took  # neither the server's 3 s nor httpx's 30 s


def test_an_answer_within_the_deadline_is_handed_back_and_says_whether_its_connection_is_new(server, http):
    board = Switchboard(threading.Event())
    before = server.connections
    answers = []
    for _ in range(2):
        response = board.send(sender(http, server.url + "/fast"), time.monotonic() + 10)
        try:
            answers.append((response.status_code, response.read(), response.extensions[NEW_CONNECTION]))
        finally:
            response.close()
    # The first request opened the connection (httpx's trace announced it), the second reused it.
    assert answers == [(200, b'{"ok": true}', True), (200, b'{"ok": true}', False)]
    assert server.connections - before == 1


def test_a_cancel_ends_the_wait_for_a_head_at_once(server, http):
    cancelled = threading.Event()
    board = Switchboard(cancelled)

    def cancel() -> None:
        cancelled.set()
        board.abort()

    timer = later(0.2, cancel)
    started = time.monotonic()
    with pytest.raises(Abandoned):
        board.send(sender(http, server.url + "/slow"), started + 20)
    timer.join()
    assert time.monotonic() - started < SLOW - 1


def test_after_a_cancel_nothing_is_sent(server, http):
    cancelled = threading.Event()
    cancelled.set()
    server.forget()
    with pytest.raises(Abandoned):
        Switchboard(cancelled).send(sender(http, server.url + "/fast"), time.monotonic() + 10)
    time.sleep(0.2)
    assert server.seen == []


def test_an_abandoned_exchange_raises_at_its_next_step():
    exchange = Exchange(lambda ex: None)
    exchange.trace("http11.send_request_headers.started", {})  # not abandoned: goes on
    exchange.abandon()
    with pytest.raises(Abandoned):
        exchange.trace("http11.receive_response_headers.started", {})


def test_an_answer_that_comes_after_its_caller_left_is_closed_and_handed_to_nobody(server, http):
    got: list[httpx.Response] = []

    def send(exchange: Exchange) -> httpx.Response:
        response = sender(http, server.url + "/fast")(exchange)
        got.append(response)
        exchange.abandon()  # the deadline passed just as the head came
        return response

    exchange = Exchange(send)
    exchange()
    assert exchange.finished and exchange.response is None and exchange.error is None
    assert got and got[0].is_closed


# ------------------------------------------------------------------ the body
def test_a_body_read_blocked_past_the_deadline_ends_at_the_deadline(server, http):
    board = Switchboard(threading.Event())
    response = board.send(sender(http, server.url + "/stalled"), time.monotonic() + 10)
    read = b""
    started = time.monotonic()
    token = board.watch(response.extensions["network_stream"], started + 0.3)
    try:
        with pytest.raises(httpx.HTTPError):  # the body ends short of its length
            for chunk in response.iter_raw():
                read += chunk
    finally:
        board.unwatch(token)
        response.close()
    took = time.monotonic() - started
    assert read == BODY
    assert 0.3 <= took < 5, took


def test_a_cancel_ends_a_body_read_blocked_in_another_thread_at_once(server, http):
    cancelled = threading.Event()
    board = Switchboard(cancelled)
    response = board.send(sender(http, server.url + "/stalled"), time.monotonic() + 10)
    board.watch(response.extensions["network_stream"], time.monotonic() + 60)
    ended: list[float] = []

    def read() -> None:
        try:
            for _ in response.iter_raw():
                pass
        except httpx.HTTPError:
            ended.append(time.monotonic())

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.2)
    cancelled_at = time.monotonic()
    cancelled.set()
    board.abort()
    reader.join(10)
    response.close()
    assert not reader.is_alive()
    assert ended and ended[0] - cancelled_at < 2


def test_a_stream_unwatched_in_time_is_left_open_for_the_next_request(server, http):
    board = Switchboard(threading.Event())
    before = server.connections
    response = board.send(sender(http, server.url + "/fast"), time.monotonic() + 10)
    token = board.watch(response.extensions["network_stream"], time.monotonic() + 0.2)
    response.read()
    board.unwatch(token)
    response.close()
    time.sleep(0.5)  # past the deadline the watch had
    again = board.send(sender(http, server.url + "/fast"), time.monotonic() + 10)
    try:
        assert again.read() == b'{"ok": true}'
        assert again.extensions[NEW_CONNECTION] is False
    finally:
        again.close()
    assert server.connections - before == 1


def test_shutting_down_what_is_not_an_open_socket_does_nothing(server, http):
    response = http.get(server.url + "/fast")
    stream = response.extensions["network_stream"]
    response.close()
    http.close()
    for thing in (None, object(), stream):
        shut(thing)  # closed already, or not a socket: no exception
