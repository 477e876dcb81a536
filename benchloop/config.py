"""Configuration: file, environment and flags (docs/contract.md 4).

Precedence is flag > environment > file > default.  The file is TOML with a
``[profile]`` table (``host``, ``api_key``, ``output_dir``).  Unlike the
reference client, an invalid file is an error (exit 2) instead of being
silently ignored, and ``config set`` edits only the keys it owns: other
tables, keys and comments survive, the file is replaced atomically with mode
0600 and its directory is created 0700.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

DEFAULT_HOST = "https://benchmark-analysis.alibaba-inc.com"
DEFAULT_CONFIG = "~/.benchloop/config.toml"
KEYS = ("host", "api_key", "output_dir")


def config_path(flag: str | None = None) -> Path:
    raw = flag or os.environ.get("BENCHLOOP_CONFIG") or DEFAULT_CONFIG
    return Path(os.path.expanduser(raw))


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


def read_config(path: Path, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"invalid config file {path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    _warn_if_readable(path, warn)
    try:
        return _toml_loads(text)
    except ValueError as exc:
        raise ConfigError(f"invalid config file {path}: {exc}") from None


def _warn_if_readable(path: Path, warn: Callable[[str], None] | None = None) -> None:
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & 0o077:
        message = f"config file {path} is readable by other users (mode {mode & 0o777:o}); run: chmod 600 {path}"
        if warn is not None:  # the Python client logs it instead of printing
            warn(message)
            return
        import sys

        sys.stderr.write(f"[warn] {message}\n")


def _table(table: Any, name: str, where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ConfigError(f"invalid config file {where}: [{name}] must be a table")
    for key in KEYS:
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"invalid config file {where}: {name}.{key} must be a string")
    return table


def read_profile(path: Path, profile: str | None = None,
                 warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The [profile] table, overlaid with [profiles.NAME] when a profile is chosen."""
    data = read_config(path, warn)
    values = dict(_table(data.get("profile", {}), "profile", str(path)))
    if profile:
        named = data.get("profiles", {})
        if not isinstance(named, dict) or profile not in named:
            known = ", ".join(sorted(named)) if isinstance(named, dict) and named else "none"
            raise ConfigError(f"unknown profile {profile!r} in {path} (defined: {known})")
        values.update(_table(named[profile], f"profiles.{profile}", str(path)))
    return values


@dataclass
class Settings:
    host: str
    api_key: str | None
    output_dir: str
    config_file: Path
    profile: str | None = None
    values: dict[str, Any] = field(default_factory=dict)


def resolve(api_key: str | None, host: str | None, output_dir: str | None, config: str | None,
            profile_name: str | None = None, warn: Callable[[str], None] | None = None) -> Settings:
    path = config_path(config)
    env = os.environ
    chosen = profile_name or env.get("BENCHLOOP_PROFILE") or None
    profile = read_profile(path, chosen, warn)
    key = api_key or env.get("BENCHLOOP_API_KEY") or env.get("BENCHMARK_API_KEY") or profile.get("api_key") or None
    chosen_host = host or env.get("BENCHLOOP_HOST") or profile.get("host") or DEFAULT_HOST
    out = output_dir or env.get("BENCHLOOP_OUTPUT_DIR") or profile.get("output_dir") or "."
    return Settings(chosen_host.rstrip("/"), key, out, path, chosen, profile)


def merge_profile(text: str, values: dict[str, str], profile: str | None = None) -> str:
    """Set ``values`` in [profile] (or [profiles.NAME]) of ``text``, keeping everything else.

    tomlkit edits the document in place, so comments, other tables, key order
    and any valid spelling of the table (quoted header, inline table, dotted
    keys) survive, and values are escaped correctly.
    """
    import tomlkit

    document = tomlkit.parse(text)
    if profile:
        tables = document.setdefault("profiles", tomlkit.table(is_super_table=True))
        target = tables.setdefault(profile, tomlkit.table())
    else:
        target = document.setdefault("profile", tomlkit.table())
    for key in KEYS:
        if key in values:
            target[key] = values[key]
    return document.as_string()


def write_config(path: Path, values: dict[str, str], profile: str | None = None) -> None:
    from .writers import atomic_write

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"invalid config file {path}: not UTF-8") from None
    try:
        _toml_loads(text)
        merged = merge_profile(text, values, profile)
    except ValueError as exc:  # tomllib and tomlkit parse errors are ValueErrors
        raise ConfigError(f"invalid config file {path}: {exc}") from None
    written = _toml_loads(merged)  # never write a file we could not read back
    table = written["profiles"][profile] if profile else written["profile"]
    if any(table.get(k) != v for k, v in values.items()):
        raise ConfigError(f"cannot update {path} safely; edit it by hand")
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=0o700)
    atomic_write(str(path), merged, mode=0o600)  # never readable by others, not even briefly


def mask(secret: str | None) -> str | None:
    if not secret:
        return secret
    return secret[:2] + "***" + secret[-4:] if len(secret) > 6 else "***"
