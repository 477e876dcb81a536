"""What a printing command writes on stdout: its elements, in input order.

Every id contributes its element (none for failures and null answers; a
listing contributes its entries, flattened).  A format that streams (jsonl), with no
``--query``, prints each id's lines as soon as it and every id before it have
finished (``Stream``); every other format waits for all ids and prints through
``formats.emit``.  A line ``--output text`` leaves out (a value that would break it, to a
pipe) is counted by ``Refused`` and reported once at the end: one ``[error]`` line, exit 1.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..base.errors import StdoutClosed
from ..base.log import Log
from ..table.model import Action
from ..table.outputs import Output
from . import formats
from .formats import Format
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


class Stream:
    """Print a streaming format's lines as soon as an id and every id before it have finished."""

    def __init__(self, stdout: Any, log: Log, action: Action, ids: list[str], fmt: Format):
        self.stdout, self.log, self.action, self.fmt = stdout, log, action, fmt
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
                elements = contributed(self.action, self.ready.pop(self.next), self.log)
                self.fmt.render(self.stdout, elements, False, refuse=self.refused)
                self.stdout.flush()
            self.next += 1

    def finish(self) -> bool:
        """The end of the output; whether lines were left out (reported)."""
        with self.lock:
            self.next = self.total
        return self.refused.report(self.log)


def print_all(stdout: Any, log: Log, action: Action, outcomes: list[Outcome], fmt: str, pretty: bool,
              query: Any, output: Output | None = None) -> bool:
    """Every id's elements at once in format ``fmt``; ``output`` is what one element is (the
    printed dimension's, for the flat formats' rows and columns).  Whether lines were left out."""
    elements = [e for outcome in outcomes for e in contributed(action, outcome, log)]
    refused = Refused()
    with closed_stdout():
        formats.emit(stdout, elements, fmt, pretty, query, note=log.note, output=output, refuse=refused)
    return refused.report(log)


@contextmanager
def closed_stdout() -> Iterator[None]:
    """A reader that closed stdout is ``StdoutClosed`` (no failure of an id, no local-file error)."""
    try:
        yield
    except BrokenPipeError:
        raise StdoutClosed() from None
