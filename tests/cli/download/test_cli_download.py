"""`download` commands against the sandbox (docs/contract.md 1.2, 1.5, 3.3, 3.6, 3.7, 4).

File layout and contents, the `wrote`/`[progress]` lines, output-dir
precedence, --skip-existing (checked through the sandbox's request log),
atomic writes, safe local paths and file permissions.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support import pretty, tree

G1_JOBS = [f"G1-J{n:04d}" for n in range(1, 41)]


# ----------------------------------------------------------------- helpers
@pytest.fixture
def out(tmp_path) -> Path:
    return tmp_path / "root" / "out"


@pytest.fixture
def dl(api, out):
    """Run a download command with `-o OUT` appended."""

    def run(*args: str, stdin: str | None = None):
        return api(*args, "-o", str(out), stdin=stdin)

    return run


@pytest.fixture
def paths_requested(sandbox):
    """Reset the request log; return a function listing the paths requested since."""
    sandbox.reset_stats()

    def paths() -> list[str]:
        return [urlsplit(r.path).path for r in sandbox.requests_log]

    return paths


def get_json(api, *args):
    result = api(*args)
    assert result.code == 0, result.err
    return json.loads(result.out)


def err_lines(result) -> list[str]:
    return result.err.splitlines()


def all_files(root: Path) -> list[str]:
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# ------------------------------------------------------------------ metrics
def test_metrics_download_job(api, dl, out):
    element = get_json(api, "metrics", "get", "-j", "G1-J0001")[0]
    result = dl("metrics", "download", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert result.out == ""
    assert tree(out) == {"G1-J0001_run_metrics.json": pretty(element)}
    assert err_lines(result) == [f"wrote {out}/G1-J0001_run_metrics.json"]


def test_metrics_download_job_no_pretty(api, out):
    element = get_json(api, "metrics", "get", "-j", "G1-J0002")[0]
    result = api("--no-pretty", "metrics", "download", "-j", "G1-J0002", "-o", str(out))
    assert result.code == 0, result.err
    text = (out / "G1-J0002_run_metrics.json").read_text(encoding="utf-8")
    assert text == json.dumps(element, ensure_ascii=False, separators=(",", ":")) + "\n"


@pytest.mark.parametrize(("scope", "files"), [
    ("overall", ["G1/overall_metrics.json"]),
    ("detail", ["G1/detail_metrics.json"]),
    ("all", ["G1/detail_metrics.json", "G1/overall_metrics.json"]),
])
def test_metrics_download_group_scopes(api, dl, out, scope, files):
    element = get_json(api, "metrics", "get", "-g", "G1", "--scope", "all")[0]
    result = dl("metrics", "download", "-g", "G1", "--scope", scope)
    assert result.code == 0, result.err
    assert result.out == ""
    written = tree(out)
    assert sorted(written) == files
    if "G1/overall_metrics.json" in written:
        assert written["G1/overall_metrics.json"] == pretty(element["overall"])
        assert f"wrote {out}/G1/overall_metrics.json" in err_lines(result)
    if "G1/detail_metrics.json" in written:
        detail = json.loads(written["G1/detail_metrics.json"])
        assert detail == element["detail"]
        assert detail["total"] == 40
        assert sorted(m["job_id"] for m in detail["metrics"]) == G1_JOBS
    assert not any(line.startswith("[progress]") for line in err_lines(result))


def test_metrics_download_several_groups_and_jobs(dl, out):
    assert dl("metrics", "download", "-g", "G1,G2,G3", "--scope", "overall").code == 0
    assert dl("metrics", "download", "-j", "G1-J0001,G3-J0040").code == 0
    assert all_files(out) == [
        "G1-J0001_run_metrics.json", "G1/overall_metrics.json", "G2/overall_metrics.json",
        "G3-J0040_run_metrics.json", "G3/overall_metrics.json",
    ]


def test_metrics_download_tree_snapshot(dl, out, snapshot):
    assert dl("metrics", "download", "-g", "G3", "--scope", "overall").code == 0
    assert dl("metrics", "download", "-j", "G2-J0005").code == 0
    assert tree(out) == snapshot


# --------------------------------------------------------------- jobs/tasks
def test_jobs_download(dl, out, sandbox):
    sandbox.reset_stats()
    result = dl("--concurrency", "1", "jobs", "download", "-g", "G1,G2")
    assert result.code == 0, result.err
    assert result.out == ""
    assert all_files(out) == ["G1/job_list.json", "G2/job_list.json"]
    for gid in ("G1", "G2"):
        data = json.loads((out / gid / "job_list.json").read_text(encoding="utf-8"))
        assert list(data) == ["group_id", "total", "jobs"]
        assert data["group_id"] == gid and data["total"] == 40
        ids = [j["job_id"] for j in data["jobs"]]
        assert ids == [f"{gid}-J{n:04d}" for n in range(40, 0, -1)]
    assert err_lines(result) == [
        "[progress] group job-list downloads: total=2 groups",
        "[progress] group jobs G1: 40/40 jobs, fetched",
        f"wrote {out}/G1/job_list.json (40 jobs)",
        f"[progress] group job-list downloads: 1/2 groups, downloaded {out}/G1/job_list.json",
        "[progress] group jobs G2: 40/40 jobs, fetched",
        f"wrote {out}/G2/job_list.json (40 jobs)",
        f"[progress] group job-list downloads: 2/2 groups, downloaded {out}/G2/job_list.json",
    ]
    queries = [r.path for r in sandbox.requests_log]
    assert all("limit=1000" in q for q in queries)  # jobs download default page size


def test_jobs_download_with_filter_and_page_size(dl, out, backend):
    expected = backend("/openapi/jobs", group_id="G1", status="failed", limit=1000)
    result = dl("jobs", "download", "-g", "G1", "--status", "failed", "--page-size", "5")
    assert result.code == 0, result.err
    data = json.loads((out / "G1" / "job_list.json").read_text(encoding="utf-8"))
    assert data == {"group_id": "G1", "total": expected["total"], "jobs": expected["jobs"]}
    assert f"wrote {out}/G1/job_list.json ({expected['total']} jobs)" in err_lines(result)


def test_tasks_download(dl, out, sandbox):
    sandbox.reset_stats()
    result = dl("--concurrency", "1", "tasks", "download", "-g", "G1,GEMPTY")
    assert result.code == 0, result.err
    assert result.out == ""
    files = tree(out)
    assert sorted(files) == ["G1/task_list.json", "GEMPTY/task_list.json"]
    g1 = json.loads(files["G1/task_list.json"])
    assert list(g1) == ["group_id", "total", "tasks"]
    assert g1["total"] == 25
    assert [t["task_id"] for t in g1["tasks"]] == [f"G1-T{n:04d}" for n in range(1, 26)]
    assert files["GEMPTY/task_list.json"] == pretty({"group_id": "GEMPTY", "total": 0, "tasks": []})
    assert err_lines(result) == [
        "[progress] group task-list downloads: total=2 groups",
        "[progress] group tasks G1: 25/25 tasks, fetched",
        f"wrote {out}/G1/task_list.json (25 tasks)",
        f"[progress] group task-list downloads: 1/2 groups, downloaded {out}/G1/task_list.json",
        "[progress] group tasks GEMPTY: 0/0 tasks, fetched",
        f"wrote {out}/GEMPTY/task_list.json (0 tasks)",
        f"[progress] group task-list downloads: 2/2 groups, downloaded {out}/GEMPTY/task_list.json",
    ]
    # README: tasks download fetches 1000 tasks per request by default (was 50)
    queries = [r.path for r in sandbox.requests_log]
    assert queries and all("limit=1000" in q for q in queries)


def test_tasks_download_pages_and_filters(dl, out, backend):
    expected = backend("/openapi/groups/G2/eval_tasks", status="passed", limit=1000)
    assert expected["total"] > 4
    result = dl("tasks", "download", "-g", "G2", "--status", "passed", "--page-size", "4")
    assert result.code == 0, result.err
    data = json.loads((out / "G2" / "task_list.json").read_text(encoding="utf-8"))
    assert data == {"group_id": "G2", "total": expected["total"], "tasks": expected["tasks"]}
    pages = [line for line in err_lines(result) if line.startswith("[progress] group tasks G2:")]
    assert pages[0] == f"[progress] group tasks G2: 4/{expected['total']} tasks, fetched"
    assert pages[-1] == f"[progress] group tasks G2: {expected['total']}/{expected['total']} tasks, fetched"
    assert len(pages) == -(-expected["total"] // 4)


def test_tasks_download_failed_group_advances_the_counter(dl, out):
    result = dl("--concurrency", "1", "tasks", "download", "-g", "GNOPE,G3")
    assert result.code == 1
    lines = err_lines(result)
    assert "[progress] group task-list downloads: 1/2 groups, failed GNOPE" in lines
    assert "[error] 1 id(s) failed:" in lines
    assert any(line.startswith("[error]   - GNOPE: API error 404: ") for line in lines)
    assert all_files(out) == ["G3/task_list.json"]


# ------------------------------------------------------------------- report
def test_report_download_job(dl, out, backend):
    content = backend("/openapi/jobs/G1-J0001/report")["reports"][0]["content"]
    result = dl("--concurrency", "1", "report", "download", "-j", "G1-J0001,G1-J0007")
    assert result.code == 0, result.err
    assert result.out == ""
    assert all_files(out) == ["G1-J0001_report.md"]  # G1-J0007 has reports: []
    assert (out / "G1-J0001_report.md").read_bytes() == content.encode("utf-8")  # verbatim
    assert err_lines(result) == [
        "[progress] job report downloads: total=2 jobs",
        f"wrote {out}/G1-J0001_report.md",
        "[progress] job report downloads: 1/2 jobs, processed G1-J0001",
        "[progress] job report downloads: 2/2 jobs, processed G1-J0007",
    ]


def test_report_download_job_uses_the_first_report(dl, out, backend):
    reports = backend("/openapi/jobs/G1-J0011/report")["reports"]
    assert len(reports) == 2
    assert dl("report", "download", "-j", "G1-J0011").code == 0
    assert (out / "G1-J0011_report.md").read_text(encoding="utf-8") == reports[0]["content"]


def test_report_download_job_without_reports_writes_nothing(dl, out):
    result = dl("report", "download", "-j", "G1-J0014")
    assert result.code == 0, result.err
    assert all_files(out) == []
    assert "wrote" not in result.err


def test_report_download_job_failure_advances_the_counter(dl, out):
    result = dl("--concurrency", "1", "report", "download", "-j", "NOPE,G1-J0002")
    assert result.code == 1
    lines = err_lines(result)
    assert "[progress] job report downloads: 1/2 jobs, failed NOPE" in lines
    assert "[progress] job report downloads: 2/2 jobs, processed G1-J0002" in lines
    assert lines[-2:] == ["[error] 1 id(s) failed:",
                          '[error]   - NOPE: API error 404: {"error": "job not found: NOPE"}']
    assert all_files(out) == ["G1-J0002_report.md"]


def test_report_download_group(dl, out, backend):
    summary = backend("/openapi/groups/G1/report")["reports"][0]["content"]
    result = dl("report", "download", "-g", "G1")
    assert result.code == 0, result.err
    assert result.out == ""
    files = tree(out)
    with_reports = [j for j in G1_JOBS if int(j[-4:]) % 7 != 0]
    assert sorted(files) == sorted(["G1_report.md"] + [f"G1/{j}_report.md" for j in with_reports])
    assert files["G1_report.md"] == summary
    for jid in ("G1-J0001", "G1-J0011", "G1-J0040"):
        assert files[f"G1/{jid}_report.md"] == backend(f"/openapi/jobs/{jid}/report")["reports"][0]["content"]
    lines = err_lines(result)
    assert lines[0] == "[progress] group report downloads: total=1 groups"
    assert "[progress] group report jobs G1: total=40 jobs" in lines
    steps = [line for line in lines if line.startswith("[progress] group report jobs G1: ")]
    assert len(steps) == 41
    assert any(line.startswith("[progress] group report jobs G1: 40/40 jobs, processed ") for line in steps)
    assert all(", elapsed=" in line for line in steps[1:])
    assert lines[-1] == "[progress] group report downloads: 1/1 groups, processed G1"
    assert f"wrote {out}/G1_report.md" in lines
    assert sum(1 for line in lines if line.startswith("wrote ")) == 1 + len(with_reports)


def test_report_download_group_tree_snapshot(dl, out, snapshot):
    assert dl("report", "download", "-g", "G2").code == 0
    assert tree(out) == snapshot


def test_report_download_empty_group(dl, out, paths_requested):
    result = dl("report", "download", "-g", "GEMPTY")
    assert result.code == 0, result.err
    assert all_files(out) == []
    assert "/openapi/groups/GEMPTY" in paths_requested()  # existence probe after no jobs


def test_report_download_unknown_group_fails(dl, out):
    result = dl("report", "download", "-g", "GNOPE")
    assert result.code == 1
    assert "[error] 1 id(s) failed:" in err_lines(result)
    assert any(line.startswith("[error]   - GNOPE") for line in err_lines(result))
    assert all_files(out) == []


# -------------------------------------------------------- output precedence
@pytest.fixture
def places(tmp_path, monkeypatch):
    names = ("sub", "glob", "env", "cfg", "cwd")
    dirs = {name: tmp_path / name for name in names}
    dirs["cwd"].mkdir()
    monkeypatch.chdir(dirs["cwd"])
    return dirs


def _run_with(api, places, monkeypatch, *, sub=False, glob=False, env=False, cfg=False):
    if env:
        monkeypatch.setenv("BENCHLOOP_OUTPUT_DIR", str(places["env"]))
    config = places["cwd"].parent / "config.toml"
    config.write_text(f'[profile]\noutput_dir = "{places["cfg"]}"\n' if cfg else "", encoding="utf-8")
    args = ["--config", str(config)]
    if glob:
        args += ["-o", str(places["glob"])]
    args += ["metrics", "download", "-j", "G1-J0001"]
    if sub:
        args += ["-o", str(places["sub"])]
    result = api(*args)
    assert result.code == 0, result.err
    return sorted(name for name, d in places.items()
                  if (d / "G1-J0001_run_metrics.json").is_file())


def test_output_dir_subcommand_wins(api, places, monkeypatch):
    assert _run_with(api, places, monkeypatch, sub=True, glob=True, env=True, cfg=True) == ["sub"]


def test_output_dir_global_beats_env_and_config(api, places, monkeypatch):
    assert _run_with(api, places, monkeypatch, glob=True, env=True, cfg=True) == ["glob"]


def test_output_dir_env_beats_config(api, places, monkeypatch):
    assert _run_with(api, places, monkeypatch, env=True, cfg=True) == ["env"]


def test_output_dir_config(api, places, monkeypatch):
    assert _run_with(api, places, monkeypatch, cfg=True) == ["cfg"]


def test_output_dir_default_is_cwd(api, places, monkeypatch):
    assert _run_with(api, places, monkeypatch) == ["cwd"]


def test_output_dir_relative_paths_in_logs(api, places):
    result = api("report", "download", "-j", "G1-J0001", "-o", "rel")
    assert result.code == 0, result.err
    assert (places["cwd"] / "rel" / "G1-J0001_report.md").is_file()
    assert "wrote rel/G1-J0001_report.md" in err_lines(result)


# ------------------------------------------------------------ skip-existing
def test_skip_existing_job_file(dl, out, paths_requested):
    out.mkdir(parents=True)
    target = out / "G1-J0001_run_metrics.json"
    target.write_text("SENTINEL", encoding="utf-8")
    result = dl("metrics", "download", "-j", "G1-J0001,G1-J0002", "--skip-existing")
    assert result.code == 0, result.err
    assert target.read_text(encoding="utf-8") == "SENTINEL"
    assert f"skip existing {target}" in err_lines(result)
    assert (out / "G1-J0002_run_metrics.json").is_file()
    requested = paths_requested()
    assert "/openapi/metrics/G1-J0001" not in requested
    assert "/openapi/metrics/G1-J0002" in requested


def test_without_skip_existing_files_are_overwritten(dl, out):
    out.mkdir(parents=True)
    target = out / "G1-J0001_run_metrics.json"
    target.write_text("SENTINEL", encoding="utf-8")
    assert dl("metrics", "download", "-j", "G1-J0001").code == 0
    assert json.loads(target.read_text(encoding="utf-8"))["job_id"] == "G1-J0001"


def test_skip_existing_group_metrics_checks_each_file(dl, out, paths_requested):
    (out / "G1").mkdir(parents=True)
    overall = out / "G1" / "overall_metrics.json"
    overall.write_text("SENTINEL", encoding="utf-8")
    result = dl("metrics", "download", "-g", "G1", "--skip-existing")
    assert result.code == 0, result.err
    assert overall.read_text(encoding="utf-8") == "SENTINEL"
    assert json.loads((out / "G1" / "detail_metrics.json").read_text(encoding="utf-8"))["total"] == 40
    requested = paths_requested()
    assert "/openapi/groups/G1/metrics/overall" not in requested
    assert "/openapi/metrics" in requested
    assert f"skip existing {overall}" in err_lines(result)


def test_skip_existing_group_report(dl, out, paths_requested):
    (out / "G1").mkdir(parents=True)
    summary = out / "G1_report.md"
    job = out / "G1" / "G1-J0001_report.md"
    summary.write_text("SENTINEL-S", encoding="utf-8")
    job.write_text("SENTINEL-J", encoding="utf-8")
    result = dl("report", "download", "-g", "G1", "--skip-existing")
    assert result.code == 0, result.err
    assert summary.read_text(encoding="utf-8") == "SENTINEL-S"
    assert job.read_text(encoding="utf-8") == "SENTINEL-J"
    assert (out / "G1" / "G1-J0002_report.md").is_file()
    lines = err_lines(result)
    assert f"skip existing {summary}" in lines
    assert f"skip existing {job}" in lines
    requested = paths_requested()
    assert "/openapi/groups/G1/report" not in requested
    assert "/openapi/jobs/G1-J0001/report" not in requested
    assert "/openapi/jobs/G1-J0002/report" in requested
    assert "/openapi/jobs" in requested  # the job enumeration still happens


def test_skip_existing_job_list(dl, out, paths_requested):
    (out / "G1").mkdir(parents=True)
    target = out / "G1" / "job_list.json"
    target.write_text("SENTINEL", encoding="utf-8")
    result = dl("jobs", "download", "-g", "G1", "--skip-existing")
    assert result.code == 0, result.err
    assert target.read_text(encoding="utf-8") == "SENTINEL"
    assert f"skip existing {target}" in err_lines(result)
    assert paths_requested() == []


# ------------------------------------------------------------------- atomic
def _leftovers(root: Path) -> list[str]:
    if not root.exists():
        return []
    return [str(p.relative_to(root)) for p in root.rglob("*")
            if p.name.startswith(".") or p.name.endswith((".tmp", ".part"))]


def test_no_temp_files_left_after_downloads(dl, out):
    assert dl("report", "download", "-g", "G1").code == 0
    assert dl("metrics", "download", "-g", "G1,G2").code == 0
    assert dl("jobs", "download", "-g", "G1").code == 0
    assert len(all_files(out)) > 40
    assert _leftovers(out) == []


@pytest.fixture
def failing_replace(monkeypatch, tmp_path):
    """os.replace fails (disk full) for destinations under this test's tmp dir."""
    original = os.replace

    def replace(src, dst, *args, **kwargs):
        if str(dst).startswith(str(tmp_path)):
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


def _run_expecting_failure(run, *args) -> int:
    try:
        return run(*args).code
    except OSError:  # an uncaught disk error is an exit-1 traceback for the console script
        return 1


def test_failed_write_leaves_no_file(dl, out, failing_replace):
    code = _run_expecting_failure(dl, "metrics", "download", "-j", "G1-J0001")
    assert code == 1
    assert not (out / "G1-J0001_run_metrics.json").exists()
    assert _leftovers(out) == []


def test_failed_overwrite_keeps_the_old_file(dl, out, failing_replace):
    out.mkdir(parents=True)
    target = out / "G1-J0001_report.md"
    target.write_text("OLD", encoding="utf-8")
    code = _run_expecting_failure(dl, "report", "download", "-j", "G1-J0001")
    assert code == 1
    assert target.read_text(encoding="utf-8") == "OLD"
    assert _leftovers(out) == []


def test_group_metrics_failure_in_detail_writes_neither_file(dl, out, sandbox):
    with sandbox.faulted("group_metrics_detail", status=500):
        result = dl("metrics", "download", "-g", "G1", "--scope", "all")
    assert result.code == 1
    assert all_files(out) == []
    assert any(line.startswith("[error]   - G1: API error 500") for line in err_lines(result))


# --------------------------------------------------------------- safe paths
BAD_IDS = ["../x", "/etc/x", "a\\b", ".."]


def _outside(tmp_path: Path, out: Path) -> list[str]:
    """Everything under tmp_path that is not the output root or inside it."""
    allowed = {out, *out.parents}
    return [str(p) for p in tmp_path.rglob("*") if p not in allowed and out not in p.parents]


@pytest.mark.parametrize("ident", BAD_IDS)
@pytest.mark.parametrize("command", [
    ["metrics", "download", "-j"], ["metrics", "download", "-g"],
    ["report", "download", "-j"], ["report", "download", "-g"],
    ["tasks", "download", "-g"],
])
def test_unsafe_ids_write_nothing_outside_the_root(dl, out, tmp_path, command, ident):
    result = dl(*command, ident)
    assert result.code == 1
    assert _outside(tmp_path, out) == []
    assert all_files(out) == []
    assert not Path("/etc/x_run_metrics.json").exists()


@pytest.mark.parametrize("ident", BAD_IDS + [".", "%2F", "a%5Cb"])
def test_unsafe_group_ids_are_written_inside_the_root(dl, out, tmp_path, ident):
    # jobs download has no existence probe: an unknown group is an empty job list.
    result = dl("jobs", "download", "-g", ident)
    assert result.code == 0, result.err
    assert _outside(tmp_path, out) == []
    files = all_files(out)
    assert len(files) == 1
    directory, name = files[0].split("/")
    assert name == "job_list.json"
    assert directory not in (".", "..") and "/" not in directory and "\\" not in directory
    assert json.loads((out / files[0]).read_text(encoding="utf-8"))["group_id"] == ident


def test_unsafe_names_do_not_collide(dl, out):
    ids = ["a/b", "a%2Fb", "a%252Fb", "a\\b", "a%5Cb"]
    result = dl("jobs", "download", "-g", ",".join(ids))
    assert result.code == 0, result.err
    files = all_files(out)
    assert len(files) == len(ids)
    written = {json.loads((out / f).read_text(encoding="utf-8"))["group_id"] for f in files}
    assert written == set(ids)


def test_overlong_id_is_shortened(dl, out, tmp_path):
    ident = "G" * 300
    result = dl("jobs", "download", "-g", ident)
    assert result.code == 0, result.err
    (only,) = all_files(out)
    directory = only.split("/")[0]
    assert len(directory.encode()) <= 255
    assert _outside(tmp_path, out) == []


@pytest.mark.parametrize("command", [["metrics", "download"], ["report", "download"]])
def test_job_id_with_path_characters_stays_in_the_root(dl, out, tmp_path, command):
    result = dl(*command, "-j", "../JODD x")
    assert result.code == 0, result.err
    assert _outside(tmp_path, out) == []
    (only,) = all_files(out)
    assert "/" not in only  # one file, directly in the root
    assert only.endswith("_run_metrics.json" if command[0] == "metrics" else "_report.md")
    if command[0] == "metrics":
        assert json.loads((out / only).read_text(encoding="utf-8"))["job_id"] == "../JODD x"


# -------------------------------------------------------------- permissions
@pytest.fixture(params=[0o027, 0o002], ids=["027", "002"])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def test_file_permissions_follow_umask(dl, out, umask):
    assert dl("metrics", "download", "-g", "G1", "--scope", "overall").code == 0
    assert dl("report", "download", "-j", "G1-J0001").code == 0
    assert dl("jobs", "download", "-g", "G2").code == 0
    files = all_files(out)
    assert len(files) == 3
    for name in files:
        mode = stat.S_IMODE((out / name).stat().st_mode)
        assert mode == 0o666 & ~umask, (name, oct(mode))


# ---------------------------------------------------- group report failures
def test_group_report_job_failure_fails_the_group_but_keeps_files(dl, out, sandbox):
    with sandbox.faulted("job_report", status=500):
        result = dl("--concurrency", "1", "report", "download", "-g", "G1")
    assert result.code == 1
    lines = err_lines(result)
    assert lines[-2] == "[error] 1 id(s) failed:"
    # the enumeration is newest first: G1-J0040 is the first job report requested
    assert lines[-1].startswith("[error]   - G1: failed to fetch 1 reports: G1-J0040: API error 500: ")
    assert "[progress] group report downloads: 1/1 groups, failed G1" in lines
    files = all_files(out)
    assert "G1_report.md" in files and "G1/G1-J0039_report.md" in files
    assert "G1/G1-J0040_report.md" not in files


def test_group_report_summary_failure_is_named_summary(dl, out, sandbox):
    with sandbox.faulted("group_report", status=500):
        result = dl("report", "download", "-g", "G1")
    assert result.code == 1
    assert err_lines(result)[-1].startswith(
        "[error]   - G1: failed to fetch 1 reports: G1:summary: API error 500: ")
    files = all_files(out)
    assert "G1_report.md" not in files
    assert len(files) == 35  # every job report was still written
