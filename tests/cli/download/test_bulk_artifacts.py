"""`artifacts download` (docs/contract.md 1.5, 2.3, 3.3, 3.5, 3.6, 6; README "Differences").

Listings and bytes are compared with what the sandbox serves when asked
directly over HTTP.  Sandbox artifact rules (by job number n): n % 6 == 0 a
``no_artifact`` listing entry and a 404 from the proxy; n % 17 == 0 an
``artifact_sign_failed`` entry without url; job 5 of a group: the proxy
answers 200 text/html; every other job one ``result.tgz``.

Faults (503, truncated bodies, 401) are injected on a sandbox owned by this
module; a login redirect comes from a tiny stdlib HTTP server standing in for
the backend (``support.Origin``).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path
from urllib.parse import quote, urlsplit

import httpx
import pytest
from support import API_KEY, binary, js

G1 = [f"G1-J{n:04d}" for n in range(40, 0, -1)]  # job-list order, newest first


def kind(n: int) -> str:
    if n % 6 == 0:
        return "none"
    if n % 17 == 0:
        return "sign_failed"
    if n == 5:
        return "html"
    return "ok"


# ----------------------------------------------------------------- helpers
@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25,
                        export_waiting=0, export_running=0)


@pytest.fixture
def api(api, sandbox):
    sandbox.reset_state()  # no fault left over from another test
    return api


@pytest.fixture
def served(backend):
    """What the sandbox serves, asked directly: listing(job) and proxy_bytes(job)."""

    class Served:
        @staticmethod
        def listing(job: str) -> list[dict]:
            return backend(f"/openapi/jobs/{quote(job, safe='')}/artifacts")["artifacts"]

        @staticmethod
        def proxy_bytes(job: str) -> bytes:
            response = backend.response(f"/openapi/jobs/{quote(job, safe='')}/artifacts/download")
            assert response.headers["content-type"] == "application/octet-stream"
            return response.content

    return Served


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def hidden(root: Path) -> list[str]:
    """Temp or staging leftovers: dot-named files or directories (a quoted '../x' id is not one)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob(".*") if not p.name.startswith(".."))


def is_empty_tgz(data: bytes) -> bool:
    assert data[:2] == b"\x1f\x8b", data[:10]
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        return archive.getmembers() == []


def proxy_paths(sandbox) -> list[str]:
    return [urlsplit(r.path).path for r in sandbox.requests_log if urlsplit(r.path).path.endswith("/artifacts/download")]


def listing_paths(sandbox) -> list[str]:
    return [urlsplit(r.path).path for r in sandbox.requests_log if urlsplit(r.path).path.endswith("/artifacts")]


def with_ids(entries: list[dict], **ids: str) -> list[dict]:
    return [{**entry, **ids} for entry in entries]


# --------------------------------------------------------------- list-only
def test_list_only_jobs_is_one_flat_array(api, served, tmp_path):
    jobs = ["G1-J0001", "G1-J0006", "G1-J0017", "JORPHAN"]
    result = api("artifacts", "download", "-j", ",".join(jobs), "--list-only", "-o", str(tmp_path / "out"))
    assert result.code == 0, result.err
    data = json.loads(result.out)
    expected = [e for job in jobs for e in with_ids(served.listing(job), job_id=job)]
    assert data == expected
    assert result.out == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"  # key order too
    # Entries without url (no_artifact, artifact_sign_failed) are listed too.
    assert [e.get("error_code") for e in data] == [None, "no_artifact", "artifact_sign_failed", None]
    assert not (tmp_path / "out").exists()  # nothing downloaded


def test_list_only_groups_carry_job_and_group_ids(api, served):
    result = api("--no-pretty", "artifacts", "download", "-g", "G1,G2", "--list-only")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    g2 = [f"G2-J{n:04d}" for n in range(40, 0, -1)]
    expected = ([e for j in G1 for e in with_ids(served.listing(j), job_id=j, group_id="G1")]
                + [e for j in g2 for e in with_ids(served.listing(j), job_id=j, group_id="G2")])
    assert result.out == json.dumps(expected, ensure_ascii=False, separators=(",", ":")) + "\n"
    assert all(list(e)[-2:] == ["job_id", "group_id"] for e in data)
    assert len(data) == 80  # one entry per job here


def test_list_only_task_lists_task_jobs_in_order(api, sandbox, served):
    sandbox.reset_stats()
    result = api("artifacts", "download", "--task-id", "T2", "--list-only")
    listed = listing_paths(sandbox)
    assert result.code == 0, result.err
    jobs = ["G1-J0005", "G1-J0006", "G1-J0007", "JORPHAN", "../JODD x"]
    assert json.loads(result.out) == [e for j in jobs for e in with_ids(served.listing(j), job_id=j)]
    assert sorted(listed) == sorted(f"/openapi/jobs/{quote(j, safe='')}/artifacts" for j in jobs)
    assert proxy_paths(sandbox) == []


def test_list_only_unknown_job_fails(api, served):
    result = api("artifacts", "download", "-j", "G1-J0001,JMISSING", "--list-only")
    assert result.code == 1
    assert json.loads(result.out) == with_ids(served.listing("G1-J0001"), job_id="G1-J0001")
    assert '[error]   - JMISSING: API error 404: {"error": "job not found: JMISSING"}' in result.err


@pytest.mark.parametrize(("flags", "expected_jobs"), [
    (["--include", "*.tgz"], ["G1-J0001", "G1-J0017"]),
    (["--include", "*.TGZ"], []),  # case-sensitive
    (["--exclude", "result.*"], ["G1-J0006"]),  # the nameless entry matches as ""
    (["--include", "*", "--exclude", "*.tgz"], ["G1-J0006"]),
])
def test_list_only_include_exclude(api, flags, expected_jobs):
    result = api("artifacts", "download", "-j", "G1-J0001,G1-J0006,G1-J0017", "--list-only", *flags)
    assert result.code == 0, result.err
    assert [e["job_id"] for e in json.loads(result.out)] == expected_jobs


# ---------------------------------------------------------------- download
def test_job_download_layout_and_bytes(api, sandbox, served, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_stats()
    result = api("artifacts", "download", "-j", "G1-J0001,G2-J0002,JORPHAN", "-o", str(out))
    assert result.code == 0, result.err
    assert result.out == ""
    assert files(out) == ["G1-J0001/result.tgz", "G2-J0002/result.tgz", "JORPHAN/result.tgz"]
    assert hidden(out) == []
    for job in ("G1-J0001", "G2-J0002", "JORPHAN"):
        data = (out / job / "result.tgz").read_bytes()
        assert data == served.proxy_bytes(job)
        assert len(data) == 4096
        # The listing's own url serves the same object.
        assert data == httpx.get(served.listing(job)[0]["url"]).content
        assert f"downloaded {out / job / 'result.tgz'}" in result.err.splitlines()


def test_job_download_asks_the_proxy_once_with_the_key(api, sandbox, tmp_path):
    sandbox.reset_stats()
    result = api("artifacts", "download", "-j", "G1-J0001", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert proxy_paths(sandbox) == ["/openapi/jobs/G1-J0001/artifacts/download"]
    for request in sandbox.requests_log:
        assert request.headers.get("x-api-key") == API_KEY, request.path


def test_group_download_layout(api, sandbox, served, tmp_path):
    out = tmp_path / "out"
    result = api("artifacts", "download", "-g", "G1", "-o", str(out))
    assert result.code == 1  # the two artifact_sign_failed entries
    expected = sorted(f"G1/G1-J{n:04d}/result.tgz" for n in range(1, 41) if kind(n) in ("ok", "html"))
    assert files(out) == expected
    assert hidden(out) == []
    for n in (1, 2, 40):
        job = f"G1-J{n:04d}"
        assert (out / "G1" / job / "result.tgz").read_bytes() == served.proxy_bytes(job)
    assert is_empty_tgz((out / "G1" / "G1-J0005" / "result.tgz").read_bytes())
    errors = [line for line in result.err.splitlines() if line.startswith("[error]")]
    assert errors[0] == "[error] 2 id(s) failed:"
    assert sorted(errors[1:]) == ["[error]   - G1-J0017:result.tgz: artifact_sign_failed",
                                  "[error]   - G1-J0034:result.tgz: artifact_sign_failed"]
    lines = result.err.splitlines()
    assert lines[0] == "[progress] group artifact jobs G1: total=40 jobs"
    steps = [line for line in lines if line.startswith("[progress] group artifact jobs G1: ") and "/40" in line]
    assert len(steps) == 40
    for n in range(1, 41):
        if kind(n) == "none":
            assert f"no artifact for job=G1-J{n:04d} (no_artifact)" in lines


def test_group_where_every_listing_fails(api, sandbox, tmp_path):
    sandbox.inject_fault("job_artifacts", status=503, count=40)
    result = api("artifacts", "download", "-g", "G1", "-o", str(tmp_path / "out"))
    assert result.code == 1
    assert result.err.splitlines()[-2] == "[error] 1 id(s) failed:"
    assert result.err.splitlines()[-1].startswith("[error]   - G1: failed to fetch 40 artifact listings: ")
    assert not (tmp_path / "out").exists() or files(tmp_path / "out") == []


def test_group_where_every_listing_hits_the_network_exits_4(api, sandbox, tmp_path):
    sandbox.inject_fault("job_artifacts", kind="reset", count=40)
    result = api("artifacts", "download", "-g", "G1", "-o", str(tmp_path / "out"))
    assert result.code == 4
    # The summary line; since the newcomer issue (item 4) a hint naming the host follows it.
    assert result.err.splitlines()[-2].startswith("[error]   - G1: network: failed to fetch 40 artifact listings: ")


def test_empty_and_unknown_groups(api, sandbox, tmp_path):
    sandbox.reset_stats()
    empty = api("artifacts", "download", "-g", "GEMPTY", "-o", str(tmp_path / "out"))
    assert empty.code == 0, empty.err
    assert "/openapi/groups/GEMPTY" in [urlsplit(r.path).path for r in sandbox.requests_log]  # existence probe
    unknown = api("artifacts", "download", "-g", "GNOPE", "--list-only")
    assert unknown.code == 1
    assert unknown.out == "[]\n"
    assert '[error]   - GNOPE: API error 404: {"error": "group not found: GNOPE"}' in unknown.err
    assert not (tmp_path / "out").exists() or files(tmp_path / "out") == []


def test_html_page_writes_placeholder_exit_0(api, sandbox, tmp_path):
    out = tmp_path / "out"
    result = api("artifacts", "download", "-j", "G1-J0005", "-o", str(out))
    assert result.code == 0, result.err
    dest = out / "G1-J0005" / "result.tgz"
    assert files(out) == ["G1-J0005/result.tgz"]
    assert is_empty_tgz(dest.read_bytes())
    assert any(line.startswith(f"[warn] no artifact for job=G1-J0005, wrote empty {dest} (")
               for line in result.err.splitlines()), result.err
    assert "[error]" not in result.err


def test_proxy_404_writes_placeholder_exit_0(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.inject_fault("job_artifact_download", status=404)
    result = api("artifacts", "download", "-j", "G1-J0001", "-o", str(out))
    assert result.code == 0, result.err
    dest = out / "G1-J0001" / "result.tgz"
    assert is_empty_tgz(dest.read_bytes())
    assert any(line.startswith(f"[warn] no artifact for job=G1-J0001, wrote empty {dest} (artifact not found (HTTP 404)")
               for line in result.err.splitlines()), result.err


def test_sign_failed_is_a_failure_without_request(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_stats()
    result = api("artifacts", "download", "-j", "G1-J0017", "-o", str(out))
    assert result.code == 1
    assert result.err.splitlines()[-2:] == ["[error] 1 id(s) failed:",
                                            "[error]   - G1-J0017:result.tgz: artifact_sign_failed"]
    assert not out.exists() or files(out) == []
    assert proxy_paths(sandbox) == []


def test_no_artifact_is_skipped_exit_0(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_stats()
    result = api("artifacts", "download", "-j", "G1-J0006", "-o", str(out))
    assert result.code == 0, result.err
    assert "no artifact for job=G1-J0006 (no_artifact)" in result.err.splitlines()
    assert not out.exists() or files(out) == []
    assert proxy_paths(sandbox) == []


def test_exclude_in_job_mode_downloads_nothing(api, sandbox, tmp_path):
    sandbox.reset_stats()
    result = api("artifacts", "download", "-j", "G1-J0001", "--exclude", "*.tgz", "-o", str(tmp_path / "o"))
    assert result.code == 0, result.err
    assert not (tmp_path / "o").exists() or files(tmp_path / "o") == []
    assert proxy_paths(sandbox) == []


def test_task_download_without_listing(api, sandbox, served, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_stats()
    result = api("artifacts", "download", "--task-id", "T2", "-o", str(out))
    assert result.code == 0, result.err
    assert listing_paths(sandbox) == []  # download mode goes to the proxy directly
    assert sorted(proxy_paths(sandbox)) == sorted(
        f"/openapi/jobs/{quote(j, safe='')}/artifacts/download"
        for j in ["G1-J0005", "G1-J0006", "G1-J0007", "JORPHAN", "../JODD x"])
    assert (out / "T2" / "G1-J0007.tgz").read_bytes() == served.proxy_bytes("G1-J0007")
    assert (out / "T2" / "JORPHAN.tgz").read_bytes() == served.proxy_bytes("JORPHAN")
    assert is_empty_tgz((out / "T2" / "G1-J0005.tgz").read_bytes())  # html page
    assert is_empty_tgz((out / "T2" / "G1-J0006.tgz").read_bytes())  # 404
    assert hidden(out) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    lines = result.err.splitlines()
    assert lines[0] == "[progress] task artifact jobs T2: total=5 jobs"
    assert len([line for line in lines if line.startswith("[progress] task artifact jobs T2: ") and "/5 jobs, processed " in line]) == 5


def test_task_download_quoted_job_file_name(api, tmp_path):
    out = tmp_path / "out"
    result = api("artifacts", "download", "--task-id", "T2", "-o", str(out))
    assert result.code == 0, result.err
    assert files(out) == ["T2/..%2FJODD%20x.tgz", "T2/G1-J0005.tgz", "T2/G1-J0006.tgz",
                          "T2/G1-J0007.tgz", "T2/JORPHAN.tgz"]


def test_task_include_matches_the_file_name(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_stats()
    result = api("artifacts", "download", "--task-id", "T2", "--include", "G1-*.tgz", "-o", str(out))
    assert result.code == 0, result.err
    assert files(out) == ["T2/G1-J0005.tgz", "T2/G1-J0006.tgz", "T2/G1-J0007.tgz"]
    assert "skip filtered JORPHAN.tgz" in result.err.splitlines()
    assert "/openapi/jobs/JORPHAN/artifacts/download" not in proxy_paths(sandbox)
    assert len(proxy_paths(sandbox)) == 3


def test_task_unknown_and_empty(api, tmp_path):
    unknown = api("artifacts", "download", "--task-id", "TNOPE", "-o", str(tmp_path))
    assert unknown.code == 1
    assert '[error]   - TNOPE: API error 404: {"error": "download task not found: TNOPE"}' in unknown.err
    empty = api("artifacts", "download", "--task-id", "TEMPTY", "-o", str(tmp_path))
    assert empty.code == 1
    assert "download task contains no job ids" in empty.err
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------- skip-existing
def test_skip_existing_job_mode(api, sandbox, served, backend, tmp_path):
    out = tmp_path / "out"
    (out / "G1-J0001").mkdir(parents=True)
    # An existing file is kept at the size the listing announces (tests/cli/download/test_artifact_size.py:
    # one of another size is downloaded again).
    kept = b"k" * backend("/openapi/jobs/G1-J0001/artifacts")["artifacts"][0]["size"]
    (out / "G1-J0001" / "result.tgz").write_bytes(kept)
    sandbox.reset_stats()
    result = api("artifacts", "download", "-j", "G1-J0001,G1-J0002", "--skip-existing", "-o", str(out))
    assert result.code == 0, result.err
    assert (out / "G1-J0001" / "result.tgz").read_bytes() == kept
    assert (out / "G1-J0002" / "result.tgz").read_bytes() == served.proxy_bytes("G1-J0002")
    assert f"skip existing {out / 'G1-J0001' / 'result.tgz'}" in result.err.splitlines()
    assert "/openapi/jobs/G1-J0001/artifacts/download" not in proxy_paths(sandbox)


def test_skip_existing_task_mode(api, sandbox, tmp_path):
    out = tmp_path / "out"
    (out / "T1").mkdir(parents=True)
    (out / "T1" / "G1-J0001.tgz").write_bytes(b"kept")
    sandbox.reset_stats()
    result = api("artifacts", "download", "--task-id", "T1", "--skip-existing", "-o", str(out))
    assert result.code == 0, result.err
    assert (out / "T1" / "G1-J0001.tgz").read_bytes() == b"kept"
    assert proxy_paths(sandbox) == ["/openapi/jobs/G1-J0002/artifacts/download"]
    assert f"skip existing {out / 'T1' / 'G1-J0001.tgz'}" in result.err.splitlines()


def test_without_skip_existing_files_are_overwritten(api, served, tmp_path):
    out = tmp_path / "out"
    (out / "G1-J0001").mkdir(parents=True)
    (out / "G1-J0001" / "result.tgz").write_bytes(b"old")
    result = api("artifacts", "download", "-j", "G1-J0001", "-o", str(out))
    assert result.code == 0, result.err
    assert (out / "G1-J0001" / "result.tgz").read_bytes() == served.proxy_bytes("G1-J0001")


# -------------------------------------------------------------------- auth
@pytest.mark.parametrize("args", [
    ["-j", "G1-J0001"], ["-g", "G1"], ["--task-id", "T1"], ["-j", "G1-J0001", "--list-only"],
])
def test_wrong_api_key_exits_3(api, tmp_path, args):
    result = api("artifacts", "download", *args, "-o", str(tmp_path / "out"), key="wrong-key")
    assert result.code == 3
    assert "[error] authentication error: authentication failed (HTTP 401)" in result.err.splitlines()
    assert not (tmp_path / "out").exists() or files(tmp_path / "out") == []


def test_401_on_the_proxy_exits_3_without_placeholder(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.inject_fault("job_artifact_download", status=401)
    result = api("artifacts", "download", "-j", "G1-J0001", "-o", str(out))
    assert result.code == 3
    assert not out.exists() or files(out) == []


def login_answer(base):
    """A stand-in backend whose artifact proxy redirects to an SSO login page."""

    def answer(path: str, query: dict[str, str]):
        login = f"{base()}/login.alibaba-inc.com/ssoLogin.htm?backURL=x"
        if path == "/openapi/jobs/J1/artifacts":
            return js({"job_id": "J1", "artifacts": [{"name": "result.tgz", "url": f"{base()}/oss/J1"}]})
        if path == "/openapi/trajectory-download-tasks/TX":
            return js({"task_id": "TX", "group_id": "G", "job_ids": ["J1"]})
        if path == "/openapi/jobs/J1/artifacts/download":
            return 302, {"Location": login, "Content-Type": "text/html"}, b""
        if path.startswith("/login.alibaba-inc.com/"):
            return binary(b"<html>login</html>", "text/html;charset=utf-8")
        return 404, {"Content-Type": "application/json"}, b'{"error": "not found"}'

    return answer


@pytest.fixture
def login_backend(origins):
    holder = {}
    holder["o"] = origins(login_answer(lambda: holder["o"].url), require_key=True)
    return holder["o"]


@pytest.mark.parametrize(("args", "dest"), [
    (["-j", "J1"], "J1/result.tgz"),
    (["--task-id", "TX"], "TX/J1.tgz"),
])
def test_login_redirect_on_the_proxy_is_auth_not_placeholder(bl, login_backend, tmp_path, args, dest):
    out = tmp_path / "out"
    result = bl("--host", login_backend.url, "--api-key", API_KEY, "--retry", "0",
                "artifacts", "download", *args, "-o", str(out))
    assert result.code == 3, result.err
    assert not (out / dest).exists()
    assert not out.exists() or files(out) == []
    assert "[warn] no artifact" not in result.err
    assert "login" in result.err
    assert "/openapi/jobs/J1/artifacts/download" in [s.path for s in login_backend.seen]


# -------------------------------------------------------- retries, partial
def test_transient_503_is_retried(api, sandbox, served, tmp_path):
    out = tmp_path / "out"
    sandbox.reset_stats()
    sandbox.inject_fault("job_artifact_download", status=503, retry_after=0, count=2)
    result = api("artifacts", "download", "-j", "G1-J0001", "-o", str(out), retry="2")
    assert result.code == 0, result.err
    assert (out / "G1-J0001" / "result.tgz").read_bytes() == served.proxy_bytes("G1-J0001")
    assert proxy_paths(sandbox)[:3] == ["/openapi/jobs/G1-J0001/artifacts/download"] * 3
    assert hidden(out) == []


def test_503_without_retry_fails_and_leaves_nothing(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.inject_fault("job_artifact_download", status=503)
    result = api("artifacts", "download", "-j", "G1-J0001", "-o", str(out), retry="0")
    assert result.code == 1
    assert "[error]   - G1-J0001:result.tgz: API error 503: " in result.err
    assert not out.exists() or (files(out) == [] and hidden(out) == [])


def test_truncated_body_leaves_no_file(api, sandbox, tmp_path):
    out = tmp_path / "out"
    sandbox.inject_fault("job_artifact_download", kind="truncate")
    result = api("artifacts", "download", "-j", "G1-J0001", "-o", str(out), retry="0")
    assert result.code in (1, 4)
    assert "[error]   - G1-J0001:result.tgz: network: " in result.err
    assert not (out / "G1-J0001" / "result.tgz").exists()
    assert not out.exists() or (files(out) == [] and hidden(out) == [])


def test_truncated_body_is_retried(api, sandbox, served, tmp_path):
    out = tmp_path / "out"
    sandbox.inject_fault("job_artifact_download", kind="truncate")
    result = api("artifacts", "download", "-j", "G1-J0001", "-o", str(out), retry="1")
    assert result.code == 0, result.err
    assert (out / "G1-J0001" / "result.tgz").read_bytes() == served.proxy_bytes("G1-J0001")
    assert files(out) == ["G1-J0001/result.tgz"] and hidden(out) == []


def test_file_mode_follows_umask(api, tmp_path):
    out = tmp_path / "out"
    result = api("artifacts", "download", "-j", "G1-J0001,G1-J0005", "-o", str(out))
    assert result.code == 0, result.err
    mask = os.umask(0)
    os.umask(mask)
    for rel in files(out):  # downloaded file and placeholder alike
        assert (out / rel).stat().st_mode & 0o777 == 0o666 & ~mask, rel


# ---------------------------------------------------------------- progress
@pytest.mark.parametrize(("args", "first", "step"), [
    pytest.param(["-g", "G1"], "[progress] group artifact jobs G1: total=40 jobs",
                 "[progress] group artifact jobs G1: 1/40 jobs, processed ", id="group-download"),
    pytest.param(["--task-id", "T1"], "[progress] task artifact jobs T1: total=2 jobs",
                 "[progress] task artifact jobs T1: 1/2 jobs, processed ", id="task-download"),
    pytest.param(["-j", "G1-J0001,G1-J0002", "--list-only"], "[progress] job artifact listings: total=2 jobs",
                 "[progress] job artifact listings: 1/2 jobs, listed ", id="job-list-only"),
    # Documented difference: job-mode downloads count jobs, not artifacts (one label for 1 or N jobs).
    pytest.param(["-j", "G1-J0001"], "[progress] job artifact downloads: total=1 jobs",
                 "[progress] job artifact downloads: 1/1 jobs, processed ", id="one-job-download"),
    pytest.param(["-j", "G1-J0001,G1-J0002"], "[progress] job artifact downloads: total=2 jobs",
                 "[progress] job artifact downloads: 1/2 jobs, processed ", id="jobs-download"),
    pytest.param(["-g", "G1", "--list-only"], "[progress] group artifact listings: total=1 groups",
                 "[progress] group artifact listings: 1/1 groups, listed G1", id="group-list-only"),
    pytest.param(["--task-id", "T1", "--list-only"], "[progress] task artifact listings: total=2 jobs",
                 "[progress] task artifact listings: 1/2 jobs, listed ", id="task-list-only"),
])
def test_progress_counters(api, tmp_path, args, first, step):
    result = api("artifacts", "download", *args, "-o", str(tmp_path))
    lines = [line for line in result.err.splitlines() if line.startswith("[progress]")]
    assert first in lines, result.err
    assert any(line.startswith(step) for line in lines), result.err


def test_a_groups_file_failures_are_summarized_in_job_order_whoever_finishes_first(tmp_path):
    """The jobs of a group run concurrently; the failure summary follows the group's job order,
    not the order the failures happened in (the first job's listing comes last here)."""
    from support import run_inprocess

    from benchloop.sandbox.scripted import json_reply, start_scripted

    jobs = [{"job_id": f"J{n}", "group_id": "G", "created_at": f"2026-01-0{9 - n}"} for n in range(1, 4)]

    def listing(job: str, delay: float):
        reply = json_reply({"job_id": job, "artifacts": [{"name": "a.tgz", "error_code": "artifact_sign_failed"},
                                                          {"name": "b.tgz", "error_code": "artifact_sign_failed"}]})
        reply.delay = delay
        return reply

    routes = {"/openapi/jobs": json_reply({"jobs": jobs, "total": 3}),
              "/openapi/jobs/J1/artifacts": listing("J1", 0.6), "/openapi/jobs/J2/artifacts": listing("J2", 0.3),
              "/openapi/jobs/J3/artifacts": listing("J3", 0.0)}
    with start_scripted(routes) as srv:
        result = run_inprocess("--host", srv.url, "--api-key", API_KEY, "--retry", "0", "--concurrency", "3",
                               "artifacts", "download", "-g", "G", "-o", str(tmp_path))
        finished = [s.path for s in srv.seen]
    assert result.code == 1, result.err
    assert finished[0] == "/openapi/jobs" and len(finished) == 4
    assert result.failed == ["J1:a.tgz", "J1:b.tgz", "J2:a.tgz", "J2:b.tgz", "J3:a.tgz", "J3:b.tgz"], result.err
