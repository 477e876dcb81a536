"""Keys from where users keep them, and `bl config check` (issue 35, items 3 and 4).

A key comes from a command (``BENCHLOOP_API_KEY_COMMAND``, ``api_key_command`` in a profile),
from stdin (``--api-key -``, ``config set --api-key -``) or from the OS keyring (the keyring
extra; here a fake backend in a JSON file, never a real keyring), and the sandbox sees it.
It is never printed, never logged, never in an error and never an argument of a child
process.  ``bl config check`` asks every configured service once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import API_KEY, TESTS

from benchloop.base.errors import EXIT_AUTH, EXIT_NETWORK, EXIT_USAGE

BL = [sys.executable, "-m", "benchloop"]
AP_KEY = "ap-sandbox-key"


def sent_keys(sandbox) -> set[str | None]:
    return {r.headers.get("x-api-key") for r in sandbox.requests_log if r.path.startswith("/openapi/")}


def key_script(tmp_path: Path, body: str) -> str:
    """A key command: a Python script with ``body``, as a command line (no shell)."""
    script = tmp_path / "key_helper.py"
    script.write_text("import sys, os\n" + body, encoding="utf-8")
    return f"{sys.executable} {script}"


def write_config(home: Path, text: str) -> Path:
    path = home / ".benchloop" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])


def run(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, **env}
    return subprocess.run([*BL, *args], capture_output=True, text=True, input=stdin if stdin is not None else "",
                          timeout=120, env=environ)


# ------------------------------------------------------------ key commands
def test_a_key_from_the_command_in_the_environment(bl, sandbox, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", key_script(tmp_path, f"print({API_KEY!r}); print('second')"))
    sandbox.reset_stats()
    result = bl("--host", sandbox.url, "--retry", "0", "-v", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert sent_keys(sandbox) == {API_KEY}  # the first line only
    assert API_KEY not in result.out + result.err


def test_the_command_runs_without_a_shell_and_sees_no_key(bl, sandbox, monkeypatch, tmp_path):
    # Its argv is the split command line: no shell would run '; touch', and no key is passed in.
    marker = tmp_path / "touched"
    command = key_script(tmp_path, f"print({API_KEY!r}); open(sys.argv[-1] + '.argv', 'w').write(repr(sys.argv))")
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", f"{command} ; touch {marker}")
    result = bl("--host", sandbox.url, "--retry", "0", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert not marker.exists()
    argv = (tmp_path / "touched.argv").read_text(encoding="utf-8")
    assert ";" in argv and API_KEY not in argv


def test_a_shell_when_the_user_writes_one(bl, sandbox, monkeypatch):
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", f"sh -c 'printf \"%s\\n\" {API_KEY} | head -n 1'")
    result = bl("--host", sandbox.url, "--retry", "0", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err


def test_the_commands_stderr_is_passed_through(sandbox, tmp_path):
    command = key_script(tmp_path, f"print('touch your security key', file=sys.stderr); print({API_KEY!r})")
    done = run("--host", sandbox.url, "metrics", "get", "-j", "G1-J0001", BENCHLOOP_API_KEY_COMMAND=command)
    assert done.returncode == 0, done.stderr
    assert "touch your security key" in done.stderr


@pytest.mark.parametrize(("body", "message"), [
    (f"print({API_KEY!r}); sys.exit(3)", "failed (exit status 3); its output is not shown, since it may hold the key"),
    ("print('')", "printed no key on its first line"),
])
def test_a_failing_command_is_a_configuration_failure_that_never_shows_its_output(bl, monkeypatch, tmp_path,
                                                                                  body, message):
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", key_script(tmp_path, body))
    result = bl("--host", "http://127.0.0.1:9", "metrics", "get", "-j", "J1")
    assert result.code == EXIT_AUTH
    program = os.path.basename(sys.executable)
    assert f"the command in BENCHLOOP_API_KEY_COMMAND: {program} {message}" in result.err
    assert API_KEY not in result.err + result.out


def test_a_missing_program_and_a_slow_one(bl, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", "no-such-key-helper --get")
    result = bl("--host", "http://127.0.0.1:9", "metrics", "get", "-j", "J1")
    assert result.code == EXIT_AUTH and "no such program: no-such-key-helper" in result.err
    from benchloop.settings import keys

    monkeypatch.setattr(keys, "COMMAND_TIMEOUT", 0.5)
    monkeypatch.setattr(keys.run_command, "__defaults__", (0.5,))
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", key_script(tmp_path, "import time; time.sleep(30)"))
    result = bl("--host", "http://127.0.0.1:9", "metrics", "get", "-j", "J1")
    assert result.code == EXIT_AUTH and "gave no key within 0.5 s (stopped)" in result.err


def test_api_key_command_in_a_profile_and_what_config_show_says(bl, sandbox, home, tmp_path):
    command = key_script(tmp_path, f"print({API_KEY!r})")
    config = write_config(home, f'[profile]\napi_key = "wrong-key"\n\n[profiles.ci]\napi_key_command = """{command}"""\n')
    sandbox.reset_stats()
    result = bl("--host", sandbox.url, "--profile", "ci", "--retry", "0", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert sent_keys(sandbox) == {API_KEY}  # the chosen profile's command wins over [profile]'s key
    shown = json.loads(bl("--profile", "ci", "config", "show").out)
    assert shown["sources"]["api_key"] == f"the command of api_key_command in {config} [profiles.ci]"
    assert shown["api_key"] == "***"  # a key under 16 characters is masked whole
    assert json.loads(bl("config", "show").out)["sources"]["api_key"] == f"api_key in {config} [profile]"


def test_the_key_itself_wins_over_a_command_in_the_same_place(bl, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLOOP_API_KEY", "from-the-variable")
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", "no-such-program")  # not run
    shown = json.loads(bl("config", "show").out)
    assert shown["sources"]["api_key"] == "BENCHLOOP_API_KEY"


# ------------------------------------------------------------------- stdin
def test_api_key_dash_reads_stdin(bl, sandbox):
    sandbox.reset_stats()
    result = bl("--host", sandbox.url, "--api-key", "-", "--retry", "0", "metrics", "get", "-j", "G1-J0001",
                stdin=f"{API_KEY}\n")
    assert result.code == 0, result.err
    assert sent_keys(sandbox) == {API_KEY}
    shown = bl("--api-key", "-", "config", "show", "--query", "sources.api_key", stdin=f"{API_KEY}\n")
    assert json.loads(shown.out) == "stdin (--api-key -)"


def test_a_wrong_key_from_stdin_is_named_by_where_it_came_from(bl, sandbox):
    result = bl("--host", sandbox.url, "--api-key", "-", "--retry", "0", "metrics", "get", "-j", "G1-J0001",
                stdin="wrong-key-from-stdin\n")
    assert result.code == EXIT_AUTH
    assert "refused the API key from stdin (--api-key -)" in result.err
    assert "wrong-key-from-stdin" not in result.err


def test_stdin_cannot_give_both_the_key_and_the_ids(bl, sandbox):
    result = bl("--host", sandbox.url, "--api-key", "-", "metrics", "get", "-j", "-", stdin="k\nG1-J0001\n")
    assert result.code == EXIT_USAGE and "--api-key -" in result.err and "not both" in result.err


def test_an_empty_stdin_is_a_clear_error(bl):
    result = bl("--api-key", "-", "config", "show", stdin="")
    assert result.code == EXIT_USAGE and "read no key from stdin" in result.err


def test_config_set_api_key_dash_stores_the_key_from_stdin(bl, home):
    result = bl("config", "set", "--api-key", "-", stdin=f"{API_KEY}\n")
    assert result.code == 0, result.err
    text = (home / ".benchloop" / "config.toml").read_text(encoding="utf-8")
    assert f'api_key = "{API_KEY}"' in text
    assert "header cannot carry" not in result.err


def test_config_set_stores_a_command_and_drops_the_key(bl, home):
    assert bl("config", "set", "--api-key", "old-key-in-the-file").code == 0
    result = bl("config", "set", "--api-key-command", "pass show benchloop")
    assert result.code == 0, result.err
    text = (home / ".benchloop" / "config.toml").read_text(encoding="utf-8")
    assert 'api_key_command = "pass show benchloop"' in text and "old-key-in-the-file" not in text


# ----------------------------------------------------------------- keyring
@pytest.fixture
def fake_keyring(monkeypatch, tmp_path):
    """The keyring extra with a JSON-file backend: this process and its children."""
    import keyring

    store = tmp_path / "keyring.json"
    monkeypatch.setenv("FAKE_KEYRING_FILE", str(store))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "fake_keyring.FileKeyring")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    sys.path.insert(0, str(TESTS))
    from fake_keyring import FileKeyring

    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    yield store
    keyring.set_keyring(previous)
    sys.path.remove(str(TESTS))


def test_the_keyring_stores_and_gives_the_key(bl, sandbox, home, fake_keyring):
    result = bl("config", "set", "--api-key", "-", "--api-key-keyring", stdin=f"{API_KEY}\n")
    assert result.code == 0, result.err
    assert json.loads(fake_keyring.read_text(encoding="utf-8")) == {"benchloop-client/default": API_KEY}
    config = home / ".benchloop" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert 'api_key_keyring = "default"' in text and API_KEY not in text
    sandbox.reset_stats()
    done = run("--host", sandbox.url, "--retry", "0", "metrics", "get", "-j", "G1-J0001")
    assert done.returncode == 0, done.stderr
    assert sent_keys(sandbox) == {API_KEY}
    shown = json.loads(bl("config", "show").out)
    assert shown["sources"]["api_key"] == f"the OS keyring (api_key_keyring in {config} [profile])"
    assert API_KEY not in json.dumps(shown)


def test_the_keyring_needs_its_extra(home, tmp_path):
    write_config(home, '[profile]\napi_key_keyring = "default"\n')
    guard = ("import sys; sys.modules['keyring'] = None; from benchloop.cli.app import main; "
             "sys.exit(main(['--host', 'http://127.0.0.1:9', 'metrics', 'get', '-j', 'J1']))")
    done = subprocess.run([sys.executable, "-c", guard], capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_AUTH
    assert "needs the keyring extra: pip install 'benchloop-client[keyring]'" in done.stderr


def test_an_empty_keyring_entry_says_how_to_store_one(bl, home, fake_keyring):
    write_config(home, '[profile]\napi_key_keyring = "nobody"\n')
    result = bl("--host", "http://127.0.0.1:9", "metrics", "get", "-j", "J1")
    assert result.code == EXIT_AUTH
    assert "the OS keyring has no key 'nobody' of benchloop-client" in result.err


# ------------------------------------------------------------ config check
def check(bl, *args: str, stdin: str | None = None):
    result = bl(*args, "config", "check", stdin=stdin)
    return result, json.loads(result.out) if result.out.strip() else None


def test_config_check_passes_on_the_sandbox(bl, sandbox):
    sandbox.reset_stats()
    result, services = check(bl, "--host", sandbox.url, "--api-key", API_KEY)
    assert result.code == 0, result.err
    benchloop, agentplatform = services
    assert benchloop == {"service": "benchloop", "title": "Benchloop", "checked": True, "host": sandbox.url,
                         "host_from": "--host", "key_from": "--api-key", "asked": True, "answered": True, "accepted": True,
                         "status": 200, "error": None}
    assert agentplatform == {"service": "agentplatform", "title": "AgentPlatform", "checked": False,
                             "reason": "no AgentPlatform API key is configured"}
    assert sandbox.stats["requests"] == 1  # one cheap request
    assert result.err == ""


def test_config_check_exits_3_on_a_wrong_key(bl, sandbox):
    result, services = check(bl, "--host", sandbox.url, "--api-key", "wrong-key-for-check")
    assert result.code == EXIT_AUTH
    assert services[0]["answered"] is True and services[0]["accepted"] is False
    assert services[0]["status"] == 401  # the status that refused it (was: null)
    assert f"[error] Benchloop {sandbox.url} refused the API key from --api-key" in result.err
    assert "wrong-key-for-check" not in result.out + result.err


def test_config_check_without_a_key(bl, sandbox):
    result, services = check(bl, "--host", sandbox.url)
    assert result.code == EXIT_AUTH and services[0]["key_from"] is None
    assert "no API key is configured" in result.err


def test_config_check_exits_4_when_the_backend_does_not_answer(bl, closed_port):
    result, services = check(bl, "--host", f"http://127.0.0.1:{closed_port}", "--api-key", "k", "--retry", "0")
    assert result.code == EXIT_NETWORK
    assert services[0]["answered"] is False and services[0]["accepted"] is None


def test_config_check_asks_agentplatform_when_its_key_is_configured(bl, sandbox, monkeypatch):
    monkeypatch.setenv("AP_BASE_URL", sandbox.url)
    monkeypatch.setenv("AP_API_KEY", AP_KEY)
    sandbox.reset_stats()
    result, services = check(bl, "--host", sandbox.url, "--api-key", API_KEY)
    assert result.code == 0, result.err
    assert services[1] == {"service": "agentplatform", "title": "AgentPlatform", "checked": True, "host": sandbox.url,
                           "host_from": "AP_BASE_URL", "key_from": "AP_API_KEY", "asked": True, "answered": True, "accepted": True,
                           "status": 404, "error": None}
    assert sandbox.stats["ap_group"] == 1
    monkeypatch.setenv("AP_API_KEY", "wrong-ap-key")
    result, services = check(bl, "--host", sandbox.url, "--api-key", API_KEY)
    assert result.code == EXIT_AUTH and services[1]["accepted"] is False


def test_config_check_with_a_key_from_a_command_and_a_query(bl, sandbox, monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLOOP_API_KEY_COMMAND", key_script(tmp_path, f"print({API_KEY!r})"))
    result = bl("--host", sandbox.url, "config", "check", "--query", "[0].[key_from, accepted]")
    assert result.code == 0, result.err
    assert json.loads(result.out) == ["the command in BENCHLOOP_API_KEY_COMMAND", True]


def test_config_show_query_works_as_the_readme_promises(bl):
    result = bl("config", "show", "--query", "sources")
    assert result.code == 0, result.err
    assert json.loads(result.out) == {"host": "the default", "api_key": "the default", "output_dir": "the default"}


# ---------------------------------------------------------------------- mcp
def test_mcp_serve_asks_a_key_command_once(sandbox, tmp_path):
    import anyio
    from mcp import Client, StdioServerParameters

    runs = tmp_path / "runs"
    command = key_script(tmp_path, f"open({str(runs)!r}, 'a').write('run\\n'); print({API_KEY!r})")
    params = StdioServerParameters(command=BL[0], args=[*BL[1:], "--host", sandbox.url, "mcp", "serve"],
                                   env={**os.environ, "BENCHLOOP_API_KEY_COMMAND": command})

    async def main():
        async with Client(params) as client:
            return [await client.call_tool("metrics_get", {"job": [f"G1-J000{n}"]}) for n in (1, 2, 3)]

    results = anyio.run(main)
    assert not any(r.is_error for r in results)
    assert runs.read_text(encoding="utf-8") == "run\n"  # once for the server, not once per worker


def test_mcp_over_stdio_cannot_read_the_key_from_stdin():
    done = run("--api-key", "-", "mcp", "serve", stdin="k\n")
    assert done.returncode == EXIT_USAGE and "carries the MCP messages over stdio" in done.stderr
