"""Answers for endpoints that have no handler, made from the shape the table declares.

Why: a maintainer who adds an endpoint to ``spec/benchloop.yaml`` should not have to write
sandbox code before the tests, the demo and the generic sweeps can run the new command.  The
table already says what a success answers (``response:``: a JSON Schema, bytes or text of
given media types, which fields name the id asked for), so the sandbox answers from that,
as Prism does from an OpenAPI document.  A handler (``handlers.py``) is written only where the
behaviour is specific (pagination over stored jobs, triggers, exports, faults).

The values are deterministic: the same seed, endpoint and ids give the same bytes, so
snapshots and tests are stable.  Where a schema gives ``examples`` (JSON Schema's own keyword)
its first example is used; ``const`` and ``enum`` give their first value; otherwise a value of
the declared type is generated, with every declared property filled in.  The identity fields
of the answer (``identity:`` of the response) carry the ids the request asked for, and a string
property named like a request variable's id field (``group_id`` for ``{group}``) does too, so
the client's identity checks pass.  A list of rows is short (``ROWS`` items) and paged by the
endpoint's ``{skip}``/``{limit}`` parameters, with a ``total`` property (when declared) that
matches it, so every pagination mode of the table ends.  A field that a waiter reads from the
endpoint's answer (its first ``success`` acceptor's ``argument``, a plain field path) holds a
value that acceptor accepts (a final status of its enumeration, or its first expected value),
so a waiter declared on a new endpoint ends at its first look instead of failing on a made-up
status.

Hand-written rather than a schema-to-data library: the libraries we know (hypothesis-jsonschema,
jsf) draw random values and know nothing of identity fields or pages; what is needed here is
a small deterministic walk over the subset of JSON Schema the table uses (its lints keep it
to that subset).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from ..table.model import Endpoint, Spec

ROWS = 3  # items of a generated list (rows of a listing: one page at any page size of 3 or more)
_VAR = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_.]*)\}$")
_DEPTH = 6  # nested schemas deeper than this become null (a recursive schema must end)
_TIME = "2026-01-01T00:00:00Z"
_FIELD_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def settled_fields(spec: Spec, endpoint: str) -> dict[tuple[str, ...], Any]:
    """The fields of ``endpoint``'s answer that a waiter asking it reads, each with a value its
    first ``success`` acceptor accepts (a plain field path; ``each`` and list matchers are a
    handler's business)."""
    out: dict[tuple[str, ...], Any] = {}
    for waiter in spec.waiters.values():
        if waiter.request is None or waiter.request.name != endpoint:
            continue
        for acceptor in waiter.acceptors:
            if acceptor.state != "success":
                continue
            if acceptor.matcher == "path" and acceptor.each is None and acceptor.argument \
                    and _FIELD_PATH.match(acceptor.argument):
                if acceptor.statuses is not None:
                    value = next((v for v in acceptor.statuses.values if acceptor.accepts(v)), None)
                else:
                    value = acceptor.expected[0] if acceptor.expected else None
                if value is not None:
                    out.setdefault(tuple(acceptor.argument.split(".")), _thaw(value))
            break
    return out


def request_variables(endpoint: Endpoint, params: Mapping[str, str], query: Mapping[str, str],
                      body: Any) -> dict[str, str]:
    """The request variables (``{job}``, ``{group}``, ``{skip}`` ...) a request was rendered from:
    path parameters by name, and query/body parameters whose template is exactly one ``{var}``."""
    values = {k: str(v) for k, v in params.items()}
    for param in endpoint.query:
        found = _VAR.match(param.template) if isinstance(param.template, str) else None
        if found and param.name in query:
            values.setdefault(found.group(1), query[param.name])
    if isinstance(body, Mapping):
        for param in endpoint.body or ():
            found = _VAR.match(param.template) if isinstance(param.template, str) else None
            if found and param.name in body and body[param.name] is not None:
                values.setdefault(found.group(1), str(body[param.name]))
    return values


class _Maker:
    """One answer's generation: a seed, the request's variables, the identity paths."""

    def __init__(self, seed: str, variables: Mapping[str, str],
                 identity: tuple[tuple[tuple[str, ...], str], ...],
                 settled: Mapping[tuple[str, ...], Any] | None = None):
        self.seed = seed
        self.settled = settled or {}
        self.variables = variables
        self.identity = {path: var for path, var in identity}
        # ``group_id`` -> the ``{group}`` asked for: an id field the identity does not name still
        # carries an id that exists in this request.
        self.id_fields = {f"{var}_id": value for var, value in variables.items() if var.isidentifier()}

    def digest(self, where: tuple[str, ...]) -> int:
        text = json.dumps([self.seed, list(where)], separators=(",", ":"))
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")

    def value(self, schema: Any, where: tuple[str, ...], depth: int = 0) -> Any:
        if not isinstance(schema, Mapping) or depth > _DEPTH:
            return None
        if "examples" in schema and isinstance(schema["examples"], list) and schema["examples"]:
            return _thaw(schema["examples"][0])
        if "const" in schema:
            return _thaw(schema["const"])
        if isinstance(schema.get("enum"), (list, tuple)) and schema["enum"]:
            return _thaw(schema["enum"][0])
        for branch in ("allOf", "anyOf", "oneOf"):
            options = schema.get(branch)
            if isinstance(options, (list, tuple)) and options:
                if branch == "allOf":
                    merged: dict[str, Any] = {}
                    for option in options:
                        merged = _merge(merged, option)
                    return self.value(_merge(merged, _without(schema, branch)), where, depth + 1)
                # the first branch that is not null: the richest answer the client must read
                chosen = next((o for o in options if _types(o) != ["null"]), options[0])
                return self.value(_merge(_without(schema, branch), chosen), where, depth + 1)
        kinds = [t for t in _types(schema) if t != "null"] or _types(schema)
        kind = kinds[0] if kinds else ("object" if "properties" in schema else "string")
        if kind == "object":
            return self.object(schema, where, depth)
        if kind == "array":
            items = schema.get("items", {})
            count = max(int(schema.get("minItems", 0) or 0), ROWS)
            return [self.value(items, (*where, str(i)), depth + 1) for i in range(count)]
        if kind == "integer":
            low = schema.get("minimum", 0)
            return int(low) + self.digest(where) % 100
        if kind == "number":
            low = schema.get("minimum", 0)
            high = schema.get("maximum", low + 100)
            return round(float(low) + (self.digest(where) % 1000) / 1000 * (float(high) - float(low)), 3)
        if kind == "boolean":
            return self.digest(where) % 2 == 0
        if kind == "null":
            return None
        return self.string(schema, where)

    def object(self, schema: Mapping[str, Any], where: tuple[str, ...], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, sub in (schema.get("properties") or {}).items():
            path = (*where, name)
            generic = tuple("*" if part.isdigit() else part for part in path)
            if generic in self.identity and self.identity[generic] in self.variables:
                out[name] = self.variables[self.identity[generic]]
            elif path in self.settled:
                out[name] = self.settled[path]
            elif name in self.id_fields and "string" in (_types(sub) or ["string"]):
                out[name] = self.id_fields[name]
            else:
                out[name] = self.value(sub, path, depth + 1)
        return out

    def string(self, schema: Mapping[str, Any], where: tuple[str, ...]) -> str:
        fmt = schema.get("format")
        if fmt == "date-time":
            return _TIME
        if fmt in ("uri", "url"):
            return f"http://sandbox.invalid/{'/'.join(where) or 'value'}"
        label = where[-1] if where else "value"
        return f"{label}-{self.digest(where) % 10_000:04d}"


def json_answer(endpoint: Endpoint, variables: Mapping[str, str], seed: int,
                settled: Mapping[tuple[str, ...], Any] | None = None) -> Any:
    """The JSON a success of ``endpoint`` answers for these request variables (``settled``: the
    fields a waiter reads, see :func:`settled_fields`)."""
    response = endpoint.response
    schema = response.resolved or {}
    key = json.dumps([seed, endpoint.name, sorted((k, v) for k, v in variables.items()
                                                  if k not in ("skip", "limit"))])
    value = _Maker(key, variables, response.identity, settled).value(schema, ())
    rows_path = response.rows_path
    if rows_path is None:
        return value
    rows = _at(value, rows_path)
    if not isinstance(rows, list):
        return value
    skip = _number(variables.get("skip"), 0)
    limit = _number(variables.get("limit"), len(rows))
    page = rows[skip:skip + limit] if limit > 0 else rows[skip:]
    if rows_path == ():
        return page
    _put(value, rows_path, page)
    parent = _at(value, rows_path[:-1])
    if isinstance(parent, dict) and "total" in parent and isinstance(parent["total"], int):
        parent["total"] = len(rows)
    return value


def body_answer(endpoint: Endpoint, variables: Mapping[str, str], seed: int) -> tuple[bytes, str]:
    """The bytes (or text) of a success of a non-JSON ``endpoint``, and their media type."""
    media = endpoint.response.content_types[0] if endpoint.response.content_types else "application/octet-stream"
    ids = ", ".join(f"{k}={v}" for k, v in sorted(variables.items()))
    text = f"sandbox answer of {endpoint.name} ({ids}; seed {seed}): generated from the table's response\n"
    return text.encode("utf-8"), media


def _types(schema: Any) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, (list, tuple)):
        return [str(k) for k in kind]
    return []


def _without(schema: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != key}


def _merge(a: Mapping[str, Any], b: Any) -> dict[str, Any]:
    out = dict(a)
    if not isinstance(b, Mapping):
        return out
    for key, value in b.items():
        if key == "properties" and isinstance(out.get(key), Mapping) and isinstance(value, Mapping):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def _thaw(value: Any) -> Any:
    """A plain (mutable) copy of a value of the frozen model."""
    if isinstance(value, Mapping):
        return {str(k): _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        if isinstance(value, dict) and isinstance(step, str):
            value = value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and -len(value) <= step < len(value):
            value = value[step]
        else:
            return None
    return value


def _put(value: Any, path: tuple[str | int, ...], new: Any) -> None:
    parent = _at(value, path[:-1])
    if isinstance(parent, dict) and isinstance(path[-1], str):
        parent[path[-1]] = new
    elif isinstance(parent, list) and isinstance(path[-1], int):
        parent[path[-1]] = new


def _number(text: str | None, default: int) -> int:
    try:
        return max(int(str(text)), 0) if text not in (None, "") else default
    except ValueError:
        return default
