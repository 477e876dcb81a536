"""The Python client's exceptions (docs/python.md "Errors").

They mirror the CLI's exit codes: ``UsageError`` is exit 2 (raised before any
request), ``AuthError`` exit 3, ``NetworkError`` exit 4 (no id succeeded and
every failure was a transport error), ``PartialFailure`` exit 1 (some ids
failed; what succeeded is on ``.results``), ``WaitTimeout`` (a ``PartialFailure``)
exit 124.  They are the public face of the
runtime's internal errors (``benchloop.base.errors``), translated at the client's
boundary.
"""

from __future__ import annotations

from typing import Any


class BenchloopError(Exception):
    """Base class of every error the Python client raises."""


class UsageError(BenchloopError, ValueError):
    """An invalid argument or setting, with the CLI's message; raised before any request."""


class UnknownArgument(UsageError, TypeError):
    """A keyword the method does not take (also a ``TypeError``, as for any Python call)."""


class AuthError(BenchloopError):
    """HTTP 401 (or a redirect to a login page): the API key was refused; the call was cancelled."""


def _summary(failures: list[tuple[str, str]], limit: int = 10) -> str:
    shown = "; ".join(f"{ident}: {message}" for ident, message in failures[:limit])
    more = f"; ... ({len(failures) - limit} more)" if len(failures) > limit else ""
    return f"{len(failures)} failed: {shown}{more}"


class _Failed(BenchloopError):
    def __init__(self, failures: list[tuple[str, str]], results: Any):
        super().__init__(_summary(failures))
        self.failures = failures
        self.results = results

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle (a multiprocessing worker's exception travels back pickled) rebuilds an
        # exception from ``args``, which hold only the summary: rebuild from both fields.
        return (type(self), (self.failures, self.results), self.__dict__)


class PartialFailure(_Failed):
    """Some ids failed.

    ``results``: what succeeded (the list a printing method returns, or the
    ``DownloadResult`` of a download); ``failures``: ``(id, message)`` pairs in
    input order, with the CLI's failure-summary labels and messages.
    """


class WaitTimeout(PartialFailure):
    """A wait's ``timeout`` passed before the work was done (``bl.jobs.wait``; the CLI's exit 124).

    A ``PartialFailure``: ``results`` holds the groups that were done in time, ``failures`` the
    ones that were not, with their counts so far in the message.
    """


class NetworkError(_Failed):
    """No id succeeded and every failure was a transport error (connection refused, timeout, ...).

    Like ``PartialFailure`` it carries ``failures`` (and an empty ``results``).
    """
