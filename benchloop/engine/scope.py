"""The items one pipeline works on during a sync (``sync.py``), and what it did with each.

Why a scope and not a filter option: a sync restricts a section to the jobs that changed
without changing the section itself - its requests, files and messages stay those of the
command it comes from.  The pipeline asks its scope three things: which items an
enumeration of the scope's variable yields (the changed ones, from the list the sync has
already fetched: no second scan), whether a file of the id as a whole is kept (nothing
changed and the file is there), and it tells the scope which items it finished and which
files each got, so that the manifest records only what is complete.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence


class Scope:
    """``only``: the items (values of the variable ``binds``) to work on, in list order;
    ``keep``: files of the id as a whole are left as they are when they exist (no item changed)."""

    def __init__(self, only: Sequence[str], binds: str, keep: bool):
        self.only = list(only)
        self.binds = binds
        self.keep = keep
        self.itemized = False  # the pipeline worked item by item (a fan-out, a step's map)
        self.done: set[str] = set()
        self.files: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def finished(self, item: str) -> None:
        with self._lock:
            self.itemized = True
            self.done.add(item)

    def wrote(self, item: str | None, path: str) -> None:
        if item is None:
            return
        with self._lock:
            self.files.setdefault(item, []).append(path)
