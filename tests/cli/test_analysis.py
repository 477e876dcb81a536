"""rsi and brm (issue 4) against their own sandbox (triggers and analyses change its state).

Sandbox rules used here: rsi status follows n % 3 (1 created, 2 creating,
0 not_created) for jobs and groups; odd groups (G1, G3) are step-mode with
steps 10, 20, 30, even groups are all-jobs; every non-empty group starts with
one finished analysis ``uid-<group>-1``; GEMPTY has no jobs (the backend
refuses an analysis with a 400 and a Chinese message).
"""

from __future__ import annotations

import json

import pytest

KEY = "analysis-key"


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=11, groups=3, jobs_per_group=12, api_key=KEY)


def posts(sandbox, endpoint):
    return [p["body"] for p in sandbox.stats["posts"] if p["endpoint"] == endpoint]


# --------------------------------------------------------------------- rsi
def test_rsi_get_shows_each_status(api, text_snapshot):
    result = api("rsi", "get", "-j", "G1-J0001,G1-J0002,G1-J0003")
    assert result.code == 0, result.err
    body = json.loads(result.out)
    assert [e["status"] for e in body] == ["created", "creating", "not_created"]
    assert body[0]["report"]["report_md"].startswith("# RSI — G1-J0001")
    assert result.out == text_snapshot


def test_rsi_get_group(api):
    body = json.loads(api("--no-pretty", "rsi", "get", "-g", "G1,G2,G3").out)
    assert [(e["group_id"], e["status"]) for e in body] == [("G1", "created"), ("G2", "creating"),
                                                              ("G3", "not_created")]


def test_rsi_download_job_writes_only_created_reports(api, tmp_path):
    result = api("rsi", "download", "-j", "G1-J0001,G1-J0002,G1-J0003", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["G1-J0001_rsi.md"]
    text = (tmp_path / "G1-J0001_rsi.md").read_text(encoding="utf-8")
    assert text.startswith("# RSI — G1-J0001") and "根因" in text
    assert "[progress] job rsi downloads: total=3 jobs" in result.err


def test_rsi_download_group_writes_summary_and_every_created_job(api, tmp_path, sandbox):
    result = api("rsi", "download", "-g", "G1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert (tmp_path / "G1_rsi.md").read_text(encoding="utf-8").startswith("# RSI summary — G1")
    written = sorted(p.name for p in (tmp_path / "G1").iterdir())
    assert written == [f"G1-J{n:04d}_rsi.md" for n in range(1, 13) if n % 3 == 1]
    assert "[progress] group rsi jobs G1: total=12 jobs" in result.err
    again = api("rsi", "download", "-g", "G1", "-o", str(tmp_path), "--skip-existing")
    assert again.code == 0 and f"skip existing {tmp_path / 'G1_rsi.md'}" in again.err


def test_rsi_download_group_without_summary_writes_jobs_only(api, tmp_path):
    result = api("rsi", "download", "-g", "G2", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert not (tmp_path / "G2_rsi.md").exists()
    assert (tmp_path / "G2" / "G2-J0001_rsi.md").is_file()


def test_rsi_trigger_bodies(api, sandbox):
    group = api("--no-pretty", "rsi", "trigger", "-g", "G3", "--include-passed")
    job = api("--no-pretty", "rsi", "trigger", "-j", "G3-J0003")
    assert group.code == job.code == 0
    assert json.loads(group.out) == [{"status": "creating", "accepted": True}]
    assert posts(sandbox, "group_rsi_trigger")[-1] == {"include_passed": True}
    assert posts(sandbox, "job_rsi_trigger")[-1] == {}
    plain = api("rsi", "trigger", "-g", "G3")
    assert plain.code == 0 and posts(sandbox, "group_rsi_trigger")[-1] == {"include_passed": False}
    # The backend moves on: creating, then created.
    states = [json.loads(api("--no-pretty", "rsi", "get", "-j", "G3-J0003").out)[0]["status"] for _ in range(2)]
    assert states == ["creating", "created"]


def test_rsi_unknown_id_is_a_failure(api):
    result = api("rsi", "get", "-j", "G1-J0001,NOPE")
    assert result.code == 1
    assert "[error]   - NOPE: API error 404:" in result.err


# --------------------------------------------------------------------- brm run
@pytest.mark.parametrize(("args", "message"), [
    (["-g", "G1", "--steps", "10,x"], "invalid --steps value: x"),
    (["-g", "G1", "--steps", "10", "--steps", "10"], "steps 不能为空且不能重复"),
    (["-g", "G1", "--steps", "10,+10"], "steps 不能为空且不能重复"),
    ([], "at least one -g/--group is required"),
    (["-g", "G1,G2"], "brm run requires exactly one -g/--group"),
    (["-g", "G1", "--scoring-limit", "0"], "scoringLimit 必须大于 0"),
    (["-g", "G1", "--sample-size", "-1"], "sampleSize 必须大于 0"),
    (["-j", "G1-J0001"], "Unknown option"),
])
def test_brm_run_offline_validation_before_any_request(api, sandbox, args, message):
    sandbox.reset_stats()
    result = api("brm", "run", *args)
    assert result.code == 2
    assert result.out == ""
    assert message in result.err.splitlines()[-1]
    assert sandbox.stats["requests"] == 0


@pytest.mark.parametrize(("args", "message"), [
    (["-g", "G1"], "group has steps; pass --steps (1~20 values from available steps: 10, 20, 30)"),
    (["-g", "G1", "--steps", "50"], "step 不属于当前 group: 50 (available: 10, 20, 30)"),
    (["-g", "G1", "--steps", ",".join(str(n) for n in range(1, 22))], "steps 数量必须在 1~20 之间"),
    (["-g", "G2", "--steps", "10"], "当前 Group 没有 Step 信息，无需选择 Step（do not pass --steps）"),
])
def test_brm_run_step_checks_after_the_steps_request(api, sandbox, args, message):
    sandbox.reset_stats()
    result = api("brm", "run", *args)
    assert result.code == 2, result.err
    assert result.err.splitlines()[-1] == f"Error: {message}"
    assert sandbox.stats["behavior_steps"] == 1 and sandbox.stats["behavior_create"] == 0


def test_brm_run_step_mode(api, sandbox):
    result = api("--no-pretty", "brm", "run", "-g", "G1", "--steps", "10, 20", "--sample-size", "64")
    assert result.code == 0, result.err
    (element,) = json.loads(result.out)
    assert element["group_id"] == "G1" and element["samplingMode"] == "step"
    assert element["task_id"] == element["uid"]
    assert posts(sandbox, "behavior_create")[-1] == {"groupId": "G1", "steps": [10, 20], "scoringLimit": 32,
                                                 "sampleSize": 64}
    assert list(posts(sandbox, "behavior_create")[-1]) == ["groupId", "steps", "scoringLimit", "sampleSize"]
    assert f"brm task submitted: {element['uid']} (group=G1, mode=step)" in result.err


def test_brm_run_all_jobs_mode(api, sandbox):
    result = api("--no-pretty", "brm", "run", "-g", "G2", "--scoring-limit", "8")
    assert result.code == 0, result.err
    assert json.loads(result.out)[0]["samplingMode"] == "all_jobs"
    assert posts(sandbox, "behavior_create")[-1] == {"groupId": "G2", "steps": [], "scoringLimit": 8}


def test_brm_run_backend_error_message(api):
    result = api("brm", "run", "-g", "GEMPTY")
    assert result.code == 1
    assert "[error]   - GEMPTY: 当前 Group 没有可用于 Behavior 分析的 Job" in result.err


def test_brm_run_post_is_not_retried_after_a_5xx(bl, sandbox):
    sandbox.reset_stats()
    sandbox.inject_fault("behavior_create", status=503, count=1)
    result = bl("--host", sandbox.url, "--api-key", KEY, "--retry", "3", "brm", "run", "-g", "G2")
    assert result.code == 1
    assert sandbox.stats["behavior_create"] == 1  # a second POST could create a second task


def test_brm_run_steps_from_stdin(api, sandbox):
    result = api("--no-pretty", "brm", "run", "-g", "G3", "--steps", "-", stdin="30\n10\n")
    assert result.code == 0, result.err
    assert posts(sandbox, "behavior_create")[-1]["steps"] == [30, 10]


# --------------------------------------------------------------- brm get/status/list
def test_brm_get_scopes(api, text_snapshot):
    full = json.loads(api("brm", "get", "--task-id", "uid-G1-1").out)[0]
    assert list(full) == ["task_id", "uid", "status", "overall", "detail", "samplingMode"]
    assert full["status"]["task_id"] == "uid-G1-1" and full["samplingMode"] == "step"
    overall = json.loads(api("brm", "get", "--task-id", "uid-G1-1", "--scope", "overall").out)[0]
    assert list(overall) == ["task_id", "uid", "summary", "categoryScores"]
    detail = json.loads(api("brm", "get", "--task-id", "uid-G1-1", "--scope", "detail").out)[0]
    assert list(detail) == ["task_id", "uid", "behaviorPatterns"]
    status = json.loads(api("brm", "get", "--task-id", "uid-G1-1", "--scope", "status").out)[0]
    assert status["status"] == "Finished" and status["task_id"] == "uid-G1-1"
    assert api("brm", "get", "--task-id", "uid-G1-1").out == text_snapshot


def test_brm_status_is_get_scope_status_and_reports_unknown_ids(api):
    same = api("--no-pretty", "brm", "get", "--task-id", "uid-G2-1", "--scope", "status").out
    assert api("--no-pretty", "brm", "status", "--task-id", "uid-G2-1").out == same
    result = api("brm", "status", "--task-id", "uid-G2-1,nope")
    assert result.code == 1
    assert "[error]   - nope: Behavior 分析任务不存在" in result.err


@pytest.mark.parametrize(("args", "message"), [
    ([], "at least one --task-id is required"),
    (["--task-id", "../x"], "--task-id must not contain path separators"),
    (["--task-id", "uid-G1-1", "--scope", "bogus"], "--scope must be one of overall, detail, status, all"),
])
def test_brm_get_usage_errors(api, sandbox, args, message):
    sandbox.reset_stats()
    result = api("brm", "get", *args)
    assert result.code == 2 and result.err.splitlines()[-1] == f"Error: {message}"
    assert sandbox.stats["requests"] == 0


def test_brm_list(api):
    result = api("--no-pretty", "brm", "list", "-g", "G1,G2")
    assert result.code == 0, result.err
    body = json.loads(result.out)
    assert [(e["group_id"], e["total"]) for e in body][0][0] == "G1"
    assert all(t["task_id"] == t["uid"] for e in body for t in e["tasks"])
    assert {"uid-G1-1", "uid-G2-1"} <= {t["uid"] for e in body for t in e["tasks"]}
    none = api("brm", "list")
    assert none.code == 2 and "at least one -g/--group is required" in none.err
