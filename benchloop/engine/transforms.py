"""Named response transforms, referenced from the endpoint table by ``shape:``.

A transform turns what a part fetched (a response body, or a pagination ``Scan``)
into what the command emits or writes.  Parameters come from the table's ``with:``
mapping, so allow-lists and key names stay data.  Transforms must be pure: the same
input always gives the same output.  Their names are the ``enum`` of ``shape`` in
``spec/benchloop.schema.json`` (a test keeps the two equal); each registers itself
with ``@transform(name)`` (``base.registry``, as every extension point).

Returning ``None`` from a transform means "nothing to write" (for example a job
without reports): not a failure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..base.registry import Registry
from ..table.model import Transform

# Each transform registers itself here under the name the table uses (``shape:``).
TRANSFORMS: Registry[Callable[..., Any]] = Registry()
transform = TRANSFORMS.register


@transform("raw")
def raw(value: Any, ident: str) -> Any:
    return value


def _allow(section: Any, allowed: list[str] | tuple[str, ...]) -> Any:
    if isinstance(section, dict):
        return {key: section[key] for key in allowed if key in section}
    if isinstance(section, list):
        return [_allow(item, allowed) if isinstance(item, dict) else item for item in section]
    return section


@transform("job_metrics")
def job_metrics(body: Any, ident: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        return {"job_id": ident, "metrics": body, "run_metrics": None, "tokenized_metrics": None}
    return {
        "job_id": body["job_id"] if "job_id" in body else ident,
        "metrics": body.get("metrics"),
        "run_metrics": body.get("run_metrics"),
        "tokenized_metrics": body.get("tokenized_metrics"),
    }


@transform("filter_sections")
def filter_sections(body: Any, ident: str, *, id_key: str, sections: Mapping[str, list[str]]) -> Any:
    if not isinstance(body, dict):
        return body
    out: dict[str, Any] = {id_key: body[id_key] if id_key in body else ident}
    for name, allowed in sections.items():
        out[name] = _allow(body.get(name), allowed)
    return out


@transform("metrics_detail")
def metrics_detail(scan: Any, ident: str, *, tokenized_metrics: tuple[str, ...]) -> dict[str, Any]:
    return {
        "group_id": ident,
        "total": scan.total,
        "metrics": scan.items,
        "tokenized_metrics": _allow(scan.first.get("tokenized_metrics"), tokenized_metrics),
    }


@transform("with_id")
def with_id(body: Any, ident: str, *, id_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {id_key: ident}
    if isinstance(body, dict):
        out.update(body)
    else:
        out["data"] = body
    return out


# The transforms that take a ``pagination.LazyScan`` as they take a ``Scan`` (its ``total`` and
# ``items``): a part shaped by one of them may stream its rows (``Pipeline.lazy``).
LAZY = frozenset({"collection"})


@transform("collection")
def collection(scan: Any, ident: str, *, id_key: str, collection: str) -> dict[str, Any]:
    return {id_key: ident, "total": scan.total, collection: scan.items}


@transform("first_report_content")
def first_report_content(body: Any, ident: str) -> str | None:
    reports = body.get("reports") if isinstance(body, dict) else None
    if not isinstance(reports, list) or not reports:
        return None
    first = reports[0]
    content = first.get("content") if isinstance(first, dict) else None
    return "" if content is None else str(content)


@transform("text_field")
def text_field(body: Any, ident: str, *, path: tuple[str, ...]) -> str | None:
    """A non-empty string at ``path`` of the body (the markdown of a report), else nothing."""
    value = body
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) and value else None


@transform("task_job_ids")
def task_job_ids(body: Any, ident: str) -> list[str]:
    """The job ids of a download task: strings, stripped, de-duplicated, at least one."""
    from ..base.errors import StepError

    if body is None:
        raise StepError("download task response is empty")
    if not isinstance(body, dict):
        raise StepError("download task response must be a JSON object")
    ids = body.get("job_ids")
    if not isinstance(ids, list):
        raise StepError("download task response is missing job_ids")
    if not all(isinstance(i, str) for i in ids):
        raise StepError("download task contains a non-string job id")
    jobs = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    if not jobs:
        raise StepError("download task contains no job ids")
    return jobs


@transform("behavior_status")
def behavior_status(body: Any, ident: str) -> dict[str, Any]:
    out = dict(body) if isinstance(body, dict) else {"result": body}
    out.setdefault("uid", ident)
    out["task_id"] = ident
    return out


@transform("behavior_element")
def behavior_element(values: dict[str, Any], ident: str, *, scope: str) -> dict[str, Any]:
    """The brm get element of one scope, from the analysis and/or status responses."""
    analysis = values.get("analysis")
    analysis = analysis if isinstance(analysis, dict) else {}
    uid = analysis.get("uid") or ident
    overall = {"task_id": ident, "uid": uid, "summary": analysis.get("summary"),
               "categoryScores": analysis.get("categoryScores")}
    detail = {"task_id": ident, "uid": uid, "behaviorPatterns": analysis.get("behaviorPatterns")}
    if scope == "status":
        return values["status"]
    if scope == "overall":
        return overall
    if scope == "detail":
        return detail
    out = {"task_id": ident, "uid": ident, "status": values.get("status"), "overall": overall, "detail": detail}
    mode = analysis.get("samplingMode", analysis.get("sampling_mode"))
    if mode is not None:
        out["samplingMode"] = mode
    return out


@transform("behavior_list")
def behavior_list(body: Any, ident: str) -> dict[str, Any]:
    if isinstance(body, list):
        tasks = body
    elif isinstance(body, dict):
        tasks = body["tasks"] if isinstance(body.get("tasks"), list) else [body]
    else:
        tasks = []
    out = []
    for task in tasks:
        if isinstance(task, dict) and "uid" in task:
            task = {**task, "task_id": task["uid"]}
        out.append(task)
    return {"group_id": ident, "total": len(out), "tasks": out}


@transform("step_rows")
def step_rows(body: Any, ident: str, *, width: int) -> dict[str, Any]:
    """A job's trajectory as one compact row per step (``benchloop.viewer.listing``)."""
    from ..viewer.listing import steps_element

    return steps_element(ident, body, width)


def apply(shape: Transform | None, value: Any, ident: str) -> Any:
    """Apply a part's transform (``None``: the value as it is)."""
    if shape is None:
        return value
    return TRANSFORMS[shape.name](value, ident, **shape.params)
