"""URLs in wire form: scheme, host, port, Host header and target.

An ordinary URL - ``http(s)://`` + a lower-case ASCII host + a path and query
made of characters that need no encoding - is split by a regular expression,
its host part parsed once per origin.  Anything else (an IDNA host, spaces or
non-ASCII in a path, dot segments, a fragment, user info) goes through
``httpx.URL``, so the bytes on the wire are the ones httpx would send; a test
checks that both ways agree wherever the quick one answers.
"""

from __future__ import annotations

import re

from ..base.frozen import dataclass
from ._errors import UnsupportedProtocol
from .urls import default_port

_URL = re.compile(r"(https?)://([^/?#@]*)([^#]*)")
_AUTHORITY = re.compile(r"([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?")
# httpx leaves these unchanged: its path and query "percent-encode sets" minus what they encode.
_PATH = re.compile(r"[!$-;=@-_a-z|~]*")
_QUERY = re.compile(r"[!$-;=?-~]*")


@dataclass(frozen=True)
class Place:
    """Where a request goes: ``port`` is the actual port, ``url_port`` None when it is the
    scheme's default (as proxy rules compare it)."""

    scheme: str
    host: str  # lower case, ASCII (IDNA), an IPv6 address without brackets
    port: int
    url_port: int | None
    host_header: bytes

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


def _place(scheme: str, host: str, port: int | None, host_header: str) -> Place:
    if port == default_port(scheme):
        port = None
    actual = port if port is not None else default_port(scheme)
    return Place(scheme, host, actual, port, host_header.encode("ascii"))


_places: dict[tuple[str, str], Place] = {}


def _quick_place(scheme: str, authority: str) -> Place | None:
    place = _places.get((scheme, authority))
    if place is not None:
        return place
    match = _AUTHORITY.fullmatch(authority)
    if match is None or (match.group(2) is not None and int(match.group(2)) > 65535):
        return None
    host, port = match.group(1), int(match.group(2)) if match.group(2) else None
    netloc = host if port is None or port == default_port(scheme) else f"{host}:{port}"
    place = _place(scheme, host.strip("[]"), port, netloc)
    if len(_places) > 256:
        _places.clear()  # presigned URLs of many hosts: never a growing cache
    _places[(scheme, authority)] = place
    return place


def split(url: str) -> tuple[Place, bytes]:
    """``(place, target)`` of an absolute URL; UnsupportedProtocol for a scheme other
    than http(s), httpx.InvalidURL for one that is not a URL."""
    match = _URL.fullmatch(url)
    if match is not None:
        rest = match.group(3)
        path, mark, query = rest.partition("?")
        if _PATH.fullmatch(path) and "/." not in path and (not mark or _QUERY.fullmatch(query)):
            place = _quick_place(match.group(1), match.group(2))
            if place is not None:
                return place, (rest if rest.startswith("/") else "/" + rest).encode("ascii")
    return _parsed(url)


def _parsed(url: str) -> tuple[Place, bytes]:
    from .urls import import_httpx

    parsed = import_httpx().URL(url)
    scheme = parsed.scheme
    if scheme not in ("http", "https"):
        if not scheme:
            raise UnsupportedProtocol("Request URL is missing an 'http://' or 'https://' protocol.")
        raise UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme}://'.")
    if not parsed.raw_host:
        raise UnsupportedProtocol(f"Request URL has no host: {url!r}")
    netloc = parsed.netloc.decode("ascii")
    return _place(scheme, parsed.raw_host.decode("ascii"), parsed.port, netloc), parsed.raw_path
