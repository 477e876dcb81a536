"""The sandbox answers an endpoint that has no handler from the shape the table declares.

Every endpoint of the table is asked once with its handler taken away: the answer must be a
success of the declared kind, valid against the declared JSON Schema, with its identity
fields naming the ids asked for, paged by ``skip``/``limit`` where the endpoint takes them,
and the same bytes twice (deterministic from the seed and the ids).  The endpoints, their
parameters and schemas all come from the model, so a new endpoint is covered the day it is
added to the table.
"""

from __future__ import annotations

import re

import httpx
import jsonschema
import pytest

from benchloop.sandbox import handlers as sandbox_handlers
from benchloop.sandbox import start_sandbox
from benchloop.table.load import load_model
from benchloop.table.params import body_schema, query_schema

SPEC = load_model()
ENDPOINTS = dict(SPEC.endpoints)
_VAR = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@pytest.fixture(scope="module")
def sandbox():
    box = start_sandbox(groups=1, jobs_per_group=3, compare_jobs=0)
    try:
        yield box
    finally:
        box.stop()


def _ids(path: str) -> dict[str, str]:
    return {name: f"{name.upper()}-ID1" for name in _VAR.findall(path)}


def _query(name: str) -> dict[str, str]:
    endpoint = ENDPOINTS[name]
    query: dict[str, str] = {}
    for param in endpoint.query:
        schema = query_schema(SPEC, endpoint, param.name, param.template)
        template = param.template if isinstance(param.template, str) else ""
        if "{skip}" in template:
            query[param.name] = "1"
        elif "{limit}" in template:
            query[param.name] = "50"
        elif template.strip("{}") in {var for _, var in endpoint.response.identity}:
            query[param.name] = f"{template.strip('{}').upper()}-ID1"  # the id the answer must name
        elif endpoint.is_required(param.name):
            kind = schema.get("type")
            query[param.name] = {"integer": "1", "number": "1", "boolean": "false"}.get(kind, "REQ-ID1")
    return query


def _body(name: str) -> dict | None:
    endpoint = ENDPOINTS[name]
    if endpoint.body is None:
        return None
    schema = body_schema(SPEC, endpoint)
    body = {}
    for field in schema.get("required", ()):
        kind = schema["properties"].get(field, {}).get("type")
        body[field] = {"integer": 1, "number": 1, "boolean": False,
                       "array": [1]}.get(kind, "REQ-ID1")
    return body


@pytest.mark.parametrize("name", sorted(ENDPOINTS))
def test_an_endpoint_without_a_handler_answers_its_declared_shape(sandbox, monkeypatch, name):
    endpoint = ENDPOINTS[name]
    monkeypatch.delitem(sandbox_handlers.HANDLERS, name, raising=False)
    service = SPEC.services.get(endpoint.service) or SPEC.default_service
    key = sandbox.app.config.key_of(service.name)
    ids = _ids(endpoint.path)
    path = _VAR.sub(lambda m: ids[m.group(1)], endpoint.path)
    body = _body(name)

    def ask() -> httpx.Response:
        with httpx.Client(base_url=sandbox.url, headers={service.auth_header: key}, timeout=30) as c:
            return c.request(endpoint.method, path, params=_query(name), json=body)

    first, second = ask(), ask()
    assert first.status_code == 200, first.text
    assert first.content == second.content  # deterministic
    response = endpoint.response
    if not response.is_json:
        assert first.headers["content-type"].split(";")[0] in response.content_types
        assert first.content
        return
    value = first.json()
    jsonschema.Draft202012Validator(response.resolved or {}).validate(value)
    asked = {**ids}
    for param in endpoint.query:
        found = re.fullmatch(r"\{(\w+)\}", param.template) if isinstance(param.template, str) else None
        if found and param.name in _query(name):
            asked.setdefault(found.group(1), _query(name)[param.name])
    for path_of_field, variable in response.identity:
        for found in _walk(value, path_of_field):
            assert found == asked[variable], (path_of_field, found)
    if response.rows_path is not None and any("{skip}" in str(p.template) for p in endpoint.query):
        rows = _walk_one(value, response.rows_path)
        assert isinstance(rows, list)  # skip=1 of the generated rows: one fewer than an unpaged list
        assert len(rows) >= 1


def _walk(value, path):
    if not path:
        yield value
        return
    head, rest = path[0], path[1:]
    if head == "*":
        for item in value if isinstance(value, list) else ():
            yield from _walk(item, rest)
    elif isinstance(value, dict) and head in value:
        yield from _walk(value[head], rest)


def _walk_one(value, path):
    for step in path:
        value = value[step]
    return value


def test_a_paged_generated_listing_ends(sandbox, monkeypatch):
    """Rows generated for a listing are few and paged by skip, so every walking mode ends."""
    paged = [n for n, e in ENDPOINTS.items() if e.response.rows_path
             and any("{skip}" in str(p.template) for p in e.query)]
    assert paged, "the table has paged listings"
    name = paged[0]
    endpoint = ENDPOINTS[name]
    monkeypatch.delitem(sandbox_handlers.HANDLERS, name, raising=False)
    ids = _ids(endpoint.path)
    path = _VAR.sub(lambda m: ids[m.group(1)], endpoint.path)
    seen = []
    with httpx.Client(base_url=sandbox.url, headers={"X-API-Key": sandbox.app.config.api_key}) as c:
        for skip in range(0, 10):
            query = _query(name)
            for param in endpoint.query:
                if "{skip}" in str(param.template):
                    query[param.name] = str(skip)
            rows = _walk_one(c.get(path, params=query).json(), endpoint.response.rows_path)
            if not rows:
                break
            seen.append(rows[0])
    assert 0 < len(seen) < 10


WAITED = sorted({(w.name, w.request.name) for w in SPEC.waiters.values() if w.request is not None
                 and any(a.state == "success" and a.matcher == "path" and a.each is None and a.argument
                         for a in w.acceptors)})


@pytest.mark.parametrize(("waiter", "name"), WAITED)
def test_a_waiter_on_a_generated_answer_ends_at_once(sandbox, monkeypatch, waiter, name):
    """A waiter declared on an endpoint without a handler finds a value its success acceptor
    accepts (a final status), so a new waiter's command ends instead of failing on a made-up
    status; without the settled field the answer holds a generated string no acceptor takes."""
    endpoint = ENDPOINTS[name]
    monkeypatch.delitem(sandbox_handlers.HANDLERS, name, raising=False)
    ids = _ids(endpoint.path)
    path = _VAR.sub(lambda m: ids[m.group(1)], endpoint.path)
    with httpx.Client(base_url=sandbox.url, headers={"X-API-Key": sandbox.app.config.api_key}) as c:
        answer = c.request(endpoint.method, path, params=_query(name), json=_body(name)).json()
    success = next(a for a in SPEC.waiters[waiter].acceptors if a.state == "success")
    assert success.matches(answer, None), answer
    jsonschema.validate(answer, endpoint.response.resolved or {})
