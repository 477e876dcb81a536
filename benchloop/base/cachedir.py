"""Where bl keeps what it can make again: the platform's user cache directory.

``platformdirs`` says where that is: ``~/Library/Caches/benchloop`` on macOS,
``%LOCALAPPDATA%\\benchloop\\Cache`` on Windows, and on Linux and the other Unixes the XDG
Base Directory rule, ``$XDG_CACHE_HOME/benchloop`` (when that is an absolute path), else
``~/.cache/benchloop``.  ``BENCHLOOP_CACHE_DIR`` overrides it for the compiled table
(``cache_dir``).  The configuration file is not a cache: it stays ``~/.benchloop/config.toml``,
where the official client keeps it.

On the XDG platforms the rule is applied here without importing platformdirs: every command
but ``--version`` reads the compiled table from this directory, ``bl --help`` included, and
importing platformdirs costs ~12 ms there (its Unix module imports tempfile, shutil, random,
bz2 and lzma), a quarter of a help page.  ``tests/test_cachedir.py`` holds the two to the
same answer, so the rule cannot drift from the library's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "benchloop"
# Where platformdirs has a rule of its own (its package picks the module for the platform).
_NOT_XDG = ("win32", "darwin", "ios", "android")


def user_cache_dir(name: str = APP) -> Path:
    """The platform's user cache directory for ``name`` (platformdirs' ``user_cache_dir``)."""
    if sys.platform in _NOT_XDG:
        import platformdirs

        return Path(platformdirs.user_cache_dir(name, appauthor=False))
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, empty or relative: the XDG default
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / name


def cache_dir(name: str = APP, override_env: str = "BENCHLOOP_CACHE_DIR") -> Path:
    """``$<override_env>`` when set, else the user cache directory for ``name``."""
    override = os.environ.get(override_env)
    return Path(override) if override else user_cache_dir(name)
