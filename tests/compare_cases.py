"""Data for the ``bl compare`` tests (a plain module beside support.py, for test_compare_*.py).

``HAND``: the worked example whose every figure ``test_compare_stats.py``
checks against values computed by hand (the arithmetic is written out there).
Five instances i1..i5 with two trials each in both groups, plus what the
definitions must leave out or count separately: an unscored (running) job, an
instance with no scored job, an instance of one group only, a job without an
instance key, a score sent as a string.

``payloads(group, spec)`` turns such a table into what the backend sends: the
job-list entries and the detail-metrics elements (``run_metrics`` as a
one-element list of strings of numbers, as the contract's fixtures show).

``table_rows`` builds a group's rows with what the endpoint table says (the
columns of ``bl jobs table``, the defaults of ``--metric``, ``--unit`` and
``--pass-threshold``); ``COMPARE_COLUMNS`` and ``COSTS`` are ``bl compare``'s.
"""

from __future__ import annotations

from typing import Any

from benchloop.compare import rows as _rows
from benchloop.table.load import load_model

_MODEL = load_model()
_TABLE_PART = _MODEL.action("jobs", "table").dimensions["group"].parts["rows"]
_COMPARE = _MODEL.action("compare", "compare")
_COMPARE_PART = _COMPARE.dimensions["group"].parts["rows"]

COLUMNS = [{"name": c.name, "from": c.source, "type": c.type}
           for c in _TABLE_PART.params.columns("columns")]
SECTIONS = list(_TABLE_PART.params.texts("sections"))
DEFAULTS = {"metric": _COMPARE.defaults["metric"], "unit": _COMPARE.defaults["unit"],
            "pass_threshold": _COMPARE.defaults["pass_threshold"]}
COMPARE_COLUMNS = _rows.select_columns(COLUMNS, _COMPARE_PART.params.texts("keep"))
COSTS = list(_COMPARE.combine.params.texts("costs"))


def table_rows(group: str, jobs: Any, metrics: Any, **overrides: Any) -> list[dict[str, Any]]:
    """``benchloop.compare.rows.job_rows`` with the table's columns and defaults (``overrides`` win)."""
    return _rows.job_rows(group, jobs, metrics, **{"columns": COLUMNS, "object_sections": SECTIONS, **DEFAULTS,
                                                   **overrides})

# (job number, instance, metric value (None: no eval metric), status, duration_s)
HAND_BASELINE = [
    (1, "i1", 1.0, "succeeded", 10), (2, "i1", 0.0, "failed", 20),
    (3, "i2", 1.0, "succeeded", 10), (4, "i2", 1.0, "succeeded", 30),
    (5, "i3", 0.0, "failed", 40), (6, "i3", 0.0, "failed", 40),
    (7, "i4", 0.6, "succeeded", 10), (8, "i4", 0.2, "failed", 10),
    (9, "i5", 0.8, "succeeded", 20), (10, "i5", "0.4", "failed", 20),  # a string of a number
    (11, "i6", 1.0, "succeeded", 50),                                     # only in the baseline
    (12, "i1", None, "running", None),                                    # unscored: counted only
    (13, "i8", None, "cancelled", 5),                                     # an instance never scored
    (14, None, 1.0, "succeeded", 5),                                      # no instance key
]
HAND_CANDIDATE = [
    (1, "i1", 1.0, "succeeded", 20), (2, "i1", 1.0, "succeeded", 20),
    (3, "i2", 1.0, "succeeded", 10), (4, "i2", 0.0, "failed", 20),
    (5, "i3", 0.0, "failed", 40), (6, "i3", 0.0, "failed", 60),
    (7, "i4", 0.9, "succeeded", 20), (8, "i4", 0.7, "succeeded", 20),
    (9, "i5", 0.8, "succeeded", 20), (10, "i5", 0.4, "failed", 30),
    (11, "i7", 0.0, "failed", 5),                                         # only in the candidate
]


def job_id(group: str, n: int) -> str:
    return f"{group}-J{n:04d}"


def payloads(group: str, table: list[tuple]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(job-list entries, detail-metrics elements) of a group described by ``table``."""
    jobs, metrics = [], []
    for n, instance, value, status, duration in table:
        entry: dict[str, Any] = {"job_id": job_id(group, n), "group_id": group,
                                 "created_at": f"2026-07-01T00:{n:02d}:00", "status": status}
        if instance is not None:
            entry["instance_id"] = instance
        jobs.append(entry)
        if status == "running":
            continue  # a running job has no metrics element yet
        element: dict[str, Any] = {"job_id": job_id(group, n), "metrics": [], "run_metrics": [],
                                   "tokenized_metrics": []}
        if value is not None:
            element["metrics"] = [{"type": "eval", "data": {"task_score": value}}]
        if duration is not None:
            element["run_metrics"] = [{"duration_s": str(duration), "tool_error_count": "1"}]
        metrics.append(element)
    return jobs, metrics
