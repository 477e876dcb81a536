"""What a printing command writes on stdout: its elements, in input order.

Every id contributes its element (none for failures and null answers; a
listing contributes its entries, flattened).  A format that streams (jsonl), with no
``--query``, prints each id's lines as soon as it and every id before it have
finished (``Stream``); every other format waits for all ids and prints through
``formats.emit``.
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


class Stream:
    """Print a streaming format's lines as soon as an id and every id before it have finished."""

    def __init__(self, stdout: Any, log: Log, action: Action, ids: list[str], fmt: Format):
        self.stdout, self.log, self.action, self.fmt = stdout, log, action, fmt
        self.index = {ident: n for n, ident in enumerate(ids)}
        self.ready: dict[int, Outcome] = {}
        self.next = 0
        self.total = len(ids)
        self.lock = threading.Lock()

    def done(self, outcome: Outcome) -> None:
        """One id finished (a failed id prints nothing but lets the ids after it through)."""
        with self.lock:
            self.ready[self.index[outcome.ident]] = outcome
            self._flush()

    def _flush(self) -> None:
        while self.next in self.ready:
            with closed_stdout():
                for element in contributed(self.action, self.ready.pop(self.next), self.log):
                    self.stdout.write(self.fmt.line(element))
                self.stdout.flush()
            self.next += 1

    def finish(self) -> None:
        with self.lock:
            self.next = self.total


def print_all(stdout: Any, log: Log, action: Action, outcomes: list[Outcome], fmt: str, pretty: bool,
              query: Any, output: Output | None = None) -> None:
    """Every id's elements at once in format ``fmt``; ``output`` is what one element is (the
    printed dimension's, for the flat formats' rows and columns)."""
    elements = [e for outcome in outcomes for e in contributed(action, outcome, log)]
    with closed_stdout():
        formats.emit(stdout, elements, fmt, pretty, query, note=log.note, output=output)


@contextmanager
def closed_stdout() -> Iterator[None]:
    """A reader that closed stdout is ``StdoutClosed`` (no failure of an id, no local-file error)."""
    try:
        yield
    except BrokenPipeError:
        raise StdoutClosed() from None
