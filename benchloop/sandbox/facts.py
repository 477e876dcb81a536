"""The facts of a job that every payload derives from: run figures, fail reason, model, media.

Pure functions of the stored per-job facts (:mod:`.dataset`), shared by the payloads
(metrics, reports: :mod:`.payloads`) and the trajectories (:mod:`.trajectories`), so that
a job's metrics, its report and its trajectory always tell the same story.
"""

from __future__ import annotations

import hashlib
from typing import Any

FAIL_REASONS = ("model", "environment", "tool", "timeout")
SUB_FAIL_REASONS = {
    "model": ("hallucinated_api", "gave_up_early", "wrong_patch"),
    "environment": ("docker_pull_failed", "dependency_missing", "oom_killed"),
    "tool": ("bad_tool_args", "tool_crash", "sandbox_denied"),
    "timeout": ("step_timeout", "job_timeout", "llm_timeout"),
}
MODELS = ("qwen3.7-max", "qwen3-coder-plus", "qwen-max", "qwen3.5-turbo")
MEDIA_BUCKET = "oss://sandbox-media"


def has_run_metrics(job: dict[str, Any]) -> bool:
    return job["status"] != "running"


def run_facts(job: dict[str, Any]) -> dict[str, Any]:
    """Every run/tokenizer number of a job, from its stored facts (pure arithmetic)."""
    salt, turns = job["salt"], job["num_turns"]
    out, peak = job["output_total"], job["context_peak"]
    api_calls = turns + salt % 3
    tool_calls = max(0, turns - 1)
    tokens_sent = peak * turns // 3 + 100
    return {
        "duration_s": job["duration_s"],
        "duration_api_s": round(job["duration_s"] * (0.55 + (salt % 40) / 100), 2),
        "thinking_length": out * (2 + salt % 3) // 4,
        "api_call_count": api_calls,
        "api_error_count": (salt >> 5) % 3 if (salt >> 3) % 4 == 0 else 0,
        "tool_call_count": tool_calls,
        "tool_error_count": (salt >> 7) % 5 if tool_calls else 0,
        "rate_limit_count": 1 if (salt >> 9) % 10 == 0 else 0,
        "num_turns": turns,
        "tokens_sent": tokens_sent,
        "dedup_input": tokens_sent * 7 // 10,
        "user_input": 50 + (salt >> 11) % 2000,
        "output_total": out,
        "output_per_turn": round(out / turns, 2),
        "single_seq_context": peak * 9 // 10,
        "context_peak": peak,
        "llm_calls": api_calls,
    }


# The failure kinds planted in a run, by instance: every failed job of the run on an instance
# fails in the same way, picked by the instance's hash out of ten slots, so that ``bl compare
# --why`` has a known mix to find (README, "runs to compare").  Other groups: by the job's salt.
PLANTED: dict[str, tuple[tuple[str, str], ...]] = {
    "CAND2": ((("model", "wrong_patch"),) * 6 + (("model", "gave_up_early"),) * 2
              + (("timeout", "step_timeout"),) * 2),
}

# Chosen so that at 160 jobs (``bl sandbox serve``) CAND2's seven regressions hold every planted
# kind (4 wrong_patch, 2 gave_up_early, 1 step_timeout) and requests__requests-1518, the
# README's example, edits another file.
PLANT_SALT = "planted18"


def planted(group: str | None, instance: str | None) -> tuple[str, str] | None:
    """The failure kind planted for a group's failed jobs on an instance, or None."""
    plan = PLANTED.get(group or "")
    if plan is None or not instance:
        return None
    slot = int.from_bytes(hashlib.sha256(f"{PLANT_SALT}:{group}:{instance}".encode()).digest()[:4], "big")
    return plan[slot % len(plan)]


def fail_reason(job: dict[str, Any]) -> tuple[str | None, str | None]:
    if job["status"] != "failed":
        return None, None
    kind = planted(job.get("group_id"), job.get("instance_id"))
    if kind is not None:
        return kind
    reason = FAIL_REASONS[job["salt"] % len(FAIL_REASONS)]
    subs = SUB_FAIL_REASONS[reason]
    return reason, subs[(job["salt"] >> 4) % len(subs)]


def model_of(job: dict[str, Any]) -> str:
    return MODELS[(job["salt"] >> 13) % len(MODELS)]


def media_of(job: dict[str, Any]) -> list[dict[str, str]]:
    n, gid, jid = job["n"], job["group_id"] or "nogroup", job["job_id"]
    if n % 13 == 0 or n % 5 != 0:
        return []
    media = [
        {"mime_type": "image/png", "oss_uri": f"{MEDIA_BUCKET}/{gid}/{jid}/shot.png"},
        {"mime_type": "image/png", "oss_uri": f"{MEDIA_BUCKET}/{gid}/{jid}/b/shot.png"},
    ]
    if n % 10 == 0:
        media.append({"mime_type": "video/mp4", "oss_uri": f"{MEDIA_BUCKET}/{gid}/{jid}/clip"})
    if n % 25 == 0:
        media.append({"mime_type": "image/png", "oss_uri": f"{MEDIA_BUCKET}/sso/{jid}.png"})
    return media
