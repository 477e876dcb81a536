"""Requests rendered from the table: the only place a request is built.

A request's path, query and body come from its endpoint's declared templates, rendered
from the id, the options, earlier parts and the variables a step binds
(``table.templates``); a service's headers from its header templates.  Nothing in
Python adds a parameter the table does not declare (``tests/contract/test_wire.py`` checks every
request on the wire against the OpenAPI export of the table).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base.errors import IdentityMismatch, IdentityUnverified
from ..table.model import Endpoint, Service
from ..table.templates import Context, render_path, render_value


def render_request(endpoint: Endpoint, ctx: Context) -> tuple[str, dict[str, Any] | None, Any]:
    """``(path, query, body)`` of an endpoint, from its declared templates only.

    Query values that resolve to null or "" are left out (unless the endpoint
    keeps that one empty), and so are body fields that resolve to null; a
    boolean query value is sent as ``true``/``false``.
    """
    path = render_path(endpoint.path, ctx)
    params: dict[str, Any] = {}
    for param in endpoint.query:
        value = render_value(param.template, ctx)
        if value is None or (value == "" and param.name not in endpoint.keep_empty):
            continue
        params[param.name] = "true" if value is True else "false" if value is False else value
    body = None
    if endpoint.body is not None:
        body = {}
        for param in endpoint.body:
            value = render_value(param.template, ctx)
            if value is not None:
                body[param.name] = value
    return path, params or None, body


def render_headers(service: Service, ctx: Context) -> dict[str, str] | None:
    """The service's headers for one request, from its templates; derived variables (``env``
    from ``cluster``) are computed from the context first.  A header whose value renders to
    null or "" is left out."""
    if not service.headers:
        return None
    sources = {d.source: ctx.lookup(d.source) for d in service.derived}
    hctx = ctx.child(**service.derive(sources)) if service.derived else ctx
    out = {}
    for name, template in service.headers.items():
        value = render_value(template, hctx)
        if value is not None and value != "":
            out[name] = str(value)
    return out or None


def identity_check(endpoint: Endpoint, ctx: Context) -> Callable[[Any, bool], None] | None:
    """What the answer of this request must name (the endpoint's ``identity``), as a check of
    the parsed answer for ``Http.request_json``: a declared field (``*``: each item of a list)
    that holds another id than the one asked for raises ``IdentityMismatch``.  A missing or
    null field, or an answer naming no id at all (an empty page), is accepted (the backend may
    leave it out) from a new connection only: read on a connection used before, it raises
    ``IdentityUnverified`` (asked again on a new one), since it may be what a server left on
    that connection.  None when nothing is declared."""
    identity = endpoint.response.identity
    if not identity:
        return None
    expected = [(path, ctx.lookup(var)) for path, var in identity]

    def check(answer: Any, reused: bool = False) -> None:
        for path, want in expected:
            found = _values_at(answer, path)
            text = str(want)
            # a page names its id a thousand times (jobs.*.group_id): when each is that text,
            # two sets made in C say so; else each value is looked at
            if not (set(map(type, found)) <= {str} and set(found) <= {text}):
                for got in found:
                    if got is not None and str(got) != text:
                        raise IdentityMismatch(f"the answer for {'.'.join(path)} {want!r} names {got!r}: "
                                               "another id's answer, not saved")
            if reused and (not found or None in found):
                raise IdentityUnverified(f"the answer for {'.'.join(path)} {want!r} does not name it")

    return check


def _values_at(value: Any, path: tuple[str, ...]) -> list[Any]:
    """The values at ``path`` in ``value`` (``*`` walks each item of a list), in order; none
    where the answer has no such field.  A level at a time, each in one comprehension."""
    values = [value]
    for step in path:
        if step == "*":
            values = [item for v in values if isinstance(v, list) for item in v]
        else:
            values = [v[step] for v in values if isinstance(v, dict) and step in v]
    return values
