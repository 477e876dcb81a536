"""Endpoint handlers, registered by endpoint name.

Why a registry keyed by name: routes come from the endpoint table
(:mod:`benchloop.sandbox.routing`), so the only link between an operation of
the table and its behaviour here is the endpoint name.  An endpoint added to
the table without a handler answers the shape its ``response:`` declares
(:mod:`benchloop.sandbox.generated`); a handler is written only for behaviour
of its own.

Every handler takes ``(app, request)`` and returns a :class:`Response`;
``ApiError`` (and its ``not_found`` helper) becomes a JSON error body.

Conventions: a path id that does not exist is 404 ``{"error": "<kind> not
found: <id>"}``; a ``group_id`` *query filter* on a list (``/openapi/jobs``,
``/openapi/jobs/stats``, behaviour task list) naming an unknown group yields an
empty result, like the real backend (the client then probes
``/openapi/groups/{group}``).  ``limit`` defaults to 50 and is capped at 1000,
``skip`` defaults to 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from ..base.registry import Registry
from . import payloads

# The sandbox ``App`` (app.py) that handlers answer for; not imported, since app.py imports this module.
App = Any

MAX_LIMIT = 1000
DEFAULT_LIMIT = 50
INT64_MAX = 2**63 - 1  # SQLite's largest integer: a larger skip would crash the query
# A media type the sandbox repeats in Content-Type: type/subtype of token characters only.
MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")


# ------------------------------------------------------------------- types
@dataclass
class Request:
    method: str
    endpoint: str
    params: dict[str, str]
    query: dict[str, str]
    body: Any
    headers: Any
    base_url: str


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Iterable[bytes] | None = None  # streamed body of known length
    length: int | None = None
    fault: str | None = None  # "reset" or "truncate" (fault injection)


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def not_found(kind: str, ident: str) -> ApiError:
    return ApiError(404, f"{kind} not found: {ident}")


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(status=status, body=dumps(value), headers=dict(headers or {}))


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return json_response({"error": message}, status, headers)


# ---------------------------------------------------------------- registry
Handler = Callable[[App, Request], Response]
# Endpoint name -> its handler (``base.registry``, as every extension point of bl).
HANDLERS: Registry[Handler] = Registry()
handler = HANDLERS.register


# ----------------------------------------------------------------- helpers
def _int_arg(query: dict[str, str], key: str, default: int) -> int:
    raw = query.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"invalid {key}: {raw!r}") from None
    if not 0 <= value <= INT64_MAX:
        raise ApiError(400, f"invalid {key}: {raw!r}")
    return value


def page_args(query: dict[str, str]) -> tuple[int, int]:
    skip = _int_arg(query, "skip", 0)
    limit = min(_int_arg(query, "limit", DEFAULT_LIMIT), MAX_LIMIT)
    return skip, limit


def _filter(query: dict[str, str], key: str) -> str | None:
    value = query.get(key)
    return value if value else None


def _job(app: App, req: Request) -> dict[str, Any]:
    jid = req.params["job"]
    job = app.dataset.job(jid)
    if job is None:
        raise not_found("job", jid)
    return job


def _group(app: App, gid: str) -> dict[str, Any]:
    group = app.dataset.group(gid)
    if group is None:
        raise not_found("group", gid)
    return group


def _body_object(req: Request) -> dict[str, Any]:
    return req.body if isinstance(req.body, dict) else {}


# --------------------------------------------------------------- metrics
@handler("job_metrics")
def job_metrics(app: App, req: Request) -> Response:
    return json_response(payloads.job_metrics(_job(app, req)))


@handler("group_metrics_overall")
def group_metrics_overall(app: App, req: Request) -> Response:
    gid = req.params["group"]
    _group(app, gid)
    return json_response(payloads.group_overall(gid, app.aggregates(gid)))


@handler("group_metrics_detail")
def group_metrics_detail(app: App, req: Request) -> Response:
    gid = req.query.get("group_id")
    if not gid:
        raise ApiError(400, "group_id is required")
    _group(app, gid)
    skip, limit = page_args(req.query)
    rows, total = app.dataset.list_jobs(gid, skip, limit)
    return json_response({
        "total": total,
        "metrics": [payloads.job_metrics(job) for job in rows],
        "tokenized_metrics": payloads.detail_tokenized(app.aggregates(gid)),
    })


# ------------------------------------------------------------------ jobs
@handler("job_list")
def job_list(app: App, req: Request) -> Response:
    skip, limit = page_args(req.query)
    rows, total = app.dataset.list_jobs(
        _filter(req.query, "group_id"), skip, limit,
        template=_filter(req.query, "template"),
        status=_filter(req.query, "status"),
        instance_id=_filter(req.query, "instance_id"),
    )
    return json_response({"jobs": [payloads.job_summary(j) for j in rows], "total": total})


@handler("job")
def job(app: App, req: Request) -> Response:
    return json_response(payloads.job_object(_job(app, req)))


@handler("job_stats")
def job_stats(app: App, req: Request) -> Response:
    gid = _filter(req.query, "group_id")
    counts = app.dataset.status_counts(gid)
    return json_response({"group_id": gid, "total": sum(counts.values()), "by_status": counts})


@handler("job_meta")
def job_meta(app: App, req: Request) -> Response:
    return json_response(payloads.job_meta(_job(app, req)))


# ----------------------------------------------------------------- groups
@handler("group")
def group(app: App, req: Request) -> Response:
    gid = req.params["group"]
    if gid in payloads.BENCHLOOP_CLUSTERS:  # an AgentPlatform group Benchloop knows the cluster of (ap-cmd)
        return json_response({"group_id": gid, "cluster": payloads.BENCHLOOP_CLUSTERS[gid]})
    return json_response(payloads.group_object(_group(app, gid)))


@handler("group_eval_summary")
def group_eval_summary(app: App, req: Request) -> Response:
    grp = _group(app, req.params["group"])
    tasks = app.dataset.all_tasks(grp["group_id"])
    return json_response(payloads.eval_summary(grp["group_id"], tasks, grp["job_count"]))


@handler("group_tasks")
def group_tasks(app: App, req: Request) -> Response:
    gid = req.params["group"]
    _group(app, gid)
    skip, limit = page_args(req.query)
    rows, total = app.dataset.list_tasks(
        gid, skip, limit, _filter(req.query, "search"), _filter(req.query, "status"))
    return json_response({"tasks": [payloads.task_item(t) for t in rows], "total": total})


@handler("group_job_ids")
def group_job_ids(app: App, req: Request) -> Response:
    gid = req.params["group"]
    _group(app, gid)
    ids = app.dataset.job_ids(gid)
    return json_response({"group_id": gid, "total": len(ids), "job_ids": ids})


# ---------------------------------------------------------------- reports
@handler("job_report")
def job_report(app: App, req: Request) -> Response:
    return json_response(payloads.job_report(_job(app, req)))


@handler("group_report")
def group_report(app: App, req: Request) -> Response:
    gid = req.params["group"]
    _group(app, gid)
    return json_response(app.memoised("report", gid, lambda: payloads.group_report(
        gid, app.dataset.iter_group_jobs(gid))))


def _triggered(key: str, ident: str, req: Request) -> Response:
    out: dict[str, Any] = {"status": "triggered", key: ident}
    body = _body_object(req)
    if "include_passed" in body:
        out["include_passed"] = body["include_passed"]
    return json_response(out)


@handler("job_report_trigger")
def job_report_trigger(app: App, req: Request) -> Response:
    job = _job(app, req)
    return _triggered("job_id", job["job_id"], req)


@handler("group_report_trigger")
def group_report_trigger(app: App, req: Request) -> Response:
    gid = req.params["group"]
    _group(app, gid)
    return _triggered("group_id", gid, req)


# ------------------------------------------------------------ trajectories
@handler("job_trajectory")
def job_trajectory(app: App, req: Request) -> Response:
    return json_response(payloads.job_trajectory(_job(app, req), app.config.trajectory_steps))


@handler("group_trace_export")
def group_trace_export(app: App, req: Request) -> Response:
    gid = req.params["group"]
    _group(app, gid)
    status, name = app.state.export_create(gid)
    if status == "waiting_for_data":
        return json_response({"status": status, "retry_after_seconds": 1})
    if status == "running":
        return json_response({"status": status, "download_job_name": name})
    return json_response({"status": status, "download_job_name": name,
                          "download_url": app.export_url(req.base_url, gid)})


@handler("group_trace_export_status")
def group_trace_export_status(app: App, req: Request) -> Response:
    gid, name = req.params["group"], req.params["name"]
    _group(app, gid)
    status = app.state.export_poll(gid, name)
    if status is None:
        raise not_found("export", name)
    if status == "running":
        # A poll hint; the reference client ignores it and waits 15 s, bl honours it.
        return json_response({"status": status, "retry_after_seconds": 1})
    return json_response({"status": status, "download_url": app.export_url(req.base_url, gid)})


@handler("trace_media")
def trace_media(app: App, req: Request) -> Response:
    uri = req.query.get("ossUri") or ""
    mime = req.query.get("mime") or ""
    if not uri.startswith(payloads.MEDIA_BUCKET + "/"):
        raise not_found("media", uri or "<missing ossUri>")
    if uri.startswith(payloads.MEDIA_BUCKET + "/sso/"):
        back = quote(f"{req.base_url}/openapi/getTrajV2/mediaFile", safe="")
        location = f"{req.base_url}/_sso/login.alibaba-inc.com/ssoLogin.htm?backURL={back}"
        return Response(status=302, body=b"", content_type="text/html;charset=utf-8",
                        headers={"Location": location})
    # The file keeps the type it was asked for; anything that is no media type is plain bytes.
    return Response(body=payloads.media_bytes(uri, mime),
                    content_type=mime if MEDIA_TYPE.fullmatch(mime) else "application/octet-stream")


# -------------------------------------------------------- download tasks
@handler("download_task")
def download_task(app: App, req: Request) -> Response:
    tid = req.params["task"]
    task = app.dataset.download_task(tid)
    if task is None:
        raise not_found("download task", tid)
    return json_response({
        "task_id": task["task_id"],
        "group_id": task["group_id"],
        "job_count": len(task["job_ids"]),
        "job_ids": task["job_ids"],
        "created_at": task["created_at"],
    })


# -------------------------------------------------------------- artifacts
@handler("job_artifacts")
def job_artifacts(app: App, req: Request) -> Response:
    job = _job(app, req)
    url = app.artifact_url(req.base_url, job["job_id"])
    listing = payloads.artifact_listing(job, url, app.config.artifact_bytes)
    if (job["group_id"] == payloads.LIVE_GROUP and job["n"] == app.config.live_unsigned and job["status"] != "running"
            and payloads.artifact_kind(job) != "none"):
        listing["artifacts"] = [{"name": "result.tgz", "error_code": "artifact_sign_failed"}]
    return json_response(listing)


def artifact_body(app: App, job: dict[str, Any]) -> Response:
    kind = payloads.artifact_kind(job)
    if kind == "none":
        raise ApiError(404, f"no artifact for job: {job['job_id']}")
    if kind == "html":
        return Response(body=payloads.HTML_ERROR_PAGE, content_type="text/html;charset=utf-8")
    size = app.config.artifact_bytes
    return Response(
        content_type="application/octet-stream",
        headers={"Content-Disposition": 'attachment; filename="result.tgz"'},
        chunks=payloads.artifact_chunks(app.dataset.seed, job["job_id"], size),
        length=size,
    )


@handler("job_artifact_download")
def job_artifact_download(app: App, req: Request) -> Response:
    job = _job(app, req)
    if app.config.redirect_artifacts and payloads.artifact_kind(job) == "ok":
        # Like a backend that hands out presigned object-store URLs instead of proxying.
        return Response(status=302, body=b"", content_type="text/plain",
                        headers={"Location": app.artifact_url(req.base_url, job["job_id"])})
    return artifact_body(app, job)


# -------------------------------------------------------------------- rsi
@handler("job_rsi")
def job_rsi(app: App, req: Request) -> Response:
    job = _job(app, req)
    status, request = app.state.rsi_get(("job", job["job_id"]), payloads.rsi_initial(job["n"]))
    return json_response(payloads.job_rsi(job, status, request))


@handler("group_rsi")
def group_rsi(app: App, req: Request) -> Response:
    grp = _group(app, req.params["group"])
    initial = "not_created" if grp["job_count"] == 0 else payloads.rsi_initial(grp["idx"])
    status, request = app.state.rsi_get(("group", grp["group_id"]), initial)
    return json_response(payloads.group_rsi(grp["group_id"], status, request))


@handler("job_rsi_trigger")
def job_rsi_trigger(app: App, req: Request) -> Response:
    job = _job(app, req)
    app.state.rsi_trigger(("job", job["job_id"]), _body_object(req))
    return json_response({"status": "creating", "accepted": True})


@handler("group_rsi_trigger")
def group_rsi_trigger(app: App, req: Request) -> Response:
    gid = req.params["group"]
    _group(app, gid)
    app.state.rsi_trigger(("group", gid), _body_object(req))
    return json_response({"status": "creating", "accepted": True})


# --------------------------------------------------------------- behavior
_NO_GROUP = "groupId 不能为空"


def _public_task(task: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in task.items() if k != "polls"}


@handler("behavior_steps")
def behavior_steps(app: App, req: Request) -> Response:
    gid = req.query.get("group_id")
    if not gid:
        raise ApiError(400, _NO_GROUP)
    grp = _group(app, gid)
    return json_response(payloads.behavior_steps(grp, grp["idx"]))


@handler("behavior_create")
def behavior_create(app: App, req: Request) -> Response:
    body = req.body
    if not isinstance(body, dict):
        raise ApiError(400, "request body must be a JSON object")
    gid = body.get("groupId")
    if not isinstance(gid, str) or not gid:
        raise ApiError(400, _NO_GROUP)
    grp = _group(app, gid)
    if grp["job_count"] == 0:
        raise ApiError(400, "当前 Group 没有可用于 Behavior 分析的 Job")
    steps = body.get("steps", [])
    if not isinstance(steps, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in steps):
        raise ApiError(400, "steps 必须是整数列表")
    limit = body.get("scoringLimit")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        raise ApiError(400, "scoringLimit 必须大于 0")
    info = payloads.behavior_steps(grp, grp["idx"])
    task: dict[str, Any] = {"groupId": gid, "status": "Running",
                            "samplingMode": info["samplingMode"], "steps": steps,
                            "scoringLimit": limit}
    if info["samplingMode"] == "step":
        if not 1 <= len(steps) <= 20 or len(set(steps)) != len(steps):
            raise ApiError(400, "steps 数量必须在 1~20 之间")
        for s in steps:
            if s not in info["steps"]:
                raise ApiError(400, f"step 不属于当前 group: {s}")
        size = body.get("sampleSize")
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ApiError(400, "sampleSize 必须大于 0")
        task["sampleSize"] = size
    elif steps:
        raise ApiError(400, "当前 Group 没有 Step 信息，无需选择 Step")
    created = app.state.behavior_add(task)
    return json_response({"uid": created["uid"], "status": "Running"})


def _behavior(app: App, req: Request) -> dict[str, Any]:
    task = app.state.behavior_get(req.params["task"], poll=True)
    if task is None:
        raise ApiError(404, "Behavior 分析任务不存在")
    return task


@handler("behavior_task")
def behavior_task(app: App, req: Request) -> Response:
    return json_response(_public_task(_behavior(app, req)))


@handler("behavior_analysis")
def behavior_analysis(app: App, req: Request) -> Response:
    task = _behavior(app, req)
    if task["status"] != "Finished":
        raise ApiError(409, "Behavior 分析任务尚未完成")
    return json_response(payloads.behavior_analysis(task))


@handler("behavior_list")
def behavior_list(app: App, req: Request) -> Response:
    gid = req.query.get("group_id")
    if not gid:
        raise ApiError(400, _NO_GROUP)
    return json_response([_public_task(t) for t in app.state.behavior_of_group(gid)])


# ------------------------------------------- pseudo-OSS (not in the table)
def internal_path(raw_path: str) -> bool:
    return raw_path.startswith(("/_export/", "/_oss/", "/_sso/"))


def split_target(target: str) -> tuple[str, str]:
    parts = urlsplit(target)
    return parts.path, parts.query
