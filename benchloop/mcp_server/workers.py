"""The workers that run tool calls against the backend: a fixed number, each with its own client.

Why a pool of its own.  A call to the backend can hang - a server that never
answers, a retry budget of minutes - and the SDK's worker threads are shared
by every call, ``describe`` included.  Here:

* there are ``count`` workers (``--workers``); a call that needs the backend
  takes a free one or is refused at once (:meth:`Workers.acquire` returns
  None: the server answers "busy"), so nothing ever queues behind a hung call;
* each worker has its own ``benchloop.Client`` - its own HTTP client,
  connection pool and cancel switch - so stopping one call (its deadline
  passed, the MCP client cancelled it or went away) aborts that call's
  requests and retry waits and no other's (:meth:`Workers.cancel`);
* a worker is free again only when the thread running its call has returned
  (:meth:`Workers.run` releases it in ``finally``), so the count of busy
  workers is the count of threads still at work: an abandoned call cannot
  hold a worker unseen.

A ticket names one call on one worker: cancelling a ticket whose call has
ended does nothing, even if the worker runs another call by then.  Nothing
here imports the MCP SDK or an event loop; the server (``server.py``) and
``Runner.call`` drive it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_WORKERS = 8  # --workers (the table: commands.mcp.serve; a test keeps them equal)
DEFAULT_CALL_TIMEOUT = 120.0  # --call-timeout, seconds (the table: commands.mcp.serve)


def cancel_client(client: Any) -> None:
    """Stop every request of ``client`` now: blocked reads end, retry and poll waits end
    (``benchloop.Client.cancel``, the switch the command line's Ctrl-C sets)."""
    client.cancel()


def reset_client(client: Any) -> None:
    """Make ``client`` usable again once the cancelled call has ended."""
    client.resume()


class Worker:
    """One worker: its client (made at its first call) and the call it runs, if any."""

    def __init__(self, index: int, client: Any = None):
        self.index = index
        self.client = client
        self.ticket = 0  # the number of the call it runs or ran last
        self.busy = False
        self.cancelled = False
        self.done = threading.Event()
        self.done.set()


@dataclass(frozen=True)
class Ticket:
    """One call on one worker."""

    worker: Worker
    number: int


class Workers:
    def __init__(self, make_client: Callable[[], Any], count: int = DEFAULT_WORKERS, first_client: Any = None):
        if count < 1:
            raise ValueError("at least one worker is needed")
        self.make_client = make_client
        self.workers = [Worker(i, first_client if i == 0 else None) for i in range(count)]
        self._lock = threading.Lock()
        self._numbers = 0

    @property
    def count(self) -> int:
        return len(self.workers)

    @property
    def busy(self) -> int:
        """Workers whose thread has not returned yet."""
        with self._lock:
            return sum(w.busy for w in self.workers)

    def acquire(self) -> Ticket | None:
        """A free worker for one call, or None when every worker is busy (never waits)."""
        with self._lock:
            for worker in self.workers:  # the first free one: its connections are the warmest
                if not worker.busy:
                    self._numbers += 1
                    worker.busy, worker.cancelled, worker.ticket = True, False, self._numbers
                    worker.done.clear()
                    return Ticket(worker, self._numbers)
        return None

    def run(self, ticket: Ticket, work: Callable[[Any], Any]) -> Any:
        """``work(client)`` on the ticket's worker, in the calling thread; the worker is free after."""
        worker = ticket.worker
        try:
            if worker.client is None:
                client = self.make_client()
                with self._lock:
                    worker.client = client
                    if worker.cancelled:  # cancelled while its client was being made
                        cancel_client(client)
            return work(worker.client)
        finally:
            with self._lock:
                if worker.cancelled and worker.client is not None:
                    reset_client(worker.client)
                worker.busy, worker.cancelled = False, False
                worker.done.set()

    def cancel(self, ticket: Ticket) -> bool:
        """Stop the ticket's call if it still runs (its requests are aborted); True if it did."""
        worker = ticket.worker
        with self._lock:
            if not worker.busy or worker.ticket != ticket.number or worker.cancelled:
                return False
            worker.cancelled = True
            # Under the lock: the switch is set before the call can end and clear it, never after.
            if worker.client is not None:
                cancel_client(worker.client)
        return True

    def finished(self, ticket: Ticket) -> bool:
        """True once the ticket's call has returned (its worker is free or runs a later call)."""
        worker = ticket.worker
        with self._lock:
            return not (worker.busy and worker.ticket == ticket.number)

    def close(self) -> None:
        for worker in self.workers:
            if worker.client is not None:
                worker.client.close()
