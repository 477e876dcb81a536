"""Where an API key comes from: one policy for every service of the table.

A service's key (its ``auth:`` in the table, model ``Sources``) is the first of:

1. the running command's flag (``--api-key``; ``--api-key -`` reads it from stdin, so that it
   never shows in a process list);
2. the service's environment variables (``BENCHLOOP_API_KEY``, ``BENCHMARK_API_KEY``);
3. the first line printed by the command its command variable names
   (``BENCHLOOP_API_KEY_COMMAND``), as AWS's ``credential_process`` and git's credential
   helpers do;
4. the configuration file, the chosen profile's table before ``[profile]``: the key itself
   (``api_key``), a command (``api_key_command``) or an entry of the OS keyring
   (``api_key_keyring = NAME``; the ``keyring`` extra).  Within one table the key itself wins,
   then the command, then the keyring (``config set`` keeps one of them per table).

A key command is split like a shell line (``shlex``) and run without a shell - write
``sh -c '...'`` for a pipe - with stdin closed (it cannot eat ids piped to ``-j -``), its
stderr passed through (a password manager may ask there), at most ``COMMAND_TIMEOUT``
seconds.  Its output is never shown, logged or put in an error (it may hold the key); a
command that fails, prints nothing or times out is a configuration failure (``KeyUnavailable``:
exit 3, as for a key the backend refused; ``bl config check`` reports it as a failed check).  The key
is never given to a child process as an argument: no process list ever shows it.

Where each key came from is an *origin* (``Settings.sources``): ``--api-key``,
``--api-key -``, a variable name, ``command:VAR``, ``file:TABLE`` (the key in the file),
``file:TABLE:KEY`` (a command or a keyring entry named by ``KEY`` of ``TABLE``), or
``default``; :func:`describe` words it for ``config show`` and error messages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..base.errors import ConfigError, KeyUnavailable
from ..table.model import Sources

COMMAND_TIMEOUT = 60.0
STDIN_ORIGIN = "--api-key -"
INSTALL_KEYRING = "pip install 'benchloop-client[keyring]'"


def find_key(sources: Sources, given: str | None, given_origin: str, file_values: Mapping[str, Any],
             tables: Mapping[str, str], config_file: Any) -> tuple[str | None, str]:
    """``(key, origin)`` of a service's key (the module docstring's order); ``(None, "default")``
    when there is none.  Runs a key command or reads the keyring only when it is the one chosen."""
    if given:
        return given, given_origin
    for name in sources.env:
        if os.environ.get(name):
            return os.environ[name], name
    for name in sources.command_env:
        if os.environ.get(name):
            try:
                return run_command(os.environ[name], f"the command in {name}"), f"command:{name}"
            except KeyUnavailable as exc:
                exc.origin = f"command:{name}"
                raise
    chosen = _file_source(sources, file_values, tables)
    if chosen is None:
        return (sources.default, "default") if sources.default else (None, "default")
    key, table = chosen
    origin = f"file:{table}" if key == sources.config else f"file:{table}:{key}"
    where = describe(origin, sources.config or key, config_file)
    value = str(file_values[key])
    try:
        if key == sources.command_config:
            return run_command(value, where), origin
        if key == sources.keyring:
            return keyring_key(value, where), origin
    except KeyUnavailable as exc:
        exc.origin = origin
        raise
    return value, origin


def _file_source(sources: Sources, values: Mapping[str, Any], tables: Mapping[str, str]) -> tuple[str, str] | None:
    """The file key that gives the key (a chosen profile's table before [profile]; in one table
    the key itself, then a command, then a keyring entry) and its table."""
    kinds = [k for k in (sources.config, sources.command_config, sources.keyring) if k]
    found = [(0 if tables.get(k, "profile").startswith("profiles.") else 1, i, k)
             for i, k in enumerate(kinds) if values.get(k)]
    if not found:
        return None
    _, _, key = min(found)
    return key, tables.get(key, "profile")


def describe(origin: str, key: str, config_file: Any) -> str:
    """An origin in words: ``--api-key``, ``BENCHLOOP_API_KEY``, ``the command in
    BENCHLOOP_API_KEY_COMMAND``, ``api_key in FILE [profile]``, ``the command of api_key_command
    in FILE [profile]``, ``the OS keyring (api_key_keyring in FILE [profile])``, ``the default``."""
    if origin == STDIN_ORIGIN:
        return "stdin (--api-key -)"
    if origin.startswith("command:"):
        return f"the command in {origin[8:]}"
    if origin.startswith("file:"):
        table, _, name = origin[5:].partition(":")
        if not name:
            return f"{key} in {config_file} [{table}]"
        if name.endswith("_keyring"):
            return f"the OS keyring ({name} in {config_file} [{table}])"
        return f"the command of {name} in {config_file} [{table}]"
    return "the default" if origin == "default" else origin


def run_command(command: str, where: str, timeout: float = COMMAND_TIMEOUT) -> str:
    """The first line a key command prints (see the module docstring)."""
    import shlex
    import subprocess

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise KeyUnavailable(f"{where} cannot be read as a command line: {exc}") from None
    if not argv:
        raise KeyUnavailable(f"{where} is empty")
    name = os.path.basename(argv[0])
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=None,
                              timeout=timeout, check=False)
    except FileNotFoundError:
        raise KeyUnavailable(f"{where}: no such program: {argv[0]}") from None
    except PermissionError:
        raise KeyUnavailable(f"{where}: {argv[0]} cannot be run (permission denied)") from None
    except subprocess.TimeoutExpired:
        raise KeyUnavailable(f"{where}: {name} gave no key within {timeout:g} s (stopped)") from None
    except OSError as exc:
        raise KeyUnavailable(f"{where}: {argv[0]} cannot be run ({exc.strerror or exc})") from None
    if done.returncode != 0:
        raise KeyUnavailable(f"{where}: {name} failed (exit status {done.returncode}); its output is not shown, "
                          "since it may hold the key")
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    key = lines[0].strip() if lines else ""
    if not key:
        raise KeyUnavailable(f"{where}: {name} printed no key on its first line")
    return key


def _keyring(what: str) -> Any:
    try:
        from . import keyring_store
    except ImportError:
        raise ConfigError(f"{what} needs the keyring extra: {INSTALL_KEYRING}") from None
    return keyring_store


def keyring_key(name: str, where: str) -> str:
    """The key stored in the OS keyring under ``name`` (service ``benchloop-client``)."""
    try:
        store = _keyring(where)
    except ConfigError as exc:  # no keyring extra: no key from there either
        raise KeyUnavailable(str(exc)) from None
    try:
        value = store.get(name)
    except Exception as exc:  # noqa: BLE001 - every backend failure is the keyring's (locked, no backend)
        raise KeyUnavailable(f"{where}: the OS keyring cannot be read ({type(exc).__name__})") from None
    if not value:
        raise KeyUnavailable(f"{where}: the OS keyring has no key {name!r} of {store.SERVICE} "
                             "(store one with 'bl config set --api-key - --api-key-keyring')")
    return value


def store_in_keyring(name: str, key: str) -> None:
    store = _keyring("--api-key-keyring")
    try:
        store.put(name, key)
    except Exception as exc:  # noqa: BLE001 - as in keyring_key
        raise ConfigError(f"the OS keyring cannot store the key ({type(exc).__name__}); nothing was written") from None


def read_stdin_key(stream: Any, flag: str = "--api-key") -> str:
    """A key given as ``-``: the first line of stdin (asked for without echo on a terminal)."""
    if getattr(stream, "isatty", lambda: False)():
        import getpass

        key = getpass.getpass("API key: ")
    else:
        key = stream.readline()
    key = key.strip()
    if not key:
        raise ConfigError(f"{flag} - read no key from stdin (its first line is empty)")
    return key
