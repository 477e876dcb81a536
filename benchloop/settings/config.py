"""Configuration: file, environment and flags (docs/contract.md 4).

Precedence is flag > environment > file > default.  The file is TOML with a
``[profile]`` table (``host``, ``api_key``, ``output_dir``).  Unlike the
reference client, an invalid file is an error (exit 2) instead of being
silently ignored, and ``config set`` edits only the keys it owns: other
tables, keys and comments survive, the file is replaced atomically with mode
0600 and its directory is created 0700.  ``config set`` refuses values that
can never work (a host that is not ``http(s)://HOST[:PORT][/PATH]``, an empty key),
writes through a symlinked file (the link stays), and holds a lock beside the
file so that concurrent calls never lose each other's values.

Where each value comes from is data in the table, like any service's settings:
the host and key are the default service's ``base_url`` and ``auth`` sources
(``services.benchloop``), the output directory, the configuration file and the
profile their global options' ``setting:``.  Every resolved value remembers where it
came from (``Settings.sources``), so that errors can name the flag, the variable, or
the file and key.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from ..base.errors import ConfigError, KeyUnavailable
from ..base.masking import shown_base_url, shown_key
from ..table.load import load_model
from ..table.model import Setting, Sources

# The keys of a [profile] table that must be text: the settings, and where a key comes from
# (``keys.py``: the key, a command printing it, its entry in the OS keyring).
KEYS = ("host", "api_key", "output_dir", "api_key_command", "api_key_keyring", "ap_base_url", "ap_api_key",
        "ap_api_key_command", "ap_api_key_keyring")
# The keys ``config set`` writes; the three ways to give the key: one per table.
SET_KEYS = ("host", "api_key", "output_dir", "api_key_command", "api_key_keyring")
KEY_KINDS = ("api_key", "api_key_command", "api_key_keyring")


def setting_sources() -> dict[str, Sources]:
    """Where host, api_key and output_dir come from when no flag gives them (the table's sources)."""
    spec = load_model()
    service = spec.default_service
    output = spec.global_option("output_dir").setting or Setting()
    return {"host": service.base_url, "api_key": service.key,
            "output_dir": Sources(env=output.env, config=output.config, default=output.default)}


def _from_env(sources: Setting | None) -> str | None:
    return next((os.environ[name] for name in (sources.env if sources else ()) if os.environ.get(name)), None)


def config_path(flag: str | None = None) -> Path:
    setting = load_model().global_option("config").setting
    raw = flag or _from_env(setting) or (setting.default if setting else None) or "~/.benchloop/config.toml"
    return Path(os.path.expanduser(raw))


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
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
        _warning(f"config file {path} is readable by other users (mode {mode & 0o777:o}); run: chmod 600 {path}",
                 warn)


def _table(table: Any, name: str, where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ConfigError(f"invalid config file {where}: [{name}] must be a table")
    for key in KEYS:
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"invalid config file {where}: {name}.{key} must be a string")
    return table


def read_profile(path: Path, profile: str | None = None, warn: Callable[[str], None] | None = None,
                 tables: dict[str, str] | None = None) -> dict[str, Any]:
    """The [profile] table, overlaid with [profiles.NAME] when a profile is chosen.

    ``tables``, when given, receives the table each key was read from."""
    data = read_config(path, warn)
    values = dict(_table(data.get("profile", {}), "profile", str(path)))
    found = dict.fromkeys(values, "profile")
    if profile:
        named = data.get("profiles", {})
        if not isinstance(named, dict) or profile not in named:
            known = ", ".join(sorted(named)) if isinstance(named, dict) and named else "none"
            raise ConfigError(f"unknown profile {profile!r} in {path} (defined: {known})")
        overlay = _table(named[profile], f"profiles.{profile}", str(path))
        values.update(overlay)
        found.update(dict.fromkeys(overlay, f"profiles.{profile}"))
    if tables is not None:
        tables.update(found)
    return values


class Settings(Struct):
    host: str
    api_key: str | None
    output_dir: str
    config_file: Path
    profile: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    # Where each of host, api_key, output_dir came from: a flag ("--host"), a variable
    # ("BENCHLOOP_HOST"), a table of the file ("file:profile", "file:profiles.pre") or "default";
    # for the key also stdin, a command or the keyring (``keys.py``).
    sources: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)  # file key -> the table it was read from
    # Why the key's source gave no key (a key command that failed), when ``resolve`` was asked
    # to keep that for ``bl config check`` instead of raising it.
    key_error: str | None = None

    def source(self, key: str) -> str:
        """Where ``key`` came from, in words: ``--host``, ``BENCHLOOP_HOST``,
        ``host in /path/config.toml [profiles.pre]``, ``the command in BENCHLOOP_API_KEY_COMMAND``,
        ``the OS keyring (api_key_keyring in ...)`` or ``the default``."""
        from .keys import describe

        return describe(self.sources.get(key, "default"), key, self.config_file)


def resolve(api_key: str | None, host: str | None, output_dir: str | None, config: str | None,
            profile_name: str | None = None, warn: Callable[[str], None] | None = None,
            api_key_origin: str | None = None, keep_key_error: bool = False) -> Settings:
    """The settings, each from its first source (``api_key_origin``: how a given key was given,
    ``--api-key -`` for stdin); a key command or keyring entry is read here.  A key source
    that gives no key raises ``KeyUnavailable``, or with ``keep_key_error`` leaves the key
    unset and says why in ``key_error``."""
    path = config_path(config)
    env = os.environ
    if config and not path.exists():  # a file named on the command line is meant to exist
        _warning(f"config file {path} (from --config) does not exist; using the environment and defaults", warn)
    chosen = profile_name or _from_env(load_model().global_option("profile").setting) or None
    tables: dict[str, str] = {}
    profile = read_profile(path, chosen, warn, tables)
    flags = {"host": host, "api_key": api_key, "output_dir": output_dir}
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    key_error = None
    for key, where in setting_sources().items():
        flag = where.flag or f"--{key.replace('_', '-')}"
        if key == "api_key":
            from .keys import find_key

            try:
                values[key], sources[key] = find_key(where, api_key, api_key_origin or flag, profile, tables, path)
            except KeyUnavailable as exc:
                if not keep_key_error:
                    raise
                values[key], sources[key], key_error = None, exc.origin, str(exc)
            continue
        candidates = [(flag, flags[key])] + [(name, env.get(name)) for name in where.env]
        if where.config:
            candidates.append((f"file:{tables.get(where.config)}", profile.get(where.config)))
        candidates.append(("default", where.default))
        sources[key], values[key] = next(((o, v) for o, v in candidates if v), ("default", where.default))
    return Settings(values["host"].rstrip("/"), values["api_key"] or None, values["output_dir"], path, chosen,
                    profile, sources, tables, key_error)


def _warning(message: str, warn: Callable[[str], None] | None) -> None:
    if warn is not None:  # the Python client logs it instead of printing
        warn(message)
        return
    import sys

    sys.stderr.write(f"[warn] {message}\n")


def url_problem(host: str) -> str | None:
    """Why ``host`` cannot be a backend base URL, or None when it can.

    User info (``user@``) is refused on the text, before any parser: an ``@`` anywhere in
    the authority (between ``//`` and the first ``/``, ``?`` or ``#``), plain or
    percent-encoded, is user info to some reader of URLs, and a URL read as two hosts once
    sent the key to one and the request to the other."""
    from urllib.parse import urlsplit

    authority = host.partition("//")[2]
    for mark in "/?#":
        authority = authority.partition(mark)[0]
    if "@" in authority or "%40" in authority.lower():
        return "it has user info ('user@'): give the host only, and the key with --api-key"
    try:
        parts = urlsplit(host)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 1) > 0
    except ValueError:  # a port that is not a number
        ok = False
    if not ok:
        return "expected http://HOST[:PORT][/PATH] or https://HOST[:PORT][/PATH]"
    if "?" in host or "#" in host:  # the endpoint paths are appended to it: a query would swallow them
        return "a base URL has no query (?...) or fragment (#...); requests go to <base URL>/openapi/..."
    return None


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot travel in an ``X-API-Key`` header, or None when it can."""
    if key.isascii() and key.isprintable() and key == key.strip():
        return None
    return ("it has characters an HTTP header cannot carry (non-ASCII, control characters or surrounding "
            "spaces); check how it was copied")


def check_set_values(values: dict[str, str]) -> None:
    """``config set`` refuses what no later command could use (exit 2)."""
    host = values.get("host")
    if host is not None:
        problem = "it is empty" if not host.strip() else url_problem(host.strip())
        if problem:
            shown = shown_base_url(host)
            example = f"http://{shown}" if host.strip() and "://" not in host and "@" not in shown else "https://HOST"
            raise ConfigError(f"invalid --host {shown!r}: {problem} (for example: {example})")
    key = values.get("api_key")
    if key is not None:
        if not key:
            raise ConfigError("--api-key is empty (is the variable you passed unset?); nothing was written")
        problem = key_problem(key)
        if problem:
            raise ConfigError(f"invalid --api-key: {problem}")
    if values.get("output_dir") == "":
        raise ConfigError("--output-dir is empty; nothing was written")


def merge_profile(text: str, values: dict[str, str], profile: str | None = None, remove: tuple[str, ...] = ()) -> str:
    """Set ``values`` in [profile] (or [profiles.NAME]) of ``text`` and take the ``remove`` keys
    out of it, keeping everything else.

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
    for key in SET_KEYS:
        if key in values:
            target[key] = values[key]
        elif key in remove and key in target:
            del target[key]
    return document.as_string()


def write_config(path: Path, values: dict[str, str], profile: str | None = None) -> None:
    """Merge ``values`` into the file at ``path`` (through a symlink: the link is kept), under a lock.
    A way to give the key replaces the others in that table (one per table, ``keys.py``)."""
    target = _link_target(path)
    if not target.parent.exists():
        target.parent.mkdir(parents=True, mode=0o700)
    remove = tuple(k for k in KEY_KINDS if k not in values) if any(k in values for k in KEY_KINDS) else ()
    with _locked(target):
        _write_config(target, path, values, profile, remove)


def _link_target(path: Path) -> Path:
    """The file a config path names: a symlink is written through, never replaced."""
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_file():
        raise ConfigError(f"cannot write config file {path}: it links to {target}, which is not a file")
    return target


class _locked:
    """An exclusive lock on ``<file>.lock`` while a ``config set`` reads, merges and replaces the file."""

    def __init__(self, path: Path):
        self.path = path.with_name(path.name + ".lock")
        self.fd: int | None = None

    def __enter__(self) -> None:
        from ..base.files import fcntl_or_none

        fcntl = fcntl_or_none()
        if fcntl is None:  # Windows: no advisory locks; the write stays atomic
            return
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ConfigError(f"cannot lock config file {self.path}: {exc.strerror}") from None
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock


def _write_config(path: Path, shown: Path, values: dict[str, str], profile: str | None,
                  remove: tuple[str, ...] = ()) -> None:
    from ..base.files import atomic_write

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
        merged = merge_profile(text, values, profile, remove)
    except ValueError as exc:  # tomllib and tomlkit parse errors are ValueErrors
        raise ConfigError(f"invalid config file {path}: {exc}") from None
    written = _toml_loads(merged)  # never write a file we could not read back
    table = written["profiles"][profile] if profile else written["profile"]
    if any(table.get(k) != v for k, v in values.items()) or any(k in table for k in remove):
        raise ConfigError(f"cannot update {shown} safely; edit it by hand")
    atomic_write(str(path), merged, mode=0o600)  # never readable by others, not even briefly


# The one masking policy is ``base.masking``; these names stay for the command line's modules.
mask = shown_key
mask_url = shown_base_url
