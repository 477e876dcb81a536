"""Find, validate, compile and cache the endpoint table.

The YAML table is the source of truth, but parsing it (and importing jsonschema
to validate it) costs far more than a CLI start can afford.  So the table is
compiled once into plain JSON, keyed by the SHA-256 of the YAML bytes and the
package version, and stored in the user cache directory.  Every later start
reads ~a few KB of JSON instead.  A changed table or a new package version
changes the key, so a stale compile can never be used.

If the cache directory is not writable the compile simply stays in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..version import __version__
from .locate import _PKG_DIR, SCHEMA_NAME, SPEC_NAME, SpecError, spec_dir
from .model import Spec

__all__ = ["SCHEMA_NAME", "SPEC_NAME", "SpecError", "cache_key", "load_model", "load_spec", "spec_dir"]


def user_cache_dir(name: str, override_env: str) -> Path:
    """``$<override_env>``, else ``$XDG_CACHE_HOME/<name>``, else ``~/.cache/<name>``."""
    override = os.environ.get(override_env)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / name


def cache_dir() -> Path:
    return user_cache_dir("benchloop", "BENCHLOOP_CACHE_DIR")


# Compiling the table runs modules of this package only (the compiler, its lints, the model
# they build to check outputs, the template syntax; tests/test_layers.py holds that), so a
# change to any of them makes a new cache key.
_TABLE_DIR = _PKG_DIR / "table"


def cache_key(raw: bytes) -> str:
    """Content hash of the table, plus the package version and the compiler's files.

    The files of ``table/`` are identified by size and mtime (a stat, not a read), so a
    development checkout never runs a compile made by older compiler code.
    """
    stamp = [__version__]
    for path in sorted(_TABLE_DIR.glob("*.py")):
        try:
            st = path.stat()
            stamp.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            stamp.append(path.name)
    schema = spec_dir() / SCHEMA_NAME
    try:
        stamp.append(hashlib.sha256(schema.read_bytes()).hexdigest())
    except OSError:
        pass
    digest = hashlib.sha256(raw + b"\0" + "|".join(stamp).encode()).hexdigest()
    return digest[:24]


_MEMO: dict[str, dict[str, Any]] = {}


def load_spec(path: Path | None = None, *, use_cache: bool = True) -> dict[str, Any]:
    """Return the compiled table (a plain dict), compiling it when needed."""
    path = path or spec_dir() / SPEC_NAME
    raw = path.read_bytes()
    key = cache_key(raw)
    if key in _MEMO:
        return _MEMO[key]
    cached = cache_dir() / f"spec-{key}.json"
    if use_cache:
        try:
            spec = json.loads(cached.read_bytes())
            _MEMO[key] = spec
            return spec
        except (OSError, ValueError):
            pass
    from .compiler import compile_spec  # heavy: yaml + jsonschema

    spec = compile_spec(raw, path)
    _MEMO[key] = spec
    if use_cache:
        _store(cached, spec)
    return spec


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
