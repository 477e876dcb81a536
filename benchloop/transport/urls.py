"""URL rules of the transport, all read through one parser: ``httpx.URL``.

The URL a request is sent to is an ``httpx.URL``; the same object decides
whether the request carries the API key (:func:`carries_key`), so where a
request goes and whether it is trusted with the key can never be two readings
of one string (a ``user@host`` authority read as two hosts was a key leak).  A
URL with user info never carries the key, and is sent without it (httpx would
turn it into a Basic ``Authorization`` header).  A redirect to one of the
service's login hosts is an authentication failure (:func:`is_login_url`),
never a page to save.

Also here: how a URL is shown in ``-v`` output (user info and a presigned query
masked).
"""

from __future__ import annotations

from typing import Any

REDIRECTS = frozenset({301, 302, 303, 307, 308})  # the statuses whose Location is followed


def import_httpx() -> Any:
    """Import httpx without its optional command line.

    httpx's ``__init__`` imports ``httpx._main`` (click, rich, pygments) whenever
    click is installed, which costs ~55 ms for a CLI we never use.  Marking that
    one submodule unavailable makes httpx take its own documented fallback.
    """
    import sys

    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx

    return httpx


def default_port(scheme: str) -> int:
    return 443 if scheme.lower() == "https" else 80


def origin(url: Any) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an ``httpx.URL``, the port of the scheme when absent: what a
    connection is made to (httpx connects to exactly this host and port)."""
    return (url.scheme, url.host, url.port or default_port(url.scheme))


def carries_key(url: Any, home: tuple[str, str, int]) -> bool:
    """Whether a request to ``url`` (an ``httpx.URL``) may carry the API key: on the configured
    origin ``home``, with no user info."""
    return not url.userinfo and origin(url) == home


def without_userinfo(url: Any) -> Any:
    """``url`` with any ``user:password@`` dropped (sent as it is, httpx would make it a Basic
    ``Authorization`` header for whoever wrote the URL)."""
    return url.copy_with(userinfo=b"") if url.userinfo else url


def login_host(url: Any, login_hosts: tuple[str, ...], home: tuple[str, str, int] | None = None) -> str | None:
    """The login host (one of ``login_hosts``, as configured) when ``url`` (an ``httpx.URL``) is a
    login page: its host is one of them (case-insensitive), or, on the origin ``home`` itself, its
    path starts with ``/_sso/<login host>/`` or ``/<login host>/`` (the forms in which the sandbox
    and test backends serve a stand-in SSO page); else None.  Words such as "login" in a path, a
    file name or a query mean nothing."""
    if not login_hosts:
        return None
    hosts = {h.lower(): h for h in login_hosts}
    if url.host.lower() in hosts:
        return hosts[url.host.lower()]
    if home is not None and origin(url) == home:
        segments = url.path.split("/")[1:3]
        if segments[:1] == ["_sso"]:
            segments = segments[1:]
        if segments and segments[0].lower() in hosts:
            return hosts[segments[0].lower()]
    return None


def is_login_url(url: Any, login_hosts: tuple[str, ...], home: tuple[str, str, int] | None = None) -> bool:
    """Whether ``url`` is a login page (``login_host``)."""
    return login_host(url, login_hosts, home) is not None


def login_message(url: Any, login_hosts: tuple[str, ...], home: tuple[str, str, int] | None = None) -> str | None:
    """The message of a request redirected to ``url`` when it is a login page (``login_host``), else
    None.  It starts with the official client's words, which scripts look for ("endpoint requires
    SSO login (redirected to <host>); X-API-Key not accepted"), and says what the redirect means."""
    host = login_host(url, login_hosts, home)
    if host is None:
        return None
    return (f"endpoint requires SSO login (redirected to {host}); X-API-Key not accepted: the server sent "
            f"the request to its login page ({shown_url(url, query=False)}), which wants a browser "
            "session, not an API key")


def request_line(method: str, url: Any, home: tuple[str, str, int], outcome: str, seconds: float) -> str:
    """How ``-v`` shows one request (as ``gh --verbose`` does): the method, the URL with any user
    info masked and with its query only on the configured origin ``home`` (elsewhere, a
    presigned object store's query is a credential), what came back and how long it took.
    The log masks every known key in it too (``base/masking.py``)."""
    shown = shown_url(url, query=origin(url) == home)
    return f"{method} {shown} -> {outcome} ({seconds * 1000:.0f} ms)"


def shown_url(url: Any, query: bool = True) -> str:
    """A URL as ``-v`` and messages show it: any user info masked, and without its query when
    ``query`` is false (a presigned download's query is a credential)."""
    if url.userinfo:
        url = url.copy_with(userinfo=b"***")
    if not query and url.query:
        url = url.copy_with(query=None)
    return str(url)
