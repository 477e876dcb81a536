"""The rows and columns of the flat formats: ``--output table``, ``csv`` and ``markdown``.

With the printed dimension's :class:`~benchloop.table.outputs.Output` (the table's
declaration of what one element is, and no ``--query`` reshaping the elements):

* the rows are each element's declared rows (``output.rows``: the jobs of a page, the
  tasks of a group) with the element's ids in front (``group_id``), or the elements
  themselves when each is one row;
* the columns are the output's columns in declared order - scalar fields, nested objects
  flattened with dotted names (``run_metrics.duration_s``) - then any field the data has
  beyond them, in the order it first appears (the backend may add fields).  A declared
  field that no row has (an alias the backend does not send) is left out, and so is a
  declared object that is null in every row (the first run's ``previous``): its fields'
  columns are there, empty.  The rows
  of a step that builds them (``output: {columns: ...}``) keep the order of the
  columns it was asked for (``--fields``).

Without one (a ``--query`` made the elements, or a table of hand-made actions), the rows
are found by looking: the elements' one list of objects with their string ids in front,
else the elements; the columns are the fields in the order they first appear.

A nested object is always flattened (``a.b``), and so is a list of exactly one object (run
metrics arrive as a list of one); any other list is one cell (each format writes it as
compact JSON).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...table.outputs import Output


@dataclass
class Tabular:
    """Flat rows (column name -> a scalar or a list) under their columns."""

    columns: list[str]
    rows: list[dict[str, Any]]
    where: str = "[]"  # a JMESPath from the printed array to the rows (for the --query hint)


SIGNIFICANT = 6  # digits a float keeps in a table for people (--output table, markdown)
TINY = 1e-12  # closer to 0 than this is 0 (what is left of a difference like 2/3 - 1/3)


def display_number(value: float) -> str:
    """A float as a table for people shows it: at most six significant digits
    (``0.06578947368421052`` is ``0.0657895``), within 1e-12 of zero ``0``, a whole number as
    JSON writes it (``12.0``), and never fewer digits than the integer part has
    (``1234567.891`` is ``1234567.9``).  The data formats (json, csv...) keep every digit."""
    import json
    import math

    if not math.isfinite(value) or abs(value) >= 1e16 or value == int(value):
        return json.dumps(value)
    if abs(value) < TINY:
        return "0"
    if abs(value) >= 10 ** (SIGNIFICANT - 1):
        return f"{value:.1f}"
    return f"{value:.{SIGNIFICANT}g}"


def rounded(value: Any) -> Any:
    """``value`` with every float inside it as :func:`display_number` shows it (a list or object
    printed as JSON in one cell of a table for people)."""
    if isinstance(value, float):
        return float(display_number(value)) if value == value and abs(value) != float("inf") else value
    if isinstance(value, list):
        return [rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


def flat(value: dict[str, Any], prefix: str = "", into: dict[str, Any] | None = None) -> dict[str, Any]:
    """A row with every nested object flattened into dotted names."""
    out: dict[str, Any] = {} if into is None else into
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, list) and len(item) == 1 and isinstance(item[0], dict) and item[0]:
            item = item[0]  # a list of one object (run metrics come so): read as the object
        if isinstance(item, dict) and item:
            flat(item, f"{name}.", out)
        elif isinstance(item, dict):
            out.setdefault(name, None)  # an empty object: its column, empty
        else:
            out[name] = item
    return out


_SCALARS = frozenset({str, int, float, bool, type(None)})


def flat_row(value: dict[str, Any]) -> dict[str, Any]:
    """:func:`flat` of one row, without a copy when it is flat already (every value a JSON
    scalar: the rows of a job listing or of ``jobs table``), which costs one pass in C."""
    if _SCALARS.issuperset(map(type, value.values())) and all(type(k) is str for k in value):
        return value
    return flat(value)


def flat_rows(values: list[Any]) -> list[dict[str, Any]]:
    """:func:`flat_row` of each row of a page (a value that is no object: ``{"value": ...}``);
    a page of flat objects (a job listing's, ``jobs table``'s) is itself, found so by three
    passes in C over its rows, keys and values instead of two per row in Python."""
    if set(map(type, values)) <= {dict}:
        if (_SCALARS.issuperset(map(type, itertools.chain.from_iterable(map(dict.values, values))))
                and set(map(type, itertools.chain.from_iterable(values))) <= {str}):
            return values
    return [flat_row(r) if isinstance(r, dict) else {"value": r} for r in values]


def _dig(value: Any, path: Sequence[str | int]) -> Any:
    for step in path:
        if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(value, dict):
            value = value.get(step)
        else:
            return None
    return value


def declared_rows(elements: list[Any], output: Output) -> list[Any]:
    """The rows the output declares, ids in front (an element without its rows is one row)."""
    if output.rows is None:
        return elements
    rows: list[Any] = []
    for element in elements:
        items = _dig(element, output.rows)
        if not isinstance(items, list):
            rows.append(element)  # not the declared shape: shown as it is
            continue
        ids = {k: element[k] for k in output.ids if isinstance(element, dict) and k in element}
        rows += [{**{k: v for k, v in ids.items() if k not in item}, **item} if isinstance(item, dict) else item
                 for item in items]
    return rows


def _collection(rows: list[dict[str, Any]]) -> str | None:
    """The one key under which every element holds a list of objects (and one holds some)."""
    keys = [k for k in rows[0] if isinstance(rows[0][k], list)]
    found = [k for k in keys
             if all(isinstance(r.get(k), list) and all(isinstance(i, dict) for i in r[k]) for r in rows)
             and any(r[k] for r in rows)]
    lists = {k for r in rows for k, v in r.items() if isinstance(v, list) and v and isinstance(v[0], dict)}
    return found[0] if len(found) == 1 and lists == set(found) else None


def found_rows(elements: list[Any]) -> tuple[list[Any], str | None]:
    """The natural rows of elements nothing declares: the objects of their one collection,
    string ids in front; else the elements.  Also the collection's key (None: the elements)."""
    if not elements or not all(isinstance(e, dict) for e in elements):
        return elements, None
    key = _collection(elements)
    if key is None:
        return elements, None
    out = []
    for element in elements:
        ids = {k: v for k, v in element.items() if k.endswith("_id") and isinstance(v, str)}
        out += [{**{k: v for k, v in ids.items() if k not in item}, **item} for item in element[key]]
    return out, key


def _path(keys: Sequence[str | int]) -> str | None:
    """``["jobs"]`` -> ``.jobs[]`` (None when a key is no JMESPath identifier)."""
    if not all(isinstance(k, str) and k.isidentifier() for k in keys):
        return None
    return "".join(f".{k}" for k in keys) + ("[]" if keys else "")


def columns_of(flat_rows: list[dict[str, Any]], output: Output | None) -> list[str]:
    """The columns of flat rows: the declared ones they have, then any other field."""
    present: dict[str, None] = {}
    for row in flat_rows:
        present.update(dict.fromkeys(row))
    declared = [c for c in output.column_names if c in present] if output is not None else []
    if output is not None and output.chosen_columns and flat_rows:
        declared = list(flat_rows[0])  # a step's rows: its columns in the order asked for
    columns = dict.fromkeys(declared)
    columns.update(present)
    if output is not None:  # a declared object that is null in every row: its fields' columns, empty
        names = output.column_names
        for name in [c for c in present if c not in declared]:
            if any(n.startswith(name + ".") for n in names) and all(r.get(name) is None for r in flat_rows):
                del columns[name]
    return list(columns)


def tabulate(result: Any, output: Output | None = None) -> Tabular:
    """The flat view of a result (see the module docstring)."""
    if isinstance(result, Tabular):
        return result
    elements = result if isinstance(result, list) else [result]
    if output is not None:
        rows, where = declared_rows(elements, output), _path(output.rows or ())
    else:
        rows, key = found_rows(elements)
        where = _path([key] if key else [])
    flat_rows = [flat(r) if isinstance(r, dict) else {"value": r} for r in rows]
    return Tabular(columns_of(flat_rows, output), flat_rows, "[]" + where if where is not None else "")


def table_hint(table: Tabular) -> str | None:
    """One line naming a --query that gives a flat table, when lists of objects remain as JSON."""
    for row in table.rows:
        for key, value in row.items():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                inner = _path(key.split("."))
                query = (f"--query '{table.where}{inner}'" if table.where and inner
                         else "--query '[].{id: ..., field: ...}'")
                return f"lists of objects are shown as JSON; for a table of them select them, e.g. {query}"
    return None
