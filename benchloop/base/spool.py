"""Collections that move to disk as they grow: a listing (``Spool``) and the ids a walk has seen
(``SeenIds``).

``jobs get --all`` on a group of 20,000 jobs collects every job before it prints
one document (a failed page must print nothing), and the item objects alone
took ~12 MB, growing with the group.  A ``Spool`` keeps its first items in
memory and, past ``keep`` items, writes them in batches to an anonymous
temporary file; iterating reads them back a batch at a time.  Memory then holds
one batch, whatever the size of the listing.

Own code, for a measured reason: ``tempfile.SpooledTemporaryFile`` spools
bytes, not items, and leaves a half-written file behind a full disk.  Here a
batch that cannot be written (no temporary directory, a full disk) stays in
memory after the batches already on disk, so a broken temporary directory
costs memory, never an item.

Batches are ``marshal`` records: the items are what ``json.loads`` made (dict,
list, str, int, float, bool, None), which marshal writes and reads exactly
(key order kept, floats bit for bit) at several times the speed of JSON.  The
records are our own, in a file only this process can reach (it has no name),
and are read back by this process only.

A unique scan must also remember every id it has seen (a later page, or a scan
with another page size, repeats items).  ``SeenIds`` is a set up to ``KEEP_IDS``
ids; past that the string and byte ids move to a table of a private temporary
SQLite database (``sqlite3.connect("")``, deleted when closed) with a 512 KB page
cache, asked once per page.  Other ids (numbers, booleans, strings SQLite cannot
encode) stay in the set, so equality is Python's: ``1 == 1.0 == True``, ``"1" != 1``.
"""

from __future__ import annotations

import marshal
import os
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

KEEP = 1000  # items held in memory before a batch goes to disk
_POSITIONAL_IO = hasattr(os, "pwrite") and hasattr(os, "pread")  # not on Windows: Spools stay in memory
KEEP_IDS = 2000  # ids held in a set before the string ids move to disk
_CHUNK = 500  # ids per SQL statement (SQLite allows 999 parameters in older builds)


class Spool:
    """An append-only sequence of JSON values that spills to disk; iterate it to read it."""

    def __init__(self, keep: int | None = None):
        self._keep = max(1, KEEP if keep is None else keep)
        self._tail: list[Any] = []  # the items not on disk, after every batch that is
        self._batches: list[tuple[int, int]] = []  # (offset, size) of each record on disk
        self._count = 0
        self._fd: int | None = None
        self._disk = True  # False once the disk refused: everything else stays in memory

    def append(self, item: Any) -> None:
        self._tail.append(item)
        self._count += 1
        if len(self._tail) >= self._keep:
            self._spill()

    def extend(self, items: Iterable[Any]) -> None:
        for item in items:
            self.append(item)

    def _spill(self) -> None:
        if not self._disk or not _POSITIONAL_IO:
            return
        try:
            data = marshal.dumps(self._tail)
            self._fd, offset = _SHARED.write(data, joining=self._fd is None)
        except (OSError, ValueError):
            # No temporary directory, a full disk, or an item marshal cannot write: keep it all
            # in memory from here.
            self._disk = False
            return
        if not self._batches:
            weakref.finalize(self, _SHARED.leave)
        self._batches.append((offset, len(data)))
        self._tail = []

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[Any]:
        batches, tail = list(self._batches), list(self._tail)
        for offset, size in batches:
            assert self._fd is not None
            yield from marshal.loads(_read(self._fd, offset, size))
        yield from tail

    def __repr__(self) -> str:
        return f"Spool({self._count} items, {len(self._batches)} batches on disk)"


class _SharedFile:
    """The one anonymous temporary file that every spilled Spool of the process writes to: one
    descriptor however many listings wait (a command over 500 big groups must not hold 500,
    which would leave none for its connections).  It is closed when the last Spool that wrote
    to it is gone; a Spool joins before its first write, so its descriptor stays open while
    it lives."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # a Spool's finalizer may run inside ``write`` (a collection)
        self.fd: int | None = None
        self.end = 0
        self.users = 0

    def write(self, data: bytes, joining: bool) -> tuple[int, int]:
        """Append ``data``: ``(descriptor, offset)``.  ``joining``: the caller's first write."""
        with self.lock:
            self.users += joining  # first: nothing below may see the file closed under it
            if self.fd is None:
                try:
                    with tempfile.TemporaryFile() as handle:
                        self.fd, self.end = os.dup(handle.fileno()), 0
                except OSError:
                    self.users -= joining
                    raise
            fd, offset = self.fd, self.end
            self.end += len(data)  # reserved: another writer appends after it
        try:
            written = 0
            while written < len(data):
                written += os.pwrite(fd, data[written:], offset + written)
        except OSError:
            if joining:
                self.leave()
            raise
        return fd, offset

    def leave(self) -> None:
        with self.lock:
            self.users -= 1
            if self.users == 0 and self.fd is not None:
                os.close(self.fd)
                self.fd = None


_SHARED = _SharedFile()


def _read(fd: int, offset: int, size: int) -> bytes:
    parts = []
    while size:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            raise OSError(f"spool file ended {size} bytes early")
        parts.append(chunk)
        offset += len(chunk)
        size -= len(chunk)
    return b"".join(parts)


class SeenIds:
    """The ids seen so far; ``fresh(page)`` says which of a page's ids are new and records them."""

    def __init__(self, keep: int | None = None):
        self._keep = KEEP_IDS if keep is None else keep
        self._memory: set[Any] = set()
        self._db: Any = None  # sqlite3.Connection once the ids moved to disk
        self._disk_error: type[Exception] = OSError  # sqlite3.Error once sqlite3 is loaded
        self._disk_failed = False  # the disk failed once: every id stays in memory

    def __len__(self) -> int:
        extra = self._db.execute("SELECT COUNT(*) FROM seen").fetchone()[0] if self._db is not None else 0
        return len(self._memory) + extra

    def fresh(self, ids: list[Any]) -> list[bool]:
        """For each id, whether it is new (an id twice in ``ids`` is new the first time only)."""
        disk = {iid for iid in ids if _on_disk(iid)} if self._db is not None else set()
        try:
            known = self._known_on_disk(list(disk)) if disk else set()
        except self._disk_error:  # the disk cannot be read: every id back into memory
            self._back_to_memory([])
            return self.fresh(ids)
        page: set[Any] = set()
        flags = []
        for iid in ids:
            new = iid not in page and (iid not in known if iid in disk else iid not in self._memory)
            if new:
                page.add(iid)
            flags.append(new)
        rows = [(iid,) for iid in page if iid in disk]
        self._memory |= page.difference(disk)
        if rows:
            try:
                _insert(self._db, rows)
            except self._disk_error:  # a full disk: every id back into memory
                self._back_to_memory(rows)
        elif self._db is None and len(self._memory) > self._keep and not self._disk_failed:
            self._move_to_disk()
        return flags

    def _known_on_disk(self, keys: list[Any]) -> set[Any]:
        known: set[Any] = set()
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start:start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            known.update(row[0] for row in self._db.execute(f"SELECT id FROM seen WHERE id IN ({marks})", chunk))
        return known

    def _move_to_disk(self) -> None:
        import sqlite3

        self._disk_error = sqlite3.Error
        db = None
        try:
            # autocommit: a statement that fails (a full disk) rolls back itself alone, never
            # the ids stored before it
            db = sqlite3.connect("", check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA cache_size=-512")
            db.execute("CREATE TABLE seen (id PRIMARY KEY) WITHOUT ROWID")
            disk = [iid for iid in self._memory if _on_disk(iid)]
            _insert(db, [(iid,) for iid in disk])
        except sqlite3.Error:  # no temporary directory: the ids stay in memory
            if db is not None:
                db.close()
            self._disk_failed = True
            return
        self._db = db
        self._memory.difference_update(disk)

    def _back_to_memory(self, pending: list[tuple[Any]]) -> None:
        db, self._db = self._db, None
        try:
            self._memory.update(row[0] for row in db.execute("SELECT id FROM seen"))
        except self._disk_error as exc:
            raise OSError(f"cannot read back the ids seen from the temporary directory: {exc}") from None
        finally:
            db.close()
        self._memory.update(row[0] for row in pending)
        self._disk_failed = True

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> SeenIds:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _insert(db: Any, rows: list[tuple[Any]]) -> None:
    """One page's new ids in one transaction: a failure (a full disk) takes back only these."""
    db.execute("BEGIN")
    try:
        db.executemany("INSERT INTO seen VALUES (?)", rows)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled it back already
            db.execute("ROLLBACK")
        raise


def _on_disk(iid: Any) -> bool:
    """Strings SQLite stores as they are (no lone surrogate), and bytes."""
    if type(iid) is str:
        if iid.isascii():
            return True
        try:
            iid.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    return type(iid) is bytes
