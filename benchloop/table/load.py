"""Find, validate, compile and cache the endpoint table.

The YAML table is the source of truth, but parsing it (and decoding it with its
declaration, ``schema.py``, and linting it) costs far more than a CLI start can afford.
So the table is compiled once into plain JSON, keyed by the SHA-256 of the YAML bytes,
of the package version and of the compiler's files, and stored in the user cache
directory (platformdirs' ``user_cache_dir("benchloop")``, or ``BENCHLOOP_CACHE_DIR``).
Every later start reads the table, hashes it (~a few ms) and reads the compile under
that key instead of compiling.  A changed table or a new package version changes the
key, so a stale compile can never be used.

If the cache directory is not writable the compile simply stays in memory.
Within one process the table is read once per path (``_MEMO``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..version import __version__
from .locate import _PKG_DIR, SCHEMA_NAME, SPEC_NAME, SpecError, spec_dir

if TYPE_CHECKING:
    from typing import Any

    from .model import Spec

__all__ = ["SCHEMA_NAME", "SPEC_NAME", "SpecError", "cache_dir", "cache_key", "load_model", "load_spec",
           "spec_dir"]


def cache_dir() -> Path:
    """Where compiled tables are kept: ``$BENCHLOOP_CACHE_DIR`` when set, else the platform's
    user cache directory (platformdirs: ``$XDG_CACHE_HOME/benchloop`` or ``~/.cache/benchloop``
    on Linux, ``~/Library/Caches/benchloop`` on macOS, ``%LOCALAPPDATA%\\benchloop\\Cache`` on
    Windows)."""
    override = os.environ.get("BENCHLOOP_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("benchloop", appauthor=False))


# Compiling the table runs modules of this package only (the compiler, its lints, the model
# they build to check outputs, the template syntax; tests/contract/test_layers.py holds that), so a
# change to any of them makes a new cache key.
_TABLE_DIR = _PKG_DIR / "table"


def _compiler_stamp() -> list[str]:
    stamp = [__version__]
    for path in sorted(_TABLE_DIR.glob("*.py")):
        try:
            st = path.stat()
            stamp.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            stamp.append(path.name)
    return stamp


def cache_key(raw: bytes) -> str:
    """Content hash of the table, plus the package version and the compiler's files.

    The files of ``table/`` (all the code that compiling runs) are identified by size and
    mtime (a stat, not a read), so a development checkout never runs a compile made by
    older compiler code.
    """
    import hashlib

    stamp = _compiler_stamp()
    digest = hashlib.sha256(raw + b"\0" + "|".join(stamp).encode()).hexdigest()
    return digest[:24]


_MEMO: dict[Any, Any] = {}  # key -> compiled table; ("path", path) -> key


def _cached(key: str) -> dict[str, Any] | None:
    import msgspec  # the model's records are msgspec's: no extra import, and ~2x json.loads

    try:
        spec = msgspec.json.decode((cache_dir() / f"spec-{key}.json").read_bytes())
    except (OSError, msgspec.DecodeError):
        return None
    return spec if isinstance(spec, dict) else None


def load_spec(path: Path | None = None, *, use_cache: bool = True) -> dict[str, Any]:
    """Return the compiled table (a plain dict), compiling it when needed."""
    path = path or spec_dir() / SPEC_NAME
    known = _MEMO.get(("path", str(path))) if use_cache else None
    if known in _MEMO:
        return _MEMO[known]
    raw = path.read_bytes()
    key = cache_key(raw)
    if key not in _MEMO:
        cached = _cached(key) if use_cache else None
        if cached is None:
            from .compiler import compile_spec  # heavy: yaml, msgspec's decoding, the lints

            cached = compile_spec(raw, path)
            if use_cache:
                _store(cache_dir() / f"spec-{key}.json", cached)
        _MEMO[key] = cached
    if use_cache:
        _MEMO[("path", str(path))] = key
    return _MEMO[key]


def _store(target: Path, spec: dict[str, Any]) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        import json

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
