"""The runtime of one command: what it needs from the global options and the configuration.

A :class:`Runtime` holds the model, the log, the output settings, the worker pool
(``--concurrency``) and the HTTP clients: the default service's one client (built at
the first request, under a lock, so that every worker shares one connection pool) and
one per other service, each with its own origin and key.  The front ends build it
(``settings.session``); the engine only uses it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct, field

from ..base.errors import BenchloopError
from ..base.log import Counter, Log
from ..table.model import Progress, Service, Spec
from ..table.templates import Context, render_label
from .outcomes import Outcome
from .workers import run_pool


class Runtime(Struct):
    """What a command needs from the global options and configuration."""

    spec: Spec
    log: Log
    pretty: bool
    concurrency: int
    output_dir: str
    http_factory: Callable[[int], Any]
    stdout: Any
    _http: Any = None
    _lock: Any = field(default_factory=threading.Lock)
    # Connections to keep: at least one per thread that can be in a request at once.
    pool: int = 0
    # The clients of the other services (``services:``), by name: ``service_factory(service,
    # options)`` builds one at its first request, with that service's origin, key and auth
    # header only, so a key can never reach another service.
    service_factory: Callable[[Service, Mapping[str, Any]], Any] | None = None
    _services: dict[str, Any] = field(default_factory=dict)
    # Services that refused the key or could not be reached (which one a hint must name).
    failed_services: set[str] = field(default_factory=set)

    @property
    def http(self) -> Any:
        # Created once, under a lock: workers racing here must share one client
        # (one connection pool), not build one each.
        if self._http is None:
            with self._lock:
                if self._http is None:
                    self._http = self.http_factory(self.pool or self.concurrency)
        return self._http

    def service_http(self, name: str, options: Mapping[str, Any]) -> Any:
        """The client of service ``name`` (the default service: ``http``); ``options`` are the
        running command's, where a service may find its base URL and key."""
        service = self.spec.services[name]
        if service.default:
            return self.http
        if name not in self._services:
            with self._lock:
                if name not in self._services:
                    if self.service_factory is None:
                        raise BenchloopError(f"no {service.title} client is configured here")
                    self._services[name] = self.service_factory(service, options)
        return self._services[name]

    def _clients(self) -> list[Any]:
        return [c for c in (self._http, *self._services.values()) if c is not None]

    def secrets(self) -> tuple[str, ...]:
        """The API keys of the clients built so far and those the log hides (masked in what a
        command makes for people to share)."""
        keys = [getattr(c, "api_key", None) for c in self._clients()] + list(getattr(self.log, "secrets", ()))
        return tuple(dict.fromkeys(k for k in keys if isinstance(k, str) and k))

    def cancel(self) -> None:
        """Make every request still to come (or sleeping before a retry) stop."""
        for client in self._clients():
            client.cancelled.set()

    def map(self, items: list[str], work: Callable[[str], Any], concurrency: int | None = None) -> list[Outcome]:
        return run_pool(items, work, self.concurrency if concurrency is None else concurrency, self.cancel)

    def close(self) -> None:
        for client in self._clients():
            client.close()

    def counter(self, progress: Progress, total: int, ctx: Context | None = None) -> Counter:
        label = render_label(progress.label, ctx) if ctx is not None else progress.label
        return Counter(self.log, label, total, progress.unit, progress.action, progress.eta)
