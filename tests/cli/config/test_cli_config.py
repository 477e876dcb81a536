"""Configuration: precedence, `config set|show|path`, invalid files (docs/contract.md 4, README).

Precedence is observed twice: in `bl config show` and in what actually
reaches the sandbox (which X-API-Key header it receives, which host answers).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from support import API_KEY

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

DEFAULT_HOST = "https://benchmark-analysis.alibaba-inc.com"


# ----------------------------------------------------------------- helpers
@pytest.fixture
def home() -> Path:
    return Path(os.environ["HOME"])  # isolated per test by conftest


@pytest.fixture
def default_config(home) -> Path:
    return home / ".benchloop" / "config.toml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def show(bl, *args: str) -> dict:
    result = bl(*args, "config", "show")
    assert result.code == 0, result.err
    return json.loads(result.out)


def sent_key(sandbox) -> str | None:
    """The X-API-Key of the last request the sandbox received."""
    return sandbox.requests_log[-1].headers.get("x-api-key")


def mask(key: str) -> str:
    # A key under 16 characters is masked completely (changed on purpose: issue 17, masking
    # never shows most of a short key).
    return key[:2] + "***" + key[-4:] if len(key) >= 16 else "***"


# -------------------------------------------------------------- config show
def test_show_defaults(bl, default_config):
    data = show(bl)
    assert list(data)[0] == "config_file"
    keys = ["host", "api_key", "output_dir"]
    assert [k for k in data if k in keys] == keys
    assert {k: data[k] for k in ["config_file", *keys]} == {
        "config_file": str(default_config), "host": DEFAULT_HOST, "api_key": None, "output_dir": "."}


def test_show_masks_the_key(bl):
    result = bl("--api-key", "secret-key-12345", "config", "show")
    assert result.code == 0
    assert json.loads(result.out)["api_key"] == "se***2345"
    assert "secret-key-12345" not in result.out + result.err


def test_show_masks_a_short_key_completely(bl):
    assert show(bl, "--api-key", "abcdef")["api_key"] == "***"


def test_show_no_pretty(bl):
    result = bl("--no-pretty", "config", "show")
    assert result.code == 0
    assert result.out.count("\n") == 1
    assert json.loads(result.out)["host"] == DEFAULT_HOST


# ------------------------------------------------------- api key precedence
KEY_SOURCES = ["flag", "BENCHLOOP_API_KEY", "BENCHMARK_API_KEY", "file"]


def _set_keys(monkeypatch, config: Path, keys: dict[str, str]) -> list[str]:
    write(config, f'[profile]\napi_key = "{keys["file"]}"\n' if "file" in keys else "")
    for name in ("BENCHLOOP_API_KEY", "BENCHMARK_API_KEY"):
        if name in keys:
            monkeypatch.setenv(name, keys[name])
    args = ["--config", str(config)]
    if "flag" in keys:
        args += ["--api-key", keys["flag"]]
    return args


@pytest.mark.parametrize("winner", KEY_SOURCES)
def test_api_key_precedence(bl, sandbox, monkeypatch, tmp_path, winner):
    # The winner carries the right key; every lower source a wrong one.
    lower = KEY_SOURCES[KEY_SOURCES.index(winner):]
    keys = {src: f"wrong-{src}-key" for src in lower}
    keys[winner] = API_KEY
    args = _set_keys(monkeypatch, tmp_path / "config.toml", keys)
    assert show(bl, *args)["api_key"] == mask(API_KEY)
    result = bl(*args, "--host", sandbox.url, "--retry", "0", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert sent_key(sandbox) == API_KEY


@pytest.mark.parametrize("winner", KEY_SOURCES[:-1])
def test_api_key_precedence_wrong_winner_is_used(bl, sandbox, monkeypatch, tmp_path, winner):
    # A higher source wins even when it is wrong and a lower one is right.
    lower = KEY_SOURCES[KEY_SOURCES.index(winner) + 1:]
    keys = {src: API_KEY for src in lower}
    keys[winner] = f"wrong-{winner}-key"
    args = _set_keys(monkeypatch, tmp_path / "config.toml", keys)
    assert show(bl, *args)["api_key"] == mask(keys[winner])
    result = bl(*args, "--host", sandbox.url, "--retry", "0", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 3
    assert sent_key(sandbox) == keys[winner]


def test_no_key_sends_no_header(bl, sandbox):
    result = bl("--host", sandbox.url, "--retry", "0", "metrics", "get", "-j", "G1-J0001")
    assert result.code == 3
    assert sent_key(sandbox) is None


def test_empty_env_key_falls_through(bl, sandbox, monkeypatch, tmp_path):
    # "first truthy wins": an empty variable does not hide the next source
    monkeypatch.setenv("BENCHLOOP_API_KEY", "")
    args = _set_keys(monkeypatch, tmp_path / "config.toml", {"BENCHMARK_API_KEY": API_KEY})
    result = bl(*args, "--host", sandbox.url, "--retry", "0", "report", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert sent_key(sandbox) == API_KEY


# ---------------------------------------------------------- host precedence
def test_host_precedence(bl, monkeypatch, tmp_path):
    config = write(tmp_path / "c.toml", '[profile]\nhost = "http://file.example/"\n')
    base = ["--config", str(config)]
    assert show(bl, *base)["host"] == "http://file.example"  # trailing / stripped when loaded
    monkeypatch.setenv("BENCHLOOP_HOST", "http://env.example")
    assert show(bl, *base)["host"] == "http://env.example"
    assert show(bl, *base, "--host", "http://flag.example/")["host"] == "http://flag.example"
    assert show(bl, "--config", str(tmp_path / "missing.toml"), "--host", "http://x")["host"] == "http://x"


def test_host_precedence_reaches_the_backend(bl, sandbox, monkeypatch, tmp_path, closed_port):
    dead = f"http://127.0.0.1:{closed_port}"
    config = write(tmp_path / "c.toml", f'[profile]\nhost = "{dead}"\napi_key = "{API_KEY}"\n')
    args = ["--config", str(config), "--retry", "0"]
    assert bl(*args, "report", "get", "-j", "G1-J0001").code == 4  # the file's host
    monkeypatch.setenv("BENCHLOOP_HOST", sandbox.url)
    assert bl(*args, "report", "get", "-j", "G1-J0001").code == 0  # env beats file
    assert bl(*args, "--host", dead, "report", "get", "-j", "G1-J0001").code == 4  # flag beats env


def test_file_host_with_trailing_slash_works(bl, sandbox, tmp_path):
    config = write(tmp_path / "c.toml", f'[profile]\nhost = "{sandbox.url}/"\napi_key = "{API_KEY}"\n')
    result = bl("--config", str(config), "--retry", "0", "report", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert sandbox.requests_log[-1].path == "/openapi/jobs/G1-J0001/report"


# ---------------------------------------------------- output-dir precedence
def test_output_dir_precedence_in_show(bl, monkeypatch, tmp_path):
    config = write(tmp_path / "c.toml", '[profile]\noutput_dir = "from-file"\n')
    base = ["--config", str(config)]
    assert show(bl, *base)["output_dir"] == "from-file"
    monkeypatch.setenv("BENCHLOOP_OUTPUT_DIR", "from-env")
    assert show(bl, *base)["output_dir"] == "from-env"
    assert show(bl, *base, "-o", "from-flag")["output_dir"] == "from-flag"


# ------------------------------------------------------------ file location
def test_config_path_default(bl, default_config):
    result = bl("config", "path")
    assert result.code == 0
    assert result.out == f"{default_config}\n"


def test_config_path_env_and_flag(bl, monkeypatch, tmp_path, home):
    monkeypatch.setenv("BENCHLOOP_CONFIG", str(tmp_path / "env.toml"))
    assert bl("config", "path").out == f"{tmp_path / 'env.toml'}\n"
    assert bl("--config", str(tmp_path / "flag.toml"), "config", "path").out == f"{tmp_path / 'flag.toml'}\n"
    assert bl("--config", "~/x/c.toml", "config", "path").out == f"{home / 'x' / 'c.toml'}\n"


def test_config_file_from_env_is_read(bl, monkeypatch, tmp_path):
    config = write(tmp_path / "env.toml", '[profile]\nhost = "http://env-file.example"\n')
    monkeypatch.setenv("BENCHLOOP_CONFIG", str(config))
    data = show(bl)
    assert data["config_file"] == str(config)
    assert data["host"] == "http://env-file.example"


def test_default_config_file_is_read(bl, default_config):
    write(default_config, '[profile]\napi_key = "from-default-file"\n')
    assert show(bl)["api_key"] == mask("from-default-file")


def test_other_tables_and_keys_are_ignored(bl, tmp_path):
    config = write(tmp_path / "c.toml",
                   'host = "top-level"\n[other]\nhost = "other"\n[profile]\nextra = 1\n')
    assert show(bl, "--config", str(config))["host"] == DEFAULT_HOST


# --------------------------------------------------------------- config set
@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_set_creates_file_0600_in_dir_0700(bl, default_config, umask_022):
    result = bl("config", "set", "--api-key", "k1", "--host", "http://h.example/", "-o", "out dir")
    assert result.code == 0, result.err
    assert result.out == ""
    assert result.err == f"wrote config to {default_config}\n"
    assert stat.S_IMODE(default_config.stat().st_mode) == 0o600
    assert stat.S_IMODE(default_config.parent.stat().st_mode) == 0o700
    text = default_config.read_text(encoding="utf-8")
    assert text == '[profile]\nhost = "http://h.example/"\napi_key = "k1"\noutput_dir = "out dir"\n'
    data = show(bl)
    assert data["host"] == "http://h.example"
    assert data["api_key"] == "***"
    assert data["output_dir"] == "out dir"


def test_set_tightens_an_existing_file(bl, default_config, umask_022):
    write(default_config, '[profile]\nhost = "http://a"\n')
    os.chmod(default_config, 0o644)
    assert bl("config", "set", "--api-key", "k").code == 0
    assert stat.S_IMODE(default_config.stat().st_mode) == 0o600


def test_set_merges_into_profile(bl, default_config):
    assert bl("config", "set", "--host", "http://first").code == 0
    assert bl("config", "set", "--api-key", "key-1").code == 0
    assert bl("config", "set", "-o", "dl").code == 0
    assert bl("config", "set", "--api-key", "key-2").code == 0
    profile = tomllib.loads(default_config.read_text(encoding="utf-8"))["profile"]
    assert profile == {"host": "http://first", "api_key": "key-2", "output_dir": "dl"}


def test_set_keeps_other_tables_keys_and_comments(bl, default_config):
    original = (
        "# my benchloop settings\n"
        'title = "keep me"\n'
        "\n"
        "[profile]\n"
        "# the production key\n"
        'api_key = "old-key"\n'
        "custom = 42\n"
        "\n"
        "[other]\n"
        'host = "other-host"  # not the profile host\n'
        "list = [1, 2]\n"
    )
    write(default_config, original)
    result = bl("config", "set", "--host", "http://new-host", "--api-key", "new-key")
    assert result.code == 0, result.err
    text = default_config.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert data["title"] == "keep me"
    assert data["profile"] == {"api_key": "new-key", "custom": 42, "host": "http://new-host"}
    assert data["other"] == {"host": "other-host", "list": [1, 2]}
    for comment in ("# my benchloop settings", "# the production key", "# not the profile host"):
        assert comment in text
    assert text.index("[profile]") < text.index('host = "http://new-host"') < text.index("[other]")


def test_set_appends_profile_after_other_tables(bl, default_config):
    write(default_config, '[other]\nkey = "v"\n')
    assert bl("config", "set", "--api-key", "k").code == 0
    data = tomllib.loads(default_config.read_text(encoding="utf-8"))
    assert data == {"other": {"key": "v"}, "profile": {"api_key": "k"}}


def test_set_keeps_profile_subtables(bl, default_config):
    write(default_config, '[profile]\nhost = "a"\n[profile.extra]\nk = 1\n')
    assert bl("config", "set", "--api-key", "k").code == 0
    data = tomllib.loads(default_config.read_text(encoding="utf-8"))
    assert data["profile"] == {"host": "a", "api_key": "k", "extra": {"k": 1}}


@pytest.mark.parametrize("value", [
    'with "double" quotes',
    "back\\slash\\",
    "new\nline",
    "tab\tand\rreturn",
    "ünïcödé 键 ✓",
    "''' and \"\"\" and # not a comment",
    "ctrl\x01\x7fchars",
])
def test_set_escapes_values(bl, default_config, value):
    # Since config set refuses keys a header cannot carry (newcomer issue, item 6), the
    # key is stored only for values that can be keys; -o takes every value.
    header_safe = value.isascii() and value.isprintable() and value == value.strip()
    result = bl("config", "set", "-o", value, *(["--api-key", value] if header_safe else []))
    assert result.code == 0, result.err
    profile = tomllib.loads(default_config.read_text(encoding="utf-8"))["profile"]
    assert profile["output_dir"] == value
    if header_safe:
        assert profile["api_key"] == value
    assert show(bl)["output_dir"] == value


def test_set_with_config_option_writes_there(bl, tmp_path, default_config):
    target = tmp_path / "deep" / "dir" / "c.toml"
    result = bl("config", "set", "--config", str(target), "--api-key", "k")
    assert result.code == 0, result.err
    assert result.err == f"wrote config to {target}\n"
    assert tomllib.loads(target.read_text(encoding="utf-8")) == {"profile": {"api_key": "k"}}
    assert not default_config.exists()


def test_set_honours_benchloop_config(bl, monkeypatch, tmp_path, default_config):
    target = tmp_path / "env.toml"
    monkeypatch.setenv("BENCHLOOP_CONFIG", str(target))
    assert bl("config", "set", "--host", "http://h").code == 0
    assert tomllib.loads(target.read_text(encoding="utf-8")) == {"profile": {"host": "http://h"}}
    assert not default_config.exists()


def test_set_quiet(bl, default_config):
    result = bl("-q", "config", "set", "--api-key", "k")
    assert result.code == 0
    assert result.err == "" and result.out == ""
    assert default_config.is_file()


def test_set_without_values_is_a_usage_error(bl, default_config):
    result = bl("config", "set")
    assert result.code == 2
    assert result.out == ""
    assert result.err.splitlines() == [
        "Usage: bl config set [OPTIONS]",
        "Try 'bl config set --help' for help.",
        "Error: provide at least one of --api-key/--api-key-command/--host/--output-dir",
    ]
    assert not default_config.exists()


def test_set_values_are_used_by_later_commands(bl, sandbox):
    assert bl("config", "set", "--api-key", API_KEY, "--host", sandbox.url).code == 0
    result = bl("--retry", "0", "report", "get", "-j", "G1-J0001")
    assert result.code == 0, result.err
    assert sent_key(sandbox) == API_KEY


# ------------------------------------------------- config set: buggy merges
def test_set_on_an_invalid_file_is_a_clear_error(bl, default_config):
    write(default_config, "[profile\n")
    result = bl("config", "set", "--api-key", "k")
    assert result.code == 2
    assert f"invalid config file {default_config}" in result.err
    assert default_config.read_text(encoding="utf-8") == "[profile\n"


def test_set_on_an_invalid_file_leaves_it_untouched(bl, default_config):
    write(default_config, "[profile\n")
    result = bl("config", "set", "--api-key", "k")
    assert result.code != 0
    assert "Traceback" not in result.err
    assert default_config.read_text(encoding="utf-8") == "[profile\n"


@pytest.mark.parametrize(("original", "args", "expected"), [
    ('["profile"]\nhost = "a"\n', ["--api-key", "k"], {"host": "a", "api_key": "k"}),
    # --host is a URL since config set validates it (newcomer issue, item 6)
    ('[profile]\n"host" = "a"\n', ["--host", "http://b"], {"host": "http://b"}),
    ('profile = {host = "a"}\n', ["--api-key", "k"], {"host": "a", "api_key": "k"}),
    ('profile.host = "a"\n', ["--api-key", "k"], {"host": "a", "api_key": "k"}),
    ('[profile]\nhost = """a\n[x]\n"""\n', ["--api-key", "k"], {"host": "a\n[x]\n", "api_key": "k"}),
], ids=["quoted-header", "quoted-key", "inline-table", "dotted-keys", "multiline-string"])
def test_set_merges_into_any_valid_profile_form(bl, default_config, original, args, expected):
    write(default_config, original)
    result = bl("config", "set", *args)
    assert result.code == 0, result.err
    profile = tomllib.loads(default_config.read_text(encoding="utf-8"))["profile"]
    assert profile == expected


# ------------------------------------------------------------- invalid file
@pytest.mark.parametrize(("text", "detail"), [
    ("[profile\nhost = 1\n", None),
    ('[profile]\nhost = "a"\nhost = "b"\n', None),
    ("[profile]\napi_key = 5\n", "profile.api_key must be a string"),
    ('profile = "x"\n', "[profile] must be a table"),
])
def test_invalid_config_file_is_a_usage_error(bl, tmp_path, text, detail):
    config = write(tmp_path / "bad.toml", text)
    result = bl("--config", str(config), "config", "show")
    assert result.code == 2
    assert result.out == ""
    assert "Traceback" not in result.err
    last = result.err.splitlines()[-1]
    assert last.startswith(f"Error: invalid config file {config}: ")
    if detail:
        assert last.endswith(detail)


@pytest.mark.parametrize("command", [["metrics", "get", "-j", "J1"],
                                     ["report", "download", "-g", "G1"],
                                     ["overview", "get", "-g", "G1"]])
def test_invalid_config_file_stops_every_command_before_any_request(bl, sandbox, tmp_path, command):
    config = write(tmp_path / "bad.toml", "[profile\n")
    before = sandbox.stats["requests"]
    result = bl("--config", str(config), "--host", sandbox.url, *command)
    assert result.code == 2
    assert result.out == ""
    assert "Traceback" not in result.err
    assert f"invalid config file {config}: " in result.err
    assert sandbox.stats["requests"] == before


def test_invalid_default_config_file_is_reported(bl, default_config):
    write(default_config, "not toml at all\n")
    result = bl("config", "show")
    assert result.code == 2
    assert f"invalid config file {default_config}" in result.err


def test_unreadable_config_is_an_error(bl, tmp_path):
    directory = tmp_path / "is-a-dir.toml"
    directory.mkdir()
    result = bl("--config", str(directory), "config", "show")
    assert result.code == 2
    assert str(directory) in result.err
    assert "Traceback" not in result.err


def test_missing_config_file_is_fine(bl, tmp_path):
    data = show(bl, "--config", str(tmp_path / "nope.toml"))
    assert data["host"] == DEFAULT_HOST and data["api_key"] is None
