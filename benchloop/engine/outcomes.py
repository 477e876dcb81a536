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
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from ..base.errors import (
    EXIT_FAILURE,
    EXIT_NETWORK,
    EXIT_OK,
    AuthError,
    BenchloopError,
    StdoutClosed,
    StepError,
    UsageError,
)
from ..base.files import NoRoomError, local_error
from ..transport.slots import current_slots, use_slots


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
    from ..base.errors import StepError

    network = all(f.network for f in failures)
    detail = "; ".join(f"{f.ident}: {f.message}" for f in failures)
    message = f"failed to fetch {len(failures)} {noun}: {detail}"
    return StepError(f"network: {message}" if network else message, network=network)


def as_error(exc: Exception, log: Any = None) -> BenchloopError:
    """Any exception raised while one id was processed, as that id's failure.

    One bad id never takes the others down: a local file error names its path (and is a
    ``NoRoomError``, which stops the command, when no further write can succeed), an answer
    nested too deeply or a name that cannot be encoded is a clear message; anything else is
    ``<Type>: <text>``.  A ``UsageError`` is raised again (exit 2); ``KeyboardInterrupt`` and
    ``SystemExit`` are not ``Exception``s and never come here.
    """
    if isinstance(exc, BenchloopError):
        return exc
    if isinstance(exc, UsageError):  # the command line is wrong: exit 2, whichever id found it
        raise exc
    if isinstance(exc, OSError):
        return local_error(exc)
    if log is not None and getattr(log, "verbose", False):  # -v: where it came from
        import traceback

        for line in "".join(traceback.format_exception(exc)).splitlines():
            log.debug(line)
    if isinstance(exc, RecursionError):
        return StepError("the answer is nested too deeply to process (RecursionError)")
    if isinstance(exc, UnicodeError):
        return StepError(f"not valid UTF-8 text, cannot be used in a request or a file name "
                         f"({type(exc).__name__}: {exc})")
    return StepError(f"{type(exc).__name__}: {exc}")


# Threads beyond --concurrency: while one decodes and writes its last answer, its
# request slot already serves the next id (see ``transport.slots``).
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
            return Outcome(ident, failures=[Failure(ident, str(error), error.network)])

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
