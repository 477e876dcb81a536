"""One bad id never takes the others down: an answer nested too deep, an id that is not UTF-8,
a value error, a media name too long for the file system, a file where a directory goes, a
full disk (one clear error, then stop).

Each runs ``bl`` against the scripted server or the sandbox. Found in round two of the
reliability review (docs/reliability.md, "Round two"): each test fails on the code before its
fix. Nothing in httpx is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import errno
import json
import os
import zipfile

from support import API_KEY, final_files, leftovers, media_task_routes, run_inprocess

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

OBJECT = bytes(range(256)) * 800  # 200 kB
REPORT = "/openapi/jobs/{}/report"


def report(job: str, **extra) -> Reply:
    return json_reply({"job_id": job, "summary": "ok", **extra})


def bl(url: str, *args: str, stdin: str = "", retry: str = "0"):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", retry, *args, stdin=stdin)


# ====================================================== one bad id never takes the others down
def nested(depth: int) -> bytes:
    return b'{"job_id": "J2", "x": ' + b"[" * depth + b"]" * depth + b"}"


def test_very_deeply_nested_json_fails_only_its_id():
    routes = {REPORT.format("J1"): report("J1"), REPORT.format("J2"): Reply(200, nested(100_000)),
              REPORT.format("J3"): report("J3")}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1,J2,J3")
    assert result.code == 1, result.err
    assert "unexpected error" not in result.err
    assert result.failed == ["J2"] and "nested too deeply" in result.err
    assert [e["job_id"] for e in json.loads(result.out)] == ["J1", "J3"]


def test_an_id_on_stdin_that_is_not_utf8_fails_only_itself():
    routes = {REPORT.format("J1"): report("J1"), REPORT.format("J3"): report("J3")}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "get", "-j", "-", stdin="J1 J\udcff2 J3")
    assert result.code == 1, result.err
    assert "unexpected error" not in result.err and "not valid UTF-8" in result.err
    assert [e["job_id"] for e in json.loads(result.out)] == ["J1", "J3"]


def test_a_value_error_of_one_job_fails_only_that_job(tmp_path):
    # J1's artifact proxy redirects to a URL whose port is not a number (httpx: an invalid URL).
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {
        "/openapi/jobs/J1/artifacts": json_reply(listing),
        "/openapi/jobs/J2/artifacts": json_reply(listing),
        "/openapi/jobs/J1/artifacts/download": Reply(302, b"", headers={"Location": "http://127.0.0.1:port/x"}),
        "/openapi/jobs/J2/artifacts/download": Reply(200, OBJECT, "application/octet-stream"),
    }
    with start_scripted(routes) as srv:
        result = bl(srv.url, "--concurrency", "1", "artifacts", "download", "-j", "J1,J2", "-o", str(tmp_path))
    assert result.code == 1, result.err
    assert "unexpected error" not in result.err and "Invalid port: 'port'" in result.err
    assert result.failed == ["J1:result.tgz"]
    assert final_files(tmp_path) == {"J2/result.tgz": OBJECT}


def test_a_media_name_too_long_for_the_file_system_fails_only_that_archive_entry(tmp_path):
    with start_scripted(media_task_routes("oss://bucket/" + "m" * 300 + ".png")) as srv:
        result = bl(srv.url, "trajectory", "download", "--task-id", "TX", "-o", str(tmp_path))
    assert "unexpected error" not in result.err, result.err
    assert result.code == 1, result.err
    with zipfile.ZipFile(tmp_path / "TX_trajectories.zip") as archive:
        manifest = json.loads(archive.read("manifest.json"))
        names = archive.namelist()
    assert manifest["success_job_ids"] == ["J1", "J2"]
    assert [f["job_id"] for f in manifest["source_failures"]] == ["J1"]
    assert "file name too long" in manifest["source_failures"][0]["error"]
    assert "trajectories/J1_trajectory.json" in names and "trajectories/J2_trajectory.json" in names
    assert leftovers(tmp_path) == []


def test_an_output_path_that_is_a_file_names_the_path_and_is_not_unexpected(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    routes = {REPORT.format(j): report(j, reports=[{"content": f"# {j}"}]) for j in ("J1", "J2")}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "download", "-j", "J1,J2", "-o", str(blocker / "out"))
    assert result.code == 1, result.err
    assert "unexpected" not in result.err
    assert f"cannot write {blocker / 'out'}" in result.err and "not a directory" in result.err
    assert sorted(result.failed) == ["J1", "J2"]


def test_a_full_disk_stops_the_command_with_one_clear_error(sandbox, tmp_path, monkeypatch):
    # Every rename under the output root fails with ENOSPC, as on a full disk.
    real_replace, calls = os.replace, []

    def full(src, dst, *args, **kwargs):
        if str(dst).startswith(str(tmp_path)):
            calls.append(dst)
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", full)
    result = run_inprocess("--host", sandbox.url, "--api-key", sandbox.api_key, "--concurrency", "2",
                           "report", "download", "-g", "G1", "-o", str(tmp_path))
    assert result.code == 1, result.err
    assert "unexpected" not in result.err
    errors = [line for line in result.err.splitlines() if "no space left on device" in line]
    assert len(errors) == 1 and "stopped" in errors[0] and str(tmp_path) in errors[0], result.err
    assert len(calls) < 10  # failed fast: not 41 writes
    assert leftovers(tmp_path) == []
