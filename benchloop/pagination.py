"""Pagination modes named by the endpoint table.

Each mode is a pure function over ``fetch(skip, limit) -> body`` so that it can
be tested against adversarial page sequences without a server.  The algorithms
follow CONTRACT.md 2.6, because users' scripts depend on their results:

``single_page``  one request at ``skip=(page-1)*page_size``.
``unique_scan``  walks the collection in pages, de-duplicating by id, stepping
                 back over runs of equal tie values (``created_at``) at page
                 boundaries, and re-scanning with other page sizes when the
                 backend's total is not reached.
``task_scan``    the simpler scan used for evaluation task lists.

The only deliberate difference from the reference: a ``total`` that is not an
integer is treated as unknown instead of crashing the comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Fetch = Callable[[int, int], Any]
OnPage = Callable[[int, "int | None"], None]


class PaginationError(Exception):
    """The collection could not be walked completely; fails that id."""


@dataclass
class Scan:
    """Result of a multi-page walk."""

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


def _noop(*_args: Any) -> None:
    return None


def single_page(fetch: Fetch, *, page: int = 1, page_size: int = 50, **_: Any) -> Any:
    skip = max(0, (page - 1) * page_size)
    return fetch(skip, page_size)


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
    if page_size < 1:
        raise PaginationError(f"{label} page size must be at least 1")
    sizes: list[int] = []
    for size in (page_size, 1000, 999, 500):
        if size not in sizes:
            sizes.append(size)
    total: int | None = None
    seen: set[Any] = set()
    items: list[Any] = []
    first: dict[str, Any] = {}
    for size in sizes:
        skip = 0
        while True:
            body = fetch(skip, size)
            if not isinstance(body, dict):
                raise PaginationError(f"{label} page response must be a JSON object")
            page = body.get(collection)
            if page is None:
                page = []
            if not isinstance(page, list):
                raise PaginationError(f"{label} page field {collection!r} must be a list")
            for key in keep_first or ():
                if key not in first and body.get(key) is not None:
                    first[key] = body[key]
            if total is None:
                total = _int_total(body.get("total"))
            new = 0
            for item in page:
                iid = _item_id(item, id_keys)
                if iid is None:
                    raise PaginationError(f"{label} page item without {id_keys[0]}")
                if iid not in seen:
                    seen.add(iid)
                    items.append(item)
                    new += 1
            on_page(len(items), total)
            if total is not None and len(items) >= total:
                return Scan(total, items, first)
            if not page:
                break
            if total is None and len(page) < size:
                return Scan(len(items), items, first)
            if new == 0 and total is None:
                # A full page with nothing new and no total: the backend ignores skip.
                raise PaginationError(f"{label} {collection} pagination made no progress at skip={skip}")
            if total is not None and skip + len(page) >= total:
                break
            advance = len(page)
            boundary = page[-1].get(tie_key) if tie_key else None
            if boundary is not None:
                run = 0
                for item in reversed(page):
                    if item.get(tie_key) != boundary:
                        break
                    run += 1
                if run >= len(page):
                    debug(f"{label} pagination cannot advance at skip={skip}")
                    break
                advance = len(page) - run
                debug(
                    f"{label} pagination boundary overlap: skip={skip} page_count={len(page)} "
                    f"overlap={run} next_skip={skip + advance} boundary={boundary!r} "
                    f"new={new} duplicates={len(page) - new}"
                )
            skip += advance
        if total is None:
            return Scan(len(items), items, first)
    raise PaginationError(
        f"{label} pagination collected {len(items)} of {total} unique {collection} "
        f"after {len(sizes)} scans"
    )


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
    skip = 0
    total: int | None = None
    items: list[Any] = []
    seen: set[Any] = set()
    first: dict[str, Any] = {}
    while True:
        body = fetch(skip, page_size)
        if not isinstance(body, dict):
            raise PaginationError(f"{label} page response must be a JSON object")
        page = body.get(collection)
        if page is None:
            page = []
        if not isinstance(page, list):
            raise PaginationError(f"{label} page field {collection!r} must be a list")
        for key in keep_first or ():
            if key not in first and body.get(key) is not None:
                first[key] = body[key]
        if total is None:
            total = _int_total(body.get("total"))
        added = 0
        for item in page:
            iid = _item_id(item, id_keys)
            if iid is None:
                items.append(item)
                added += 1
            elif iid not in seen:
                seen.add(iid)
                items.append(item)
                added += 1
        on_page(len(items), total)
        if total is not None and len(items) >= total:
            break
        if not page:
            if total is not None:
                raise PaginationError(f"{label} pagination ended at {len(items)} of {total} {collection}")
            break
        if added == 0:
            raise PaginationError(f"{label} {collection} pagination made no progress")
        skip += len(page)
        if total is None and len(page) < page_size:
            break
    return Scan(total if total is not None else len(items), items, first)


MODES: dict[str, Callable[..., Any]] = {
    "single_page": single_page,
    "unique_scan": unique_scan,
    "task_scan": task_scan,
}
