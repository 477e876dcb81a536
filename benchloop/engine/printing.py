"""What a printing command writes on stdout: its elements, in input order.

Every id contributes its element (none for failures and null answers; a
listing contributes its entries, flattened).  A format that streams (jsonl), with no
``--query``, prints each id's lines as soon as it and every id before it have
finished (``Stream``); every other format waits for all ids and prints through
``formats.emit``.  An element holding a listing read page by page (``pagination.Streamed``:
``jobs get --all``, ``jobs table``) is written as its pages arrive in every row format
(``formats.streamed``); a page of it that fails after rows were printed is one ``[error]``
line (``Broken``) and exit 1.  A line ``--output text`` leaves out (a value that would break it, to a
pipe) is counted by ``Refused`` and reported once at the end: one ``[error]`` line, exit 1.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..base.errors import EXIT_AUTH, EXIT_FAILURE, AuthError, StdoutClosed
from ..base.log import Log
from ..table.model import Action
from ..table.outputs import Output
from . import formats
from .formats import Format, Refuse
from .outcomes import Outcome


def contributed(action: Action, outcome: Outcome, log: Log) -> list[Any]:
    """The output elements one id contributes (none for failures and null bodies)."""
    if outcome.value is None:
        if not outcome.failures:
            log.warn(f"{outcome.ident}: the backend returned null; left out of the output")
        return []
    if action.stdout_when:
        return list(outcome.value)  # listings print as one flat array
    return [outcome.value]


class Refused:
    """The lines a format left out because a value would break them (``--output text`` to a
    pipe): counted as they come, reported once at the end."""

    SHOWN = 60  # characters of the first value in the message

    def __init__(self) -> None:
        self.count = 0
        self.first = ""
        self._lock = threading.Lock()

    def __call__(self, value: str) -> None:
        with self._lock:
            if not self.count:
                self.first = value
            self.count += 1

    def report(self, log: Log) -> bool:
        """One ``[error]`` line when lines were left out (the command then exits 1); whether any were."""
        if not self.count:
            return False
        first = self.first if len(self.first) <= self.SHOWN else self.first[:self.SHOWN] + "…"
        log.error(f"--output text left out {self.count} line(s): a value holds a line break, a tab or another "
                  f"control character, and would reach the next command as other values (the first: "
                  f"{first!r}); --output jsonl prints every value exactly")
        return True


class Broken:
    """The listings whose pages failed after some of their rows were printed: each is one
    ``[error]`` line as it happens, and the command exits 1 (3 when the key was refused)."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.errors: list[Exception] = []
        self._lock = threading.Lock()

    def __call__(self, ident: str, exc: Exception) -> None:
        with self._lock:
            self.errors.append(exc)
        where = f"{ident}: " if ident else ""
        self.log.error(f"{where}{exc} (the rows before it were printed; the rest of this listing was not)")

    def code(self) -> int:
        if any(isinstance(e, AuthError) for e in self.errors):
            return EXIT_AUTH
        return EXIT_FAILURE if self.errors else 0


def streams(elements: list[Any]) -> bool:
    """Whether some element is, or holds, a listing read as it is iterated."""
    from .formats.streamed import holds_streamed

    return any(holds_streamed(e) for e in elements)


def write_elements(stdout: Any, pairs: list[tuple[str, Any]], fmt: str, pretty: bool, broken: Broken,
                   refuse: Refuse | None, output: Output | None, note: Any = None) -> None:
    """``(id, element)`` pairs in format ``fmt``, listings as their pages arrive (``formats.streamed``)."""
    from .formats import streamed

    streamed.write(stdout, pairs, fmt, pretty, output, note=note, refuse=refuse, on_error=broken)


class Stream:
    """Print a streaming format's lines as soon as an id and every id before it have finished."""

    def __init__(self, stdout: Any, log: Log, action: Action, ids: list[str], fmt: Format, name: str = "jsonl",
                 output: Output | None = None):
        self.stdout, self.log, self.action, self.fmt = stdout, log, action, fmt
        self.name, self.output = name, output
        self.broken = Broken(log)
        self.index = {ident: n for n, ident in enumerate(ids)}
        self.ready: dict[int, Outcome] = {}
        self.next = 0
        self.total = len(ids)
        self.lock = threading.Lock()
        self.refused = Refused()

    def done(self, outcome: Outcome) -> None:
        """One id finished (a failed id prints nothing but lets the ids after it through)."""
        with self.lock:
            self.ready[self.index[outcome.ident]] = outcome
            self._flush()

    def _flush(self) -> None:
        while self.next in self.ready:
            with closed_stdout():
                outcome = self.ready.pop(self.next)
                elements = contributed(self.action, outcome, self.log)
                if streams(elements):  # a listing read page by page: its rows as they come
                    write_elements(self.stdout, [(outcome.ident, e) for e in elements], self.name, False,
                                   self.broken, self.refused, self.output)
                else:
                    self.fmt.render(self.stdout, elements, False, output=self.output, refuse=self.refused)
                self.stdout.flush()
            self.next += 1

    def finish(self) -> bool:
        """The end of the output; whether lines were left out (reported)."""
        with self.lock:
            self.next = self.total
        return self.refused.report(self.log)


def print_all(stdout: Any, log: Log, action: Action, outcomes: list[Outcome], fmt: str, pretty: bool,
              query: Any, output: Output | None = None, broken: Broken | None = None) -> bool:
    """Every id's elements at once in format ``fmt``; ``output`` is what one element is (the
    printed dimension's, for the flat formats' rows and columns).  Whether lines were left out."""
    pairs = [(outcome.ident, e) for outcome in outcomes for e in contributed(action, outcome, log)]
    refused = Refused()
    with closed_stdout():
        if query is None and streams([e for _, e in pairs]):
            write_elements(stdout, pairs, fmt, pretty, broken or Broken(log), refused, output, log.note)
        else:
            formats.emit(stdout, [e for _, e in pairs], fmt, pretty, query, note=log.note, output=output,
                         refuse=refused)
    return refused.report(log)


@contextmanager
def closed_stdout() -> Iterator[None]:
    """A reader that closed stdout is ``StdoutClosed`` (no failure of an id, no local-file error)."""
    try:
        yield
    except BrokenPipeError:
        raise StdoutClosed() from None
