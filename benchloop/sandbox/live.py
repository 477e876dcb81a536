"""The live group ``GLIVE``: jobs that finish while you watch (``bl jobs wait``, ``bl pull --sync``).

Why a clock started by the first request that names the group: a sandbox often runs
for a long time before anyone looks at ``GLIVE`` (``make demo``, a test module's
shared sandbox), and a group that finished before the first look shows nothing.  So
nothing moves until a request names ``GLIVE`` (its path or query); from then on one
more job finishes every ``pace`` seconds, oldest first (``Dataset.finish_live``).
``advance(n)`` finishes ``n`` more at once, whatever the clock (tests that count the
requests of a sync do not depend on timing), and ``restart()`` puts every job back to
``running`` and stops the clock until the next request names the group.

A pace of 0 stops the clock altogether: only ``advance`` finishes jobs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from urllib.parse import unquote

from .dataset import LIVE_GROUP, Dataset


class LiveGroup:
    def __init__(self, dataset: Dataset, pace: float, clock: Callable[[], float] = time.monotonic):
        self.dataset = dataset
        self.pace = pace
        self.clock = clock
        self.started: float | None = None
        self.extra = 0  # finished by advance(), on top of the clock's
        self.applied = 0  # finished in the dataset now
        self.version = 0  # changes whenever a job finished (the sandbox's per-group memos)
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return max(self.dataset.live_jobs, self.dataset.live_compare)  # the live comparison groups too

    def due(self) -> int:
        """How many jobs have finished by now."""
        by_clock = 0
        if self.started is not None and self.pace > 0:
            by_clock = int((self.clock() - self.started) / self.pace)
        return min(self.size, by_clock + self.extra)

    def tick(self, target: str) -> None:
        """Before a request is answered: start the clock when it names the group, and put the
        dataset in step with the clock."""
        if not self.size:
            return
        with self._lock:
            if self.started is None and LIVE_GROUP in unquote(target):
                self.started = self.clock()
            self._apply()

    def _apply(self) -> None:
        due = self.due()
        if due != self.applied:
            self.dataset.finish_live(due)
            self.applied = due
            self.version += 1

    def advance(self, count: int = 1) -> int:
        """Finish ``count`` more jobs now; how many have finished."""
        with self._lock:
            self.extra += count
            self._apply()
            return self.applied

    def restart(self) -> None:
        """Every job running again; the clock waits for the next request naming the group."""
        with self._lock:
            self.started = None
            self.extra = 0
            self._apply()
