"""Commands that chain, typos that speak, docs that are true (a newcomer's first hour, round two).

One test (or more) per finding of that round; the README test runs the README's examples
(among them the chained and filtered commands), and tests/cli/test_ap_cmd.py the ap-cmd hint.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from support import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def requests_since(sandbox, before: int, path: str) -> list[dict[str, list[str]]]:
    """The query of each request to ``path`` after the first ``before`` of the log."""
    return [parse_qs(urlsplit(r.path).query) for r in sandbox.requests_log[before:]
            if urlsplit(r.path).path == path]


def failed_jobs(backend, group: str) -> set[str]:
    jobs = backend("/openapi/jobs", group_id=group, skip=0, limit=1000)["jobs"]
    return {job["job_id"] for job in jobs if job["status"] == "failed"}


# ------------------------------------------------------------ commands that chain
def test_text_output_prints_one_value_per_line(api):
    query = ("jobs", "get", "-g", "G1", "--page-size", "4", "--query", "[].jobs[].job_id")
    ids = json.loads(api(*query).out)
    text = api(*query, "--output", "text")
    assert text.code == 0
    assert text.out.splitlines() == ids and all(not line.startswith('"') for line in ids)


def test_text_output_of_rows_and_numbers(api):
    rows = json.loads(api("jobs", "get", "-g", "G1", "--page-size", "2", "--query",
                          "[].jobs[].[job_id, status, score]").out)
    text = api("jobs", "get", "-g", "G1", "--page-size", "2", "--query", "[].jobs[].[job_id, status, score]",
               "--output", "text")
    assert text.out.splitlines() == ["\t".join(v if isinstance(v, str) else json.dumps(v) for v in row)
                                     for row in rows]
    assert api("jobs", "get", "-g", "G1", "--all", "--query", "[].total", "--output", "text").out == "40\n"


def test_ids_from_jsonl_output_are_read_from_stdin(api, backend):
    """The issue's pipe: ``... --output jsonl | bl trajectory download -j -`` used to 404 on '"G1-J0032"'."""
    listed = api("jobs", "get", "-g", "G1", "--all", "--status", "failed", "--query", "[].jobs[].job_id",
                 "--output", "jsonl")
    assert listed.out.startswith('"G1-J')
    chained = api("metrics", "get", "-j", "-", "--query", "[].job_id", "--output", "text", stdin=listed.out)
    assert chained.code == 0, chained.err
    assert set(chained.out.split()) == failed_jobs(backend, "G1")


def test_a_404_for_an_id_with_its_quotes_says_so(api):
    result = api("metrics", "get", "-j", '"G1-J0001"')
    assert result.code == 1
    assert "the id \"G1-J0001\" still has its quotes: pipe ids with --output text, or jq -r" in result.err
    plain = api("metrics", "get", "-j", "NOPE")
    assert plain.code == 1 and "still has its quotes" not in plain.err


@pytest.mark.parametrize("filters", [("--status", "failed"), ("--status", "failed", "--template", "terminal-bench")])
def test_a_group_download_takes_the_job_filters(api, backend, sandbox, tmp_path, filters):
    before = len(sandbox.requests_log)
    result = api("trajectory", "download", "-g", "G1", *filters, "-o", str(tmp_path))
    assert result.code == 0, result.err
    sent = requests_since(sandbox, before, "/openapi/jobs")
    assert sent and all(q["status"] == ["failed"] for q in sent)
    if "--template" in filters:
        assert all(q["template"] == ["terminal-bench"] for q in sent)
    params = {flag.lstrip("-"): value for flag, value in zip(filters[::2], filters[1::2], strict=True)}
    jobs = backend("/openapi/jobs", group_id="G1", skip=0, limit=1000, **params)["jobs"]
    expected = {f"{job['job_id']}_trajectory.json" for job in jobs}
    assert expected and {p.name for p in (tmp_path / "G1").iterdir()} == expected


def test_pull_takes_the_job_filters(api, backend, tmp_path):
    result = api("pull", "-g", "G1", "--status", "failed", "--with", "report,jobs", "-o", str(tmp_path))
    assert result.code == 0, result.err
    written = {p.name.removesuffix("_report.md") for p in (tmp_path / "G1").glob("*_report.md")}
    assert written == failed_jobs(backend, "G1")
    listed = json.loads((tmp_path / "G1" / "job_list.json").read_text())
    assert {job["job_id"] for job in listed["jobs"]} == written


# ------------------------------------------------------------ typos that speak
def test_an_unknown_status_warns_with_a_suggestion_and_is_still_sent(api, sandbox):
    before = len(sandbox.requests_log)
    result = api("jobs", "get", "-g", "G1", "--status", "fail")
    assert result.code == 0
    assert ("[warn] --status fail is not one of the known values (succeeded, failed, running, cancelled); "
            "did you mean failed?") in result.err
    assert [q["status"] for q in requests_since(sandbox, before, "/openapi/jobs")] == [["fail"]]
    assert "[warn] group G1: no jobs match --status fail" in result.err


def test_a_known_status_does_not_warn(api):
    result = api("jobs", "get", "-g", "G1", "--status", "failed")
    assert result.code == 0 and "[warn]" not in result.err


def test_an_unknown_status_over_the_python_client_warns_too(sandbox, caplog):
    from benchloop import Client

    with Client(host=sandbox.url, api_key=sandbox.api_key, retry=0) as client:
        pages = client.jobs.get(group="G1", status="FAILED")
    assert pages[0]["jobs"] == []
    assert any("--status FAILED is not one of the known values" in r.getMessage() and "did you mean failed?"
               in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


def test_an_unknown_group_warns_on_one_page_too(api):
    result = api("jobs", "get", "-g", "G99")
    assert result.code == 0
    assert json.loads(result.out) == [{"group_id": "G99", "jobs": [], "total": 0}]
    assert "[warn] group G99 has no jobs and does not exist" in result.err


def test_a_refused_key_names_its_source_and_never_the_key(sandbox, bl, tmp_path, monkeypatch):
    secret = "wrong-key-0123456789"
    by_flag = bl("--host", sandbox.url, "--retry", "0", "--api-key", secret, "jobs", "get", "-g", "G1")
    assert by_flag.code == 3 and "refused the API key from --api-key" in by_flag.err
    monkeypatch.setenv("BENCHLOOP_API_KEY", secret)
    by_env = bl("--host", sandbox.url, "--retry", "0", "jobs", "get", "-g", "G1")
    assert "refused the API key from BENCHLOOP_API_KEY" in by_env.err
    monkeypatch.delenv("BENCHLOOP_API_KEY")
    config = tmp_path / "config.toml"
    config.write_text(f'[profile]\napi_key = "x"\n[profiles.pre]\napi_key = "{secret}"\n')
    config.chmod(0o600)
    by_file = bl("--config", str(config), "--profile", "pre", "--host", sandbox.url, "--retry", "0",
                 "jobs", "get", "-g", "G1")
    assert f"refused the API key from api_key in {config} [profiles.pre]" in by_file.err
    for result in (by_flag, by_env, by_file):
        assert secret not in result.err + result.out


def test_config_show_names_the_source_of_every_value(bl, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[profile]\nhost = "http://127.0.0.1:1"\napi_key = "k1"\n')
    config.chmod(0o600)
    monkeypatch.setenv("BENCHLOOP_API_KEY", "k2")
    shown = json.loads(bl("--config", str(config), "--output-dir", "here", "config", "show").out)
    assert shown["sources"] == {"host": f"host in {config} [profile]", "api_key": "BENCHLOOP_API_KEY",
                                "output_dir": "--output-dir"}
    assert shown["api_key"] == "***"


def test_error_format_json_prints_one_object_on_a_network_failure(bl, closed_port):
    result = bl("--error-format", "json", "--host", f"http://127.0.0.1:{closed_port}", "--retry", "0",
                "metrics", "get", "-j", "G1-J0001")
    assert result.code == 4
    lines = result.err.splitlines()
    assert len(lines) == 1
    error = json.loads(lines[0])
    assert error["exit_code"] == 4 and error["failures"][0]["id"] == "G1-J0001"
    assert any("host from --host" in hint for hint in error["hints"])


# ------------------------------------------------------------ docs that are true
def test_the_readme_counts_of_the_artifacts_download(api, tmp_path):
    result = api("artifacts", "download", "-g", "G1", "--include", "*.tgz", "-o", str(tmp_path))
    assert result.code == 1
    files = {p for p in tmp_path.rglob("*") if p.is_file() and not p.name.startswith(".")}
    warned = re.findall(r"^\[warn\] no artifact for job=\S+, wrote empty (\S+) \((.*)\)$", result.err, re.M)
    assert {reason for _, reason in warned} == {"artifact answered with text/html, not the file"}
    placeholders = {Path(path) for path, _ in warned}
    assert placeholders <= files
    for placeholder in placeholders:  # an empty archive, as the warning says
        with tarfile.open(placeholder) as archive:
            assert archive.getmembers() == []
    listing = json.loads(api("artifacts", "download", "-g", "G1", "--list-only").out)
    none = {entry["job_id"] for entry in listing if entry.get("error_code") == "no_artifact"}
    assert re.search(rf"{len(files)} files:\s+#\s+{len(files) - len(placeholders)} artifacts and "
                     rf"{len(placeholders)} empty placeholder; {len(none)} jobs have none", README)


def test_the_python_reference_offers_only_the_ids_an_action_takes():
    from benchloop import Client

    reference = (ROOT / "docs" / "python-reference.md").read_text(encoding="utf-8")
    for resource, action in (("jobs", "get"), ("jobs", "download"), ("tasks", "get"), ("tasks", "download")):
        method = getattr(getattr(Client, resource), action) if hasattr(Client, resource) else None
        if method is not None:
            assert "job" not in inspect.signature(method).parameters
        heading = re.search(rf"### `bl\.{resource}\.{action}\((.*?)\)`", reference)
        assert heading, f"{resource}.{action} is not in docs/python-reference.md"
        assert not re.search(r"\bjob\b", heading.group(1))


def readme_unprefixed_lines() -> list[re.Pattern[str]]:
    """The README's table of unprefixed stderr lines, as patterns (``<x>`` and ``...`` match anything)."""
    table = README.split("| line | printed by |", 1)[1].split("\n\n", 1)[0]
    patterns = []
    for row in table.splitlines()[2:]:
        for shown in re.findall(r"`([^`\[]+)`", row.split(" | ")[0]):
            pieces = re.split(r"(<[^>]+>|\.\.\.)", shown)
            patterns.append(re.compile("".join(".+" if p.startswith("<") or p == "..." else re.escape(p)
                                               for p in pieces)))
    return patterns


def test_every_unprefixed_stderr_line_is_in_the_readme(make_sandbox, tmp_path):
    """Scripts parse the unprefixed lines: every one a run prints is in the README's table."""
    sandbox = make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25)
    env = {**os.environ, "BENCHLOOP_HOST": sandbox.url, "BENCHLOOP_API_KEY": sandbox.api_key,
           "BENCHLOOP_CONFIG": str(tmp_path / "config.toml"), "AP_BASE_URL": sandbox.url,
           "AP_API_KEY": "ap-sandbox-key"}
    out = str(tmp_path / "out")
    runs = [
        ["jobs", "download", "-g", "G1", "-o", out],
        ["artifacts", "download", "-g", "G1", "-o", out],
        ["artifacts", "download", "-g", "G1", "-o", out, "--skip-existing"],
        ["artifacts", "download", "--task-id", "T1", "--include", "nothing*", "-o", out],
        ["trajectory", "get", "-g", "G3"],
        ["pull", "-g", "G3", "--sync", "--with", "trajectory", "-o", out],
        ["pull", "-g", "G3", "--sync", "--with", "trajectory", "-o", out],  # nothing changed: skip unchanged
        ["brm", "run", "-g", "G1", "--steps", "10"],
        ["config", "set", "--host", sandbox.url],
        ["ap-cmd", "APG-NONE", "--ap-cluster", "somewhere"],
    ]
    patterns = readme_unprefixed_lines()
    seen: set[str] = set()
    for args in runs:
        done = subprocess.run([sys.executable, "-m", "benchloop", "--retry", "0", *args], env=env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        for line in done.stderr.splitlines():
            if line.startswith("[") or not line.strip():
                continue
            matched = [p.pattern for p in patterns if p.fullmatch(line)]
            assert matched, f"`bl {' '.join(args)}` printed an unprefixed line the README does not list: {line!r}"
            seen.update(matched)
    assert seen == {p.pattern for p in patterns}, "the README lists lines no run printed"


def test_the_demo_says_what_it_starts(tmp_path):
    script = (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8")
    if not (ROOT / ".venv" / "bin" / "bl").exists():
        pytest.skip("make demo runs the project's .venv (make install makes it)")
    started = re.search(r"--groups (\d+) --jobs-per-group (\d+) --api-key (\S+)", script)
    assert started
    groups, jobs, key = started.groups()
    done = subprocess.run(["bash", "scripts/demo.sh"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    first = done.stdout.splitlines()[0]
    assert first.startswith("sandbox: http://127.0.0.1:")
    assert f"{groups} groups of {jobs} jobs" in first and f"key {key}" in first
