"""One flat row per job: the job list's fields, instance, score, pass, run and token metrics.

Why a flat table: the first thing anyone does with two benchmark runs is put
their jobs into a data frame.  A row here is a plain dict of JSON scalars with
the same keys in the same order for every job, numbers typed as numbers, so
``pandas.DataFrame(rows)`` (or ``csv.DictWriter``) takes the rows as they are.

Why columns as data: which fields a row holds is a list of column
definitions ``{"name", "from", "type"}`` (the ``columns`` of the ``job_rows``
step in the endpoint table), not code.  ``from`` is a JMESPath expression evaluated on one
document per job::

    {"group": <group id>,
     "job": <the job's entry in the job list>,
     "metrics": <the job's element of the group's detail metrics, or null>,
     "instance": <the instance key>, "score": <the score>, "pass": <pass>}

In ``metrics``, the sections named in ``object_sections`` (``run_metrics``,
``tokenized_metrics``), which the backend sends either as an object or as a
one-element list of one, are always the object, so ``metrics.run_metrics.
duration_s`` reads both.  A value that comes out as a one-element list (as a
filter such as ``metrics.metrics[?type=='eval'].data.resolved`` gives) is read
as its element.  ``type`` converts: ``number`` (run metrics arrive as strings
of numbers: ``"12.5"`` -> 12.5, ``"100"`` -> 100; anything else -> null),
``string``, ``boolean``, ``json`` (as it is).

The three computed values come from options, not columns (their defaults are
the table's): the instance key is a JMESPath expression on the job-list entry
(``--unit``) read as text; the score is a JMESPath expression on the metrics
element *as ``metrics get -j`` prints it* (``--metric``), and pass follows
:func:`benchloop.compare.stats.score_and_pass` (``--pass-threshold``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..base import expressions
from .scores import as_boolean, as_number, score_and_pass, too_big

COLUMN_TYPES = ("string", "number", "boolean", "json")
_BIG = 2 ** 1000  # an int below this fits a float for sure (the rest: as_number decides)


class ColumnError(ValueError):
    """A column definition, a --fields name or an expression that cannot be used."""


# ------------------------------------------------------------- expressions
def compile_expression(expression: str, what: str) -> Callable[[Any], Any]:
    """A function reading ``expression`` (JMESPath) from a document (see :mod:`.expressions`)."""
    try:
        return expressions.compile_expression(expression, what)
    except expressions.ExpressionError as exc:
        raise ColumnError(str(exc)) from None


def _unwrap(value: Any) -> Any:
    if isinstance(value, list) and len(value) == 1:
        return value[0]
    return value


def _to_number(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    return as_number(value)


def _to_boolean(value: Any) -> Any:
    flag = as_boolean(value)
    if flag is None and isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    return flag


def _to_string(value: Any) -> Any:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


_SLOW = {"number": _to_number, "boolean": _to_boolean, "string": _to_string, "json": lambda v: v}
# Values that are already what their column holds pass as they are (the common case); an int
# is checked (one too big for a float is not a number: as_number).
_ALREADY = {"number": (), "boolean": (bool,), "string": (str,), "json": ()}


def converter(kind: str) -> Callable[[Any], Any]:
    """The function typing a value for a column of ``kind`` (None when it cannot be)."""
    slow, already = _SLOW[kind], _ALREADY[kind]

    def convert(value: Any) -> Any:
        kind_of = type(value)
        if kind_of in already or value is None:
            return value
        if kind_of is list and len(value) == 1:
            value = value[0]
            if value is None:
                return None
        if kind == "number" and type(value) is float:
            return value if value - value == 0 else None  # NaN and infinities are not numbers
        if kind == "number" and type(value) is int and -_BIG < value < _BIG:
            return value
        return slow(value)

    return convert


def convert(value: Any, kind: str) -> Any:
    """``value`` typed as a column of ``kind`` says (None when it cannot be)."""
    return converter(kind)(value)


def instance_key(value: Any) -> str | None:
    """The instance key as text (numbers and other JSON values as their JSON text);
    None for a job without one (absent, null or the empty string)."""
    value = _unwrap(value)
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# ------------------------------------------------------------------ columns
def check_columns(columns: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The column definitions, checked: unique names, known types, valid expressions."""
    out, seen = [], set()
    for col in columns:
        name, source, kind = col.get("name"), col.get("from"), col.get("type", "json")
        if not isinstance(name, str) or not name:
            raise ColumnError(f"a column needs a name: {dict(col)!r}")
        if name in seen:
            raise ColumnError(f"column {name!r} is declared twice")
        if kind not in COLUMN_TYPES:
            raise ColumnError(f"column {name!r}: type must be one of {', '.join(COLUMN_TYPES)}")
        if not isinstance(source, str) or not source:
            raise ColumnError(f"column {name!r} needs 'from' (a JMESPath expression)")
        compile_expression(source, f"column {name!r}")
        seen.add(name)
        out.append({"name": name, "from": source, "type": kind})
    return out


def select_columns(columns: Sequence[Mapping[str, str]], fields: Iterable[str] | None) -> list[dict[str, str]]:
    """The columns named by ``fields`` (``--fields``), in that order; all when None."""
    if fields is None:
        return [dict(c) for c in columns]
    by_name = {c["name"]: c for c in columns}
    out = []
    for name in fields:
        if name not in by_name:
            raise ColumnError(f"unknown field {name!r}; the columns are: {', '.join(by_name)}")
        out.append(dict(by_name[name]))
    if not out:
        raise ColumnError("--fields names no column")
    return out


def _normalise(element: Any, sections: Sequence[str]) -> Any:
    if not isinstance(element, dict):
        return element
    out = dict(element)
    for name in sections:
        value = out.get(name)
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
            out[name] = value[0]
    return out


def metrics_by_job(elements: Iterable[Any]) -> dict[str, Any]:
    """Detail-metrics elements keyed by their ``job_id`` (elements without one are dropped)."""
    out: dict[str, Any] = {}
    for element in elements:
        if isinstance(element, dict) and isinstance(element.get("job_id"), str):
            out.setdefault(element["job_id"], element)
    return out


def job_rows(
    group_id: str,
    jobs: Iterable[Mapping[str, Any]],
    metrics: Mapping[str, Any] | Iterable[Any],
    *,
    columns: Sequence[Mapping[str, str]],
    unit: str,
    metric: str,
    pass_threshold: float,
    object_sections: Sequence[str] = (),
    by: str | None = None,
    too_big_values: Counter[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per job of ``jobs`` (the job list: it says which jobs the group has).

    ``metrics`` are the group's detail-metrics elements (or a dict of them by
    job id); a job without one is in the table, unscored.  Every row has the
    keys of ``columns`` in their order, then ``slice`` when ``by`` (``--by``, JMESPath
    on the job-list entry, read as text like the instance key) is given.
    ``too_big_values`` counts, per column (``score`` for the metric), the numbers
    left out because they do not fit a float (the caller warns about them).
    """
    columns = check_columns(columns)
    readers = [(c["name"], compile_expression(c["from"], f"column {c['name']!r}"), converter(c["type"]),
                c["type"] == "number") for c in columns]
    read_unit = compile_expression(unit, "--unit")
    read_metric = compile_expression(metric, "--metric")
    read_by = None if by is None else compile_expression(by, "--by")
    by_job = metrics if isinstance(metrics, Mapping) else metrics_by_job(metrics)
    big: Counter[str] = Counter() if too_big_values is None else too_big_values
    rows = []
    for job in jobs:
        ident = job.get("job_id")
        element = by_job.get(ident) if isinstance(ident, str) else None
        score = passed = None
        if element is not None:
            value = read_metric(element)
            score, passed = score_and_pass(value, pass_threshold)
            if score is None and value is not None and too_big(value):
                big["score"] += 1
        doc = {"group": group_id, "job": job, "metrics": _normalise(element, object_sections),
               "instance": instance_key(read_unit(job)), "score": score, "pass": passed}
        row = {}
        for name, read, typed, numeric in readers:
            raw = read(doc)
            row[name] = value = typed(raw)
            if value is None and raw is not None and numeric and too_big(raw):
                big[name] += 1
        if read_by is not None:
            row["slice"] = instance_key(read_by(job))
        rows.append(row)
    return rows
