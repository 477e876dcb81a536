"""A key source that gives no key is a configuration failure, not a usage error.

A failing ``api_key_command`` (or ``BENCHLOOP_API_KEY_COMMAND``, or an empty keyring entry)
has nothing to do with the command line: ``bl`` says ``[error] configuration error: ...``
without the ``Usage:`` preface, exits 3 (every key problem's code: README, docs/contract.md
section 6), sends no request, and ``bl config check`` reports it as a failed check of that
service in its JSON (``"asked": false``, ``"accepted": false``) instead of stopping.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from benchloop.base.errors import EXIT_AUTH


def _failing_command(tmp_path: Path, status: int = 5) -> str:
    script = tmp_path / "key_helper.py"
    script.write_text(f"import sys\nprint('secret-looking-output')\nsys.exit({status})\n", encoding="utf-8")
    return f"{sys.executable} {script}"


def _write_config(text: str) -> Path:
    path = Path(os.environ["HOME"]) / ".benchloop" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


def test_a_failing_key_command_is_a_configuration_failure(bl, sandbox, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", _failing_command(tmp_path))
    sandbox.reset_stats()
    result = bl("--host", sandbox.url, "jobs", "get", "-g", "G1")
    assert result.code == EXIT_AUTH, result.err
    assert "Usage:" not in result.err and "Try 'bl" not in result.err
    lines = result.err.splitlines()
    assert lines[0].startswith("[error] configuration error: the command in BENCHLOOP_API_KEY_COMMAND: ")
    assert "failed (exit status 5)" in lines[0]
    assert "secret-looking-output" not in result.err + result.out and result.out == ""
    assert not [r for r in sandbox.requests_log if r.path.startswith("/openapi/")]  # nothing asked


def test_the_json_error_format_says_configuration(bl, sandbox, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", _failing_command(tmp_path))
    result = bl("--host", sandbox.url, "--error-format", "json", "jobs", "get", "-g", "G1")
    assert result.code == EXIT_AUTH
    error = json.loads(result.err.strip().splitlines()[-1])
    assert error["error"] == "configuration" and error["exit_code"] == EXIT_AUTH
    assert "failed (exit status 5)" in error["message"]


def test_config_check_reports_a_failing_command_of_the_profile_as_a_failed_check(bl, sandbox, tmp_path):
    command = _failing_command(tmp_path, 7)
    config = _write_config(f'[profile]\nhost = "{sandbox.url}"\napi_key_command = """{command}"""\n')
    sandbox.reset_stats()
    result = bl("config", "check")
    assert result.code == EXIT_AUTH, result.err
    assert "Usage:" not in result.err
    results = {entry["service"]: entry for entry in json.loads(result.out)}
    (default,) = [entry for entry in results.values() if entry.get("checked") and entry["host"] == sandbox.url]
    assert default["asked"] is False and default["accepted"] is False and default["answered"] is None
    assert default["key_from"] == f"the command of api_key_command in {config} [profile]"
    assert "failed (exit status 7)" in default["error"]
    assert not [r for r in sandbox.requests_log if r.path.startswith("/openapi/")]
    assert any(line.startswith("[error]") and "was not asked" in line for line in result.err.splitlines())


def test_config_check_still_asks_the_services_that_have_a_key(bl, sandbox, monkeypatch, tmp_path):
    """A failing key command of one service fails that service's check only."""
    from benchloop.table.load import load_model

    spec = load_model()
    other = next(s for s in spec.services.values() if not s.default and s.check is not None and s.key.command_env)
    monkeypatch.setenv(other.key.command_env[0], _failing_command(tmp_path, 9))
    result = bl("--host", sandbox.url, "--api-key", sandbox.api_key, "config", "check")
    assert result.code == EXIT_AUTH, result.err
    entries = {entry["service"]: entry for entry in json.loads(result.out)}
    assert entries[spec.default_service.name]["accepted"] is True
    assert entries[spec.default_service.name]["asked"] is True
    failed = entries[other.name]
    assert failed["checked"] is True and failed["asked"] is False and failed["accepted"] is False
    assert "failed (exit status 9)" in failed["error"]
    assert failed["key_from"] == f"the command in {other.key.command_env[0]}"
