"""The ids a walk over pages has seen, in bounded memory (``SeenIds``).

A unique scan must remember every id it has seen (a later page, or a scan with
another page size, repeats items), and a listing printed as its pages arrive
holds nothing else: a set of 1,000,000 job ids alone is ~100 MB.  ``SeenIds`` is
a set up to ``KEEP_IDS`` ids; past that the string and byte ids move to a table
of a private temporary SQLite database (``sqlite3.connect("")``, deleted when
closed) with a 512 KB page cache, asked once per page (a page of text ids as one JSON
array: one statement looks them up, one stores the new ones).  Other ids (numbers,
booleans, strings SQLite cannot encode) stay in the set, so equality is
Python's: ``1 == 1.0 == True``, ``"1" != 1``.  A disk that fails (no temporary
directory, full, unreadable) takes the ids back into memory: it costs memory,
never an id.
"""

from __future__ import annotations

import json
from typing import Any

KEEP_IDS = 2000  # ids held in a set before the string ids move to disk
_CHUNK = 500  # ids per SQL statement (SQLite allows 999 parameters in older builds)


class SeenIds:
    """The ids seen so far; ``fresh(page)`` says which of a page's ids are new and records them."""

    def __init__(self, keep: int | None = None):
        self._keep = KEEP_IDS if keep is None else keep
        self._memory: set[Any] = set()
        self._db: Any = None  # sqlite3.Connection once the ids moved to disk
        self._disk_error: type[Exception] = OSError  # sqlite3.Error once sqlite3 is loaded
        self._disk_failed = False  # the disk failed once: every id stays in memory
        self._json = False  # the database has json_each: a page of text ids in one statement

    def __len__(self) -> int:
        extra = self._db.execute("SELECT COUNT(*) FROM seen").fetchone()[0] if self._db is not None else 0
        return len(self._memory) + extra

    def fresh(self, ids: list[Any]) -> list[bool]:
        """For each id, whether it is new (an id twice in ``ids`` is new the first time only)."""
        if self._db is not None and self._json and ids and _all_text(ids):
            return self._fresh_text(ids)
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

    def _fresh_text(self, ids: list[str]) -> list[bool]:
        """``fresh`` of a page of text ids, all stored on disk (the ids of every real listing):
        the page goes to SQLite as one JSON array, looked up in one statement and its new ids
        stored in another (row by row, a page cost ~3 ms and 1,000 round trips through the GIL)."""
        try:
            known = {row[0] for row in self._db.execute(_KNOWN, (json.dumps(ids, ensure_ascii=False),))}
        except self._disk_error:  # the disk cannot be read: every id back into memory
            self._back_to_memory([])
            return self.fresh(ids)
        if not known and len(set(ids)) == len(ids):  # the common case: every id new
            flags, new = [True] * len(ids), ids
        else:
            page: set[str] = set()
            flags, new = [], []
            for iid in ids:
                fresh = iid not in page and iid not in known
                if fresh:
                    page.add(iid)
                    new.append(iid)
                flags.append(fresh)
        if new:
            try:
                _insert(self._db, json.dumps(new, ensure_ascii=False))
            except self._disk_error:  # a full disk: every id back into memory
                self._back_to_memory([(iid,) for iid in new])
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
        try:  # SQLite's JSON functions (built in since 3.38; a build may leave them out)
            self._json = db.execute("SELECT count(*) FROM json_each('[\"a\"]')").fetchone()[0] == 1
        except sqlite3.Error:
            self._json = False
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


def _insert(db: Any, rows: list[tuple[Any]] | str) -> None:
    """One page's new ids in one transaction: a failure (a full disk) takes back only these.
    ``rows``: one id a row, or text ids as one JSON array (each once), stored in one statement."""
    if isinstance(rows, str):
        db.execute("INSERT INTO seen SELECT value FROM json_each(?)", (rows,))  # one statement: atomic
        return
    db.execute("BEGIN")
    try:
        db.executemany("INSERT INTO seen VALUES (?)", rows)
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled it back already
            db.execute("ROLLBACK")
        raise


_KNOWN = "SELECT id FROM seen WHERE id IN (SELECT value FROM json_each(?))"


def _all_text(ids: list[Any]) -> bool:
    """Whether every id is a ``str`` stored on disk (:func:`_on_disk`) that JSON carries to
    SQLite as it is (no NUL character, which a JSON text's ``\\u0000`` would not bring back)."""
    if set(map(type, ids)) != {str}:
        return False
    joined = "".join(ids)
    if "\x00" in joined:
        return False
    if joined.isascii():
        return True
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: kept in memory, id by id
        return False
    return True


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
