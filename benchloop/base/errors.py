"""Failure types and how they map to exit codes (docs/contract.md 6).

0 success, 1 partial or generic failure, 2 usage, 3 authentication,
4 network (no id succeeded and every failure was a transport error),
124 a wait timed out (``bl jobs wait --timeout``; the code GNU ``timeout`` uses),
130 interrupted, 141 stdout closed by its reader.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_AUTH, EXIT_NETWORK, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 130
EXIT_STDOUT_CLOSED = 141  # 128 + SIGPIPE: the reader of stdout went away
EXIT_WAIT_TIMEOUT = 124  # a wait command's --timeout passed (as GNU timeout(1) exits)
EXIT_SYNC_RETRY = 75  # a sync left only failures that may still succeed: run it again (sysexits EX_TEMPFAIL)


class UsageError(Exception):
    """Bad command line: exit 2, before any request is made."""


class StdoutClosed(Exception):
    """Whoever reads stdout went away (``bl ... | head``): the command stops quietly."""


class ConfigError(UsageError):
    """Unreadable or invalid configuration file."""


class KeyUnavailable(ConfigError):
    """A key source (a key command, the OS keyring) gave no key: a configuration failure, exit
    3 like any other key problem, printed as ``[error] configuration error: ...`` without a
    usage preface (nothing is wrong with the command line).  ``origin``: where the key was to
    come from (``settings/keys.py``), once known."""

    origin = "default"


class BenchloopError(Exception):
    """A failure of one id (or one step); ``network`` marks transport errors, ``timed_out`` a
    wait whose deadline passed."""

    network = False
    timed_out = False


class ApiError(BenchloopError):
    def __init__(self, status: int, body: Any):
        self.status = status
        self.body = body
        super().__init__(f"API error {status}: {render_body(body)}")


class NetworkError(BenchloopError):
    network = True

    def __init__(self, detail: str):
        super().__init__(f"network: {detail}")


class AuthError(BenchloopError):
    """HTTP 401: fatal for the whole command (exit 3).  ``status``: the answer's status, when
    one said so (None for a redirect to a login page)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Cancelled(BenchloopError):
    """Work abandoned because another worker hit a fatal error."""


class IdentityMismatch(BenchloopError):
    """An answer that names another id than the one asked for (``identity`` in the table):
    someone else's answer, never to be saved or printed as this id's."""


class IdentityUnverified(IdentityMismatch):
    """An answer without the field that names its id, read on a connection used before: it
    may be bytes a server left there, so it is asked again on a new connection (where a
    missing field is accepted: the backend may leave it out)."""


class StepError(BenchloopError):
    """A failure produced by the engine itself (pagination, response shape)."""

    def __init__(self, message: str, network: bool = False):
        super().__init__(message)
        self.network = network


def render_body(body: Any) -> str:
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(body)
