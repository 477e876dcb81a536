"""The worker pool of a command: ids run on threads sharing one HTTP client.

Results come back in input order as :class:`~.outcomes.Outcome` objects.  At most
``--concurrency`` requests are on the wire at once (a gate of request slots, held
only while a request is in flight: ``transport`` ``use_slots``); a 401, a usage error,
a full disk or a closed stdout anywhere cancels the remaining work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..base.errors import AuthError, BenchloopError, StdoutClosed, UsageError
from ..base.files import NoRoomError
from ..transport.slots import current_slots, use_slots
from .outcomes import MultiFailure, Outcome, as_error, failure_of

# Threads beyond --concurrency: while one decodes and writes its last answer, its
# request slot already serves the next id (see ``http.use_slots``).
SPARE_THREADS = 2
# Seconds a Ctrl-C waits for running workers to stop and clean up.
INTERRUPT_GRACE = 0.8


def _guarded(work: Callable[[str], Any], gate: threading.Semaphore | None, cancel: Callable[[], None],
             log: Any) -> Callable[[str], Outcome]:
    """``work`` for one id, turned into its Outcome: a failure of that id stays that id's
    (whatever its exception); a 401, a usage error or a full disk cancels the rest."""

    def guarded(ident: str) -> Outcome:
        if gate is not None:
            use_slots(gate)
        try:
            return Outcome(ident, value=work(ident))
        except (AuthError, NoRoomError, UsageError, StdoutClosed):
            cancel()
            raise
        except MultiFailure as exc:
            return Outcome(ident, value=exc.value, failures=exc.failures)
        except Exception as exc:  # noqa: BLE001 - one bad id never takes the others down
            error = as_error(exc, log)
            if isinstance(error, NoRoomError):
                cancel()
                raise error from None
            return Outcome(ident, failures=[failure_of(ident, error)])

    return guarded


def _results(futures: list[Any]) -> list[Outcome]:
    """Every id's outcome in input order; the first 401 or full disk is raised after all ended."""
    outcomes: list[Outcome] = []
    fatal: BenchloopError | None = None
    for future in futures:
        try:
            outcomes.append(future.result())
        except (AuthError, NoRoomError) as exc:
            fatal = fatal or exc
    if fatal is not None:
        raise fatal
    return outcomes


def run_pool(idents: list[str], work: Callable[[str], Any], concurrency: int,
             cancel: Callable[[], None], log: Any = None) -> list[Outcome]:
    """Run ``work`` per id, in parallel, keeping input order; a 401 cancels the rest.

    At most ``concurrency`` requests are on the wire at once: the workers share
    one gate of that many slots, held only while a request is in flight.  A
    pool started by a worker of another pool (a fan-out per id, a section of
    ``pull``) counts as one request of that outer pool while it runs, so the
    spare threads never multiply: nested pools stay within outer x inner
    ``concurrency``.  ``cancel`` stops the HTTP client's remaining requests.
    """
    gate = threading.BoundedSemaphore(concurrency) if concurrency > 1 and len(idents) > 1 else None
    guarded = _guarded(work, gate, cancel, log)
    if concurrency <= 1 or len(idents) <= 1:
        return [guarded(ident) for ident in idents]
    # Several ids: the pool (~5 ms of imports that one id never needs).
    from concurrent.futures import ThreadPoolExecutor, wait

    outer = current_slots()
    if outer is not None:
        outer.acquire()
    pool = ThreadPoolExecutor(max_workers=min(concurrency + SPARE_THREADS, len(idents)))
    futures: list[Any] = []
    try:
        futures = [pool.submit(guarded, ident) for ident in idents]
        return _results(futures)
    except KeyboardInterrupt:
        # Ctrl-C: never wait for workers blocked in a read.  The cancel aborts the client's
        # connections, so they end at once and remove their temp files; whatever is not done
        # after a short grace is abandoned (the CLI removes its temp files and exits).
        cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        wait(futures, timeout=INTERRUPT_GRACE)
        raise
    except BaseException:
        # 401, a full disk: stop queued work now and make running workers stop at their
        # next request or chunk; their own cleanup removes temp files.
        cancel()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=False)
        if outer is not None:
            outer.release()
