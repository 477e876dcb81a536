"""TypedDicts of the Python client's return values, from the table's output schemas.

A printing method returns a list of elements; each dimension's output (``table/outputs.py``)
says what an element is, in JSON Schema.  This module turns those schemas into Python
annotations for the stubs: a named schema (``#/schemas/Job``) becomes a TypedDict of that
name, an object built by the client (a page with its group id, a compose element) one named
after the command (``JobsGetGroup``), nested objects one named after their field.

Every TypedDict is ``total=False``: the answers are open (fields may be missing, and the
backend may add any), so a key is never promised, only its type.  They are written in the
functional syntax, so that any field name (``pass``, ``from``, a dotted one) can appear.
JSON types map to ``str``, ``int``, ``float``, ``bool``, ``None``, ``list[...]`` and
``dict[str, Any]`` (an object without declared fields); a schema that allows any value is
``Any``.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchloop.table.responses import Schemas, ref_name, types_of

SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
# Names the stub already uses (a schema of one of these names gets a suffix).
RESERVED = {"Any", "Client", "ResourceClient", "DownloadResult", "Resource", "Literal", "Sequence", "Iterator",
            "Callable", "TypedDict", "overload", "attribute", "os"}


def camel(name: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", name) if w)


@dataclass
class TypedDicts:
    """The TypedDicts the stubs need, collected as annotations are asked for."""

    schemas: Schemas
    defs: dict[str, tuple[Mapping[str, Any], dict[str, str]] | None] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    # ------------------------------------------------------------- annotations
    def annotation(self, schema: Any, name: str) -> str:
        """The Python annotation of values of ``schema``; ``name`` names a TypedDict made for it."""
        if not isinstance(schema, Mapping):
            return "Any"
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref_name(ref) is not None:
            return self.named(ref_name(ref) or "")
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if branches:
                return self.union(list(branches), name)
        if schema.get("allOf") or schema.get("properties"):
            return self.typed_dict(name, schema)
        kinds = list(types_of(schema))
        if not kinds:
            return "Any"
        words = []
        for kind in kinds:
            if kind == "array":
                items = schema.get("items")
                words.append(f"list[{self.annotation(items, name + 'Item') if items is not None else 'Any'}]")
            elif kind == "object":
                words.append("dict[str, Any]")
            else:
                words.append(SCALARS.get(kind, "Any"))
        return join(words)

    def union(self, branches: list[Any], name: str) -> str:
        """One of several schemas: the union of their annotations; branches that are all objects
        declared in place are one TypedDict with the fields of all of them."""
        inline_objects = [b for b in branches if isinstance(b, Mapping) and "$ref" not in b
                          and (b.get("properties") or b.get("allOf"))]
        if len(inline_objects) == len(branches) and len(branches) > 1:
            return self.typed_dict(name, {"anyOf": branches})
        words = [self.annotation(b, f"{name}{i + 1}" if len(branches) > 1 else name) for i, b in enumerate(branches)]
        return join(words)

    def named(self, schema_name: str) -> str:
        """The TypedDict of a schema of the table (``#/schemas/NAME``), or its annotation when
        it is no object (a ``JobStatus`` is a ``str``)."""
        target = self.schemas.get(schema_name) if schema_name in self.schemas else {}
        if not (target.get("properties") or target.get("allOf")) and not self._object_branches(target):
            return self.annotation(target, camel(schema_name))
        name = schema_name if schema_name not in RESERVED else f"{schema_name}Fields"
        return self.typed_dict(name, target)

    def _object_branches(self, schema: Mapping[str, Any]) -> bool:
        branches = list(schema.get("anyOf") or schema.get("oneOf") or ())
        return bool(branches) and all(isinstance(b, Mapping) and b.get("properties") for b in branches)

    def typed_dict(self, name: str, schema: Mapping[str, Any]) -> str:
        """A TypedDict ``name`` with the declared fields of ``schema`` (over its branches)."""
        name = self._free(name, schema)
        if name in self.defs:
            return name
        self.defs[name] = None  # a placeholder: a schema that refers to itself ends here
        fields = {prop: self.annotation(sub, name + camel(prop))
                  for prop, sub in self.schemas.properties(schema).items()}
        self.defs[name] = (schema, fields)
        self.order.append(name)
        return name

    def _free(self, name: str, schema: Mapping[str, Any]) -> str:
        """``name``, or ``name`` with a number when another schema took it."""
        base, n = (name if name.isidentifier() and not keyword.iskeyword(name) else f"T{camel(name)}"), 1
        candidate = base
        while candidate in self.defs and self.defs[candidate] is not None and self.defs[candidate][0] != schema:
            n += 1
            candidate = f"{base}{n}"
        return candidate

    # ------------------------------------------------------------------ output
    def source(self) -> str:
        """Every TypedDict collected, in the order first asked for."""
        lines = []
        for name in self.order:
            entry = self.defs[name]
            assert entry is not None
            schema, fields = entry
            doc = str(self.schemas.resolve(schema).get("description") or "").strip()
            if doc:
                lines.append(f"# {' '.join(doc.split())}")
            body = ", ".join(f"{prop!r}: {annotation}" for prop, annotation in fields.items())
            lines.append(f"{name} = TypedDict({name!r}, {{{body}}}, total=False)")
        return "\n".join(lines) + "\n"

    def fields(self, name: str) -> list[tuple[str, str, str]]:
        """``(field, annotation, description)`` of a collected TypedDict (for the reference)."""
        entry = self.defs[name]
        assert entry is not None
        schema, annotations = entry
        declared = self.schemas.properties(schema)
        return [(prop, annotation, " ".join(str(self.schemas.resolve(declared[prop]).get("description") or "").split()))
                for prop, annotation in annotations.items()]


def join(words: list[str]) -> str:
    unique = list(dict.fromkeys(words))
    if "Any" in unique:
        return "Any"
    if "None" in unique:  # None last, as people write it
        unique = [w for w in unique if w != "None"] + ["None"]
    return " | ".join(unique)
