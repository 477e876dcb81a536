"""Output formats and --query, --error-format json, profiles, update notices."""

from __future__ import annotations

import json
import time

import pytest
import yaml

from benchloop.cli import update_check
from benchloop.sandbox.scripted import Reply, start_scripted


def test_jsonl_prints_one_compact_element_per_line_in_input_order(api):
    result = api("report", "get", "-j", "G1-J0003,NOPE,G1-J0001", "--output", "jsonl")
    lines = result.out.splitlines()
    assert [json.loads(line)["job_id"] for line in lines] == ["G1-J0003", "G1-J0001"]
    assert all(": " not in line.split('"content"')[0] for line in lines)
    assert result.code == 1


def test_query_applies_jmespath_to_the_whole_array(api):
    result = api("jobs", "get", "-g", "G1,G2", "--page-size", "2", "--query", "[].jobs[].job_id")
    assert result.code == 0
    assert json.loads(result.out) == ["G1-J0040", "G1-J0039", "G2-J0040", "G2-J0039"]


def test_yaml_and_table_outputs(api):
    as_yaml = api("jobs", "get", "-g", "G1", "--page-size", "2", "--output", "yaml")
    assert yaml.safe_load(as_yaml.out)[0]["jobs"][1]["job_id"] == "G1-J0039"
    table = api("jobs", "get", "-g", "G1", "--page-size", "3", "--query", "[0].jobs", "--output", "table")
    header, rule, *rows = table.out.splitlines()
    assert header.split()[:2] == ["job_id", "group_id"] and set(rule) <= {"-", " "}
    assert [row.split()[0] for row in rows] == ["G1-J0040", "G1-J0039", "G1-J0038"]


def test_json_default_is_unchanged_by_the_new_options(api):
    plain = api("--no-pretty", "metrics", "get", "-j", "G1-J0001")
    explicit = api("--no-pretty", "metrics", "get", "-j", "G1-J0001", "--output", "json")
    assert plain.out == explicit.out and plain.out.startswith('[{"job_id":"G1-J0001"')


def test_invalid_query_is_a_usage_error_before_any_request(api, sandbox):
    before = sandbox.stats["requests"]
    result = api("jobs", "get", "-g", "G1", "--query", "[")
    assert result.code == 2 and "invalid --query" in result.err and result.out == ""
    assert sandbox.stats["requests"] == before


def test_error_format_json(api, bl):
    partial = api("--error-format", "json", "report", "get", "-j", "G1-J0001,NOPE")
    summary = json.loads(partial.err.strip().splitlines()[-1])
    assert summary["exit_code"] == 1 and summary["failures"][0]["id"] == "NOPE"
    assert partial.code == 1
    usage = bl("--error-format", "json", "metrics", "get")
    assert json.loads(usage.err) == {"error": "usage", "message": "at least one -g/--group or -j/--job is required",
                                     "usage": "bl metrics get [OPTIONS]", "exit_code": 2}


def test_profiles_select_host_and_key(sandbox, bl, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    assert bl("config", "set", "--config", str(config), "--host", "http://127.0.0.1:9", "--api-key", "nope").code == 0
    assert bl("config", "set", "--config", str(config), "--profile", "sandbox", "--host", sandbox.url,
              "--api-key", "test-key").code == 0
    text = config.read_text()
    assert "[profile]" in text and "[profiles.sandbox]" in text
    ok = bl("--config", str(config), "--profile", "sandbox", "--no-pretty", "jobs", "get", "-g", "G1", "--page-size", "1")
    assert ok.code == 0 and '"job_id":"G1-J0040"' in ok.out
    monkeypatch.setenv("BENCHLOOP_PROFILE", "sandbox")
    assert bl("--config", str(config), "jobs", "get", "-g", "G1", "--page-size", "1").code == 0
    # The flag beats the environment; an unknown profile is a usage error naming the file.
    bad = bl("--config", str(config), "--profile", "prod", "jobs", "get", "-g", "G1")
    assert bad.code == 2 and "unknown profile 'prod'" in bad.err and str(config) in bad.err
    monkeypatch.delenv("BENCHLOOP_PROFILE")
    default = bl("--config", str(config), "--retry", "0", "jobs", "get", "-g", "G1")
    assert default.code == 4  # [profile] points at a closed port


class _Index:
    """A tiny package index (PEP 691 JSON) on loopback that can be slow (the scripted server)."""

    def __init__(self, versions, delay=0.0):
        body = json.dumps({"name": "benchloop-client", "versions": versions, "files": []}).encode()
        self._server = start_scripted({"*": Reply(200, body, "application/vnd.pypi.simple.v1+json", delay=delay)})
        self.url = f"{self._server.url}/simple"

    @property
    def hits(self) -> int:
        return len(self._server.seen)

    def close(self):
        self._server.stop()


@pytest.fixture
def checks_enabled(monkeypatch):
    monkeypatch.delenv("BENCHLOOP_NO_UPDATE_CHECK", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)


def test_update_notice_once_then_cached(api, monkeypatch, checks_enabled):
    index = _Index(["0.1.0", "99.0.0", "100.0.0rc1"])
    monkeypatch.setenv("BENCHLOOP_INDEX_URL", index.url)
    try:
        first = api("jobs", "get", "-g", "G1", "--page-size", "1")
        # The answer may not be in yet when a fast command ends; the cache is written either way.
        for _ in range(50):
            if update_check.cache_file().exists():
                break
            time.sleep(0.05)
        cached = json.loads(update_check.cache_file().read_text())
        assert cached["latest_version"] == "99.0.0"
        second = api("jobs", "get", "-g", "G1", "--page-size", "1")
        assert "[update] benchloop-client 99.0.0 is available" in second.err
        assert index.url in second.err
        assert index.hits == 1  # fresh cache: no second request
        assert first.code == second.code == 0
        quiet = api("-q", "jobs", "get", "-g", "G1", "--page-size", "1")
        assert "[update]" not in quiet.err
    finally:
        index.close()


def test_update_check_never_delays_a_command(api, monkeypatch, checks_enabled):
    index = _Index(["99.0.0"], delay=3.0)
    monkeypatch.setenv("BENCHLOOP_INDEX_URL", index.url)
    try:
        result = api("jobs", "get", "-g", "G1", "--page-size", "1")
        assert result.code == 0 and "[update]" not in result.err
        # The command returned while the index was still answering (the fact, not a timing).
        assert not update_check.cache_file().exists()
    finally:
        index.close()


def test_update_check_off_under_ci_and_without_index(monkeypatch, checks_enabled):
    monkeypatch.setenv("BENCHLOOP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("CI", "true")
    assert update_check.start({}) is None
    monkeypatch.delenv("CI")
    monkeypatch.delenv("BENCHLOOP_INDEX_URL")
    monkeypatch.setenv("HOME", "/nonexistent")
    assert update_check.start({}) is None


@pytest.mark.parametrize(("latest", "current", "expected"), [
    ("0.3.1", "0.3.0", True), ("0.3.0", "0.3", False), ("0.3.0rc1", "0.3.0", False),
    ("0.3.0", "0.3.0rc1", True), ("0.3.0.post1", "0.3.0", True), ("0.3.0", "0.3.0.dev1", True),
    # An epoch sorts above every version without one (PEP 440, as ``packaging`` compares them; the
    # hand-made comparison this replaced could not read it and said no).
    ("1!2.0", "0.1", True), ("0.0.0+unknown", "0.0.0", False), ("garbage", "0.1", False),
    ("1.0.0", "1.0.0+local.2", False), ("v1.1", "1.0", True),
])
def test_version_ordering(latest, current, expected):
    assert update_check.newer(latest, current) is expected
