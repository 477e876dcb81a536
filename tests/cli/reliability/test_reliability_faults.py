"""Faults: a pull under injected 5xx, resets, cut bodies, 429 and slow bodies.

The sandbox faults each request with a probability, decided by a hash of a
seed and the request (``benchloop.sandbox.faults``), so a run meets the same
faults every time.  Within the retry budget the output must be identical, file
by file, to a fault-free run; beyond it, ``bl`` exits 1, names every id it
could not finish and never leaves a partial file at a final path.  Cut
downloads resume with ``Range`` where the server supports it and restart
where it does not.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from support import final_files, leftovers, run_inprocess

from benchloop.sandbox import start_sandbox
from benchloop.sandbox.faults import RATE_KINDS, FaultPlan, apply_range, parse_range
from benchloop.sandbox.handlers import Response
from benchloop.sandbox.scripted import Reply, start_scripted

KEY = "faults-key"
GROUP = "G1"
JOBS = 500
SECTIONS = "metrics,trajectory,report,artifacts,tasks,jobs"
FAULT_SEED = 20260701


@pytest.fixture(scope="module")
def big(module_env, make_sandbox):
    """One 500-job group, small payloads, an instant export."""
    return make_sandbox(seed=11, groups=1, jobs_per_group=JOBS, tasks_per_group=60, api_key=KEY,
                        trajectory_steps=2, artifact_bytes=2048, export_waiting=0,
                        export_running=0)


def pull(sb, root: Path, *extra: str):
    # --timeout 10: a guard, so that a request that ever hangs (the pool is sized so that
    # none waits in httpcore's queue, encode/httpcore#1110, docs/reliability.md) fails the
    # test in seconds instead of stalling the suite for the default 300 s.
    return run_inprocess("--host", sb.url, "--api-key", KEY, "--concurrency", "8", "-q", "--timeout", "10",
                         *extra,
                         "pull", "-g", GROUP, "--with", SECTIONS, "-o", str(root))


@pytest.fixture(scope="module")
def reference(big, tmp_path_factory):
    """The fault-free run every faulted run is compared with."""
    big.configure_faults(0.0)
    root = tmp_path_factory.mktemp("reference")
    result = pull(big, root)
    files = final_files(root)
    # The dataset has artifacts that cannot be signed (a failure of the item, by design).
    assert result.code == 1, result.err
    assert result.failed and all(f.endswith(":result.tgz") for f in result.failed), result.err
    assert len(files) > 2 * JOBS * 0.7, sorted(files)[:20]
    assert leftovers(root) == []
    return result, files


def test_pull_500_jobs_under_10_percent_faults_equals_a_fault_free_run(big, reference, tmp_path):
    ref, ref_files = reference
    big.configure_faults(0.10, seed=FAULT_SEED)
    big.reset_stats()
    try:
        # The default budget (--retry 4, 5 attempts with backoff): at 10 % faults
        # ~N * 0.1^5 ≈ 0.015 of ~1,500 requests fail every attempt (the reference
        # client's 2 retries would leave ~1.5; docs/reliability.md).
        result = pull(big, tmp_path)
    finally:
        stats = big.stats
        big.configure_faults(0.0)
    assert stats["faults"] >= 100, stats  # the faults really happened, of every kind
    assert all(stats.get(f"fault:{kind}", 0) > 0 for kind in RATE_KINDS), stats
    assert result.code == ref.code, result.err
    assert sorted(result.failed) == sorted(ref.failed)
    assert "Traceback" not in result.err
    got = final_files(tmp_path)
    assert sorted(got) == sorted(ref_files)
    different = [rel for rel in ref_files if got[rel] != ref_files[rel]]
    assert different == []
    assert leftovers(tmp_path) == []


def test_pull_under_3_percent_faults_with_the_default_retry_budget(big, reference, tmp_path):
    ref, ref_files = reference
    big.configure_faults(0.03, seed=FAULT_SEED)
    big.reset_stats()
    try:
        result = pull(big, tmp_path)  # default --retry
    finally:
        stats = big.stats
        big.configure_faults(0.0)
    assert stats["faults"] >= 20, stats
    assert result.code == ref.code, result.err
    assert sorted(result.failed) == sorted(ref.failed)
    assert final_files(tmp_path) == ref_files
    assert leftovers(tmp_path) == []


# Which failure label covers a file that is missing (section of pull, per file name).
_SECTION_OF = {
    "overall_metrics.json": "metrics", "detail_metrics.json": "metrics",
    "trajectory.json": "trajectory", "task_list.json": "tasks", "job_list.json": "jobs",
}
_JOB = re.compile(r"G1-J\d{4}")


def _section(rel: str) -> str:
    name = Path(rel).name
    if rel == f"{GROUP}_report.md" or name.endswith("_report.md"):
        return "report"
    if name == "result.tgz":
        return "artifacts"
    return _SECTION_OF[name]


def test_pull_beyond_the_retry_budget_names_every_failure_and_leaves_no_partial_file(
        big, reference, tmp_path):
    ref, ref_files = reference
    big.configure_faults(0.30, seed=FAULT_SEED + 3)
    try:
        result = pull(big, tmp_path, "--retry", "0")
    finally:
        big.configure_faults(0.0)
    assert result.code == 1, result.err
    assert "Traceback" not in result.err
    got = final_files(tmp_path)
    # Nothing at a final path that differs from the fault-free run, nothing extra.
    assert set(got) <= set(ref_files)
    assert [rel for rel in got if got[rel] != ref_files[rel]] == []
    assert leftovers(tmp_path) == []
    missing = sorted(set(ref_files) - set(got))
    assert missing, "30 % faults without retries must lose something"
    assert got, "and must not lose everything"
    # Every missing file is accounted for on stderr: its job id (or the group summary) is
    # named, or its whole section failed before it could list its items.
    messages = dict(re.findall(r"^\[error\]   - (.+?): (.*)$", result.err, re.M))
    unexplained = []
    for rel in missing:
        label = f"{GROUP}:{_section(rel)}"
        whole = label in messages and "failed to fetch" not in messages[label]
        job = _JOB.search(rel)
        if job:
            named = any(job.group() in k for k in messages) or job.group() in messages.get(label, "")
        elif rel == f"{GROUP}_report.md":
            named = f"{GROUP}:summary" in messages.get(label, "")
        else:
            named = label in messages
        if not (whole or named):
            unexplained.append(rel)
    assert unexplained == [], result.err[-3000:]


# ------------------------------------------------------------------ resume
BIG = 2 * 1024 * 1024


@pytest.fixture(scope="module")
def large(module_env, make_sandbox):
    return make_sandbox(seed=5, groups=1, jobs_per_group=3, tasks_per_group=1, api_key=KEY,
                        artifact_bytes=BIG, export_waiting=0, export_running=0)


def _expected(sb, job: str) -> bytes:
    with httpx.Client(base_url=sb.url, headers={"X-API-Key": KEY}) as client:
        body = client.get(f"/openapi/jobs/{job}/artifacts/download").content
    assert len(body) == BIG
    return body


def _ranges(sb) -> list[str]:
    return [r.headers.get("range") for r in sb.requests_log
            if r.path.startswith("/openapi/jobs/G1-J0001/artifacts/download")]


def test_a_cut_download_resumes_with_range(large, tmp_path):
    full = _expected(large, "G1-J0001")
    large.range_support = True
    large.reset_stats()
    large.inject_fault("job_artifact_download", kind="truncate")  # half of 2 MB, then close
    result = run_inprocess("--host", large.url, "--api-key", KEY, "--retry", "1",
                           "artifacts", "download", "-j", "G1-J0001", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert (tmp_path / "G1-J0001" / "result.tgz").read_bytes() == full
    ranges = _ranges(large)
    assert ranges[0] is None and len(ranges) == 2, ranges
    start = int(re.fullmatch(r"bytes=(\d+)-", ranges[1]).group(1))
    assert 0 < start <= BIG // 2  # asked only for the rest
    assert large.stats["range_requests"] == 1
    assert leftovers(tmp_path) == []


def test_a_download_cut_twice_resumes_twice(large, tmp_path):
    full = _expected(large, "G1-J0001")
    large.range_support = True
    large.reset_stats()
    large.inject_fault("job_artifact_download", kind="truncate", count=2)
    result = run_inprocess("--host", large.url, "--api-key", KEY, "--retry", "2",
                           "artifacts", "download", "-j", "G1-J0001", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert (tmp_path / "G1-J0001" / "result.tgz").read_bytes() == full
    starts = [int(r[6:-1]) for r in _ranges(large)[1:]]
    assert len(starts) == 2 and 0 < starts[0] < starts[1] < BIG, starts


def test_without_range_support_a_cut_download_restarts_and_completes(large, tmp_path):
    full = _expected(large, "G1-J0001")
    large.range_support = False
    try:
        large.reset_stats()
        large.inject_fault("job_artifact_download", kind="truncate")
        result = run_inprocess("--host", large.url, "--api-key", KEY, "--retry", "1",
                               "artifacts", "download", "-j", "G1-J0001", "-o", str(tmp_path))
    finally:
        large.range_support = True
    assert result.code == 0, result.err
    assert (tmp_path / "G1-J0001" / "result.tgz").read_bytes() == full
    assert len(_ranges(large)) == 2  # it asked for the rest, got everything, started over
    assert leftovers(tmp_path) == []


def test_a_cut_download_without_retries_leaves_nothing(large, tmp_path):
    large.inject_fault("job_artifact_download", kind="truncate")
    result = run_inprocess("--host", large.url, "--api-key", KEY, "--retry", "0",
                           "artifacts", "download", "-j", "G1-J0001", "-o", str(tmp_path))
    assert result.code in (1, 4), result.err
    assert "G1-J0001:result.tgz" in result.failed
    assert final_files(tmp_path) == {} and leftovers(tmp_path) == []


def test_a_206_whose_content_range_does_not_start_where_we_stopped_is_not_appended(tmp_path):
    # The client keeps every byte that arrived: cut after 70,000 bytes, then answer
    # the Range request with the first 1,000 bytes only (a broken server).
    body = bytes(range(256)) * 1024  # 256 KiB
    first = Reply(200, body, "application/octet-stream", cut="truncate", send=70_000)
    wrong = Reply(206, body[:1000], "application/octet-stream",
                  {"Content-Range": f"bytes 0-999/{len(body)}"})
    with start_scripted({"/openapi/jobs/J1/artifacts/download": [first, wrong, Reply(
            200, body, "application/octet-stream")],
            "/openapi/jobs/J1/artifacts": Reply(200, {"artifacts": [
                {"name": "a.bin", "url": "http://x.invalid/a"}]})}) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", KEY, "--retry", "3",
                               "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
        ranges = [s.headers.get("range") for s in srv.seen if s.path.endswith("/download")]
    assert ranges[1] == "bytes=70000-"
    # The unusable 206 is dropped and the download starts over (the third answer is whole);
    # never 1,000 bytes presented as the artifact.
    assert result.code == 0, result.err
    assert (tmp_path / "J1" / "a.bin").read_bytes() == body
    assert leftovers(tmp_path) == []


def test_a_206_with_the_right_content_range_is_appended(tmp_path):
    body = bytes(range(256)) * 1024
    first = Reply(200, body, "application/octet-stream", cut="truncate", send=70_000)

    def rest(seen):
        start = int(seen.headers["range"][6:-1])
        return Reply(206, body[start:], "application/octet-stream",
                     {"Content-Range": f"bytes {start}-{len(body) - 1}/{len(body)}"})

    calls = []

    def route(seen):
        calls.append(seen)
        return first if len(calls) == 1 else rest(seen)

    with start_scripted({"/openapi/jobs/J1/artifacts/download": route,
                         "/openapi/jobs/J1/artifacts": Reply(200, {"artifacts": [
                             {"name": "a.bin", "url": "http://x.invalid/a"}]})}) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", KEY, "--retry", "1",
                               "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
        ranges = [s.headers.get("range") for s in srv.seen if s.path.endswith("/download")]
    assert result.code == 0, result.err
    assert (tmp_path / "J1" / "a.bin").read_bytes() == body
    assert ranges[0] is None and ranges[1] == "bytes=70000-"


# ------------------------------------------------------- sandbox mechanics
def test_fault_decisions_are_a_function_of_seed_and_request():
    plan = FaultPlan(rate=0.2, seed=3)
    first = [plan.decide("GET", f"/x?skip={i}", 0) for i in range(2000)]
    assert first == [plan.decide("GET", f"/x?skip={i}", 0) for i in range(2000)]
    hits = [d for d in first if d]
    assert 300 < len(hits) < 500
    assert {kind for kind, _ in hits} == set(RATE_KINDS)
    assert first != [FaultPlan(rate=0.2, seed=4).decide("GET", f"/x?skip={i}", 0) for i in range(2000)]
    assert FaultPlan(rate=0.0).decide("GET", "/x", 0) is None
    with pytest.raises(ValueError):
        FaultPlan(rate=1.5)
    with pytest.raises(ValueError):
        FaultPlan(rate=0.1, kinds=("boom",))


@pytest.mark.parametrize(("header", "expected"), [
    (None, None), ("bytes=0-", (0, 99)), ("bytes=10-19", (10, 19)), ("bytes=90-500", (90, 99)),
    ("bytes=100-", False), ("bytes=5-4", False), ("bytes=-10", None), ("items=1-2", None),
    ("bytes=1-2,4-5", None),
])
def test_range_parsing(header, expected):
    assert parse_range(header, 100) == expected


def test_range_answers_slice_streamed_bodies():
    chunks = [bytes([i]) * 10 for i in range(10)]
    whole = b"".join(chunks)
    resp = apply_range(Response(chunks=iter(chunks), length=100), "bytes=25-64")
    assert resp.status == 206 and resp.headers["Content-Range"] == "bytes 25-64/100"
    assert b"".join(resp.chunks) == whole[25:65] and resp.length == 40
    assert apply_range(Response(body=whole), "bytes=100-").status == 416
    assert apply_range(Response(status=404, body=b"x"), "bytes=1-").status == 404


def test_sandbox_entry_point_accepts_fault_options(monkeypatch):
    from benchloop.sandbox import serve as serve_module
    from benchloop.sandbox.__main__ import main

    calls: list[dict] = []
    monkeypatch.setattr(serve_module, "serve", lambda **kwargs: calls.append(kwargs) or 0)
    assert main(["--fault-rate", "0.1", "--fault-seed", "9", "--fault-kinds", "status,429", "--no-range",
                 "--hostile"]) == 0
    (args,) = calls
    assert (args["fault_rate"], args["fault_seed"], args["fault_kinds"], args["range_support"], args["hostile"]) == (
        0.1, 9, ("status", "429"), False, True)


def test_every_request_but_a_failed_authentication_is_faulted_at_rate_1(module_env):
    with start_sandbox(seed=1, groups=1, jobs_per_group=3, tasks_per_group=1, api_key=KEY,
                       fault_rate=1.0, fault_kinds=("status", "429")) as sb:
        with httpx.Client(base_url=sb.url) as client:
            assert client.get("/openapi/jobs/G1-J0001", headers={"X-API-Key": "wrong"}).status_code == 401
            codes = {client.get("/openapi/jobs/G1-J0001", headers={"X-API-Key": KEY}).status_code
                     for _ in range(30)}
            assert codes <= {429, 500, 502, 503, 504} and 429 in codes
        assert sb.stats["faults"] == 30 and sb.stats["unauthorized"] == 1


def test_sandbox_module_serves_seeded_faults():
    import os
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "benchloop.sandbox", "--groups", "1", "--jobs-per-group", "3",
         "--api-key", "k1", "--fault-rate", "1", "--fault-kinds", "status", "--no-range"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = proc.stdout.readline().split()[2]
        response = httpx.get(url + "/openapi/jobs/G1-J0001", headers={"X-API-Key": "k1"})
        assert response.status_code in (500, 502, 503, 504)
        assert response.json()["error"].startswith("injected fault")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
