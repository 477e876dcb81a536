"""The outcome of each id of a command, and the exit code that follows from them.

An id ends as an :class:`Outcome`: a value, failures, or both for a partial success
(``MultiFailure`` carries both out of a step).  Any exception raised while one id was
processed becomes that id's failure (``as_error``): one bad id never takes the others
down.  The exit code of a run follows from its outcomes (``exit_code``): 0 when
nothing failed, 124 when every failure was a wait that timed out, 75 when every
failure is one a sync asks for again next time (``Failure.later``), 4 when no id
succeeded and every failure was a transport error, else 1.
The worker pool that produces them is ``workers.py``.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from ..base.errors import (
    EXIT_FAILURE,
    EXIT_NETWORK,
    EXIT_OK,
    EXIT_SYNC_RETRY,
    EXIT_WAIT_TIMEOUT,
    BenchloopError,
    StepError,
    UsageError,
)
from ..base.files import local_error


class Failure(Struct):
    ident: str
    message: str
    network: bool
    timed_out: bool = False  # a wait command's deadline passed (exit 124 when every failure is one)
    permanent: bool = False  # asking again will not change it (``is_permanent``)
    later: bool = False  # a sync asks again next time (exit 75 when every failure is one)


class Outcome(Struct):
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


# Answers that say "not now" rather than "no": asking again later may succeed.
RETRYABLE_STATUSES = frozenset({408, 425, 429})


def is_permanent(error: BaseException) -> bool:
    """Whether a failure will not change by asking again (until what was asked changes): an
    HTTP 4xx answer other than 408, 425 and 429 (a refusal, a missing id, a request the
    backend cannot serve).  Everything else may succeed later: transport errors and
    timeouts, 5xx, 408/425/429, waits that timed out, answers of a shape bl refuses (a
    running group changes under a scan), someone else's answer, local file errors."""
    from ..base.errors import ApiError

    status = error.status if isinstance(error, ApiError) else None
    return status is not None and 400 <= status < 500 and status not in RETRYABLE_STATUSES


def failure_of(ident: str, error: BenchloopError) -> Failure:
    """The failure of ``ident`` that ``error`` is, classified."""
    return Failure(ident, str(error), error.network, error.timed_out, is_permanent(error))


def exit_code(outcomes: list[Outcome]) -> int:
    failures = [f for o in outcomes for f in o.failures]
    if not failures:
        return EXIT_OK
    if all(f.timed_out for f in failures):
        return EXIT_WAIT_TIMEOUT
    if all(f.timed_out or f.later for f in failures):  # a sync: run it again (--until-done: 124 first)
        return EXIT_WAIT_TIMEOUT if any(f.timed_out for f in failures) else EXIT_SYNC_RETRY
    succeeded = sum(1 for o in outcomes if not o.failures or o.value is not None)
    return EXIT_NETWORK if succeeded == 0 and all(f.network for f in failures) else EXIT_FAILURE


def summarize(log: Any, outcomes: list[Outcome], noun: str = "id(s)") -> int:
    """Print the failure summary (if any) and return the exit code."""
    code = exit_code(outcomes)
    if code != EXIT_OK:
        log.failures(noun, [f for o in outcomes for f in o.failures], code)
    return code
