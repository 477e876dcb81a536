"""Find, validate, compile and cache the endpoint table.

The YAML table is the source of truth, but parsing it (and importing jsonschema
to validate it) costs far more than a CLI start can afford.  So the table is
compiled once into plain JSON, keyed by the SHA-256 of the YAML bytes and the
package version, and stored in the user cache directory (``base/cachedir.py``:
platformdirs' rule, or ``BENCHLOOP_CACHE_DIR``).  Every later start
reads ~a few KB of JSON instead.  A changed table or a new package version
changes the key, so a stale compile can never be used.

If the cache directory is not writable the compile simply stays in memory.

Finding the key costs more than reading the compile: reading and hashing the table
and its schema (~140 KB), and importing ``hashlib`` (OpenSSL), was a third of
``bl --help``.  So the key is also remembered in a small index next to the compiles,
under what identifies the two files without reading them (path, size, modification
and change times, inode, as ``git`` and ``make`` trust them) plus the package version
and the compiler's files; a start whose files match an entry takes its key from
there.  A file changed within the last two seconds is never entered (a later change
in the same clock tick would otherwise go unnoticed: git's "racy clean" files), and
anything unexpected (no entry, no compile under its key) falls back to hashing.
Within one process the table is read once (``_MEMO``; the files are checked by a stat).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..base.cachedir import cache_dir
from ..version import __version__
from .locate import _PKG_DIR, SCHEMA_NAME, SPEC_NAME, SpecError, spec_dir

TYPE_CHECKING = False  # not typing's: importing typing costs every --help ~5 ms
if TYPE_CHECKING:
    from typing import Any

    from .model import Spec

__all__ = ["SCHEMA_NAME", "SPEC_NAME", "SpecError", "cache_key", "known_key", "load_model", "load_spec", "spec_dir"]


# Compiling the table runs modules of this package only (the compiler, its lints, the model
# they build to check outputs, the template syntax; tests/test_layers.py holds that), so a
# change to any of them makes a new cache key.
_TABLE_DIR = _PKG_DIR / "table"


def _compiler_stamp() -> list[str]:
    stamp = [__version__]
    for path in [*sorted(_TABLE_DIR.glob("*.py")), _PKG_DIR / "base" / "frozen.py"]:
        try:
            st = path.stat()
            stamp.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            stamp.append(path.name)
    return stamp


def cache_key(raw: bytes) -> str:
    """Content hash of the table, plus the package version and the compiler's files.

    The files of ``table/`` (and ``base/frozen.py``, the one module outside it that
    compiling runs) are identified by size and mtime (a stat, not a read), so a
    development checkout never runs a compile made by older compiler code.
    """
    import hashlib

    stamp = _compiler_stamp()
    schema = spec_dir() / SCHEMA_NAME
    try:
        stamp.append(hashlib.sha256(schema.read_bytes()).hexdigest())
    except OSError:
        pass
    digest = hashlib.sha256(raw + b"\0" + "|".join(stamp).encode()).hexdigest()
    return digest[:24]


_MEMO: dict[Any, Any] = {}  # key -> compiled table; ("files", fingerprint) -> key
_INDEX_NAME = "spec-index.json"
_INDEX_ENTRIES = 16
_SETTLED_NS = 2_000_000_000  # a file changed more recently than this may change again unseen


def _fingerprint(path: Path) -> tuple[str, int] | None:
    """What identifies the table and its schema without reading them, and when they last
    changed; None when a file cannot be seen."""
    stamp = _MEMO.get("stamp")  # the compiler's files: code, which a process does not reload
    if stamp is None:
        stamp = _MEMO["stamp"] = _compiler_stamp()
    try:
        parts = [os.path.abspath(path), *stamp]
        changed = 0
        for file in (path, spec_dir() / SCHEMA_NAME):
            st = file.stat()
            parts += [str(file), str(st.st_size), str(st.st_mtime_ns), str(st.st_ctime_ns), str(st.st_ino)]
            changed = max(changed, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        return None
    return "|".join(parts), changed


def _read_index() -> dict[str, str]:
    try:
        index = json.loads((cache_dir() / _INDEX_NAME).read_bytes())
    except (OSError, ValueError):
        return {}
    return index if isinstance(index, dict) else {}


def _remember(fingerprint: tuple[str, int], key: str) -> None:
    """Enter the key under the files' fingerprint (unless they changed a moment ago)."""
    import time

    if time.time_ns() - fingerprint[1] < _SETTLED_NS:
        return
    index = _read_index()
    index.pop(fingerprint[0], None)
    index[fingerprint[0]] = key
    _store(cache_dir() / _INDEX_NAME, dict(list(index.items())[-_INDEX_ENTRIES:]))


def _cached(key: str) -> dict[str, Any] | None:
    try:
        spec = json.loads((cache_dir() / f"spec-{key}.json").read_bytes())
    except (OSError, ValueError):
        return None
    return spec if isinstance(spec, dict) else None


def known_key() -> str | None:
    """The key of the installed table's compile when the index already knows it (a stat and a
    small read, nothing compiled or hashed); None otherwise.  Caches of what is derived from
    the table (help pages) are kept under it."""
    fingerprint = _fingerprint(spec_dir() / SPEC_NAME)
    if fingerprint is None:
        return None
    key = _MEMO.get(("files", fingerprint[0])) or _read_index().get(fingerprint[0])
    return key if isinstance(key, str) else None


def load_spec(path: Path | None = None, *, use_cache: bool = True) -> dict[str, Any]:
    """Return the compiled table (a plain dict), compiling it when needed."""
    path = path or spec_dir() / SPEC_NAME
    fingerprint = _fingerprint(path) if use_cache else None
    if fingerprint is not None:
        key = _MEMO.get(("files", fingerprint[0]))
        if key is None:
            key = _read_index().get(fingerprint[0])
            if isinstance(key, str) and key not in _MEMO:
                spec = _cached(key)
                if spec is not None:
                    _MEMO[key] = spec
        if isinstance(key, str) and key in _MEMO:
            _MEMO[("files", fingerprint[0])] = key
            return _MEMO[key]
    raw = path.read_bytes()
    key = cache_key(raw)
    if key not in _MEMO:
        cached = _cached(key) if use_cache else None
        if cached is None:
            from .compiler import compile_spec  # heavy: yaml + jsonschema

            cached = compile_spec(raw, path)
            if use_cache:
                _store(cache_dir() / f"spec-{key}.json", cached)
        _MEMO[key] = cached
    if fingerprint is not None:
        _MEMO[("files", fingerprint[0])] = key
        _remember(fingerprint, key)
    return _MEMO[key]


def _store(target: Path, spec: dict[str, Any]) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(spec, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        pass


_MODELS: dict[int, tuple[Any, Spec]] = {}


def load_model() -> Spec:
    """The model of the installed table, built once per compiled table."""
    data = load_spec()
    cached = _MODELS.get(id(data))
    if cached is None or cached[0] is not data:  # an id can be reused once its table is gone
        from .build import build_model

        cached = _MODELS[id(data)] = (data, build_model(data))
    return cached[1]
