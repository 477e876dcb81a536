"""`trajectory get|download` and `metadata download` (docs/contract.md 1.5, 2.7-2.9, 3.3, 3.4, 3.6, 6).

Job mode is one GET per job; group mode goes through the server-side trace
export (create -> wait/poll -> download -> job ids); task mode builds one ZIP
per download task.  Expected values are computed straight from the sandbox
over HTTP (not through the CLI): the raw job trajectories, the export file and
the group's job ids, the task payloads, the media bytes.

Most tests run against a module sandbox whose export is instant; one test
walks every export state on a sandbox of its own (about 2 s of server-told
waits), another lets the export wait out ``--download-timeout``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zipfile
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from support import API_KEY, all_paths, binary, compact, js, pretty

from benchloop.sandbox import start_sandbox

G1_NEWEST_FIRST = [f"G1-J{n:04d}" for n in range(40, 0, -1)]


# ----------------------------------------------------------------- helpers
def file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def zip_entries(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return [info.filename for info in archive.infolist()]


def zip_read(path: Path, name: str) -> str:
    with zipfile.ZipFile(path) as archive:
        return archive.read(name).decode("utf-8")


def row_job(row: dict) -> str:
    return row["job_id"] if "job_id" in row else row["jobId"]


def paths_of(sb) -> list[str]:
    return [urlsplit(r.path).path for r in sb.requests_log]


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    """A sandbox whose trace export succeeds on the first call."""
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25,
                        export_waiting=0, export_running=0)


def job_trajectory(backend, job: str):
    return backend(f"/openapi/jobs/{job}/trajectory", source="trace")


def export_rows(backend, gid: str) -> list[dict]:
    created = backend(f"/openapi/groups/{gid}/trace-trajectory/download")
    assert created["status"] == "succeeded"
    raw = httpx.get(created["download_url"]).content
    return [json.loads(line) for line in gzip.decompress(raw).decode("utf-8").splitlines() if line.strip()]


def expected_group_doc(backend, gid: str) -> dict:
    """docs/contract.md 2.7 step 6, from the export file and the job-ids list fetched directly."""
    rows = export_rows(backend, gid)
    ids = backend(f"/openapi/groups/{gid}/job-ids")["job_ids"]
    assert {row_job(r) for r in rows} <= set(ids)  # no job only known from rows here
    return {"group_id": gid,
            "trajectories": [{"job_id": j, "trajectory": [r for r in rows if row_job(r) == j]} for j in ids]}


def normalize(text: str, out: Path, sb) -> str:
    return text.replace(str(out), "<out>").replace(sb.url, "<sandbox>")


# ---------------------------------------------------------------- job mode
def test_job_get_prints_raw_bodies_in_input_order(api, sandbox, backend):
    expected = [job_trajectory(backend, j) for j in ("G1-J0002", "G1-J0013", "JORPHAN")]
    sandbox.reset_stats()
    result = api("trajectory", "get", "-j", "G1-J0002,G1-J0013", "-j", "JORPHAN")
    assert result.code == 0, result.err
    assert result.out == pretty(expected)
    assert expected[1]["trajectory"] == []  # n % 13 == 0: an empty trajectory is still an element
    queries = sorted(urlsplit(r.path).query for r in sandbox.requests_log)
    assert queries == ["source=trace"] * 3


def test_job_get_unknown_job_is_left_out_and_fails(api):
    result = api("--no-pretty", "trajectory", "get", "-j", "G1-J0001,JMISSING")
    assert result.code == 1
    assert [e["job_id"] for e in json.loads(result.out)] == ["G1-J0001"]
    assert "[error]   - JMISSING: API error 404: " in result.err


@pytest.mark.parametrize("flag", ["--pretty", "--no-pretty"])
def test_job_download_writes_one_file_per_job_with_progress(api, backend, tmp_path, flag):
    out = tmp_path / "out"
    jobs = ["G1-J0001", "G1-J0013", "G2-J0007"]
    result = api(flag, "--concurrency", "1", "trajectory", "download", "-j", ",".join(jobs), "-o", str(out))
    assert result.code == 0, result.err
    assert result.out == ""
    dump = pretty if flag == "--pretty" else compact
    assert all_paths(out) == sorted(f"{j}_trajectory.json" for j in jobs)
    for job in jobs:
        path = out / f"{job}_trajectory.json"
        assert path.read_text(encoding="utf-8") == dump(job_trajectory(backend, job))
        assert path.stat().st_mode & 0o777 == file_mode()
    lines = [line for line in result.err.splitlines() if line.startswith("[progress]")]
    assert lines == [
        "[progress] job trajectory downloads: total=3 jobs",
        "[progress] job trajectory downloads: 1/3 jobs, downloaded G1-J0001",
        "[progress] job trajectory downloads: 2/3 jobs, downloaded G1-J0013",
        "[progress] job trajectory downloads: 3/3 jobs, downloaded G2-J0007",
    ]
    assert f"wrote {out / 'G1-J0001_trajectory.json'}" in result.err.splitlines()


def test_job_download_failed_job_counts_as_failed_and_writes_nothing(api, tmp_path):
    out = tmp_path / "out"
    result = api("--concurrency", "1", "trajectory", "download", "-j", "JMISSING,G1-J0001", "-o", str(out))
    assert result.code == 1
    assert all_paths(out) == ["G1-J0001_trajectory.json"]
    assert "[progress] job trajectory downloads: 1/2 jobs, failed JMISSING" in result.err.splitlines()
    assert "[error]   - JMISSING: API error 404: " in result.err


# -------------------------------------------------------------- group mode
def test_group_get_builds_the_document_from_the_export(api, backend):
    result = api("trajectory", "get", "-g", "G1,G2")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert [e["group_id"] for e in data] == ["G1", "G2"]
    g1 = data[0]
    assert list(g1) == ["group_id", "trajectories"]
    assert [t["job_id"] for t in g1["trajectories"]] == G1_NEWEST_FIRST  # the job-ids order
    assert all(list(t) == ["job_id", "trajectory"] for t in g1["trajectories"])
    by_job = {t["job_id"]: t["trajectory"] for t in g1["trajectories"]}
    # Jobs without export rows get [].
    assert [j for j, rows in by_job.items() if not rows] == ["G1-J0039", "G1-J0026", "G1-J0013"]
    # Rows are verbatim: the export's own keys (job_id or jobId) stay, and stripped of
    # them each job's rows are exactly its trajectory steps.
    assert list(by_job["G1-J0010"][0])[:2] == ["group_id", "jobId"]
    assert list(by_job["G1-J0011"][0])[:2] == ["group_id", "job_id"]
    for job in ("G1-J0001", "G1-J0010", "G1-J0025", "G1-J0040"):
        steps = [{k: v for k, v in row.items() if k not in ("group_id", "job_id", "jobId")}
                 for row in by_job[job]]
        assert steps == job_trajectory(backend, job)["trajectory"]
    assert data == [expected_group_doc(backend, "G1"), expected_group_doc(backend, "G2")]


def test_group_get_empty_group(api):
    result = api("--no-pretty", "trajectory", "get", "-g", "GEMPTY")
    assert result.code == 0, result.err
    assert result.out == '[{"group_id":"GEMPTY","trajectories":[]}]\n'


def test_group_get_unknown_group_fails(api):
    result = api("trajectory", "get", "-g", "GNOPE,G3")
    assert result.code == 1
    assert [e["group_id"] for e in json.loads(result.out)] == ["G3"]
    assert '[error]   - GNOPE: API error 404: {"error": "group not found: GNOPE"}' in result.err


@pytest.mark.parametrize("group", ["G1", "GEMPTY"])
@pytest.mark.parametrize("flag", ["--pretty", "--no-pretty"])
def test_group_download_file_equals_json_dumps(api, backend, tmp_path, group, flag):
    out = tmp_path / "out"
    result = api(flag, "trajectory", "download", "-g", group, "-o", str(out))
    assert result.code == 0, result.err
    assert result.out == ""
    doc = expected_group_doc(backend, group)
    data = (out / group / "trajectory.json").read_bytes()
    expected = pretty(doc) if flag == "--pretty" else compact(doc)
    assert data == expected.encode("utf-8")
    # No temp file, staging dir or spool database is left anywhere in the output root.
    assert all_paths(out) == [group, f"{group}/trajectory.json"]
    assert (out / group / "trajectory.json").stat().st_mode & 0o777 == file_mode()
    progress = [line for line in result.err.splitlines() if line.startswith("[progress]")]
    assert progress == [
        "[progress] group trajectory downloads: total=1 groups",
        f"[progress] group trajectory downloads: 1/1 groups, downloaded {group}",
    ]
    assert f"wrote {out / group / 'trajectory.json'}" in result.err.splitlines()


def test_group_download_keeps_going_after_a_failed_group(api, tmp_path):
    out = tmp_path / "out"
    result = api("trajectory", "download", "-g", "GNOPE,G3", "-o", str(out))
    assert result.code == 1
    assert all_paths(out) == ["G3", "G3/trajectory.json"]
    assert "[error]   - GNOPE: API error 404: " in result.err


def test_group_export_walks_every_state(bl, tmp_path):
    """waiting_for_data -> running (named export) -> poll running -> poll succeeded -> file."""
    out = tmp_path / "out"
    with start_sandbox(groups=1, jobs_per_group=6, api_key=API_KEY) as sb:
        sb.reset_stats()
        result = bl("--host", sb.url, "--api-key", API_KEY, "--retry", "0",
                    "trajectory", "download", "-g", "G1", "-o", str(out))
        log = [(r.method, urlsplit(r.path).path, dict(parse_qsl(urlsplit(r.path).query))) for r in sb.requests_log]
        stats = sb.stats
    assert result.code == 0, result.err
    create = "/openapi/groups/G1/trace-trajectory/download"
    paths = [p for _m, p, _q in log]
    assert paths[:2] == [create, create]  # waiting_for_data, then running
    name = paths[2].removeprefix(create + "/")
    assert re.fullmatch(r"trace-export-G1-\d+", name), paths
    assert paths[2:] == [f"{create}/{name}", f"{create}/{name}",  # running, then succeeded
                         "/_export/G1.jsonl.gz", "/openapi/groups/G1/job-ids"]
    assert "sig" in log[4][2]
    assert {m for m, _p, _q in log} == {"GET"}
    assert (stats["group_trace_export"], stats["group_trace_export_status"], stats["_export"]) == (2, 2, 1)
    assert "trace trajectory not ready for group_id=G1; retrying in 1.0s" in result.err.splitlines()
    doc = json.loads((out / "G1" / "trajectory.json").read_text(encoding="utf-8"))
    assert [t["job_id"] for t in doc["trajectories"]] == [f"G1-J{n:04d}" for n in range(6, 0, -1)]


def test_group_download_timeout_fails_the_group(bl, tmp_path):
    out = tmp_path / "out"
    with start_sandbox(groups=2, jobs_per_group=3, api_key=API_KEY, export_waiting=10**6) as sb:
        result = bl("--host", sb.url, "--api-key", API_KEY, "--retry", "0", "trajectory", "download",
                    "-g", "G1", "--download-timeout", "1", "-o", str(out))
        stats = sb.stats
    assert result.code == 1
    assert result.err.splitlines()[-2:] == [
        "[error] 1 id(s) failed:",
        "[error]   - G1: trace trajectory download total timeout exceeded",
    ]
    assert "[progress] group trajectory downloads: 1/1 groups, failed G1" in result.err.splitlines()
    assert stats["_export"] == 0 and stats["group_job_ids"] == 0
    assert stats["group_trace_export"] >= 2  # asked again after the server-told wait
    assert not out.exists() or [p for p in out.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("value", ["0", "-3", "x"])
def test_download_timeout_must_be_a_positive_int(api, sandbox, value):
    sandbox.reset_stats()
    result = api("trajectory", "download", "-g", "G1", "--download-timeout", value)
    assert result.code == 2
    assert result.out == ""
    assert "--download-timeout" in result.err
    assert sandbox.stats["requests"] == 0


# --------------------------------------------------------------- task mode
def expected_manifest(task_id: str, task: dict, ok: list[str], **soft: list) -> dict:
    """The manifest of a task archive whose jobs ``ok`` all succeeded (key order included)."""
    return {"task_id": task_id, "group_id": task["group_id"], "created_at": task["created_at"],
            "total_jobs": len(ok), "successful_jobs": len(ok), "failed_jobs": 0, "success_job_ids": ok,
            "failures": [], **soft}


def task_body(backend, task: str) -> dict:
    return backend(f"/openapi/trajectory-download-tasks/{task}")


def test_task_t1_archive_entries_and_manifest(api, sandbox, backend, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_stats()
    result = api("trajectory", "download", "--task-id", "T1", "-o", str(out))
    paths = paths_of(sandbox)
    assert result.code == 0, result.err
    assert result.out == ""
    archive = out / "T1_trajectories.zip"
    assert all_paths(out) == ["T1_trajectories.zip"]  # staging dir and temp file are gone
    assert archive.stat().st_mode & 0o777 == file_mode()
    assert zip_entries(archive) == [
        "trajectories/G1-J0001_trajectory.json",
        "trajectories/G1-J0002_trajectory.json",
        "metadata/G1-J0001.json",
        "metadata/G1-J0002.json",
        "manifest.json",
    ]
    with zipfile.ZipFile(archive) as z:
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_DEFLATED}
    for job in ("G1-J0001", "G1-J0002"):
        assert zip_read(archive, f"trajectories/{job}_trajectory.json") == pretty(job_trajectory(backend, job))
        assert zip_read(archive, f"metadata/{job}.json") == pretty(backend(f"/openapi/jobs/{job}/meta"))
    task = task_body(backend, "T1")
    assert task["job_ids"] == ["G1-J0001", "G1-J0002", "G1-J0001"]  # the duplicate is in the payload
    manifest = expected_manifest("T1", task, ["G1-J0001", "G1-J0002"], metadata_failures=[], source_failures=[])
    assert zip_read(archive, "manifest.json") == pretty(manifest)  # values and key order
    assert paths.count("/openapi/trajectory-download-tasks/T1") == 1
    assert paths.count("/openapi/jobs/G1-J0001/trajectory") == 1  # duplicate fetched once
    assert paths.count("/openapi/jobs/G1-J0001/meta") == 1


def test_task_no_pretty_manifest_is_compact(api, tmp_path):
    out = tmp_path / "out"
    result = api("--no-pretty", "trajectory", "download", "--task-id", "T1", "-o", str(out))
    assert result.code == 0, result.err
    manifest = zip_read(out / "T1_trajectories.zip", "manifest.json")
    assert manifest == compact(json.loads(manifest))
    entry = zip_read(out / "T1_trajectories.zip", "trajectories/G1-J0001_trajectory.json")
    assert entry == compact(json.loads(entry))


def test_task_t1_transcript(api, sandbox, tmp_path, text_snapshot):
    out = tmp_path / "out"
    result = api("--concurrency", "1", "trajectory", "download", "--task-id", "T1", "-o", str(out))
    assert result.code == 0, result.err
    text = re.sub(r"elapsed=\d\d:\d\d, eta=\d\d:\d\d", "elapsed=MM:SS, eta=MM:SS", result.err)
    assert normalize(text, out, sandbox) == text_snapshot


def test_task_media_names_and_source_failures(api, sandbox, backend, tmp_path, text_snapshot):
    out = tmp_path / "out"
    result = api("trajectory", "download", "--task-id", "TMEDIA", "-o", str(out))
    assert result.code == 1  # a media failure keeps the archive but fails the run
    archive = out / "TMEDIA_trajectories.zip"
    assert zip_entries(archive) == [
        "trajectories/G1-J0010_trajectory.json",
        "trajectories/G1-J0025_trajectory.json",
        "source/G1-J0010/clip.mp4",
        "source/G1-J0010/shot-2.png",
        "source/G1-J0010/shot.png",
        "source/G1-J0025/shot-2.png",
        "source/G1-J0025/shot.png",
        "metadata/G1-J0010.json",
        "metadata/G1-J0025.json",
        "manifest.json",
    ]
    # Which URI each name holds: first seen keeps the plain name, the second gets -2,
    # the extension-less video gets .mp4 from its MIME type.
    media = {
        "source/G1-J0010/shot.png": ("oss://sandbox-media/G1/G1-J0010/shot.png", "image/png"),
        "source/G1-J0010/shot-2.png": ("oss://sandbox-media/G1/G1-J0010/b/shot.png", "image/png"),
        "source/G1-J0010/clip.mp4": ("oss://sandbox-media/G1/G1-J0010/clip", "video/mp4"),
        "source/G1-J0025/shot.png": ("oss://sandbox-media/G1/G1-J0025/shot.png", "image/png"),
        "source/G1-J0025/shot-2.png": ("oss://sandbox-media/G1/G1-J0025/b/shot.png", "image/png"),
    }
    with zipfile.ZipFile(archive) as z:
        for entry, (uri, mime) in media.items():
            served = backend.response("/openapi/getTrajV2/mediaFile", ossUri=uri, mime=mime).content
            assert z.read(entry) == served, entry
    manifest = json.loads(zip_read(archive, "manifest.json"))
    assert manifest["success_job_ids"] == ["G1-J0010", "G1-J0025"]
    assert manifest["failures"] == [] and manifest["metadata_failures"] == []
    (failure,) = manifest["source_failures"]
    assert failure["job_id"] == "G1-J0025"
    assert failure["error"].startswith("oss://sandbox-media/sso/G1-J0025.png: ")
    assert "login" in failure["error"]
    summary = [line for line in result.err.splitlines() if line.startswith("[error]")]
    assert summary == ["[error] 1 id(s) failed:",
                       f"[error]   - G1-J0025: source: {failure['error']}"]
    assert normalize(zip_read(archive, "manifest.json"), out, sandbox) == text_snapshot


def test_task_t3_partial_failure(api, tmp_path):
    out = tmp_path / "out"
    result = api("trajectory", "download", "--task-id", "T3", "-o", str(out))
    assert result.code == 1
    archive = out / "T3_trajectories.zip"
    assert all_paths(out) == ["T3_trajectories.zip"]
    assert zip_entries(archive) == ["trajectories/G1-J0001_trajectory.json", "metadata/G1-J0001.json",
                                    "manifest.json"]
    manifest = json.loads(zip_read(archive, "manifest.json"))
    assert list(manifest) == ["task_id", "group_id", "created_at", "total_jobs", "successful_jobs",
                              "failed_jobs", "success_job_ids", "failures", "metadata_failures",
                              "source_failures"]
    assert (manifest["total_jobs"], manifest["successful_jobs"], manifest["failed_jobs"]) == (2, 1, 1)
    assert manifest["success_job_ids"] == ["G1-J0001"]
    assert manifest["failures"] == [
        {"job_id": "JMISSING", "error": 'API error 404: {"error": "job not found: JMISSING"}'}]
    assert manifest["metadata_failures"] == [] and manifest["source_failures"] == []
    assert '[error]   - JMISSING: API error 404: {"error": "job not found: JMISSING"}' in result.err


def test_task_empty_fails_without_archive(api, tmp_path):
    out = tmp_path / "out"
    result = api("trajectory", "download", "--task-id", "TEMPTY", "-o", str(out))
    assert result.code == 1
    assert "download task contains no job ids" in result.err
    assert not out.exists() or all_paths(out) == []


def test_task_unknown_fails_without_archive(api, tmp_path):
    out = tmp_path / "out"
    result = api("trajectory", "download", "--task-id", "TNOPE", "-o", str(out))
    assert result.code == 1
    assert '[error]   - TNOPE: API error 404: {"error": "download task not found: TNOPE"}' in result.err
    assert not out.exists() or all_paths(out) == []


def test_task_t2_odd_job_id_is_quoted_and_stays_inside(api, sandbox, backend, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_stats()
    result = api("trajectory", "download", "--task-id", "T2", "-o", str(out))
    paths = paths_of(sandbox)
    assert result.code == 0, result.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert all_paths(out) == ["T2_trajectories.zip"]
    archive = out / "T2_trajectories.zip"
    entries = zip_entries(archive)
    assert entries == [
        "trajectories/G1-J0005_trajectory.json",
        "trajectories/G1-J0006_trajectory.json",
        "trajectories/G1-J0007_trajectory.json",
        "trajectories/JORPHAN_trajectory.json",
        "trajectories/..%2FJODD%20x_trajectory.json",
        "source/G1-J0005/shot-2.png",
        "source/G1-J0005/shot.png",
        "metadata/G1-J0005.json",
        "metadata/G1-J0006.json",
        "metadata/G1-J0007.json",
        "metadata/JORPHAN.json",
        "metadata/..%2FJODD%20x.json",
        "manifest.json",
    ]
    for entry in entries:
        assert not entry.startswith(("/", "../")) and "/../" not in entry and "\\" not in entry
    odd = json.loads(zip_read(archive, "trajectories/..%2FJODD%20x_trajectory.json"))
    assert odd["job_id"] == "../JODD x"
    manifest = json.loads(zip_read(archive, "manifest.json"))
    assert manifest["success_job_ids"] == ["G1-J0005", "G1-J0006", "G1-J0007", "JORPHAN", "../JODD x"]
    # In request paths the id is one percent-encoded segment.
    assert "/openapi/jobs/..%2FJODD%20x/trajectory" in paths
    assert "/openapi/jobs/..%2FJODD%20x/meta" in paths


def test_task_skip_existing_makes_no_request(api, sandbox, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    archive = out / "T1_trajectories.zip"
    archive.write_bytes(b"an earlier archive")
    sandbox.reset_stats()
    result = api("trajectory", "download", "--task-id", "T1", "-o", str(out), "--skip-existing")
    assert result.code == 0, result.err
    assert result.err.splitlines() == [f"skip existing {archive}"]
    assert archive.read_bytes() == b"an earlier archive"
    stats = sandbox.stats
    assert stats["requests"] == 0 and stats["connections"] == 0


def test_task_without_skip_existing_overwrites(api, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "T1_trajectories.zip").write_bytes(b"old")
    result = api("trajectory", "download", "--task-id", "T1", "-o", str(out))
    assert result.code == 0, result.err
    assert zip_entries(out / "T1_trajectories.zip")[-1] == "manifest.json"


@pytest.mark.parametrize(("args", "message"), [
    (["--task-id", "T1", "-g", "G1"], "--task-id, -g/--group and -j/--job are mutually exclusive"),
    (["--task-id", "T1", "-j", "G1-J0001"], "--task-id, -g/--group and -j/--job are mutually exclusive"),
    (["-g", "G1", "-j", "G1-J0001"], "-g/--group and -j/--job are mutually exclusive"),
    (["--task-id", "../x"], "--task-id must not contain path separators"),
    (["--task-id", "a\\b"], "--task-id must not contain path separators"),
    (["--task-id", ".."], "--task-id must not contain path separators"),
    ([], "at least one -g/--group, -j/--job or --task-id is required"),
])
def test_usage_errors(api, sandbox, tmp_path, args, message):
    sandbox.reset_stats()
    result = api("trajectory", "download", *args, "-o", str(tmp_path / "out"))
    assert result.code == 2
    assert result.out == ""
    assert result.err.splitlines() == [
        "Usage: bl trajectory download [OPTIONS]",
        "Try 'bl trajectory download --help' for help.",
        f"Error: {message}",
    ]
    assert sandbox.stats["requests"] == 0
    assert not (tmp_path / "out").exists()


def test_get_has_no_task_id(api, sandbox):
    sandbox.reset_stats()
    result = api("trajectory", "get", "--task-id", "T1")
    assert result.code == 2
    assert sandbox.stats["requests"] == 0


# ------------------------------------------------------- metadata download
def test_metadata_download_archive(api, backend, tmp_path):
    out = tmp_path / "out"
    result = api("metadata", "download", "--task-id", "T1", "-o", str(out))
    assert result.code == 0, result.err
    assert result.out == ""
    archive = out / "T1_metadata.zip"
    assert all_paths(out) == ["T1_metadata.zip"]
    assert zip_entries(archive) == ["metadata/G1-J0001.json", "metadata/G1-J0002.json", "manifest.json"]
    for job in ("G1-J0001", "G1-J0002"):
        assert zip_read(archive, f"metadata/{job}.json") == pretty(backend(f"/openapi/jobs/{job}/meta"))
    task = task_body(backend, "T1")
    assert zip_read(archive, "manifest.json") == pretty(expected_manifest("T1", task, ["G1-J0001", "G1-J0002"]))
    lines = result.err.splitlines()
    assert lines[0] == "[progress] task metadata downloads: total=2 jobs"
    assert lines[-2:] == [f"[progress] creating archive {archive}", f"wrote {archive}"]


def test_metadata_download_partial(api, tmp_path):
    out = tmp_path / "out"
    result = api("metadata", "download", "--task-id", "T3", "-o", str(out))
    assert result.code == 1
    archive = out / "T3_metadata.zip"
    assert zip_entries(archive) == ["metadata/G1-J0001.json", "manifest.json"]
    manifest = json.loads(zip_read(archive, "manifest.json"))
    assert manifest["failures"] == [
        {"job_id": "JMISSING", "error": 'API error 404: {"error": "job not found: JMISSING"}'}]
    assert (manifest["total_jobs"], manifest["successful_jobs"], manifest["failed_jobs"]) == (2, 1, 1)


def test_metadata_download_skip_existing_makes_no_request(api, sandbox, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "T1_metadata.zip").write_bytes(b"kept")
    sandbox.reset_stats()
    result = api("metadata", "download", "--task-id", "T1", "-o", str(out), "--skip-existing")
    assert result.code == 0, result.err
    assert (out / "T1_metadata.zip").read_bytes() == b"kept"
    assert sandbox.stats["requests"] == 0


def test_metadata_download_requires_task_id(api, sandbox):
    sandbox.reset_stats()
    result = api("metadata", "download")
    assert result.code == 2
    assert result.out == ""
    assert result.err.splitlines()[-1] == "Error: Missing option '--task-id'."
    assert sandbox.stats["requests"] == 0


@pytest.mark.parametrize("args", [["-g", "G1"], ["-j", "G1-J0001"]])
def test_metadata_download_has_no_group_or_job(api, args):
    result = api("metadata", "download", "--task-id", "T1", *args)
    assert result.code == 2


def test_task_empty_error_uses_the_uniform_failure_summary(api, tmp_path):
    # Documented difference: task payload errors use the same summary as every other
    # failure ("[error] 1 id(s) failed:" / "  - <task>: <text>"), so scripts parse one format.
    result = api("trajectory", "download", "--task-id", "TEMPTY", "-o", str(tmp_path))
    assert result.code == 1
    errors = [line for line in result.err.splitlines() if line.startswith("[error]")]
    assert errors == ["[error] 1 id(s) failed:", "[error]   - TEMPTY: download task contains no job ids"]


def test_task_401_on_meta_is_recorded_not_fatal(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_state()
    sandbox.inject_fault("job_meta", status=401)
    result = api("--concurrency", "1", "trajectory", "download", "--task-id", "T1", "-o", str(out))
    assert result.code == 1
    archive = out / "T1_trajectories.zip"
    assert zip_entries(archive) == ["trajectories/G1-J0001_trajectory.json",
                                    "trajectories/G1-J0002_trajectory.json",
                                    "metadata/G1-J0002.json", "manifest.json"]
    manifest = json.loads(zip_read(archive, "manifest.json"))
    assert manifest["success_job_ids"] == ["G1-J0001", "G1-J0002"]
    assert manifest["failures"] == []
    assert manifest["metadata_failures"] == [
        {"job_id": "G1-J0001", "error": "authentication failed (HTTP 401)"}]
    assert "[error]   - G1-J0001: meta: authentication failed (HTTP 401)" in result.err.splitlines()


def test_task_401_on_trajectory_exits_3_without_archive(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_state()
    sandbox.inject_fault("job_trajectory", status=401)
    result = api("--concurrency", "1", "trajectory", "download", "--task-id", "T1", "-o", str(out))
    assert result.code == 3
    assert "[error] authentication error: authentication failed (HTTP 401)" in result.err.splitlines()
    assert not out.exists() or all_paths(out) == []


@pytest.mark.parametrize(("args", "existing"), [
    (["-g", "G1"], "G1/trajectory.json"),
    (["-j", "G1-J0001"], "G1-J0001_trajectory.json"),
])
def test_skip_existing_file_is_not_fetched(api, sandbox, tmp_path, args, existing):
    out = tmp_path / "out"
    (out / existing).parent.mkdir(parents=True, exist_ok=True)
    (out / existing).write_text("kept")
    sandbox.reset_stats()
    result = api("trajectory", "download", *args, "--skip-existing", "-o", str(out))
    assert result.code == 0, result.err
    assert (out / existing).read_text() == "kept"
    assert f"skip existing {out / existing}" in result.err.splitlines()
    assert sandbox.stats["requests"] == 0


# ------------------------------------------------ export responses that go wrong
def export_origin(origins, create: dict, export: bytes, poll: dict | None = None):
    """A stand-in backend (``support.Origin``) with one export answer."""
    holder = {}

    def answer(path, query):
        base = "/openapi/groups/G1/trace-trajectory/download"
        if path == base:
            body = dict(create)
            if body.get("download_url") == "SELF":
                body["download_url"] = holder["o"].url + "/export"
            return js(body)
        if path.startswith(base + "/") and poll is not None:
            return js(poll)
        if path == "/export":
            return binary(export)
        if path == "/openapi/groups/G1/job-ids":
            return js({"job_ids": ["J1"]})
        return 404, {"Content-Type": "application/json"}, b'{"error": "not found"}'

    holder["o"] = origins(answer, require_key=True)
    return holder["o"]


OK = {"status": "succeeded", "download_url": "SELF"}


@pytest.mark.parametrize(("create", "export", "poll", "message"), [
    (OK, gzip.compress(b'{"job_id": "J1"}\nnot json\n', mtime=0), None, "invalid trace trajectory JSON at line 2"),
    (OK, b'{"job_id": "J1"}\n\n[1]\n', None, "trace trajectory row at line 3 is not an object"),
    (OK, b'{"step": 1}\n', None, "trace trajectory row is missing job_id"),
    (OK, b'{"job_id": "  "}\n', None, "trace trajectory row is missing job_id"),
    ({"status": "succeeded"}, b"", None, "trace trajectory download response has no download_url"),
    ({"status": "running"}, b"", None, "trace trajectory download response has no download_job_name"),
    ({"status": "failed"}, b"", None, "unknown trace trajectory download status: failed"),
    ({}, b"", None, "unknown trace trajectory download status: <missing>"),
    ({"status": "running", "download_job_name": "e1"}, b"", {"status": "failed"},
     "unknown trace trajectory download status: failed"),
])
def test_bad_export_fails_the_group_and_leaves_no_temp(bl, origins, tmp_path, create, export, poll, message):
    origin = export_origin(origins, create, export, poll)
    out = tmp_path / "out"
    result = bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0",
                "trajectory", "download", "-g", "G1", "-o", str(out))
    assert result.code == 1
    assert result.err.splitlines()[-1] == f"[error]   - G1: {message}"
    assert not out.exists() or [p for p in out.rglob("*") if p.is_file() or p.name.startswith(".")] == []


@pytest.mark.parametrize(("export", "value"), [
    ("\ufeff{\"jobId\": \"J1\", \"n\": \"é\"}\r\n".encode(), "é"),  # plain text with a BOM and CRLF
    (gzip.compress("\ufeff{\"JobId\": \"J1\", \"n\": \"é\"}\n".encode(), mtime=0), "é"),
    (b'{"job_id": "J1", "n": "\\ud800"}\n', "\ud800"),  # a lone surrogate: kept as its escape
])
def test_export_encodings_and_job_id_keys(bl, origins, export, value):
    origin = export_origin(origins, OK, export)
    result = bl("--host", origin.url, "--api-key", API_KEY, "trajectory", "get", "-g", "G1")
    assert result.code == 0, result.err
    (doc,) = json.loads(result.out)
    (entry,) = doc["trajectories"]
    assert entry["job_id"] == "J1"
    assert [row["n"] for row in entry["trajectory"]] == [value]
