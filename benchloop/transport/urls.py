"""URL rules of the transport: what an origin is, what a login page is, how a path
segment and a query are encoded, and how a URL is shown in ``-v`` output.

The API key goes only to the configured origin (``same_origin``); a redirect to
one of the service's login hosts is an authentication failure (``is_login_url``),
never a page to save.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

_PLAIN = re.compile(r"[A-Za-z0-9_.~-]*")  # what ``quote_plus`` leaves as it is


def quote_segment(value: str) -> str:
    """One URL path segment: every reserved character encoded, and '.'/'..' too
    (they would otherwise be removed as dot segments and change the path)."""
    if value in (".", ".."):
        return value.replace(".", "%2E")
    return quote(value, safe="")


def default_port(scheme: str) -> int:
    return 443 if scheme.lower() == "https" else 80


def same_origin(a: str, b: str) -> bool:
    """Whether two URLs share scheme, host and port (the port of the scheme when absent)."""
    x, y = urlsplit(a), urlsplit(b)
    return (x.scheme.lower(), x.hostname, x.port or default_port(x.scheme)) == (
        y.scheme.lower(), y.hostname, y.port or default_port(y.scheme))


def scheme_of(url: str) -> str:
    """The lower-case scheme of ``url`` ('' when it has none or cannot be parsed)."""
    try:
        return urlsplit(url).scheme.lower()
    except ValueError:
        return ""


def is_absolute(target: str) -> bool:
    """Whether ``target`` is a whole http(s) URL rather than a path on the backend."""
    return scheme_of(target) in ("http", "https") and "://" in target[:8]


def is_login_url(url: str, login_hosts: tuple[str, ...], origin: str | None = None) -> bool:
    """Whether ``url`` is a login page: its host is one of ``login_hosts`` (case-insensitive),
    or, on ``origin`` itself, its path starts with ``/_sso/<login host>/`` or ``/<login host>/``
    (the forms in which the sandbox and test backends serve a stand-in SSO page).  Words such as
    "login" in a path, a file name or a query mean nothing."""
    if not login_hosts:
        return False
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    hosts = {h.lower() for h in login_hosts}
    if host in hosts:
        return True
    try:
        here = origin is not None and same_origin(url, origin)
    except ValueError:
        here = False
    if here:
        segments = parts.path.split("/")[1:3]
        if segments[:1] == ["_sso"]:
            segments = segments[1:]
        return bool(segments) and segments[0].lower() in hosts
    return False


def _text(value: Any) -> str:
    return "true" if value is True else "false" if value is False else "" if value is None else str(value)


def _quoted(text: str) -> str:
    return text if _PLAIN.fullmatch(text) else quote_plus(text)


def encode_query(params: dict[str, Any]) -> str:
    """A query string as httpx's ``params=`` encodes one: booleans lower-case, None empty,
    lists repeated, ``urlencode`` quoting (skipped for the plain words most values are)."""
    return "&".join(f"{_quoted(str(key))}={_quoted(_text(item))}" for key, value in params.items()
                    for item in (value if isinstance(value, (list, tuple)) else [value]))


def with_query(url: str, params: dict[str, Any] | None) -> str:
    """``url`` with ``params`` appended to its query."""
    if not params:
        return url
    return url + ("&" if "?" in url else "?") + encode_query(params)


def shown_url(url: str, params: dict[str, Any] | None = None) -> str:
    """A URL as ``-v`` shows it: whole, with the query of an API call (never a presigned
    download's, whose query is a credential) and any ``user:password@`` masked."""
    parts = urlsplit(url)
    if parts.password is not None:
        netloc = parts.netloc.rsplit("@", 1)
        parts = parts._replace(netloc=f"{parts.username}:***@{netloc[-1]}")
    return with_query(urlunsplit(parts), params)


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
