"""The worker pool of a command and the outcome of each id.

Ids run on a thread pool sharing one HTTP client; results come back in input
order as :class:`Outcome` objects (a value, failures, or both for partial
successes).  A 401 anywhere cancels the remaining work.  The exit code of a
run follows from its outcomes (``summarize``): 0 when nothing failed, 4 when
no id succeeded and every failure was a transport error, else 1.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .errors import EXIT_FAILURE, EXIT_NETWORK, EXIT_OK, AuthError, BenchloopError
from .http import current_slots, use_slots


@dataclass
class Failure:
    ident: str
    message: str
    network: bool


@dataclass
class Outcome:
    ident: str
    value: Any = None
    failures: list[Failure] = field(default_factory=list)

    @property
    def failure(self) -> Failure | None:
        return self.failures[0] if self.failures else None


class MultiFailure(BenchloopError):
    """Several independent failures of one id (e.g. one per artifact); the id may still succeed partly."""

    def __init__(self, failures: list[Failure], value: Any = None):
        super().__init__("; ".join(f"{f.ident}: {f.message}" for f in failures))
        self.failures = failures
        self.value = value
        self.network = all(f.network for f in failures)


def aggregate(failures: list[Failure], noun: str) -> BenchloopError:
    """One failure standing for several (``failed to fetch N <noun>: id: msg; ...``)."""
    from .errors import StepError

    network = all(f.network for f in failures)
    detail = "; ".join(f"{f.ident}: {f.message}" for f in failures)
    message = f"failed to fetch {len(failures)} {noun}: {detail}"
    return StepError(f"network: {message}" if network else message, network=network)


# Threads beyond --concurrency: while one decodes and writes its last answer, its
# request slot already serves the next id (see ``http.use_slots``).
SPARE_THREADS = 2


def run_pool(idents: list[str], work: Callable[[str], Any], concurrency: int,
             cancel: Callable[[], None]) -> list[Outcome]:
    """Run ``work`` per id, in parallel, keeping input order; a 401 cancels the rest.

    At most ``concurrency`` requests are on the wire at once: the workers share
    one gate of that many slots, held only while a request is in flight.  A
    pool started by a worker of another pool (a fan-out per id, a section of
    ``pull``) counts as one request of that outer pool while it runs, so the
    spare threads never multiply: nested pools stay within outer x inner
    ``concurrency``.  ``cancel`` stops the HTTP client's remaining requests.
    """
    gate = threading.BoundedSemaphore(concurrency) if concurrency > 1 and len(idents) > 1 else None

    def guarded(ident: str) -> Outcome:
        if gate is not None:
            use_slots(gate)
        try:
            return Outcome(ident, value=work(ident))
        except AuthError:
            cancel()
            raise
        except MultiFailure as exc:
            return Outcome(ident, value=exc.value, failures=exc.failures)
        except BenchloopError as exc:
            return Outcome(ident, failures=[Failure(ident, str(exc), exc.network)])

    if concurrency <= 1 or len(idents) <= 1:
        return [guarded(ident) for ident in idents]
    outer = current_slots()
    if outer is not None:
        outer.acquire()
    pool = ThreadPoolExecutor(max_workers=min(concurrency + SPARE_THREADS, len(idents)))
    try:
        futures = [pool.submit(guarded, ident) for ident in idents]
        outcomes: list[Outcome] = []
        auth: AuthError | None = None
        for future in futures:
            try:
                outcomes.append(future.result())
            except AuthError as exc:
                auth = auth or exc
        if auth is not None:
            raise auth
        return outcomes
    except BaseException:
        # 401 or Ctrl-C: stop queued work now and make running workers stop at their
        # next request or chunk; their own cleanup removes temp files.
        cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        if outer is not None:
            outer.release()


def exit_code(outcomes: list[Outcome]) -> int:
    failures = [f for o in outcomes for f in o.failures]
    if not failures:
        return EXIT_OK
    succeeded = sum(1 for o in outcomes if not o.failures or o.value is not None)
    return EXIT_NETWORK if succeeded == 0 and all(f.network for f in failures) else EXIT_FAILURE


def summarize(log: Any, outcomes: list[Outcome], noun: str = "id(s)") -> int:
    """Print the failure summary (if any) and return the exit code."""
    code = exit_code(outcomes)
    if code != EXIT_OK:
        log.failures(noun, [f for o in outcomes for f in o.failures], code)
    return code
