"""The cache directory is platformdirs' user cache directory (base/cachedir.py).

On Linux the XDG rule is applied without importing platformdirs (it costs every start
~12 ms); these tests hold it to platformdirs' own answer, so the two cannot drift.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from benchloop.base import cachedir
from benchloop.cli import update_check
from benchloop.table import load


@pytest.mark.skipif(sys.platform in cachedir._NOT_XDG, reason="the XDG rule applies on Linux and the other Unixes")
@pytest.mark.parametrize("xdg", [None, "", "relative/cache", "/abs/cache", "/abs/cache/"])
def test_the_xdg_rule_is_platformdirs(monkeypatch, tmp_path, xdg):
    monkeypatch.setenv("HOME", str(tmp_path))
    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    expected = Path(platformdirs.user_cache_dir("benchloop", appauthor=False))
    assert cachedir.user_cache_dir() == expected


def test_other_platforms_ask_platformdirs(monkeypatch):
    asked = []

    def user_cache_dir(name, appauthor=None):
        asked.append((name, appauthor))
        return "/Users/u/Library/Caches/benchloop"

    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(platformdirs, "user_cache_dir", user_cache_dir)
    assert cachedir.user_cache_dir() == Path("/Users/u/Library/Caches/benchloop")
    assert asked == [("benchloop", False)]


def test_benchloop_cache_dir_is_the_compiled_tables_and_xdg_the_rest(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "bl"))
    assert load.cache_dir() == tmp_path / "bl"
    # The update check's record is not the compiled table's: it stays in the user cache directory.
    assert update_check.cache_file() == tmp_path / "xdg" / "benchloop" / "version-check.json"
    monkeypatch.delenv("BENCHLOOP_CACHE_DIR")
    assert load.cache_dir() == tmp_path / "xdg" / "benchloop"


def test_a_help_page_does_not_import_platformdirs(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "BENCHLOOP_NO_UPDATE_CHECK": "1"}
    code = ("import sys, contextlib, io\nsys.argv = ['bl', '--help']\nfrom benchloop.entry import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    try: main()\n    except SystemExit: pass\n"
            "print('platformdirs' in sys.modules)")
    for _ in range(2):  # the second start reads the compiled table from the cache directory
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.strip() == "False", done.stderr[-2000:]
    assert (tmp_path / ".cache" / "benchloop").is_dir()
