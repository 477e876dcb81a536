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


def compact(element: Any, defs: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """An element schema and its named shapes, without prose, each shape once."""
    plain_defs = {name: without_prose(body) for name, body in defs.items()}
    shared = {name: referenced(body, {k: v for k, v in plain_defs.items() if k != name})
              for name, body in plain_defs.items()}
    return referenced(without_prose(element), shared), shared
