"""Entries of a collection inside an answer, as the table's ``items:`` selects them.

A listing answer (an artifact listing) holds its entries in one field; a
trajectory holds media references anywhere in its tree.  The table says which
(``collection: FIELD`` or ``find: KEY``), which fields every entry gets added
(``add:``, templates; a value that renders to null is not added), which
entries are kept (``require:`` a non-empty string field; ``filter:`` shell
globs from options on one field, as ``--include``/``--exclude`` do) and
which repeat (``unique:`` keeps the first entry of each value of a field).
Selection is pure: the same answer and options always give the same entries.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping
from typing import Any

from ..base.errors import StepError
from ..table.model import Items
from ..table.templates import Context, render_value


def _found(value: Any, key: str) -> Iterator[Any]:
    """Every value under ``key``, anywhere in a JSON tree, in document order."""
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                yield item
            else:
                yield from _found(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _found(item, key)


def wanted(name: str, include: str | None, exclude: str | None) -> bool:
    """Shell-glob filters on a name (case-sensitive, as on POSIX)."""
    if include and not fnmatch.fnmatchcase(name, include):
        return False
    return not (exclude and fnmatch.fnmatchcase(name, exclude))


def _entries(items: Items, body: Any) -> list[Any]:
    if items.find:
        return [dict(e) for e in _found(body, items.find) if isinstance(e, dict)]
    entries = body.get(items.collection) if isinstance(body, dict) else None
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise StepError(f"{items.label} must carry {items.collection!r} as a list")
    return [dict(e) if isinstance(e, dict) else {"value": e} for e in entries]


def select(items: Items, body: Any, ctx: Context, options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The entries of ``body`` that ``items`` selects, with their added fields."""
    out: list[dict[str, Any]] = []
    seen: set[Any] = set()
    include = options.get(items.include) if items.include else None
    exclude = options.get(items.exclude) if items.exclude else None
    for entry in _entries(items, body):
        if items.require and not (isinstance(entry.get(items.require), str) and entry[items.require]):
            continue
        if items.unique:
            if entry.get(items.unique) in seen:
                continue
            seen.add(entry.get(items.unique))
        for name, template in items.add.items():
            value = render_value(template, ctx)
            if value is not None:
                entry[name] = value
        if items.field and not wanted(str(entry.get(items.field) or ""), include, exclude):
            continue
        out.append(entry)
    return out
