"""Route requests to endpoint names using the compiled endpoint table.

Why from the table: the sandbox must serve exactly the operations the client
is generated from, so the routes are not written twice: the model's endpoints (``benchloop.table.model``) give each
name's method and path template, and each path template becomes a list of
literal and ``{variable}`` segments.

Matching splits the *raw* request path on ``/`` and percent-decodes each
segment afterwards, so an id containing an encoded slash (``..%2FJ1``) stays
one segment.  When several templates match, literal segments win over
variables, position by position (``/openapi/jobs/stats`` is the stats
endpoint, not job ``stats``).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from benchloop.table.model import Endpoint
from benchloop.table.templates import FULL


def load_endpoints() -> dict[str, Endpoint]:
    """The table's endpoints, from the model of the compiled (cached) table."""
    from benchloop.table.load import load_model

    return dict(load_model().endpoints)


@dataclass(frozen=True)
class Route:
    name: str
    method: str
    segments: tuple[tuple[bool, str], ...]  # (is_variable, literal or variable name)

    @property
    def rank(self) -> tuple[int, ...]:
        return tuple(1 if var else 0 for var, _ in self.segments)


@dataclass
class Match:
    route: Route | None  # None: the path exists but not for this method
    params: dict[str, str]
    allowed: tuple[str, ...] = ()  # the methods the path has (for the 405's ``Allow``)


def _split(path: str) -> list[str]:
    return path.strip("/").split("/") if path.strip("/") else []


def compile_routes(endpoints: dict[str, Endpoint]) -> list[Route]:
    routes = []
    for name, ep in endpoints.items():
        segs = []
        for part in _split(ep.path):
            m = FULL.match(part)
            segs.append((True, m.group(1)) if m else (False, part))
        routes.append(Route(name, ep.method.upper(), tuple(segs)))
    # Literal-before-variable: lexicographic on the per-segment rank.
    routes.sort(key=lambda r: r.rank)
    return routes


class Router:
    def __init__(self, endpoints: dict[str, Endpoint]):
        self.endpoints = endpoints
        self.routes = compile_routes(endpoints)

    def match(self, method: str, raw_path: str) -> Match | None:
        """The best route for ``raw_path`` (no query); None if no template fits."""
        parts = [unquote(p, errors="strict") for p in _split(raw_path)]
        allowed: list[str] = []
        best: tuple[tuple[bool, str], ...] | None = None
        for route in self.routes:
            if len(route.segments) != len(parts):
                continue
            params: dict[str, str] = {}
            for (is_var, text), value in zip(route.segments, parts, strict=True):
                if is_var:
                    if not value:
                        break
                    params[text] = value
                elif text != value:
                    break
            else:
                if route.method == method:
                    return Match(route, params)
                # ``Allow`` names the methods of the most specific template that fits (the one the
                # OpenAPI document lists the path under): POST /jobs/rerun's path is not also the
                # GET of /jobs/{job}, though a GET of it is served there, as a backend's router would.
                if best is None:
                    best = route.segments
                if route.segments == best:
                    allowed.append(route.method)
        return Match(None, {}, tuple(sorted(set(allowed)))) if allowed else None
