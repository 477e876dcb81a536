"""Security: the API key stays with the backend, files stay under the output root.

* The key never reaches another origin: absolute export URLs and presigned
  artifact URLs on a second loopback listener (another port is another
  origin), redirects to another host or from https to http.  Every request
  that listener receives is recorded and checked for ``X-API-Key``.
* The key never appears on stdout or stderr, ``-v`` and tracebacks included.
* The config file is written 0600 in a 0700 directory; a group- or
  world-readable one gives a ``[warn]``.
* Hostile ids, task ids, artifact names and zip entries (``../``, absolute
  paths, NUL, backslashes, control characters, 1,000 characters) are encoded
  or rejected and never write outside the output root.
* TLS verification is on; ``--ca-bundle`` and ``SSL_CERT_FILE`` are
  honoured; ``http://`` to a non-loopback host warns - checked with commands
  that send no packet at all (a guard makes any non-loopback connection or
  DNS lookup fail the test).
"""

from __future__ import annotations

import os
import socket
import stat
import unicodedata
import zipfile
from pathlib import Path

import httpx
import pytest
from support import all_paths, final_files, leftovers, run_inprocess

from benchloop.sandbox.dataset import (
    HOSTILE_GROUP,
    HOSTILE_JOBS,
    HOSTILE_TASK,
    HOSTILE_TASK_IDS,
    HOSTILE_TASK_SHORT,
)
from benchloop.sandbox.payloads import HOSTILE_ARTIFACT_NAMES
from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

KEY = "sk-SECRET-4f9c2e7d1b0a-KEY"
SHORT_JOBS = [job for job, _ in HOSTILE_JOBS if len(job) < 200]


def key_leaks(text: str) -> bool:
    return KEY in text or KEY[3:-4] in text


# ------------------------------------------------------------ foreign origins
@pytest.fixture(scope="module")
def oss(make_sandbox):
    """The 'object store': same dataset and signing secret, another port (another origin)."""
    return make_sandbox(seed=9, groups=1, jobs_per_group=12, tasks_per_group=3, api_key=KEY,
                        export_waiting=0, export_running=0)


@pytest.fixture(scope="module")
def sandbox(make_sandbox, oss):
    """The backend: presigned URLs on ``oss``, artifact downloads redirected there."""
    return make_sandbox(seed=9, groups=1, jobs_per_group=12, tasks_per_group=3, api_key=KEY,
                        export_waiting=0, export_running=0, object_store_url=oss.url,
                        redirect_artifacts=True)


def test_export_download_url_on_another_origin_gets_no_key(sandbox, oss, tmp_path):
    oss.reset_stats()
    sandbox.reset_state()
    result = run_inprocess("--host", sandbox.url, "--api-key", KEY, "-v", "trajectory", "download",
                           "-g", "G1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    seen = oss.requests_log
    assert [r.path.split("?")[0] for r in seen] == ["/_export/G1.jsonl.gz"]
    assert all("x-api-key" not in r.headers for r in seen)
    assert all(r.headers.get("x-api-key") == KEY for r in sandbox.requests_log)
    assert (tmp_path / "G1" / "trajectory.json").stat().st_size > 100


def test_artifact_redirect_to_another_origin_gets_no_key(sandbox, oss, tmp_path):
    oss.reset_stats()
    sandbox.reset_stats()
    result = run_inprocess("--host", sandbox.url, "--api-key", KEY, "artifacts", "download",
                           "-g", "G1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    oss_seen = [r for r in oss.requests_log if r.path.startswith("/_oss/")]
    assert oss_seen and all("x-api-key" not in r.headers for r in oss_seen)
    proxied = [r for r in sandbox.requests_log if "/artifacts/download" in r.path]
    assert proxied and all(r.headers.get("x-api-key") == KEY for r in proxied)
    with httpx.Client() as plain:
        url = plain.get(f"{sandbox.url}/openapi/jobs/G1-J0001/artifacts",
                        headers={"X-API-Key": KEY}).json()["artifacts"][0]["url"]
        assert url.startswith(oss.url)
        assert (tmp_path / "G1" / "G1-J0001" / "result.tgz").read_bytes() == plain.get(url).content


def test_json_requests_do_not_follow_redirects_to_another_host(tmp_path):
    with start_scripted({"*": json_reply({"ok": True})}) as other:
        redirect = Reply(302, b"", "text/plain", {"Location": f"{other.url}/openapi/jobs/J1/report"})
        with start_scripted({"/openapi/jobs/J1/report": redirect}) as api:
            result = run_inprocess("--host", api.url, "--api-key", KEY, "--retry", "0", "report",
                                   "get", "-j", "J1")
        assert other.seen == []
    assert result.code == 1 and "API error 302" in result.err
    assert not key_leaks(result.out + result.err)


def test_download_redirect_back_to_the_backend_carries_the_key_only_there(tmp_path):
    body = b"\x1f\x8b" + b"x" * 5000
    with start_scripted() as api:
        with start_scripted({"*": Reply(302, b"", "text/plain", {
                "Location": f"{api.url}/final/blob.tgz"})}) as other:
            api.routes.update({
                "/openapi/jobs/J1/artifacts": json_reply({"artifacts": [
                    {"name": "blob.tgz", "url": "https://x.invalid/"}]}),
                "/openapi/jobs/J1/artifacts/download": Reply(302, b"", "text/plain", {
                    "Location": f"{other.url}/hop"}),
                "/final/blob.tgz": Reply(200, body, "application/octet-stream"),
            })
            result = run_inprocess("--host", api.url, "--api-key", KEY, "--retry", "0", "artifacts",
                                   "download", "-j", "J1", "-o", str(tmp_path))
            assert [s.path for s in other.seen] == ["/hop"]
            assert "x-api-key" not in other.seen[0].headers
        assert all(s.headers.get("x-api-key") == KEY for s in api.seen)
    assert result.code == 0, result.err
    assert (tmp_path / "J1" / "blob.tgz").read_bytes() == body


# ------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def tls_sb(make_sandbox, cert, oss):
    return make_sandbox(seed=9, groups=1, jobs_per_group=12, tasks_per_group=3, api_key=KEY,
                        export_waiting=0, export_running=0, tls=cert, object_store_url=oss.url,
                        redirect_artifacts=True)


def test_tls_is_verified_by_default(tls_sb, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    tls_sb.reset_stats()
    result = run_inprocess("--host", tls_sb.url, "--api-key", KEY, "--retry", "0", "jobs", "get",
                           "-g", "G1")
    assert result.code == 4, result.err
    assert "network:" in result.err and "CERTIFICATE" in result.err.upper()
    assert "Traceback" not in result.err and not key_leaks(result.err)
    assert tls_sb.stats["requests"] == 0  # nothing, not even the key, was sent


def test_ca_bundle_and_ssl_cert_file_are_honoured(tls_sb, cert, monkeypatch):
    result = run_inprocess("--host", tls_sb.url, "--api-key", KEY, "--ca-bundle", cert[0], "jobs",
                           "get", "-g", "G1", "--all")
    assert result.code == 0, result.err
    assert len(result.out) > 100
    monkeypatch.setenv("SSL_CERT_FILE", cert[0])
    result = run_inprocess("--host", tls_sb.url, "--api-key", KEY, "jobs", "get", "-g", "G1")
    assert result.code == 0, result.err


def test_missing_ca_bundle_is_a_usage_error(tls_sb, tmp_path):
    result = run_inprocess("--host", tls_sb.url, "--api-key", KEY, "--ca-bundle",
                           str(tmp_path / "nope.pem"), "jobs", "get", "-g", "G1")
    assert result.code == 2 and "CA bundle not found" in result.err


@pytest.mark.parametrize("key", ["abc\ndef", "kléé-0123", " padded-key ", "tab\tkey"])
def test_an_api_key_no_header_can_carry_is_a_usage_error_and_is_not_echoed(plain_sb, key):
    result = run_inprocess("--host", plain_sb.url, "--api-key", key, "report", "get", "-j", "G1-J0001")
    assert result.code == 2 and "API key has characters an HTTP header cannot carry" in result.err
    assert key.strip() not in result.err and result.out == ""


def test_https_to_http_redirect_is_refused_and_gets_no_key(tls_sb, oss, cert, tmp_path):
    oss.reset_stats()
    result = run_inprocess("--host", tls_sb.url, "--api-key", KEY, "--ca-bundle", cert[0],
                           "--retry", "0", "artifacts", "download", "-j", "G1-J0001", "-o",
                           str(tmp_path))
    assert result.code == 1, result.err
    assert "G1-J0001:result.tgz" in result.failed and "https to http" in result.err
    assert oss.stats["requests"] == 0
    assert final_files(tmp_path) == {} and leftovers(tmp_path) == []


# ------------------------------------------------------ http:// warning
@pytest.fixture
def loopback_only(monkeypatch):
    """Fail the test if anything tries to reach a non-loopback address or resolve a name."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def loopback(host) -> bool:
        return str(host) in ("localhost", "::1") or str(host).startswith("127.")

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not loopback(address[0]):
            raise AssertionError(f"tried to connect to {address}")
        return real_connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not loopback(host):
            raise AssertionError(f"tried to resolve {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.mark.parametrize(("host", "key", "warned"), [
    ("http://10.255.255.1:9", KEY, True),
    ("http://192.0.2.10", KEY, True),
    ("http://10.255.255.1:9", None, False),  # no key, nothing to leak
    ("https://10.255.255.1:9", KEY, False),
    ("http://127.0.0.1:9", KEY, False),
    ("http://localhost:9", KEY, False),
])
def test_plain_http_to_a_non_loopback_host_warns_without_sending_anything(
        loopback_only, tmp_path, host, key, warned):
    # The archive exists: with --skip-existing the command ends before any request.
    (tmp_path / "T1_trajectories.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    args = ["--host", host, *(["--api-key", key] if key else []), "--retry", "0", "--timeout", "0.5",
            "trajectory", "download", "--task-id", "T1", "--skip-existing", "-o", str(tmp_path)]
    result = run_inprocess(*args)
    assert result.code == 0, result.err
    assert "skip existing" in result.err
    warning = [line for line in result.err.splitlines() if line.startswith("[warn]")]
    if warned:
        assert len(warning) == 1 and host in warning[0] and "unencrypted" in warning[0]
        assert not key_leaks(result.err)
    else:
        assert warning == []


# ----------------------------------------------------- key never printed
@pytest.fixture(scope="module")
def plain_sb(make_sandbox):
    return make_sandbox(seed=2, groups=1, jobs_per_group=8, tasks_per_group=3, api_key=KEY,
                        export_waiting=0, export_running=0)


@pytest.mark.parametrize("args", [
    ["metrics", "get", "-j", "G1-J0001"],
    ["report", "get", "-j", "G1-J0001,NOPE"],
    ["jobs", "download", "-g", "G1"],
    ["artifacts", "download", "-g", "G1"],
    ["trajectory", "download", "--task-id", "T1"],
    ["report", "trigger", "-g", "G1"],
], ids=lambda a: " ".join(a[:2]))
def test_the_key_is_never_printed_with_verbose_output_and_retries(plain_sb, tmp_path, args):
    plain_sb.inject_fault(None, status=503, retry_after=0)
    plain_sb.inject_fault(None, kind="reset")
    result = run_inprocess("--host", plain_sb.url, "--api-key", KEY, "-v", "--retry", "2", *args,
                           "-o" if "download" in args else "--pretty", *(
                               [str(tmp_path)] if "download" in args else []))
    assert result.code in (0, 1), result.err
    assert not key_leaks(result.out) and not key_leaks(result.err)


def test_the_key_is_not_printed_for_a_wrong_key_or_a_dead_host(plain_sb, monkeypatch):
    result = run_inprocess("--host", plain_sb.url, "--api-key", KEY + "-wrong", "-v", "jobs", "get",
                           "-g", "G1")
    assert result.code == 3 and not key_leaks(result.err)
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    port = dead.getsockname()[1]
    dead.close()
    monkeypatch.setenv("BENCHLOOP_API_KEY", KEY)
    result = run_inprocess("--host", f"http://127.0.0.1:{port}", "-v", "--retry", "1", "jobs", "get",
                           "-g", "G1")
    assert result.code == 4 and not key_leaks(result.out + result.err)


def test_the_key_is_not_printed_in_an_unexpected_error_traceback(plain_sb, tmp_path):
    # An id that is not valid UTF-8 fails on its own (UnicodeEncodeError); -v shows the traceback.
    result = run_inprocess("--host", plain_sb.url, "--api-key", KEY, "-v", "report", "get", "-j", "-",
                           stdin="G1-J0001 bad\udcff-id")
    assert result.code == 1, result.err
    assert "UnicodeEncodeError" in result.err and "Traceback" in result.err  # -v shows it
    assert '"job_id": "G1-J0001"' in result.out
    assert not key_leaks(result.out + result.err)


def test_config_show_masks_the_key(tmp_path):
    config = tmp_path / "c.toml"
    assert run_inprocess("config", "set", "--config", str(config), "--api-key", KEY).code == 0
    shown = run_inprocess("--config", str(config), "-v", "config", "show")
    assert shown.code == 0 and not key_leaks(shown.out + shown.err)


def test_a_backend_echoing_the_key_in_an_error_does_not_put_it_on_stderr():
    echo = Reply(400, {"error": f"bad request; headers were X-API-Key: {KEY}"})
    with start_scripted({"/openapi/jobs/J1/report": echo}) as api:
        result = run_inprocess("--host", api.url, "--api-key", KEY, "--retry", "0", "report", "get",
                               "-j", "J1")
    assert result.code == 1
    assert not key_leaks(result.err)


# ------------------------------------------------------------ config file
def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_config_file_is_0600_in_a_0700_directory(tmp_path, umask):
    config = tmp_path / "fresh" / "deeper" / "config.toml"
    old = os.umask(umask)
    try:
        result = run_inprocess("config", "set", "--config", str(config), "--api-key", KEY,
                               "--host", "https://example.invalid")
    finally:
        os.umask(old)
    assert result.code == 0, result.err
    assert _mode(config) == 0o600
    assert _mode(config.parent) == 0o700
    assert KEY in config.read_text()
    assert leftovers(config.parent) == []


def test_global_config_option_is_where_config_set_writes(tmp_path):
    config = tmp_path / "chosen.toml"
    result = run_inprocess("--config", str(config), "config", "set", "--api-key", KEY)
    assert result.code == 0, result.err
    assert config.is_file()
    assert not (Path(os.environ["HOME"]) / ".benchloop" / "config.toml").exists()


def test_default_config_location_is_private(tmp_path):
    result = run_inprocess("config", "set", "--api-key", KEY)
    assert result.code == 0, result.err
    config = Path(os.environ["HOME"]) / ".benchloop" / "config.toml"
    assert _mode(config) == 0o600 and _mode(config.parent) == 0o700


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_readable_existing_config_warns(plain_sb, tmp_path, mode):
    config = tmp_path / "config.toml"
    config.write_text(f'[profile]\napi_key = "{KEY}"\nhost = "{plain_sb.url}"\n')
    config.chmod(mode)
    for args in (["config", "show"], ["jobs", "get", "-g", "G1"]):
        result = run_inprocess("--config", str(config), *args)
        assert result.code == 0, result.err
        warnings = [line for line in result.err.splitlines() if line.startswith("[warn]")]
        assert len(warnings) == 1 and "readable by other users" in warnings[0], result.err
        assert f"chmod 600 {config}" in warnings[0]
        assert not key_leaks(result.err)
    config.chmod(0o600)
    assert "[warn]" not in run_inprocess("--config", str(config), "config", "show").err


# ----------------------------------------------------- hostile names
@pytest.fixture(scope="module")
def hostile(make_sandbox):
    return make_sandbox(seed=1, groups=1, jobs_per_group=5, tasks_per_group=2, api_key=KEY,
                        hostile=True, export_waiting=0, export_running=0)


def _safe_component(name: str) -> bool:
    return (name not in (".", "..") and "/" not in name and "\\" not in name
            and len(name.encode("utf-8")) <= 255
            and not any(unicodedata.category(ch) == "Cc" for ch in name))


def assert_contained(outside: Path, root: Path) -> None:
    """Everything written is under ``root``, with safe path components; nothing else appeared."""
    assert [p.name for p in outside.iterdir()] in ([root.name], [])
    for rel in all_paths(root):
        parts = Path(rel).parts
        assert all(_safe_component(part) for part in parts), repr(rel)
        full = (root / rel).resolve()
        assert full.is_relative_to(root.resolve()), rel


@pytest.mark.parametrize("args", [
    ["report", "download", "-g", HOSTILE_GROUP],
    ["artifacts", "download", "-g", HOSTILE_GROUP],
    ["metrics", "download", "-g", HOSTILE_GROUP],
    ["trajectory", "download", "-g", HOSTILE_GROUP],
    ["pull", "-g", HOSTILE_GROUP, "--with", "metrics,trajectory,report,artifacts,tasks,jobs"],
    ["artifacts", "download", "--task-id", HOSTILE_TASK_SHORT],
    ["trajectory", "download", "--task-id", HOSTILE_TASK_SHORT],
    ["metadata", "download", "--task-id", HOSTILE_TASK_SHORT],
], ids=lambda a: " ".join(a[:2]) + (" task" if "--task-id" in a else ""))
def test_hostile_group_and_task_contents_stay_under_the_root(hostile, tmp_path, args):
    root = tmp_path / "root"
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, *args, "-o", str(root))
    assert result.code == 0, result.err[-2000:]
    assert "Traceback" not in result.err
    assert_contained(tmp_path, root)
    assert leftovers(root) == []
    assert final_files(root)


def test_every_hostile_artifact_name_gets_its_own_file(hostile, tmp_path):
    root = tmp_path / "root"
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, "artifacts", "download", "-g",
                           HOSTILE_GROUP, "-o", str(root))
    assert result.code == 0, result.err[-2000:]
    job_dirs = [p for p in (root / HOSTILE_GROUP).iterdir() if p.is_dir()]
    assert len(job_dirs) == len(HOSTILE_JOBS)  # one per job, none merged
    for job_dir in job_dirs:
        # One file per listed name: "" falls back to "artifact", nothing collided or escaped.
        assert len(list(job_dir.iterdir())) == len(set(HOSTILE_ARTIFACT_NAMES))


@pytest.mark.parametrize("job", [job for job, _ in HOSTILE_JOBS], ids=range(len(HOSTILE_JOBS)))
@pytest.mark.parametrize("resource", ["report", "metrics", "trajectory", "artifacts"])
def test_hostile_job_ids_stay_under_the_root(hostile, tmp_path, job, resource):
    root = tmp_path / "root"
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, resource, "download", "-j", job,
                           "-o", str(root))
    assert result.code == 0, result.err[-1000:]
    assert_contained(tmp_path, root)
    if resource != "report":  # some reports are empty and write nothing
        assert final_files(root)


@pytest.mark.parametrize("task", ["../x", "/abs/t", "a\\b", "a\x00b", ".", "..", "a/../b"])
def test_task_ids_with_separators_are_usage_errors_before_any_request(hostile, tmp_path, task):
    hostile.reset_stats()
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, "trajectory", "download",
                           "--task-id", task, "-o", str(tmp_path / "root"))
    assert result.code == 2, result.err
    assert "--task-id" in result.err and "Traceback" not in result.err
    assert hostile.stats["requests"] == 0


@pytest.mark.parametrize("task", HOSTILE_TASK_IDS, ids=["control", "long"])
def test_hostile_task_ids_are_encoded_in_archive_names(hostile, tmp_path, task):
    root = tmp_path / "root"
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, "trajectory", "download",
                           "--task-id", task, "-o", str(root))
    # The id is trimmed (docs/contract.md 7), so the control-character task may not exist (exit 1):
    # what matters is that nothing escapes, nothing crashes, and no name carries raw controls.
    assert result.code in (0, 1, 2), result.err[-1000:]
    assert "unexpected error" not in result.err
    assert_contained(tmp_path, root)
    assert not any(ch in str(p) for p in root.rglob("*") for ch in "\x1b\x07\r\n") if root.exists() else True


def test_a_task_with_a_1000_character_job_id_still_builds_its_archive(hostile, tmp_path):
    root = tmp_path / "root"
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, "trajectory", "download",
                           "--task-id", HOSTILE_TASK, "-o", str(root))
    assert result.code == 0, result.err[-1000:]
    assert_contained(tmp_path, root)


def test_task_artifacts_with_a_1000_character_job_id(hostile, tmp_path):
    root = tmp_path / "root"
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, "artifacts", "download",
                           "--task-id", HOSTILE_TASK, "-o", str(root))
    assert result.code == 0, result.err[-1000:]
    assert len(final_files(root)) == len(HOSTILE_JOBS)
    assert_contained(tmp_path, root)


def test_zip_entries_are_relative_and_encoded(hostile, tmp_path):
    root = tmp_path / "root"
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, "trajectory", "download",
                           "--task-id", HOSTILE_TASK_SHORT, "-o", str(root))
    assert result.code == 0, result.err[-1000:]
    with zipfile.ZipFile(root / f"{HOSTILE_TASK_SHORT}_trajectories.zip") as archive:
        names = archive.namelist()
        assert len([n for n in names if n.startswith("trajectories/")]) == len(SHORT_JOBS)
        for name in names:
            assert not name.startswith("/") and "\\" not in name and "\x00" not in name
            assert all(_safe_component(part) for part in name.split("/")), repr(name)
        extract = tmp_path / "extract"
        archive.extractall(extract)
    assert all((extract / rel).resolve().is_relative_to(extract.resolve()) for rel in all_paths(extract))


@pytest.mark.parametrize("ident", ["..", "."])
def test_dot_ids_stay_inside_their_url_segment(hostile, ident):
    hostile.reset_stats()
    run_inprocess("--host", hostile.url, "--api-key", KEY, "--retry", "0", "report", "get", "-j", ident)
    paths = [r.path for r in hostile.requests_log]
    assert paths and all(p.startswith("/openapi/jobs/") and p.endswith("/report") for p in paths), paths


def test_control_characters_of_server_ids_never_reach_stderr_raw(hostile, tmp_path):
    result = run_inprocess("--host", hostile.url, "--api-key", KEY, "report", "download", "-g",
                           HOSTILE_GROUP, "-o", str(tmp_path))
    assert result.code == 0
    raw = [ch for ch in result.err if unicodedata.category(ch) == "Cc" and ch != "\n"]
    assert raw == []
