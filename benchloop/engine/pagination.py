"""Pagination modes named by the endpoint table.

Each mode is a pure function over ``fetch(skip, limit) -> body`` so that it can
be tested against adversarial page sequences without a server.  The algorithms
follow docs/contract.md 2.6, because users' scripts depend on their results:

``single_page``  one request at ``skip=(page-1)*page_size``.
``unique_scan``  walks the collection in pages, de-duplicating by id, stepping
                 back over runs of equal tie values (``created_at``) at page
                 boundaries, and re-scanning with other page sizes when the
                 backend's total is not reached.
``task_scan``    the simpler scan used for evaluation task lists.

Deliberate differences from the reference, each a guard against a backend that
misbehaves (a well-behaved one gets the reference's results): a ``total`` that
is not an integer is treated as unknown instead of crashing the comparison; a
unique scan whose full page brings nothing new without a total fails instead of
paging forever; the task scan judges progress by content for items without an
id, and never asks for a page past the announced total (``_task_items``).
"""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Callable, Generator, Iterator
from typing import Any

from msgspec import Struct, field

from ..base.seen_ids import SeenIds

# A page size option given no value: one page asks PAGE_SIZE items, a walk over every page
# WALK_PAGE_SIZE a request (docs/contract.md 2.6: the unique scan's 1000 unless --page-size;
# 10,000 jobs 50 ms away: 13 s at 50 a page, under 2 s at 1000).
PAGE_SIZE = 50
WALK_PAGE_SIZE = 1000

Fetch = Callable[[int, int], Any]
OnPage = Callable[[int, "int | None"], None]


class PaginationError(Exception):
    """The collection could not be walked completely; fails that id."""


class Scan(Struct):
    """Result of a multi-page walk: every item, in a list."""

    total: int
    items: list[Any]
    first: dict[str, Any] = field(default_factory=dict)


def _int_total(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _item_id(item: Any, id_keys: list[str]) -> Any:
    if not isinstance(item, dict):
        return None
    for key in id_keys:
        value = item.get(key)
        if value not in (None, ""):
            # Ids are scalars; a list or object id is malformed (and unhashable).
            return value if isinstance(value, (str, int, float, bool)) else None
    return None


def _text_ids(page: list[Any], key: str) -> list[Any] | None:
    """The ids of a page whose items are objects that each have a non-empty text at ``key``
    (the first id key: what :func:`_item_id` takes then), read in C; None for any other page."""
    if not set(map(type, page)) <= {dict}:
        return None
    ids = list(map(operator.methodcaller("get", key), page))
    if set(map(type, ids)) <= {str} and "" not in ids:
        return ids
    return None


def _noop(*_args: Any) -> None:
    return None


def single_page(fetch: Fetch, *, page: int = 1, page_size: int = 50, **_: Any) -> Any:
    skip = max(0, (page - 1) * page_size)
    return fetch(skip, page_size)


def _read_page(state: Any, body: Any, collection: str, label: str) -> list[Any]:
    """One page's items; notes the first ``total`` and the ``keep_first`` keys in ``state``."""
    if not isinstance(body, dict):
        raise PaginationError(f"{label} page response must be a JSON object")
    page = body.get(collection)
    if page is None:
        page = []
    if not isinstance(page, list):
        raise PaginationError(f"{label} page field {collection!r} must be a list")
    for key in state.keep_first:
        if key not in state.first and body.get(key) is not None:
            state.first[key] = body[key]
    if state.total is None:
        state.total = _int_total(body.get("total"))
    return page


class _Walk:
    """State of a unique scan: the items seen so far, across every pass."""

    def __init__(self, collection: str, id_keys: list[str], tie_key: str | None,
                 keep_first: list[str] | None, label: str, on_page: OnPage, debug: Callable[[str], None],
                 keep: bool = True):
        self.collection, self.id_keys, self.tie_key = collection, id_keys, tie_key
        self.keep_first, self.label, self.on_page, self.debug = keep_first or [], label, on_page, debug
        self.total: int | None = None
        self.seen = SeenIds()
        self.keep = keep  # False: only the ids seen are kept (the items are handed out page by page)
        self.items: list[Any] = []
        self.count = 0
        self.fresh: list[Any] = []  # the new items of the last page
        self.first: dict[str, Any] = {}

    def page(self, body: Any) -> tuple[list[Any], int]:
        """Take one page: ``(its items, how many were new)``; the new ones are in ``fresh``."""
        page = _read_page(self, body, self.collection, self.label)
        ids = _text_ids(page, self.id_keys[0])
        if ids is None:
            ids = []
            for item in page:
                iid = _item_id(item, self.id_keys)
                if iid is None:
                    raise PaginationError(f"{self.label} page item without {self.id_keys[0]}")
                ids.append(iid)
        self.fresh = [item for item, new in zip(page, self.seen.fresh(ids), strict=True) if new]
        new = len(self.fresh)
        self.count += new
        if self.keep:
            self.items.extend(self.fresh)
        self.on_page(self.count, self.total)
        return page, new

    def advance(self, page: list[Any], skip: int, new: int) -> int | None:
        """How far to move ``skip``: back over a run of equal tie values; None when stuck."""
        boundary = page[-1].get(self.tie_key) if self.tie_key else None
        if boundary is None:
            return len(page)
        run = 0
        for item in reversed(page):
            if item.get(self.tie_key) != boundary:
                break
            run += 1
        if run >= len(page):
            self.debug(f"{self.label} pagination cannot advance at skip={skip}")
            return None
        advance = len(page) - run
        self.debug(
            f"{self.label} pagination boundary overlap: skip={skip} page_count={len(page)} "
            f"overlap={run} next_skip={skip + advance} boundary={boundary!r} "
            f"new={new} duplicates={len(page) - new}"
        )
        return advance

    def scan(self) -> Scan:
        return Scan(self.total if self.total is not None else len(self.items), self.items, self.first)

    def complete(self) -> bool:
        return self.total is not None and self.count >= self.total


def _one_pass(fetch: Fetch, walk: _Walk, size: int) -> Generator[Any, None, bool]:
    """Walk the collection once with page ``size``, yielding each new item as its page arrives;
    returns True when the walk is finished."""
    skip = 0
    while True:
        page, new = walk.page(fetch(skip, size))
        yield from walk.fresh
        if walk.complete():
            return True
        if not page:
            return walk.total is None
        if walk.total is None and len(page) < size:
            return True
        if new == 0 and walk.total is None:
            # A full page with nothing new and no total: the backend ignores skip.
            raise PaginationError(f"{walk.label} {walk.collection} pagination made no progress at skip={skip}")
        if walk.total is not None and skip + len(page) >= walk.total:
            return False
        advance = walk.advance(page, skip, new)
        if advance is None:
            return walk.total is None
        skip += advance


def unique_scan(
    fetch: Fetch,
    *,
    page_size: int,
    collection: str,
    id_keys: list[str],
    tie_key: str | None = None,
    keep_first: list[str] | None = None,
    label: str = "",
    on_page: OnPage = _noop,
    debug: Callable[[str], None] = _noop,
    **_: Any,
) -> Scan:
    """Every unique item; when the backend's total is not reached, scan again with other page sizes."""
    if page_size < 1:
        raise PaginationError(f"{label} page size must be at least 1")
    walk = _Walk(collection, id_keys, tie_key, keep_first, label, on_page, debug)
    for _item in _passes(fetch, walk, page_size):
        pass  # kept in walk.items
    return walk.scan()


def _passes(fetch: Fetch, walk: _Walk, page_size: int) -> Iterator[Any]:
    """Every new item of every pass; a pass with another page size follows while the total is not reached."""
    sizes = list(dict.fromkeys((page_size, 1000, 999, 500)))
    with walk.seen:
        for size in sizes:
            if (yield from _one_pass(fetch, walk, size)):
                return
    raise PaginationError(
        f"{walk.label} pagination collected {walk.count} of {walk.total} unique {walk.collection} "
        f"after {len(sizes)} scans"
    )


def iter_unique_scan(
    fetch: Fetch,
    *,
    page_size: int,
    collection: str,
    id_keys: list[str],
    tie_key: str | None = None,
    label: str = "",
    on_page: OnPage = _noop,
    debug: Callable[[str], None] = _noop,
    **_: Any,
) -> Iterator[Any]:
    """The items of :func:`unique_scan`, in its order, yielded as their pages arrive.

    Only the ids seen are kept (a re-scan with another page size needs them to
    skip what was already yielded), so memory grows with the number of ids,
    never with the items.  A failure after some items raises where it happens.
    """
    if page_size < 1:
        raise PaginationError(f"{label} page size must be at least 1")
    walk = _Walk(collection, id_keys, tie_key, None, label, on_page, debug, keep=False)
    yield from _passes(fetch, walk, page_size)


def task_scan(
    fetch: Fetch,
    *,
    page_size: int,
    collection: str,
    id_keys: list[str],
    label: str = "",
    on_page: OnPage = _noop,
    keep_first: list[str] | None = None,
    **_: Any,
) -> Scan:
    if page_size < 1:
        raise PaginationError(f"{label} page size must be at least 1")
    state = _TaskWalk(keep_first)
    walked = _task_items(fetch, state, page_size, collection, id_keys, label, on_page)
    items = list(walked)
    return Scan(state.total if state.total is not None else len(items), items, state.first)


def iter_task_scan(
    fetch: Fetch,
    *,
    page_size: int,
    collection: str,
    id_keys: list[str],
    label: str = "",
    on_page: OnPage = _noop,
    **_: Any,
) -> Iterator[Any]:
    """The items of :func:`task_scan`, in its order, yielded page by page (only the ids seen are kept)."""
    if page_size < 1:
        raise PaginationError(f"{label} page size must be at least 1")
    yield from _task_items(fetch, _TaskWalk(None), page_size, collection, id_keys, label, on_page)


class _TaskWalk:
    def __init__(self, keep_first: list[str] | None):
        self.keep_first = keep_first or []
        self.total: int | None = None
        self.first: dict[str, Any] = {}


def _fingerprint(item: Any) -> bytes:
    """A digest of an item without an id: the same content gives the same digest, so a page of
    such items that were all seen before is no progress (16 bytes kept per item, never the item)."""
    import hashlib

    try:
        text = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(item)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _task_items(fetch: Fetch, state: _TaskWalk, page_size: int, collection: str, id_keys: list[str],
                label: str, on_page: OnPage) -> Iterator[Any]:
    """The task scan of docs/contract.md 2.6, with two guards a hostile backend needs (bl):

    * progress is judged for items without an id too, by their content: a page on which no item
      is new - by id, or by content for items without one - fails the scan ("made no progress")
      although such items are still kept, as the official client keeps them;
    * the announced total bounds the walk: no page is asked for at ``skip >= total``.

    Without the first, a backend answering the same full page of id-less tasks to every
    ``skip``, with no total, was paged without end (and every item kept in memory).
    """
    with SeenIds() as seen:  # ids, and the digests of items without one (bytes: never an id)
        skip = 0
        count = 0
        while True:
            page = _read_page(state, fetch(skip, page_size), collection, label)
            total = state.total
            ids = [_item_id(item, id_keys) for item in page]
            keys = [_fingerprint(item) if iid is None else iid for item, iid in zip(page, ids, strict=True)]
            added: list[Any] = []
            fresh = 0
            for item, iid, new in zip(page, ids, seen.fresh(keys), strict=True):
                if iid is None or new:
                    added.append(item)  # an item without an id is kept, as the official client keeps it
                    fresh += new
            count += len(added)
            on_page(count, total)
            done = total is not None and count >= total
            if page and not fresh and not done:  # before a page of repeats is handed out
                raise PaginationError(f"{label} {collection} pagination made no progress")
            yield from added
            if done:
                break
            if not page:
                if total is not None:
                    raise PaginationError(f"{label} pagination ended at {count} of {total} {collection}")
                break
            skip += len(page)
            if total is None and len(page) < page_size:
                break
            if total is not None and skip >= total:
                # Every page the backend announced was read; another would start past its end.
                raise PaginationError(f"{label} pagination ended at {count} of {total} {collection}")


class _Stopped(Exception):
    """The reader of a ``LazyScan`` stopped: its page thread ends."""


_END = object()  # the end of a ``LazyScan``'s pages


class Streamed:
    """A listing read as it is iterated, once: rows written as their pages arrive (``formats.streamed``).

    ``before_fetch`` is called before each page after the first is asked for: the printer
    sets it to flush what it wrote, so rows reach the reader while the next page is on its way.
    """

    before_fetch: Callable[[], None] = staticmethod(_noop)
    BATCH = 1000  # items in one list of ``pages`` when the listing has no pages of its own

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def pages(self) -> Iterator[list[Any]]:
        """The same items in lists, each as soon as it is complete (a page, where the listing
        has pages): a printer shapes and writes a list at a time, not an item.  A failure
        raises after the items before it were handed out."""
        batch: list[Any] = []
        try:
            for item in self:
                batch.append(item)
                if len(batch) >= self.BATCH:
                    yield batch
                    batch = []
        except GeneratorExit:
            raise
        except BaseException:
            if batch:
                yield batch
            raise
        if batch:
            yield batch

    def announced(self) -> int | None:
        """How many items the listing said it has, read without reading further (None:
        unknown).  A walk that ends without an error hands out at least that many."""
        return None


class LazyScan(Streamed):
    """A walk read as it is iterated: a walking mode's items, page by page (streamed output).

    Made by :func:`lazy_scan` in place of a :class:`Scan` when the output writes each row as
    its page arrives (``--output jsonl``, csv, ... of ``jobs get --all``, and a listing's file:
    ``jobs download``'s job_list.json, ``Pipeline.write``): it has a Scan's
    ``total`` and ``items`` (itself), read from the first page, which it asks for at once (so
    a failing first page fails the id as before, and an empty listing is known).  Iterable
    once; ``before_fetch`` is called before every later page is asked for (the printer flushes
    what it wrote then, so rows reach the reader while the next page is on its way).  A page
    failing later raises where the iteration is (``PaginationError`` or the request's error).
    A backend that sends no ``total`` gets it counted: the rest is read then, in memory.
    """

    AHEAD = 2  # pages read ahead of the printer

    def __init__(self, walk: Iterator[Any], state: Any):
        self._walk = walk
        self._state = state  # has .total, .first (the keep_first keys)
        self._head: list[Any] = []
        self._started = False
        self._boundary: Callable[[], None] = _noop  # the reader's page boundary (``_pumped``)
        self.handed = 0  # the items handed to the reader so far (all of them once it is read)

    def start(self) -> LazyScan:
        """Ask for the first page (its first item is kept until iterated)."""
        if not self._started:
            self._started = True
            self._head.extend(itertools.islice(self._walk, 1))
        return self

    def fetched(self) -> None:
        """The walk is about to ask for its next page (called where the walk runs)."""
        self._boundary()

    @property
    def total(self) -> int:
        self.start()
        if self._state.total is None:  # no total from the backend: counted, so read whole
            self._head.extend(self._walk)
            return len(self._head)
        return self._state.total

    @property
    def first(self) -> dict[str, Any]:
        self.start()
        return self._state.first

    @property
    def items(self) -> LazyScan:
        return self

    def __bool__(self) -> bool:
        self.start()
        return bool(self._head)

    def announced(self) -> int | None:
        """The backend's total, as the first page said it (a walk that succeeds reaches it)."""
        self.start()
        return self._state.total

    def __iter__(self) -> Iterator[Any]:
        for page in self.pages():
            yield from page

    def pages(self) -> Iterator[list[Any]]:
        """The items a page at a time (the first item alone, then the rest of its page)."""
        self.start()
        head, self._head = self._head, []
        if head:
            self.handed += len(head)
            yield head
        yield from self._pumped()

    def _pumped(self) -> Iterator[list[Any]]:
        """The rest of the walk's pages, read ``AHEAD`` pages ahead by a thread of its own, so the
        next page is on its way while this one is written (the printer's time and the backend's
        overlap).  The reader flushes (``before_fetch``) before it waits for a page; when it
        stops early (``| head -1``), the thread stops at its next page."""
        import queue
        import threading

        pages: queue.Queue[Any] = queue.Queue(maxsize=self.AHEAD)
        stop = threading.Event()
        buf: list[Any] = []

        def put(value: Any) -> None:
            while not stop.is_set():
                try:
                    pages.put(value, timeout=0.1)
                    return
                except queue.Full:
                    continue
            raise _Stopped()

        def boundary() -> None:
            if buf:
                put(list(buf))
                buf.clear()

        def pump() -> None:
            try:
                for item in self._walk:
                    buf.append(item)
                boundary()
                put(_END)
            except _Stopped:
                pass
            except BaseException as exc:  # noqa: BLE001 - handed to the reader, raised there
                try:
                    boundary()
                    put((_END, exc))
                except _Stopped:
                    pass

        self._boundary = boundary
        thread = threading.Thread(target=pump, name="benchloop-pages", daemon=True)
        thread.start()
        try:
            while True:
                try:
                    page = pages.get_nowait()
                except queue.Empty:
                    self.before_fetch()  # what was written reaches the reader while it waits
                    page = pages.get()
                if page is _END:
                    return
                if isinstance(page, tuple):
                    raise page[1]
                self.handed += len(page)
                yield page
        finally:
            stop.set()

    def __repr__(self) -> str:
        return f"LazyScan(total={self._state.total!r})"


def lazy_scan(mode: str, fetch: Fetch, **args: Any) -> LazyScan:
    """The items of walking ``mode`` (``ITER_MODES``) as a :class:`LazyScan`, first page asked."""
    if args.get("page_size", 1) < 1:
        raise PaginationError(f"{args.get('label', '')} page size must be at least 1")
    holder: list[LazyScan] = []
    calls = [0]

    def asked(skip: int, limit: int) -> Any:
        if calls[0] and holder:
            holder[0].fetched()
        calls[0] += 1
        return fetch(skip, limit)

    keys = {k: v for k, v in args.items() if k in ("page_size", "collection", "id_keys", "tie_key", "label",
                                                     "on_page", "debug")}
    if mode == "unique_scan":
        walk = _Walk(keys["collection"], keys["id_keys"], keys.get("tie_key"), args.get("keep_first"),
                     keys.get("label", ""), keys.get("on_page", _noop), keys.get("debug", _noop), keep=False)
        lazy = LazyScan(_passes(asked, walk, keys["page_size"]), walk)
    elif mode == "task_scan":
        state = _TaskWalk(args.get("keep_first"))
        lazy = LazyScan(_task_items(asked, state, keys["page_size"], keys["collection"], keys["id_keys"],
                                    keys.get("label", ""), keys.get("on_page", _noop)), state)
    else:
        raise ValueError(f"{mode} does not walk pages")
    holder.append(lazy)
    return lazy.start()


MODES: dict[str, Callable[..., Any]] = {
    "single_page": single_page,
    "unique_scan": unique_scan,
    "task_scan": task_scan,
}

# The walking modes as generators over their items (the Python client's ``iter``).
ITER_MODES: dict[str, Callable[..., Iterator[Any]]] = {
    "unique_scan": iter_unique_scan,
    "task_scan": iter_task_scan,
}
