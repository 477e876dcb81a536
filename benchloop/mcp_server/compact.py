"""Output schemas that fit an agent's context: the table's shapes without their prose, each once.

Why: a tool list is read into the agent's context before it does anything, every time.
The table's answer schemas describe every field for people (``bl describe``, the
reference pages, the Python stubs); an agent needs their structure to read a result,
and calls ``describe`` when it wants the words.  So an output schema keeps every type,
required field, reference and bound of the table's shapes and drops their
``description``/``title``/``examples``, and a shape that a schema repeats inline (the
item of a collection the outputs module resolved) becomes a ``$ref`` to the one copy
under ``$defs``.  Keywords are told from field names by where they stand: a field named
``description`` under ``properties`` stays.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

PROSE = ("description", "title", "examples", "$comment")
_NAMED = ("properties", "patternProperties", "$defs", "dependentSchemas")
_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_ONE = ("items", "additionalProperties", "unevaluatedProperties", "not", "contains", "if", "then", "else",
        "propertyNames")


def without_prose(schema: Any) -> Any:
    """``schema`` without its (and its subschemas') prose keywords."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in PROSE:
            continue
        if key in _NAMED and isinstance(value, Mapping):
            out[key] = {name: without_prose(sub) for name, sub in value.items()}
        elif key in _LISTS and isinstance(value, (list, tuple)):
            out[key] = [without_prose(sub) for sub in value]
        elif key in _ONE and isinstance(value, Mapping):
            out[key] = without_prose(value)
        else:
            out[key] = value
    return out


def _key(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


def referenced(schema: Any, defs: Mapping[str, Any]) -> Any:
    """``schema`` with every subschema equal to a shape of ``defs`` replaced by its ``$ref``."""
    names = {_key(body): name for name, body in defs.items() if isinstance(body, Mapping) and len(body) > 1}

    def walk(node: Any, top: bool) -> Any:
        if not isinstance(node, Mapping):
            return node
        if not top and _key(node) in names:
            return {"$ref": f"#/$defs/{names[_key(node)]}"}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _NAMED and isinstance(value, Mapping):
                out[key] = {name: walk(sub, False) for name, sub in value.items()}
            elif key in _LISTS and isinstance(value, (list, tuple)):
                out[key] = [walk(sub, False) for sub in value]
            elif key in _ONE and isinstance(value, Mapping):
                out[key] = walk(value, False)
            else:
                out[key] = value
        return out

    return walk(schema, True)


# An object with at least this many plain scalar properties lists them by type in one line
# instead of a schema per field (metrics rows have 12 to 19 such numbers, compare's 10 or more).
FLAT_FIELDS = 6
_SCALARS = ("string", "number", "integer", "boolean", "null")


def _scalar_type(schema: Any) -> str | None:
    """``number|null`` for ``{"type": ["number", "null"]}``, ``number[]|null`` for a list of
    numbers or null; None for anything else (an enum, a bound, an object, a reference)."""
    if not isinstance(schema, Mapping) or "type" not in schema:
        return None
    kinds = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
    if set(schema) == {"type", "items"} and "array" in kinds:
        inner = _scalar_type(schema["items"])
        rest = [k for k in kinds if k != "array"]
        if inner is None or "|" in inner or not all(k in _SCALARS for k in rest):
            return None
        return "|".join([f"{inner}[]", *rest])
    if set(schema) != {"type"}:
        return None
    return "|".join(kinds) if kinds and all(k in _SCALARS for k in kinds) else None


def flat_fields(schema: Any) -> Any:
    """``schema`` with each object of many plain scalar fields told in one ``description`` line
    (``"number|null: job_count, avg_duration_s, ..."``) instead of a subschema per field.

    The object stays open (no field is refused, as the table's shapes are open); what the agent
    loses is a validator's check of those scalars, which the tool result never relied on; what it
    keeps is every field's name and type.  Required fields, and fields of any other schema
    (an enum, an object, a reference), keep their schema."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NAMED and isinstance(value, Mapping):
            out[key] = {name: flat_fields(sub) for name, sub in value.items()}
        elif key in _LISTS and isinstance(value, (list, tuple)):
            out[key] = [flat_fields(sub) for sub in value]
        elif key in _ONE and isinstance(value, Mapping):
            out[key] = flat_fields(value)
        else:
            out[key] = value
    props = out.get("properties")
    if isinstance(props, Mapping) and "description" not in out:
        required = set(out.get("required") or ())
        loose = {name: kind for name, sub in props.items()
                 if name not in required and (kind := _scalar_type(sub)) is not None}
        if len(loose) >= FLAT_FIELDS:
            by_type: dict[str, list[str]] = {}
            for name, kind in loose.items():
                by_type.setdefault(kind, []).append(name)
            kept = {name: sub for name, sub in props.items() if name not in loose}
            out = {k: v for k, v in out.items() if k != "properties"}
            if kept:
                out["properties"] = kept
            out["description"] = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in by_type.items())
    return out


def compact(element: Any, defs: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """An element schema and its named shapes, without prose, each shape once, and objects of
    many scalar fields told in one line (``flat_fields``)."""
    element, defs = _compact(element, defs)
    return flat_fields(element), {name: flat_fields(body) for name, body in defs.items()}


def _compact(element: Any, defs: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    plain_defs = {name: without_prose(body) for name, body in defs.items()}
    shared = {name: referenced(body, {k: v for k, v in plain_defs.items() if k != name})
              for name, body in plain_defs.items()}
    return referenced(without_prose(element), shared), shared
