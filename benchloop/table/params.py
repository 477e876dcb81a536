"""What the backend accepts: the JSON Schema of each query parameter and body field.

The table writes request values as templates (``docs/adding-an-endpoint.md``);
their types follow from the template: ``{skip}``/``{limit}`` are int64
integers from 0, a ``{flag}`` option a boolean, an ``{int}`` option (or a
literal number) an int64 integer with the option's minimum, a list option an
array, anything else a string, and a literal value is the default.  The
endpoint's ``required`` list says which ones the backend refuses to do
without (a required string may not be empty either, in a query or a body).

One definition for both sides of the wire: the OpenAPI export documents these
schemas and the sandbox refuses (400) what they do not accept, so the
document and the sandbox cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from .model import Endpoint, Option, Spec
from .templates import PAGE_VARS, VAR, lone_var

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT64 = {"type": "integer", "format": "int64", "minimum": INT64_MIN, "maximum": INT64_MAX}


def _int64(schema: dict[str, Any]) -> dict[str, Any]:
    """An option type's schema (``optiontypes``) with integers bounded to int64, as the wire is."""
    if schema.get("type") == "integer":
        return {**schema, **INT64}
    if schema.get("type") == "array" and schema["items"].get("type") == "integer":
        return {**schema, "items": {**schema["items"], **INT64}}
    return schema


def _option(spec: Spec, name: str) -> Option | None:
    """The option a template names (a shared option, else the first action's of that name)."""
    found = spec.options.get(name)
    if found is not None:
        return found
    return next((o for a in spec.actions for o in a.options if o.name == name), None)


def value_schema(spec: Spec, template: Any) -> dict[str, Any]:
    """JSON Schema of one query or body value, from its template."""
    if isinstance(template, bool):
        return {"type": "boolean", "default": template}
    if isinstance(template, int):
        return {**INT64, "default": template}
    if not isinstance(template, str):
        return {}
    if not VAR.findall(template):
        return {"type": "string", "default": template}
    name = lone_var(template)
    if name in PAGE_VARS:
        return {**INT64, "minimum": 0}
    schema = _int64(spec.param_schema(template))
    option = _option(spec, name) if name else None
    if option is not None and option.min is not None:
        if schema["type"] == "integer":
            schema["minimum"] = option.min
        elif schema["type"] == "array" and schema["items"].get("type") == "integer":
            schema["items"]["minimum"] = option.min
    return schema


def query_schema(spec: Spec, endpoint: Endpoint, name: str, template: Any) -> dict[str, Any]:
    """A query parameter's schema; a required string must not be empty (empty is missing)."""
    schema = value_schema(spec, template)
    if endpoint.is_required(name) and schema.get("type") == "string":
        schema["minLength"] = 1
    return schema


def body_schema(spec: Spec, endpoint: Endpoint) -> dict[str, Any]:
    """The JSON object a POST sends: its fields' schemas and the required ones."""
    schema: dict[str, Any] = {"type": "object",
                              "properties": {p.name: value_schema(spec, p.template) for p in endpoint.body or ()}}
    required = [p.name for p in endpoint.body or () if endpoint.is_required(p.name)]
    if required:
        schema["required"] = required
    for name in required:
        if schema["properties"][name].get("type") == "string":
            schema["properties"][name]["minLength"] = 1  # an empty value is a missing one
    return schema
