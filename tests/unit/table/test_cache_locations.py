"""Where bl keeps what it caches: the compiled table (``table/load.py``: the YAML table compiled
once, read back at each start) and the update check's record (``cli/update_check.py``), both in
platformdirs' user cache directory for ``benchloop``; ``BENCHLOOP_CACHE_DIR`` moves the compiled
table only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import platformdirs
import pytest

from benchloop.cli import update_check
from benchloop.table import load


def _user_cache(monkeypatch, tmp_path) -> Path:
    """The user cache directory, moved under ``tmp_path`` where the platform lets an environment
    variable move it (XDG_CACHE_HOME on Linux, HOME on macOS; Windows asks the shell)."""
    for name in ("XDG_CACHE_HOME", "HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    return Path(platformdirs.user_cache_dir("benchloop", appauthor=False))


def test_both_caches_live_in_the_user_cache_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("BENCHLOOP_CACHE_DIR", raising=False)
    expected = _user_cache(monkeypatch, tmp_path)
    if sys.platform != "win32":
        assert tmp_path in expected.parents  # the platform's rule followed the environment
    assert load.cache_dir() == expected
    assert update_check.cache_file() == expected / "version-check.json"


def test_benchloop_cache_dir_moves_the_compiled_table_only(monkeypatch, tmp_path):
    user = _user_cache(monkeypatch, tmp_path)
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "bl"))
    assert load.cache_dir() == tmp_path / "bl"
    # The update check's record is not the compiled table's: it stays in the user cache directory.
    assert update_check.cache_file() == user / "version-check.json"
    monkeypatch.delenv("BENCHLOOP_CACHE_DIR")
    assert load.cache_dir() == user


def test_a_table_is_compiled_once_into_the_cache_directory_and_read_back(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "bl"))
    monkeypatch.setattr(load, "_MEMO", {})
    table = tmp_path / load.SPEC_NAME
    raw = (load.spec_dir() / load.SPEC_NAME).read_bytes() + b"\n# a copy of its own: a cache key of its own\n"
    table.write_bytes(raw)
    compiled = load.load_spec(table)
    stored = tmp_path / "bl" / f"spec-{load.cache_key(raw)}.json"
    assert [p.name for p in (tmp_path / "bl").iterdir()] == [stored.name]  # no temporary file left
    assert json.loads(stored.read_text(encoding="utf-8")) == compiled

    # A new process (no memo) reads the stored table instead of compiling it again.
    monkeypatch.setattr(load, "_MEMO", {})
    from benchloop.table import compiler

    def refuse(*_a, **_k):
        raise AssertionError("compiled again")

    monkeypatch.setattr(compiler, "compile_spec", refuse)
    assert load.load_spec(table) == compiled
    monkeypatch.setattr(load, "_MEMO", {})
    with pytest.raises(AssertionError, match="compiled again"):  # the stand-in is the one called
        load.load_spec(table, use_cache=False)
