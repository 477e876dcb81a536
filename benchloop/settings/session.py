"""Settings -> Runtime: what every front end (the CLI, the Python client) builds before a command.

``settings`` resolves the configuration exactly as docs/contract.md 4 says
(flag > environment > file > default, profiles) and applies the checks that
need no network (step 9 of contract 1.4): the CA bundle exists, the backend
URL is ``http(s)://HOST[:PORT][/PATH]``, the API key can travel in a header.
``runtime`` turns resolved settings into a :class:`pipeline.Runtime`: the key
masked in log lines, the plain-HTTP warning, and a factory for the one HTTP
client (created at the first request, never here).  This module imports no
command-line framework.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from ..base.errors import UsageError
from ..base.log import Log
from ..base.masking import known, shown_base_url, shown_url
from ..engine.runtime import Runtime
from ..table.load import load_model
from ..table.model import Service, Sources
from .config import Settings, key_problem, resolve, url_problem


def check_host(host: str, source: str | None = None) -> None:
    problem = url_problem(host)
    if problem:
        # A flag is the value just typed; a variable or a file needs naming.
        where = f" (from {source})" if source and not source.startswith("--") else ""
        raise UsageError(f"invalid backend URL {shown_base_url(host)!r}: {problem}{where}")


def check_ca_bundle(path: str, source: str) -> None:
    """A CA bundle must be a readable file of PEM certificates: anything else is a usage error
    now, not a TLS failure of every request later."""
    if not os.path.isfile(path):
        raise UsageError(f"CA bundle not found: {path} (from {source})")
    try:
        with open(path, "rb") as handle:
            head = handle.read(1 << 20)
    except OSError as exc:
        raise UsageError(f"CA bundle {path} (from {source}) cannot be read: {exc.strerror or exc}") from None
    if b"-----BEGIN CERTIFICATE-----" not in head and b"-----BEGIN TRUSTED CERTIFICATE-----" not in head:
        raise UsageError(f"CA bundle {path} (from {source}) is not a PEM file of certificates "
                         "(no '-----BEGIN CERTIFICATE-----' line)")


def check_timeout(timeout: float) -> None:
    """--timeout: a finite number of seconds above 0 (0, negative, nan and inf are usage errors)."""
    import math

    if not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise UsageError(f"--timeout must be a number of seconds above 0, got {timeout!r}")


def is_loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def settings(*, api_key: str | None = None, host: str | None = None, output_dir: str | None = None,
             config: str | None = None, profile: str | None = None, ca_bundle: str | None = None,
             warn: Callable[[str], None] | None = None, api_key_origin: str | None = None,
             keep_key_error: bool = False) -> Settings:
    """The resolved settings, checked; every problem is a ``UsageError`` (exit 2), before any request,
    but a key source that gives no key (``KeyUnavailable``, exit 3; with ``keep_key_error`` kept in
    ``key_error`` instead).  ``api_key_origin``: how a given key was given (``--api-key -``: stdin)."""
    resolved = resolve(api_key, host, output_dir, config, profile, warn=warn, api_key_origin=api_key_origin,
                       keep_key_error=keep_key_error)
    setting = load_model().global_option("ca_bundle").setting
    variable = next((name for name in (setting.env if setting else ()) if os.environ.get(name)), None)
    bundle = ca_bundle or (os.environ[variable] if variable else None)
    if bundle:
        check_ca_bundle(bundle, "--ca-bundle" if ca_bundle else str(variable))
    check_host(resolved.host, resolved.source("host"))
    key = resolved.api_key
    if key and key_problem(key):
        # Refused here, before any request: an HTTP header cannot carry it as typed.
        raise UsageError("the API key has characters an HTTP header cannot carry (non-ASCII, control "
                         f"characters or surrounding spaces); check how it was copied{_from(resolved, 'api_key')}")
    return resolved


def _from(resolved: Settings, key: str) -> str:
    source = resolved.source(key)
    return "" if source.startswith("--") else f" (from {source})"


def runtime(resolved: Settings, log: Log, *, timeout: float, retry: int, concurrency: int, pretty: bool = True,
            ca_bundle: str | None = None, stdout: Any = None) -> Runtime:
    """A Runtime over ``resolved``; its HTTP client is built at the first request."""
    check_timeout(timeout)
    log.secrets = known(*log.secrets, resolved.api_key)
    if resolved.host.startswith("http://") and not is_loopback(resolved.host) and resolved.api_key:
        log.warn(f"{shown_url(resolved.host)} is plain HTTP: the API key travels unencrypted")

    def http_factory(pool: int) -> Any:
        from ..transport.client import Http

        service = load_model().default_service  # the table's auth rules, as for any service
        return Http(resolved.host, resolved.api_key, timeout, retry, pool, log, ca_bundle=ca_bundle,
                    auth_header=service.auth_header, auth_statuses=service.auth_statuses,
                    login_hosts=service.login_hosts)

    def service_factory(service: Service, options: Mapping[str, Any]) -> Any:
        return service_http(service, options, resolved, log, timeout=timeout, retry=retry,
                            pool=concurrency, ca_bundle=ca_bundle)

    return Runtime(load_model(), log, pretty, concurrency, resolved.output_dir, http_factory, stdout,
                   service_factory=service_factory)


def service_value(sources: Sources, options: Mapping[str, Any], file_values: Mapping[str, Any]
                  ) -> tuple[str | None, str]:
    """``(value, where it came from)`` of one setting of a service: the command's option, then the
    environment, then the configuration file, then the default (first non-empty wins)."""
    candidates = [(sources.flag or f"--{sources.option}", options.get(sources.option) if sources.option else None)]
    candidates += [(name, os.environ.get(name)) for name in sources.env]
    if sources.config:
        candidates.append((f"{sources.config} in the config file", file_values.get(sources.config)))
    candidates.append(("the default", sources.default))
    return next(((str(v), where) for where, v in candidates if v), (None, "nowhere"))


def service_key(service: Service, options: Mapping[str, Any], resolved: Settings | Mapping[str, Any]
                ) -> tuple[str | None, str]:
    """``(key, where it came from, in words)`` of a service other than the default one: its option,
    variables, command, file key, command or keyring entry (``keys.py``, one policy for all).
    ``resolved``: the settings, or just the values of the file's profile."""
    from .keys import describe, find_key

    values, tables, config_file = ((resolved.values, resolved.tables, resolved.config_file)
                                   if isinstance(resolved, Settings) else (resolved, {}, "the config file"))
    sources = service.key
    given = options.get(sources.option) if sources.option else None
    key, origin = find_key(sources, str(given) if given else None, sources.flag or f"--{sources.option}",
                           values, tables, config_file)
    return key, describe(origin, sources.config or "key", config_file) if key else "nowhere"


def service_http(service: Service, options: Mapping[str, Any], resolved: Settings | Mapping[str, Any], log: Log,
                 *, timeout: float, retry: int, pool: int, ca_bundle: str | None = None) -> Any:
    """The HTTP client of a service other than the default one: its base URL, its key and auth
    header, its auth statuses (checked and warned about like the default service's)."""
    from ..transport.client import Http

    file_values = resolved.values if isinstance(resolved, Settings) else resolved
    url, url_from = service_value(service.base_url, options, file_values)
    if not url:
        raise UsageError(f"no {service.title} base URL is configured")
    problem = url_problem(url)
    if problem:
        where = f" (from {url_from})" if not url_from.startswith("--") else ""
        raise UsageError(f"invalid {service.title} base URL {shown_base_url(url)!r}: {problem}{where}")
    key, key_from = service_key(service, options, resolved)
    if key and key_problem(key):
        raise UsageError(f"the {service.title} API key has characters an HTTP header cannot carry "
                         "(non-ASCII, control characters or surrounding spaces); check how it was copied")
    log.secrets = known(*log.secrets, key)
    if key and url.startswith("http://") and not is_loopback(url):
        log.warn(f"{shown_url(url)} is plain HTTP: the {service.title} API key travels unencrypted")
    log.debug(f"{service.title} {shown_url(url)} (from {url_from}); API key "
              + (f"from {key_from}" if key else "not configured"))
    return Http(url.rstrip("/"), key, timeout, retry, pool, log, ca_bundle=ca_bundle,
                auth_header=service.auth_header, auth_statuses=service.auth_statuses,
                login_hosts=service.login_hosts)
