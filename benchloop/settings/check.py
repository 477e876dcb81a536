"""``bl config check``: does each configured backend answer, and does it take its key?

One cheap authenticated request per service, the one the table names (``check:`` of a
service: Benchloop lists one job; AgentPlatform asks for a group no one has, where a 404
is an answer that took the key).  It goes through the command's own runtime - the same
HTTP clients, origins, auth headers, retries and key masking as any command - never a
path of its own.  A service other than the default one is checked only when a key for it
is configured (its base URL has a default, so a key is what makes it "configured").

Each service's result says where its host and key came from (``Settings.source``,
``keys.describe``), whether the backend answered, whether it accepted the key, and the
HTTP status.  A key source that gives no key (a key command that fails, a keyring without
the entry) is a failed check of its service: ``"asked": false`` (no request is sent without a
key), ``"accepted": false`` and the reason in ``error``.  The exit code: 3 when some key was
refused or could not be had, else 4 when some backend did not answer, else 1 when some
answer was another error, else 0.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import (
    EXIT_AUTH,
    EXIT_FAILURE,
    EXIT_NETWORK,
    EXIT_OK,
    ApiError,
    AuthError,
    BenchloopError,
    KeyUnavailable,
    NetworkError,
)
from ..base.masking import shown_base_url
from ..engine.render import render_headers, render_request
from ..engine.runtime import Runtime
from ..table.model import Service
from ..table.templates import Context
from .config import Settings


def check_services(rt: Runtime, settings: Settings, options: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The result of every service that has a check, and the exit code."""
    from .keys import describe
    from .session import service_key, service_value

    results = []
    for service in rt.spec.services.values():
        if service.check is None:
            continue
        key_error = None
        if service.default:
            host, host_from = settings.host, settings.source("host")
            key_error = settings.key_error
            key_from = settings.source("api_key") if settings.api_key or key_error else None
        else:
            try:
                key, where = service_key(service, options, settings)
            except KeyUnavailable as exc:
                key, where, key_error = None, describe(exc.origin, service.key.config or "key",
                                                       settings.config_file), str(exc)
            if not key and key_error is None:
                results.append({"service": service.name, "title": service.title, "checked": False,
                                "reason": f"no {service.title} API key is configured"})
                continue
            url, host_from = service_value(service.base_url, options, settings.values)
            host, key_from = str(url), where
        entry: dict[str, Any] = {"service": service.name, "title": service.title, "checked": True,
                                 "host": shown_base_url(host), "host_from": host_from, "key_from": key_from}
        if key_error is not None:  # nothing to send: the check failed before any request
            entry.update({"asked": False, "answered": None, "accepted": False, "status": None, "error": key_error})
        else:
            entry.update({"asked": True, **_ask(rt, service, options)})
        results.append(entry)
    return results, _exit_code(results)


def _ask(rt: Runtime, service: Service, options: dict[str, Any]) -> dict[str, Any]:
    check = service.check
    assert check is not None
    ctx = Context({**options, **check.values})
    path, params, body = render_request(check.request, ctx)
    try:
        if service.default:
            rt.http.request_json(check.request.method, path, params, body)
        else:
            http = rt.service_http(service.name, options)
            http.request_json(check.request.method, path, params, body, headers=render_headers(service, ctx))
    except AuthError as exc:
        return {"answered": True, "accepted": False, "status": exc.status, "error": str(exc)}
    except NetworkError as exc:
        return {"answered": False, "accepted": None, "status": None, "error": str(exc)}
    except ApiError as exc:
        if exc.status in check.accept:
            return {"answered": True, "accepted": True, "status": exc.status, "error": None}
        return {"answered": True, "accepted": None, "status": exc.status, "error": str(exc)}
    except BenchloopError as exc:  # an answer that is not what any endpoint sends (not JSON, a redirect)
        return {"answered": True, "accepted": None, "status": None, "error": str(exc)}
    return {"answered": True, "accepted": True, "status": 200, "error": None}


def _exit_code(results: list[dict[str, Any]]) -> int:
    checked = [r for r in results if r.get("checked")]
    if any(r["accepted"] is False for r in checked):
        return EXIT_AUTH
    if any(not r["answered"] for r in checked):
        return EXIT_NETWORK
    if any(r["accepted"] is not True for r in checked):
        return EXIT_FAILURE
    return EXIT_OK


def explain(result: dict[str, Any]) -> str | None:
    """The ``[error]`` line of a service that did not pass, naming the host and the key's source."""
    if not result.get("checked") or result["accepted"] is True:
        return None
    where = f"{result['title']} {result['host']}"
    if result.get("asked") is False:
        return f"{where} was not asked: no API key could be had: {result['error']}"
    if result["accepted"] is False:
        if result["key_from"] is None:
            return f"{where} refused the request: no API key is configured (bl config set --api-key - reads one)"
        return f"{where} refused the API key from {result['key_from']}: {result['error']}"
    if not result["answered"]:
        return f"{where} (host from {result['host_from']}) did not answer: {result['error']}"
    return f"{where} answered with an error: {result['error']}"
