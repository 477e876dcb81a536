"""Settings -> Runtime: what every front end (the CLI, the Python client) builds before a command.

``settings`` resolves the configuration exactly as docs/contract.md 4 says
(flag > environment > file > default, profiles) and applies the checks that
need no network (step 9 of contract 1.4): the CA bundle exists, the backend
URL is ``http(s)://HOST[:PORT]``, the API key can travel in a header.
``runtime`` turns resolved settings into a :class:`pipeline.Runtime`: the key
masked in log lines, the plain-HTTP warning, and a factory for the one HTTP
client (created at the first request, never here).  This module imports no
command-line framework.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .config import Settings, key_problem, mask_url, resolve, url_problem
from .errors import UsageError
from .log import Log
from .model import load_model
from .pipeline import Runtime


def check_host(host: str, source: str | None = None) -> None:
    problem = url_problem(host)
    if problem:
        # A flag is the value just typed; a variable or a file needs naming.
        where = f" (from {source})" if source and not source.startswith("--") else ""
        raise UsageError(f"invalid backend URL {mask_url(host)!r}: {problem}{where}")


def is_loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def settings(*, api_key: str | None = None, host: str | None = None, output_dir: str | None = None,
             config: str | None = None, profile: str | None = None, ca_bundle: str | None = None,
             warn: Callable[[str], None] | None = None) -> Settings:
    """The resolved settings, checked; every problem is a ``UsageError`` (exit 2), before any request."""
    resolved = resolve(api_key, host, output_dir, config, profile, warn=warn)
    bundle = ca_bundle or os.environ.get("SSL_CERT_FILE")
    if bundle and not os.path.isfile(bundle):
        raise UsageError(f"CA bundle not found: {bundle} (from {'--ca-bundle' if ca_bundle else 'SSL_CERT_FILE'})")
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
    if resolved.api_key and len(resolved.api_key) >= 4:
        log.secrets = (resolved.api_key,)
    if resolved.host.startswith("http://") and not is_loopback(resolved.host) and resolved.api_key:
        log.warn(f"{mask_url(resolved.host)} is plain HTTP: the API key travels unencrypted")

    def http_factory(pool: int) -> Any:
        from .http import Http

        return Http(resolved.host, resolved.api_key, timeout, retry, pool, log, ca_bundle=ca_bundle)

    return Runtime(load_model(), log, pretty, concurrency, resolved.output_dir, http_factory, stdout)
