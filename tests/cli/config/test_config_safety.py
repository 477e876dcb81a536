"""`config set` refuses values that can never work, keeps symlinks and concurrent calls'
values, and secrets stay masked (newcomer issue item 6; issue 17's config items)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


@pytest.fixture
def default_config() -> Path:
    return Path(os.environ["HOME"]) / ".benchloop" / "config.toml"


def usage_line(result) -> str:
    assert result.code == 2, result
    assert result.err.splitlines()[0] == "Usage: bl config set [OPTIONS]"
    return result.err.splitlines()[-1]


# ------------------------------------------------------------- validation
def test_set_refuses_a_host_without_scheme(bl, default_config):
    line = usage_line(bl("config", "set", "--host", "127.0.0.1:8765"))
    assert line == ("Error: invalid --host '127.0.0.1:8765': expected http://HOST[:PORT][/PATH] or https://HOST[:PORT][/PATH] "
                    "(for example: http://127.0.0.1:8765)")
    assert not default_config.exists()


def test_set_refuses_an_empty_key(bl, default_config):
    line = usage_line(bl("config", "set", "--api-key", ""))
    assert line == "Error: --api-key is empty (is the variable you passed unset?); nothing was written"
    assert not default_config.exists()


@pytest.mark.parametrize("key", [" padded", "new\nline", "clé"])
def test_set_refuses_a_key_no_header_can_carry(bl, default_config, key):
    assert usage_line(bl("config", "set", "--api-key", key)).startswith("Error: invalid --api-key: ")
    assert not default_config.exists()


def test_set_accepts_a_good_host(bl, default_config):
    assert bl("config", "set", "--host", "http://127.0.0.1:8765").code == 0
    assert tomllib.loads(default_config.read_text())["profile"]["host"] == "http://127.0.0.1:8765"


# --------------------------------------------------------------- symlinks
def test_set_writes_through_a_symlink_and_keeps_it(bl, tmp_path):
    real = tmp_path / "dotfiles" / "benchloop.toml"
    real.parent.mkdir()
    real.write_text("# mine\n[profile]\nhost = \"http://a\"\n", encoding="utf-8")
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    result = bl("config", "set", "--config", str(link), "--api-key", "k")
    assert result.code == 0, result.err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert tomllib.loads(real.read_text()) == {"profile": {"host": "http://a", "api_key": "k"}}
    assert real.read_text().startswith("# mine\n")
    assert real.stat().st_mode & 0o777 == 0o600


def test_set_through_a_dangling_symlink_creates_the_target(bl, tmp_path):
    real = tmp_path / "elsewhere" / "c.toml"
    real.parent.mkdir()
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    assert bl("config", "set", "--config", str(link), "--api-key", "k").code == 0
    assert link.is_symlink() and tomllib.loads(real.read_text()) == {"profile": {"api_key": "k"}}


# ------------------------------------------------------------ concurrency
def test_concurrent_sets_keep_every_profile(tmp_path):
    config = tmp_path / "c.toml"
    env = {**os.environ, "BENCHLOOP_NO_UPDATE_CHECK": "1"}
    procs = [subprocess.Popen([sys.executable, "-m", "benchloop", "config", "set", "--config", str(config),
                               "--profile", f"p{n}", "--api-key", f"key-{n}"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(12)]
    for proc in procs:
        proc.communicate(timeout=60)
        assert proc.returncode == 0
    profiles = tomllib.loads(config.read_text())["profiles"]
    assert profiles == {f"p{n}": {"api_key": f"key-{n}"} for n in range(12)}


# ---------------------------------------------------------------- masking
def test_show_masks_the_user_info_of_the_host(bl):
    result = bl("--host", "https://me:s3cret@backend.example", "config", "show")
    assert result.code == 0
    assert json.loads(result.out)["host"] == "https://***@backend.example"
    assert "s3cret" not in result.out + result.err


def test_a_host_with_user_info_is_refused_before_any_request_and_masked(bl, sandbox):
    url = sandbox.url.replace("127.0.0.1", "me:s3cret@localhost.localdomain")
    sandbox.reset_stats()
    result = bl("--host", url, "--api-key", "k", "--retry", "0", "--timeout", "2", "metrics", "get", "-j", "X")
    assert result.code == 2, result.err
    assert "invalid backend URL 'http://***@localhost.localdomain:" in result.err
    assert "s3cret" not in result.err and "me:" not in result.err
    assert sandbox.stats.get("requests", 0) == 0


@pytest.mark.parametrize(("key", "shown"), [
    ("abcdefg", "***"),                       # 7 characters: the old rule showed 6 of them
    ("abcdefghijkl", "***"),
    ("abcdefghijklmnop", "ab***mnop"),        # 16 and more: at most 6 shown
])
def test_masking_never_shows_most_of_a_key(bl, key, shown):
    result = bl("--api-key", key, "config", "show")
    assert json.loads(result.out)["api_key"] == shown
