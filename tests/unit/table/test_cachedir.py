"""Where the compiled table and the update check's record are kept: platformdirs' user cache
directory for ``benchloop`` (``table/load.py``, ``cli/update_check.py``), the compiled table
elsewhere when ``BENCHLOOP_CACHE_DIR`` says so."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from benchloop.cli import update_check
from benchloop.table import load


def test_the_cache_directory_is_platformdirs_user_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("BENCHLOOP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    expected = Path(platformdirs.user_cache_dir("benchloop", appauthor=False))
    assert load.cache_dir() == expected
    assert update_check.cache_file() == expected / "version-check.json"


def test_benchloop_cache_dir_is_the_compiled_tables_and_xdg_the_rest(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "bl"))
    assert load.cache_dir() == tmp_path / "bl"
    # The update check's record is not the compiled table's: it stays in the user cache directory.
    assert update_check.cache_file() == tmp_path / "xdg" / "benchloop" / "version-check.json"
    monkeypatch.delenv("BENCHLOOP_CACHE_DIR")
    assert load.cache_dir() == tmp_path / "xdg" / "benchloop"
