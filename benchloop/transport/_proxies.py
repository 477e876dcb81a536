"""Which proxy a URL goes through: ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY``.

The rules are httpx's (``trust_env=True``), read once per client, so that a
command behaves the same whichever library it went through before:

- ``http_proxy``/``https_proxy``/``all_proxy`` (lower case wins over upper case;
  ``HTTP_PROXY`` is ignored under CGI, where ``REQUEST_METHOD`` is set) name
  the proxy of ``http://``, ``https://`` and every URL; a value without a
  scheme means ``http://``;
- ``NO_PROXY`` is a comma-separated list: ``*`` turns every proxy off; an IP
  address or ``localhost`` matches that host; ``example.com`` matches it and
  its subdomains, ``.example.com`` only the subdomains; an entry with a scheme
  (``http://example.com:8080``) matches that scheme, host and port;
- the most specific rule wins: one with a port first, then the longest host,
  then the longest scheme.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from ..base.frozen import dataclass


def environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{"http": ..., "https": ..., "all": ..., "no": ...}`` from ``*_proxy`` variables, as
    ``urllib.request.getproxies_environment`` reads them."""
    environ = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for name, value in environ.items():
        if value and name.lower().endswith("_proxy"):
            found[name.lower()[:-6]] = value
    if "REQUEST_METHOD" in environ:
        found.pop("http", None)  # CVE-2016-1000110: under CGI, HTTP_PROXY is the client's header
    for name, value in environ.items():
        if name.endswith("_proxy"):  # lower-case names, a second time: they win
            if value:
                found[name.lower()[:-6]] = value
            else:
                found.pop(name.lower()[:-6], None)
    return found


def _is_ip(host: str, version: str) -> bool:
    import ipaddress  # only for NO_PROXY entries: not at every start

    try:
        getattr(ipaddress, version)(host.split("/")[0])
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Rule:
    """One proxy rule: URLs of ``scheme`` ('' for any) on a host matching ``host`` ('' for any)
    and ``port`` (None for any) go through ``proxy`` (None: direct)."""

    scheme: str
    host: str
    port: int | None
    proxy: str | None

    @property
    def priority(self) -> tuple[int, int, int]:
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme and self.scheme != scheme:
            return False
        if self.host and not _host_pattern(self.host).match(host):
            return False
        return self.port is None or self.port == port


def _host_pattern(host: str) -> re.Pattern[str]:
    if host.startswith("*."):
        return re.compile(f"^.+\\.{re.escape(host[2:])}$")  # subdomains only
    if host.startswith("*"):
        return re.compile(f"^(.+\\.)?{re.escape(host[1:])}$")  # the domain and its subdomains
    return re.compile(f"^{re.escape(host)}$")


def _rule(pattern: str, proxy: str | None) -> Rule:
    parts = urlsplit(pattern)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port
    if port is not None and port == {"http": 80, "https": 443}.get(scheme):
        port = None  # a default port is no port, as in a URL
    return Rule("" if scheme == "all" else scheme, "" if host == "*" else host, port, proxy)


def rules(environ: Mapping[str, str] | None = None) -> list[Rule]:
    """The proxy rules of the environment, most specific first."""
    found = environment(environ)
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            value = found[scheme]
            mounts[f"{scheme}://"] = value if "://" in value else f"http://{value}"
    for host in (h.strip() for h in found.get("no", "").split(",")):
        if host == "*":
            return []
        if not host:
            continue
        if "://" in host:
            mounts[host] = None
        elif _is_ip(host, "IPv4Address") or host.lower() == "localhost":
            mounts[f"all://{host}"] = None
        elif _is_ip(host, "IPv6Address"):
            mounts[f"all://[{host}]"] = None
        else:
            mounts[f"all://*{host}"] = None
    return sorted((_rule(pattern, proxy) for pattern, proxy in mounts.items()), key=lambda r: r.priority)


def proxy_for(table: list[Rule], scheme: str, host: str, port: int | None) -> str | None:
    """The proxy URL for a request to ``scheme://host:port`` (``port`` None when it is the
    scheme's default), or None to go direct."""
    for rule in table:
        if rule.matches(scheme, host, port):
            return rule.proxy
    return None
