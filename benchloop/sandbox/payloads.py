"""Response bodies of the sandbox, derived from the stored per-job facts.

Why derived: the dataset stores only a few numbers per job (see
:mod:`benchloop.sandbox.dataset`); everything else a response carries -
metrics sections, report markdown, trajectory steps, artifact bytes - is a
pure function of those facts, the job number ``n`` and the dataset seed.  So
payloads cost nothing to store, are identical across runs with the same seed,
and per-job values always agree with the group aggregates computed from them.

The shapes follow docs/contract.md section 9 (the fixtures the official client's
tests use).  Rules keyed on the job number ``n`` (documented for test writers):

* ``n % 7 == 0``: job report ``{"reports": []}``; ``n % 11 == 0`` (and not a
  multiple of 7): two report entries;
* trajectories (:mod:`.trajectories`): as many turns as the metrics and the report say,
  ending as the report says; ``n % 13 == 0``: empty trajectory (and no rows in the group
  export; the report says none was recorded);
* ``n % 5 == 0``: trajectory step 0 carries two PNG media (same file name; real PNGs);
  ``n % 10 == 0`` adds an extension-less ``video/mp4``; ``n % 25 == 0`` adds a
  media behind an SSO login redirect;
* ``n % 10 == 0``: export rows name the job with ``jobId`` instead of ``job_id``;
* artifacts: ``n % 6 == 0`` listing ``[{"error_code": "no_artifact"}]`` and the
  proxy answers 404; else ``n % 17 == 0`` an ``artifact_sign_failed`` entry
  without url (the proxy still serves bytes); ``n == 5`` the proxy answers 200
  ``text/html``; every other job one downloadable ``result.tgz``;
* RSI: ``n % 3 == 1`` created, ``n % 3 == 2`` creating, ``n % 3 == 0``
  not_created; groups by their index the same way, GEMPTY not_created;
* running jobs have empty metric sections; only succeeded/failed jobs have an
  eval score.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from typing import Any

from .facts import (  # noqa: F401 - the job facts, also read as payloads.<name>
    FAIL_REASONS,
    MEDIA_BUCKET,
    MODELS,
    SUB_FAIL_REASONS,
    fail_reason,
    has_run_metrics,
    media_of,
    model_of,
    run_facts,
)
from .trajectories import trajectory_steps

LIVE_GROUP = "GLIVE"  # = dataset.LIVE_GROUP (payloads stay free of dataset imports)

RUN_ALLOW = (
    "job_count", "avg_duration_s", "avg_duration_api_s", "avg_thinking_length",
    "avg_api_call_count", "total_api_error_count", "avg_api_error_rate", "avg_tool_call_count",
    "total_tool_error_count", "avg_tool_error_rate", "total_rate_limit_count", "avg_num_turns",
)
TOKENIZED_ALLOW = (
    "tokenized_job_count", "avg_tokenizer_dedup_input", "max_tokenizer_dedup_input",
    "total_tokenizer_dedup_input", "avg_tokenizer_user_input", "max_tokenizer_user_input",
    "total_tokenizer_user_input", "avg_tokenizer_output_total", "max_tokenizer_output_total",
    "total_tokenizer_output_total", "avg_tokenizer_output_per_turn",
    "max_tokenizer_output_per_turn", "avg_tokenizer_single_seq_context",
    "max_tokenizer_single_seq_context", "avg_tokenizer_context_peak",
    "max_tokenizer_context_peak", "avg_llm_calls", "max_llm_calls", "total_llm_calls",
)


# --------------------------------------------------------------------- jobs
def job_summary(job: dict[str, Any]) -> dict[str, Any]:
    """A job as it appears in list pages (``updated_at``: the live group's jobs only)."""
    out = {
        "job_id": job["job_id"],
        "group_id": job["group_id"],
        "created_at": job["created_at"],
        "template": job["template"],
        "status": job["status"],
        "instance_id": job["instance_id"],
    }
    if job.get("updated_at") is not None:
        out["updated_at"] = job["updated_at"]
    return out


def job_object(job: dict[str, Any]) -> dict[str, Any]:
    out = job_summary(job)
    out["score"] = job["score"]
    out["model"] = model_of(job)
    return out


def job_meta(job: dict[str, Any]) -> dict[str, Any]:
    return {
        "job_id": job["job_id"],
        "group_id": job["group_id"],
        "model": model_of(job),
        "tags": [job["template"], job["status"]],
        "template": job["template"],
        "instance_id": job["instance_id"],
        "created_at": job["created_at"],
        "params": {"temperature": round((job["salt"] % 11) / 10, 1), "max_turns": 60},
    }


def job_metrics(job: dict[str, Any]) -> dict[str, Any]:
    metrics: list[Any] = []
    if job["score"] is not None:
        metrics.append({"type": "eval", "data": {
            "task_score": job["score"], "resolved": job["status"] == "succeeded"}})
    if not has_run_metrics(job):
        return {"job_id": job["job_id"], "metrics": metrics, "run_metrics": [],
                "tokenized_metrics": []}
    f = run_facts(job)
    run = {
        "duration_s": str(f["duration_s"]),
        "duration_api_s": str(f["duration_api_s"]),
        "thinking_total_length": str(f["thinking_length"]),
        "tokens_sent": str(f["tokens_sent"]),
        "context_peak": str(f["context_peak"]),
        "num_turns": str(f["num_turns"]),
        "api_call_count": str(f["api_call_count"]),
        "api_error_count": str(f["api_error_count"]),
        "tool_call_count": str(f["tool_call_count"]),
        "tool_error_count": str(f["tool_error_count"]),
        "rate_limit_count": str(f["rate_limit_count"]),
    }
    tokenized = {
        "schema_version": "v1.1",
        "tokenizer_class": "Qwen2Tokenizer",
        "tokenizer_dedup_input": f["dedup_input"],
        "tokenizer_user_input": f["user_input"],
        "tokenizer_output_total": f["output_total"],
        "tokenizer_output_per_turn": f["output_per_turn"],
        "tokenizer_single_seq_context": f["single_seq_context"],
        "tokenizer_context_peak": f["context_peak"],
        "llm_calls": f["llm_calls"],
    }
    return {"job_id": job["job_id"], "metrics": metrics, "run_metrics": [run],
            "tokenized_metrics": [tokenized]}


# ----------------------------------------------------------- group aggregates
def _avg(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def group_aggregates(jobs: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Allow-listed group aggregates computed from the jobs' derived facts."""
    job_count = 0
    facts = []
    for job in jobs:
        job_count += 1
        if has_run_metrics(job):
            facts.append(run_facts(job))

    def col(key: str) -> list:
        return [f[key] for f in facts]

    run = {
        "job_count": job_count,
        "avg_duration_s": _avg(col("duration_s")),
        "avg_duration_api_s": _avg(col("duration_api_s")),
        "avg_thinking_length": _avg(col("thinking_length")),
        "avg_api_call_count": _avg(col("api_call_count")),
        "total_api_error_count": sum(col("api_error_count")),
        "avg_api_error_rate": _avg([f["api_error_count"] / f["api_call_count"] for f in facts]),
        "avg_tool_call_count": _avg(col("tool_call_count")),
        "total_tool_error_count": sum(col("tool_error_count")),
        "avg_tool_error_rate": _avg([f["tool_error_count"] / max(1, f["tool_call_count"])
                                     for f in facts]),
        "total_rate_limit_count": sum(col("rate_limit_count")),
        "avg_num_turns": _avg(col("num_turns")),
    }
    tokenized: dict[str, Any] = {"tokenized_job_count": len(facts)}
    for name, key, kinds in (
        ("tokenizer_dedup_input", "dedup_input", "amt"),
        ("tokenizer_user_input", "user_input", "amt"),
        ("tokenizer_output_total", "output_total", "amt"),
        ("tokenizer_output_per_turn", "output_per_turn", "am"),
        ("tokenizer_single_seq_context", "single_seq_context", "am"),
        ("tokenizer_context_peak", "context_peak", "am"),
        ("llm_calls", "llm_calls", "amt"),
    ):
        values = col(key)
        tokenized[f"avg_{name}"] = _avg(values)
        tokenized[f"max_{name}"] = max(values) if values else None
        if "t" in kinds:
            tokenized[f"total_{name}"] = sum(values)
    tokenized = {k: tokenized[k] for k in TOKENIZED_ALLOW}
    p95 = sorted(col("duration_s"))
    return {
        "run_metrics": run,
        "tokenized_metrics": tokenized,
        "run_extra": {"p95_duration_s": p95[int(len(p95) * 0.95)] if p95 else None},
    }


def group_overall(group_id: str, agg: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Overall body: allow-listed keys plus fields the client must drop."""
    run = {"internal_debug_field": "hidden", **agg["run_metrics"], **agg["run_extra"]}
    tokenized = dict(agg["tokenized_metrics"])
    tokenized["internal_debug_field"] = "hidden"
    tokenized["shard_count"] = 1
    return {"group_id": group_id, "run_metrics": run, "tokenized_metrics": tokenized}


def detail_tokenized(agg: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {**agg["tokenized_metrics"], "hidden_aggregate": 9}


# ------------------------------------------------------------------ reports
ENDINGS = {
    ("model", "wrong_patch"): "It submitted a patch to the wrong file: the failing test still fails.",
    ("model", "hallucinated_api"): "It called a function that does not exist: the test fails with an AttributeError.",
    ("model", "gave_up_early"): "It gave up without a patch: the failing test still fails.",
    ("environment", None): "Its environment failed ({sub}) when it ran the test; it stopped there.",
    ("tool", None): "A tool call failed ({sub}); it stopped there.",
    ("timeout", None): "It was stopped by a timeout ({sub}) in its last turn, before it submitted.",
}


def ending(job: dict[str, Any]) -> str:
    """How the run ended, in one sentence (the report says it; the trajectory's last step shows it)."""
    if job["n"] % 13 == 0:
        return "No trajectory was recorded for this job."
    if job["status"] == "running":
        return "The run has not ended yet."
    if job["status"] == "cancelled":
        return "The job was cancelled before it finished."
    reason, sub = fail_reason(job)
    if reason is None:
        return "It submitted a patch and the failing test passes."
    text = ENDINGS.get((reason, sub)) or ENDINGS.get((reason, None)) or f"It failed: {reason} ({sub})."
    return text.format(sub=sub)


def job_report(job: dict[str, Any]) -> dict[str, Any]:
    n, jid = job["n"], job["job_id"]
    if n % 7 == 0:
        return {"job_id": jid, "reports": []}
    reason, sub = fail_reason(job)
    f = run_facts(job)
    lines = [
        f"# Job report — {jid}",
        "",
        f"- 分组 group: {job['group_id'] or '—'}",
        f"- 模板 template: `{job['template']}`",
        f"- 状态 status: **{job['status']}**",
        f"- 实例 instance: {job['instance_id']}",
        f"- score: {job['score'] if job['score'] is not None else 'n/a'}",
        "",
        "## 失败原因 · failure analysis",
        "",
        (f"Primary reason: **{reason}** → {sub}." if reason
         else "No failure detected ✓ (naïve check passed)."),
        "",
        "## Summary",
        "",
        f"The agent ran {f['num_turns']} turns and {f['tool_call_count']} tool calls "
        f"in {f['duration_s']} s; context peak {f['context_peak']} tokens.",
        "",
        ending(job),
        "",
    ]
    reports = [{"content": "\n".join(lines), "fail_reason": reason, "sub_fail_reason": sub}]
    if n % 11 == 0:
        reports.append({"content": f"# Addendum — {jid}\n\nSecond pass: «unchanged».\n",
                        "fail_reason": reason, "sub_fail_reason": sub})
    return {"job_id": jid, "reports": reports}


def group_report(group_id: str, jobs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    stats: dict[str, dict[str, Any]] = {}
    analysed = 0
    for job in jobs:
        if job["n"] % 7 == 0:
            continue
        analysed += 1
        reason, sub = fail_reason(job)
        if reason is None:
            continue
        entry = stats.setdefault(reason, {"count": 0, "sub_fail_reason": {}})
        entry["count"] += 1
        entry["sub_fail_reason"][sub] = entry["sub_fail_reason"].get(sub, 0) + 1
    ordered = {}
    for reason in sorted(stats):
        entry = stats[reason]
        ordered[reason] = {"count": entry["count"],
                           "sub_fail_reason": dict(sorted(entry["sub_fail_reason"].items()))}
    if analysed == 0:
        return {"group_id": group_id, "reports": [], "stats": {"fail_reason": {}}}
    table = "\n".join(f"| {r} | {e['count']} |" for r, e in ordered.items()) or "| — | 0 |"
    content = (
        f"# Group report — {group_id}\n\n"
        f"{analysed} 个任务已分析 (jobs analysed).\n\n"
        "| 失败原因 fail reason | count |\n| --- | --- |\n"
        f"{table}\n"
    )
    return {"group_id": group_id, "reports": [{"content": content}],
            "stats": {"fail_reason": ordered}}


# --------------------------------------------------------------- trajectory
def job_trajectory(job: dict[str, Any], steps: int = 0) -> dict[str, Any]:
    """A job's trajectory (:mod:`.trajectories`: its story, as many turns as its report says;
    ``steps`` > 0: that many steps of it)."""
    return {"job_id": job["job_id"], "trajectory": trajectory_steps(job, steps)}


def export_lines(group_id: str, jobs: list[dict[str, Any]], steps: int = 0) -> Iterable[dict]:
    """Rows of the group trace export: step-major, oldest job first (like a log store)."""
    per_job = [(job, trajectory_steps(job, steps)) for job in reversed(jobs)]
    for i in range(max((len(t) for _, t in per_job), default=0)):
        for job, traj in per_job:
            if i < len(traj) and isinstance(traj[i], dict):
                key = "jobId" if job["n"] % 10 == 0 else "job_id"
                yield {"group_id": group_id, key: job["job_id"], **traj[i]}


def _png(width: int, height: int, pixel: Any) -> bytes:
    """A valid 8-bit RGB PNG (``pixel(x, y)`` -> 3 bytes), so that a browser decodes it."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"".join(pixel(x, y) for x in range(width)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def media_bytes(uri: str, mime: str) -> bytes:
    """The bytes of a media file: a small PNG (a screenshot-like picture whose colours come from
    the URI) for an image, an SVG that carries a script for ``image/svg+xml`` and for a URI with
    ``/disguised/`` whatever type it claims (a viewer must never embed it), the start of an MP4
    for anything else."""
    digest = hashlib.sha256(uri.encode()).digest()
    if mime == "image/svg+xml" or "/disguised/" in uri:  # the hostile group's: a script that says it is an image
        return (b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script>'
                b'<rect width="10" height="10"/></svg>')
    if mime.startswith("image/"):
        top, body = digest[0:3], digest[3:6]
        return _png(96, 64, lambda x, y: top if y < 12 else body if (x // 16 + y // 16) % 2 else b"\xf0\xf0\xf0")
    return b"\x00\x00\x00\x18ftypmp42" + digest * 8


# ---------------------------------------------------------------- artifacts
def artifact_kind(job: dict[str, Any]) -> str:
    """One of ``ok``, ``none`` (no_artifact), ``sign_failed``, ``html``; a live job has none
    while it runs."""
    n = job["n"]
    if n % 6 == 0 or (job["group_id"] == LIVE_GROUP and job["status"] == "running"):
        return "none"
    if n % 17 == 0:
        return "sign_failed"
    if n == 5 and job["group_id"] is not None:
        return "html"
    return "ok"


HOSTILE_GROUP = "GHOSTILE"  # = dataset.HOSTILE_GROUP (payloads stay free of dataset imports)
# Artifact names a hostile (or broken) backend could list: GHOSTILE jobs get all of them.
HOSTILE_ARTIFACT_NAMES = (
    "../../../escape.tgz",
    "/abs/evil.tgz",
    "..\\..\\win.tgz",
    "nul\x00name.tgz",
    "ctl\x1b]0;title\x07\r\n.tgz",
    "N" * 1000 + ".tgz",
    "..",
    ".",
    "sub/dir/../../../up.tgz",
    "",
)


def artifact_listing(job: dict[str, Any], url: str, size: int) -> dict[str, Any]:
    kind = artifact_kind(job)
    if job["group_id"] == HOSTILE_GROUP:
        return {"job_id": job["job_id"], "artifacts": [
            {"name": name, "url": url, "size": size} for name in HOSTILE_ARTIFACT_NAMES]}
    if kind == "none":
        entries: list[dict[str, Any]] = [{"error_code": "no_artifact"}]
    elif kind == "sign_failed":
        entries = [{"name": "result.tgz", "error_code": "artifact_sign_failed"}]
    else:
        entries = [{"name": "result.tgz", "url": url, "size": size}]
    return {"job_id": job["job_id"], "artifacts": entries}


def artifact_chunks(seed: int, job_id: str, size: int, chunk: int = 65536) -> Iterable[bytes]:
    """Deterministic pseudo-random bytes (gzip magic first), streamed in chunks."""
    rng = random.Random(f"artifact:{seed}:{job_id}")
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
    sent = 0
    while sent < size:
        n = min(chunk, size - sent)
        if sent == 0:
            data = (head + rng.randbytes(max(0, n - len(head))))[:n]
        else:
            data = rng.randbytes(n)
        sent += n
        yield data


HTML_ERROR_PAGE = (
    b"<html><head><title>Error</title></head>"
    b"<body><h1>NoSuchKey</h1><p>artifact missing on OSS</p></body></html>"
)


# ----------------------------------------------------------- tasks, summary
def task_item(task: dict[str, Any]) -> dict[str, Any]:
    return {"task_id": task["task_id"], "name": task["name"], "status": task["status"],
            "score": task["score"]}


def eval_summary(group_id: str, tasks: list[dict[str, Any]], job_count: int) -> dict[str, Any]:
    counts = {"passed": 0, "failed": 0, "error": 0, "pending": 0}
    scores = []
    for t in tasks:
        counts[t["status"]] += 1
        if t["score"] is not None:
            scores.append(t["score"])
    finished = counts["passed"] + counts["failed"] + counts["error"]
    return {
        "group_id": group_id,
        "score": _avg(scores),
        "pass_rate": round(counts["passed"] / finished, 4) if finished else None,
        "task_count": len(tasks),
        "job_count": job_count,
        **counts,
    }


def group_object(group: dict[str, Any]) -> dict[str, Any]:
    return {
        "group_id": group["group_id"],
        "name": group["name"],
        "template": group["template"],
        "dataset": group["dataset"],
        "cluster": group["cluster"],
        "created_at": group["created_at"],
        "job_count": group["job_count"],
        "task_count": group["task_count"],
    }


# ---------------------------------------------------------------------- rsi
RSI_STATES = ("not_created", "created", "creating")  # indexed by n % 3


def rsi_initial(n: int) -> str:
    return RSI_STATES[n % 3]


def job_rsi(job: dict[str, Any], status: str, request: dict | None) -> dict[str, Any]:
    report = None
    if status == "created":
        report = {"report_md": f"# RSI — {job['job_id']}\n\n根因 root cause: "
                               f"{fail_reason(job)[0] or 'none'} ✓\n"}
    return {"entity_type": "job", "job_id": job["job_id"], "status": status,
            "report": report, "request": request}


def group_rsi(group_id: str, status: str, request: dict | None) -> dict[str, Any]:
    report = None
    if status == "created":
        report = {"summary_md": f"# RSI summary — {group_id}\n\n整体 overall: stable ✓\n"}
    return {"entity_type": "group", "group_id": group_id, "status": status,
            "report": report, "request": request}


# ----------------------------------------------------------------- behavior
BEHAVIOR_STEPS = (10, 20, 30)


def behavior_steps(group: dict[str, Any], idx: int) -> dict[str, Any]:
    if group["job_count"] and idx % 2 == 1:
        return {"hasStep": True, "steps": list(BEHAVIOR_STEPS), "samplingMode": "step"}
    return {"hasStep": False, "steps": [], "samplingMode": "all_jobs",
            "candidateCount": group["job_count"]}


def behavior_analysis(task: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(f"behavior:{task['uid']}")
    samples = task.get("sampleSize") or 8
    return {
        "uid": task["uid"],
        "summary": {"totalSamples": samples,
                    "averageOverallScore": round(3 + 2 * rng.random(), 2)},
        "categoryScores": [
            {"category": c, "scoreSum": round(samples * rng.random(), 2)}
            for c in ("planning", "tool_use", "verification")
        ],
        "behaviorPatterns": {
            "positive": [{"id": "P1", "name": "先读后改 read-before-edit",
                          "triggerRate": round(rng.random(), 3)}],
            "negative": [{"id": "N1", "name": "repeated failing command",
                          "triggerRate": round(rng.random(), 3)}],
        },
        "samplingMode": task["samplingMode"],
    }


# The Benchloop side records the cluster of some groups (the ``group`` endpoint's ``cluster``).
BENCHLOOP_CLUSTERS = {"APG-PROFILE": "EVAL-HK-PROD-1"}
