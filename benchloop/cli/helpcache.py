"""Help pages kept as they were written: a repeated ``--help`` reads its page back.

``--help`` is the page people open most, and writing one means reading the compiled
table (~120 KB of JSON), building the part of the model it shows and wrapping text:
about as much as the interpreter's own start.  The page is a pure function of the
command line, the program name, ``COLUMNS`` (the width), the compiled table and the code
that writes it, so once written it is kept, and the same command line later reads it
back without importing the model.

The pages of one compiled table live in one file of the cache directory,
``help-<table key>.json``: a new table (a new key) starts a new file, and an entry also
names the package version and the size and modification time of the modules that write
pages, so a changed page writer never serves an old page.  Only a page that was written
alone on stdout, with exit 0 or 2, is kept (never an error or the version); the table's
key must already be known without hashing (``load.known_key``), else nothing is kept.
A file that cannot be read or written is ignored: the page is then written as usual.
"""

from __future__ import annotations

import json
import os

from ..table.load import _store, cache_dir, known_key
from ..version import __version__

# The modules a help page comes out of: a change to any of them makes every kept page stale.
_WRITERS = ("cli/app.py", "cli/helppages.py", "table/model.py", "table/build.py", "table/optiontypes.py")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ENTRIES = 64  # pages kept per table (the most recent)


def asks_for_help(tokens: list[str]) -> bool:
    """Whether ``tokens`` can only be asking for a page (what is worth looking up)."""
    return "--help" in tokens or "-h" in tokens or tokens[:1] == ["help"]


def _where(prog: str, tokens: list[str]) -> tuple[str, str] | None:
    key = known_key()
    if key is None:
        return None
    stamp = [__version__]
    for name in _WRITERS:
        try:
            st = os.stat(os.path.join(_PACKAGE, name))
        except OSError:
            return None
        stamp.append(f"{st.st_size}:{st.st_mtime_ns}")
    entry = json.dumps([stamp, prog, os.environ.get("COLUMNS", ""), tokens])
    return str(cache_dir() / f"help-{key}.json"), entry


def _pages(path: str) -> dict[str, list]:
    try:
        with open(path, "rb") as handle:
            pages = json.loads(handle.read())
    except (OSError, ValueError):
        return {}
    return pages if isinstance(pages, dict) else {}


def read(prog: str, tokens: list[str]) -> tuple[int, str] | None:
    """``(exit code, page)`` kept for this command line, or None."""
    where = _where(prog, tokens)
    if where is None:
        return None
    kept = _pages(where[0]).get(where[1])
    if isinstance(kept, list) and len(kept) == 2 and kept[0] in (0, 2) and isinstance(kept[1], str):
        return kept[0], kept[1]
    return None


def keep(prog: str, tokens: list[str], code: int, page: str) -> None:
    """Keep the page just written for this command line."""
    where = _where(prog, tokens)
    if where is None or code not in (0, 2):
        return
    pages = _pages(where[0])
    pages.pop(where[1], None)
    pages[where[1]] = [code, page]
    from pathlib import Path

    _store(Path(where[0]), dict(list(pages.items())[-_ENTRIES:]))
