"""Requests the table does not accept get a 400 before any handler runs.

Why generic: the OpenAPI document (``bl describe --openapi``) tells other
tools what the backend accepts, and schemathesis checks the sandbox against
it; both read the same schemas (:mod:`benchloop.table.params`), so a required
parameter, an integer out of the int64 range, a number that is no number or a
body field of the wrong type is refused the same way for every endpoint, and a
table change moves the document and the sandbox together.

Query values arrive as text: an integer parameter must parse as one, a
boolean must be ``true`` or ``false``; then the value must fit its schema.  A
required parameter that is missing or empty, and a required body field that
is missing, are refused with ``<name> is required`` unless the backend is
known to word it otherwise (``MESSAGES``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from benchloop.table.model import Endpoint, Spec
from benchloop.table.params import body_schema, query_schema

# How the backend words a refusal of one field, where the contract records it: (endpoint, field) -> text.
_NO_GROUP = "groupId 不能为空"
MESSAGES: dict[tuple[str, str], str] = {
    ("behavior_steps", "group_id"): _NO_GROUP,
    ("behavior_list", "group_id"): _NO_GROUP,
    ("behavior_create", "groupId"): _NO_GROUP,
    ("behavior_create", "steps"): "steps 必须是整数列表",
    ("behavior_create", "scoringLimit"): "scoringLimit 必须大于 0",
    ("behavior_create", "sampleSize"): "sampleSize 必须大于 0",
}


_INTEGER = re.compile(r"[+-]?[0-9]+")


class Refused(Exception):
    """The request does not fit the table: answer 400 with this message."""


@dataclass(frozen=True)
class _Rules:
    endpoint: Endpoint
    query: dict[str, tuple[dict[str, Any], Any]]  # name -> (schema, its validator)
    body: dict[str, Any] | None
    fields: dict[str, Any]  # body field -> its validator


class RequestRules:
    """The schemas of every endpoint's query and body, and their validators, built once per sandbox."""

    def __init__(self, spec: Spec, endpoints: dict[str, Endpoint]):
        import jsonschema

        def compiled(schema: dict[str, Any]) -> Any:
            return jsonschema.Draft202012Validator(schema)

        self.rules = {}
        for name, ep in endpoints.items():
            query = {p.name: query_schema(spec, ep, p.name, p.template) for p in ep.query}
            body = body_schema(spec, ep) if ep.body is not None else None
            self.rules[name] = _Rules(ep, {k: (v, compiled(v)) for k, v in query.items()}, body,
                                      {k: compiled(v) for k, v in (body or {}).get("properties", {}).items()})

    def check(self, name: str, query: dict[str, str], raw_body: bytes, body: Any) -> None:
        """Raise :class:`Refused` when the request does not fit endpoint ``name``'s table entry."""
        rules = self.rules.get(name)
        if rules is None:
            return
        for param, (schema, check) in rules.query.items():
            raw = query.get(param)
            if raw is None or raw == "":
                if rules.endpoint.is_required(param):
                    raise Refused(self._message(name, param, f"{param} is required"))
                continue
            self._fits(name, param, _typed(raw, schema, name, param), check, raw)
        if rules.body is None:
            return
        if not raw_body:
            if rules.endpoint.body_required:
                raise Refused("request body is required")
            return
        if not isinstance(body, dict):
            raise Refused("request body must be a JSON object")
        for param in rules.body.get("required", ()):
            if param not in body:
                raise Refused(self._message(name, param, f"{param} is required"))
        for param, check in rules.fields.items():
            if param in body:
                self._fits(name, param, body[param], check, body[param])

    def _fits(self, name: str, param: str, value: Any, check: Any, shown: Any) -> None:
        if not check.is_valid(value):
            raise Refused(self._message(name, param, f"invalid {param}: {shown!r}"))

    @staticmethod
    def _message(name: str, param: str, default: str) -> str:
        return MESSAGES.get((name, param), default)


def _typed(raw: str, schema: dict[str, Any], name: str, param: str) -> Any:
    """A query value as the JSON value its schema describes (text stays text)."""
    kind = schema.get("type")
    refused = Refused(MESSAGES.get((name, param), f"invalid {param}: {raw!r}"))
    if kind == "integer":
        if not _INTEGER.fullmatch(raw):
            raise refused
        try:
            return int(raw)
        except ValueError:  # more digits than Python converts
            raise refused from None
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            raise refused from None
    if kind == "boolean":
        if raw.lower() not in ("true", "false"):
            raise refused
        return raw.lower() == "true"
    return raw
