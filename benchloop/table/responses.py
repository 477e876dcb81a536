"""What the backend answers: the table's response shapes and the lookups on them.

The table declares every answer next to its request: an endpoint's
``response:`` is JSON with a JSON Schema (2020-12), or bytes or text of given
content types; a service's ``error:`` is the schema of its error bodies; and
shapes that several answers share live under the top-level ``schemas:``,
referenced as ``{$ref: "#/schemas/NAME"}`` (a JSON pointer into the table, so
any JSON Schema tool that reads the table resolves it too).

The schemas are deliberately open: the backend may add fields at any time and
a client must never reject an answer for an extra field, so nothing is closed
with ``additionalProperties: false`` and only the fields the client relies on
are ``required``.  A field is *declared* when a ``properties`` entry names it
(in the schema or in one of its ``anyOf``/``oneOf``/``allOf`` branches); the
lints use that to catch a typo in a field the table reads (a waiter's status,
a pagination collection, an id key), and consumers use it to type answers.

This module is plain data walking (no jsonschema import), shared by the lints
(on the raw table) and the model (:class:`Schemas`, :class:`Response`), so
that reading the model stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from msgspec import Struct, field

from .lazy import LazyMap, model_lock

REF_PREFIX = "#/schemas/"
KINDS = ("json", "binary", "text")
SCALAR_TYPES = ("string", "number", "integer", "boolean", "null")
_BRANCHES = ("allOf", "anyOf", "oneOf")
# A path step that enters the items of an array (``reports[0]`` is ``["reports", 0]`` or ``["reports", "*"]``).
ITEMS = "*"

Path = Sequence["str | int"]


def ref_name(ref: str) -> str | None:
    """``"#/schemas/Job"`` -> ``"Job"``; None for any other reference."""
    if isinstance(ref, str) and ref.startswith(REF_PREFIX) and "/" not in ref[len(REF_PREFIX):]:
        return ref[len(REF_PREFIX):]
    return None


def refs(schema: Any) -> Iterator[str]:
    """Every ``$ref`` value in a schema, depth first (``properties`` names are not schemas)."""
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            elif key in ("properties", "patternProperties", "$defs", "dependentSchemas") and isinstance(value, Mapping):
                for sub in value.values():
                    yield from refs(sub)
            elif key in ("enum", "const", "examples", "default", "description", "title"):
                continue
            else:
                yield from refs(value)
    elif isinstance(schema, (list, tuple)):
        for item in schema:
            yield from refs(item)


def rewrite_refs(schema: Any, prefix: str) -> Any:
    """A copy of ``schema`` whose ``#/schemas/NAME`` references point at ``prefix + NAME``
    (the OpenAPI export uses ``#/components/schemas/``)."""
    if isinstance(schema, Mapping):
        out = {}
        for key, value in schema.items():
            name = ref_name(value) if key == "$ref" else None
            if name is not None:
                out[key] = prefix + name
            elif key in ("enum", "const", "examples", "default"):
                out[key] = plain_json(value)
            else:
                out[key] = rewrite_refs(value, prefix)
        return out
    if isinstance(schema, (list, tuple)):
        return [rewrite_refs(item, prefix) for item in schema]
    return schema


def frozen_json(value: Any) -> Any:
    """A read-only copy of a JSON value (mappings as read-only views, lists as tuples)."""
    from types import MappingProxyType

    if isinstance(value, Mapping):
        return MappingProxyType({k: frozen_json(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(frozen_json(v) for v in value)
    return value


def plain_json(value: Any) -> Any:
    """A plain (dict and list) copy of a JSON value, frozen or not."""
    if isinstance(value, Mapping):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return value


def types_of(schema: Any) -> tuple[str, ...]:
    """The JSON types a (resolved) schema names with ``type`` (empty: not said)."""
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, str):
        return (kind,)
    return tuple(kind or ())


class Rows(Struct, frozen=True):
    """A collection of rows inside an answer: where it is, one row's schema and its scalar fields.

    ``fields`` maps each declared field whose value is a scalar (string, number,
    integer, boolean, possibly null) to its resolved schema, in declared order:
    the columns of a table or CSV view of the rows.
    """

    path: tuple[str | int, ...]
    item: Mapping[str, Any]
    fields: Mapping[str, Mapping[str, Any]]


class Schemas:
    """The table's ``schemas:`` and the lookups every reader of an answer needs.

    ``resolve`` follows ``$ref`` at the top of a schema, ``inline`` replaces
    every reference by its target (what a consumer wants to show or validate
    with no registry), ``field`` finds the schema of a field path, ``declares``
    says whether the table declares it, and ``rows`` gives a collection's row
    schema and its scalar fields.  Unknown references resolve to ``{}`` (any
    value): the lints report them, consumers never crash on them.
    """

    def __init__(self, shapes: Mapping[str, Any] | None = None, lock: Any = None):
        # Frozen (read-only mappings, tuples): the model is shared by every consumer; ``inline``
        # and ``rewrite_refs`` hand out plain copies.  Each shape is frozen when first read
        # (``LazyMap``, under the model's lock): most commands read none of them.
        raw = dict(shapes or {})
        self.shapes: Mapping[str, Any] = LazyMap(raw, lambda name: frozen_json(raw[name]), lock or model_lock())

    def __contains__(self, name: str) -> bool:
        return name in self.shapes

    def __iter__(self) -> Iterator[str]:
        return iter(self.shapes)

    def __len__(self) -> int:
        return len(self.shapes)

    def get(self, name: str) -> Mapping[str, Any]:
        return self.shapes[name]

    def target(self, ref: str) -> Mapping[str, Any] | None:
        name = ref_name(ref)
        return self.shapes.get(name) if name is not None else None

    def resolve(self, schema: Any) -> Mapping[str, Any]:
        """The schema with its top-level ``$ref`` chain followed; sibling keywords of a
        reference (a ``description``) win over the target's."""
        seen: set[str] = set()
        current = schema if isinstance(schema, Mapping) else {}
        while isinstance(current.get("$ref"), str) and current["$ref"] not in seen:
            seen.add(current["$ref"])
            siblings = {k: v for k, v in current.items() if k != "$ref"}
            current = {**(self.target(current["$ref"]) or {}), **siblings}
        return current

    def inline(self, schema: Any, _stack: tuple[str, ...] = ()) -> Any:
        """A copy with every ``#/schemas/`` reference replaced by its target (a reference
        back into a schema being inlined stays a reference: the table has none today)."""
        if isinstance(schema, (list, tuple)):
            return [self.inline(item, _stack) for item in schema]
        if not isinstance(schema, Mapping):
            return schema
        ref = schema.get("$ref")
        out: dict[str, Any] = {}
        if isinstance(ref, str) and ref_name(ref) is not None and ref not in _stack:
            out.update(self.inline(self.target(ref) or {}, (*_stack, ref)))
        elif ref is not None:
            out["$ref"] = ref
        for key, value in schema.items():
            if key == "$ref":
                continue
            if key in ("properties", "patternProperties", "$defs", "dependentSchemas") and isinstance(value, Mapping):
                out[key] = {name: self.inline(sub, _stack) for name, sub in value.items()}
            elif key in ("enum", "const", "examples", "default"):
                out[key] = plain_json(value)
            else:
                out[key] = self.inline(value, _stack)
        return out

    def bundle(self, schema: Any, prefix: str = "#/$defs/") -> tuple[Any, dict[str, Any]]:
        """A copy of ``schema`` whose references point at ``prefix + NAME``, and the named
        schemas it needs (transitively), rewritten the same way: put under ``$defs`` at the
        root of a document, every reference resolves within it and each shape is there once."""
        needed: dict[str, Any] = {}
        pending = [ref_name(r) for r in refs(schema)]
        while pending:
            name = pending.pop()
            if name is None or name in needed or name not in self.shapes:
                continue
            needed[name] = rewrite_refs(self.shapes[name], prefix)
            pending += [ref_name(r) for r in refs(self.shapes[name])]
        return rewrite_refs(schema, prefix), dict(sorted(needed.items()))

    def branches(self, schema: Any) -> list[Mapping[str, Any]]:
        """The resolved schema and, recursively, every ``allOf``/``anyOf``/``oneOf`` branch of it."""
        resolved = self.resolve(schema)
        found = [resolved]
        for key in _BRANCHES:
            for sub in resolved.get(key) or ():
                found += self.branches(sub)
        return found

    def properties(self, schema: Any) -> dict[str, Any]:
        """Every declared field of an object schema (over its branches), first declaration wins."""
        out: dict[str, Any] = {}
        for branch in self.branches(schema):
            for name, sub in (branch.get("properties") or {}).items():
                out.setdefault(name, sub)
        return out

    def items_of(self, schema: Any) -> Mapping[str, Any] | None:
        """The item schema of an array schema (over its branches), None when none is declared."""
        for branch in self.branches(schema):
            if "items" in branch and isinstance(branch["items"], Mapping):
                return branch["items"]
        return None

    def field(self, schema: Any, path: Path) -> Mapping[str, Any] | None:
        """The resolved schema of the value at ``path`` (keys, and ``*`` or an index for the
        items of an array); None when the table does not declare it."""
        current: Any = schema
        for step in path:
            if isinstance(step, int) or step == ITEMS:
                current = self.items_of(current)
            else:
                current = self.properties(current).get(step)
            if current is None:
                return None
        return self.resolve(current)

    def declares(self, schema: Any, path: Path) -> bool:
        return self.field(schema, path) is not None

    def types(self, schema: Any) -> tuple[str, ...]:
        """Every JSON type the schema (or one of its branches) names."""
        return tuple(dict.fromkeys(t for branch in self.branches(schema) for t in types_of(branch)))

    def is_array(self, schema: Any) -> bool:
        return "array" in self.types(schema) or self.items_of(schema) is not None

    def find(self, schema: Any, key: str, _seen: frozenset[str] = frozenset()) -> Mapping[str, Any] | None:
        """The schema of the first field named ``key`` declared anywhere in ``schema``
        (as ``items: {find: KEY}`` walks an answer)."""
        for branch in self.branches(schema):
            props = branch.get("properties") or {}
            if key in props:
                return self.resolve(props[key])
            subs = [*props.values(), *([branch["items"]] if isinstance(branch.get("items"), Mapping) else [])]
            for sub in subs:
                ref = sub.get("$ref") if isinstance(sub, Mapping) else None
                if ref in _seen:
                    continue
                found = self.find(sub, key, _seen | ({ref} if isinstance(ref, str) else set()))
                if found is not None:
                    return found
        return None

    def rows(self, schema: Any, path: Path) -> Rows | None:
        """The collection at ``path`` (``[]``: the answer itself) as rows: None unless it is
        declared as an array of objects."""
        where = self.field(schema, path) if path else self.resolve(schema)
        if where is None:
            return None
        item = self.items_of(where)
        if item is None:
            return None
        item = self.resolve(item)
        if "object" not in self.types(item) and not self.properties(item):
            return None
        columns = {}
        for name, sub in self.properties(item).items():
            kinds = self.types(sub)
            if kinds and set(kinds) <= set(SCALAR_TYPES):
                columns[name] = self.inline(self.resolve(sub))
        return Rows(tuple(path), self.inline(item), columns)


class Response(Struct, frozen=True):
    """What one endpoint (or a service's errors) answers.

    ``kind`` is ``json`` (``schema`` is the table's JSON Schema, references
    kept), ``binary`` (bytes, streamed) or ``text``; ``content_types`` are
    the media types it may come as.  ``rows`` is the table's path of the
    answer's collection of rows (``()``: the answer is the list), None when the
    answer has none.  ``schemas`` resolves the references.  ``identity`` pairs a
    field path of the answer (``*`` for each item of a list) with the request variable
    whose id it must name (``((("job_id",), "job"), (("jobs", "*", "group_id"), "group"))``):
    an answer naming another id is someone else's.
    """

    kind: str = "json"
    schema: Mapping[str, Any] | None = field(default_factory=lambda: frozen_json({}))
    content_types: tuple[str, ...] = ("application/json",)
    rows_path: tuple[str | int, ...] | None = None
    schemas: Schemas = field(default_factory=Schemas)  # not compared: the lookups, not the answer
    identity: tuple[tuple[tuple[str, ...], str], ...] = ()

    def __hash__(self) -> int:  # the schema is a dict: hash what identifies the answer's form
        return hash((self.kind, self.content_types, self.rows_path))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Response):
            return NotImplemented
        return ((self.kind, self.schema, self.content_types, self.rows_path, self.identity)
                == (other.kind, other.schema, other.content_types, other.rows_path, other.identity))

    @classmethod
    def from_data(cls, data: Any, schemas: Schemas | None = None) -> Response:
        """From an endpoint's ``response:`` (``{json: SCHEMA, rows: [...]}``, ``{binary: [TYPES]}``,
        ``{text: [TYPES]}``); a missing one is JSON of any shape."""
        schemas = schemas if schemas is not None else Schemas()
        if data is None or data == "json":
            return cls(schemas=schemas)
        if data in ("binary", "text"):  # the short form of tables built by hand (tests)
            return cls(data, None, ("application/octet-stream",) if data == "binary" else ("text/plain",),
                       schemas=schemas)
        if "json" in data:
            rows = data.get("rows")
            identity = tuple((tuple(str(name).split(".")), str(var).strip("{}"))
                             for name, var in (data.get("identity") or {}).items())
            return cls("json", frozen_json(data["json"]), ("application/json",),
                       tuple(rows) if rows is not None else None, schemas, identity)
        kind = "binary" if "binary" in data else "text"
        return cls(kind, None, tuple(data[kind]), schemas=schemas)

    @classmethod
    def error_body(cls, schema: Any, schemas: Schemas) -> Response | None:
        """A service's ``error:`` schema as a JSON response (None: not declared)."""
        return None if schema is None else cls("json", frozen_json(schema), ("application/json",), None, schemas)

    @property
    def is_json(self) -> bool:
        return self.kind == "json"

    @property
    def binary(self) -> bool:
        return self.kind == "binary"

    @property
    def resolved(self) -> dict[str, Any] | None:
        """The JSON Schema with every reference inlined (None for bytes and text)."""
        return self.schemas.inline(self.schema) if self.is_json else None

    def field(self, path: Path) -> Mapping[str, Any] | None:
        """The schema of the field at ``path`` (see :meth:`Schemas.field`), resolved one level."""
        found = self.schemas.field(self.schema, path) if self.is_json else None
        return plain_json(found) if found is not None else None

    def declares(self, path: Path) -> bool:
        return self.field(path) is not None

    def rows(self, path: Path | None = None) -> Rows | None:
        """The rows at ``path``, by default at the table's ``rows:`` (None: no collection)."""
        if not self.is_json:
            return None
        path = self.rows_path if path is None else path
        return None if path is None else self.schemas.rows(self.schema, path)

    def describe(self) -> str:
        """``json``, ``binary`` or ``text``: the kind, as ``bl describe`` names it."""
        return self.kind
