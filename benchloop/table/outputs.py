"""What a command prints, as data: the schema of one printed element, its rows and columns.

Every dimension of a printing action has an :class:`Output`: the JSON Schema (2020-12,
``#/schemas/`` references kept) of one element it prints, where the element's rows are
(``rows``: a path to a list of objects; None when the element is itself one row), and
the element's keys repeated in front of every row (``ids``: ``group_id`` of a page of
jobs).  From them come the columns of ``--output table``, ``csv`` and ``markdown``
(scalar fields in declared order, nested objects flattened with dotted names),
``bl describe`` and the reference pages (the fields), the Python client's TypedDicts
and the MCP tools' output schemas.

The table says it once: ``derive.dimension_output`` works it out of what the table already
declares wherever that is mechanical - an answer's ``response:`` and ``rows:``, the
transforms that keep an answer's shape or add its id (``with_id``) or gather its pages
(``collection``), the entries a part selects (``items:``), a ``compose`` element (an object of the parts), a step's declared
``output:``, the columns of a step that builds rows (``output: {columns: NAME}``), a
combine that prints rows (``output: rows``) - and an ``output:`` on a part or a
dimension says it where it is not (a transform that builds a new value).  The lints
refuse a printing dimension whose output cannot be worked out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from msgspec import Struct, field

from .responses import ITEMS, Response, Schemas, frozen_json, plain_json, types_of

# Transforms whose value the answer's own schema describes (they keep or filter its keys).
KEEP_SHAPE = ("raw", "job_metrics", "filter_sections")
COLUMN_SCHEMAS = {"number": {"type": ["number", "null"]}, "string": {"type": ["string", "null"]},
                  "boolean": {"type": ["boolean", "null"]}, "json": {}}


class OutputColumn(Struct, frozen=True):
    """One column of the flat view: a dotted name, the path of keys it reads, its schema."""

    __eq__ = object.__eq__  # compared and hashed by identity: the schema is a read-only mapping
    __hash__ = object.__hash__

    name: str
    path: tuple[str, ...]
    schema: Mapping[str, Any]

    @property
    def description(self) -> str:
        return str(self.schema.get("description") or "")

    @property
    def types(self) -> list[str]:
        """The JSON types the column holds (empty: any value)."""
        found: list[str] = []
        stack = [self.schema]
        while stack:
            sub = stack.pop(0)
            found += [t for t in types_of(sub) if t not in found]
            for key in ("anyOf", "oneOf", "allOf"):
                stack += list(sub.get(key) or ())
        return found


class Output(Struct, frozen=True, dict=True):  # dict: the cached columns
    """What one dimension prints per element (see the module docstring)."""

    __eq__ = object.__eq__  # compared and hashed by identity: the schema is a read-only mapping
    __hash__ = object.__hash__

    schema: Mapping[str, Any]
    rows: tuple[str | int, ...] | None = None
    ids: tuple[str, ...] = ()
    schemas: Schemas = field(default_factory=Schemas)
    # Rows a step built with the columns it was asked for, in that order (``--fields``).
    chosen_columns: bool = False

    @property
    def resolved(self) -> dict[str, Any]:
        """The element's schema with every reference inlined (for validators and clients)."""
        return self.schemas.inline(self.schema)

    @property
    def row(self) -> Mapping[str, Any]:
        """The schema of one row: an item of ``rows``, or the element itself."""
        if self.rows is None:
            return self.schemas.resolve(self.schema)
        return self.schemas.field(self.schema, (*self.rows, ITEMS)) or {}

    @cached_property
    def columns(self) -> tuple[OutputColumn, ...]:
        """The columns of the flat view: the ids, then the row's fields flattened."""
        out: list[OutputColumn] = []
        for key in self.ids:
            sub = self.schemas.field(self.schema, (key,)) or {}
            out.append(OutputColumn(key, (key,), frozen_json(self.schemas.inline(sub))))
        for column in flat_columns(self.schemas, self.row):
            if column.name not in self.ids:
                out.append(column)
        return tuple(out)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def describe(self) -> dict[str, Any]:
        """What ``bl describe`` shows of it."""
        return {"schema": self.resolved, "rows": list(self.rows) if self.rows is not None else None,
                "ids": list(self.ids),
                "columns": [{"name": c.name, "types": c.types, "description": c.description} for c in self.columns]}


def may_be_other(schemas: Schemas, schema: Any) -> bool:
    """Whether a value of ``schema`` may be something other than an object (or null)."""
    for branch in schemas.branches(schema):
        if any(key in branch for key in ("anyOf", "oneOf")) and "type" not in branch:
            continue  # a container: its branches decide
        kinds = set(types_of(branch))
        if kinds:
            if kinds - {"object", "null"}:
                return True
        elif not branch.get("properties") and "additionalProperties" not in branch and "allOf" not in branch:
            return True  # any value
    return False


def flat_columns(schemas: Schemas, schema: Any, prefix: tuple[str, ...] = ()) -> list[OutputColumn]:
    """The columns of one row: each scalar (or list) field, and the fields of a nested object
    under dotted names (the object's own column too when it may hold something else, a list
    of them for example).  A free-form map (an object without declared fields) gives no
    column of its own: its keys are the data's."""
    out: list[OutputColumn] = []
    for name, sub in schemas.properties(schema).items():
        path = (*prefix, name)
        nested = bool(schemas.properties(sub))
        if may_be_other(schemas, sub):
            out.append(OutputColumn(".".join(path), path, frozen_json(schemas.inline(schemas.resolve(sub)))))
        if nested:
            out += flat_columns(schemas, sub, path)
    return out


# ------------------------------------------------------------------ derivation
def declared(data: Mapping[str, Any], schemas: Schemas) -> Output:
    """An ``output:`` of the table: ``{json: SCHEMA, rows: [PATH], ids: [KEY]}``."""
    rows = data.get("rows")
    return Output(frozen_json(data["json"]), tuple(rows) if rows is not None else None,
                  tuple(data.get("ids") or ()), schemas)


def of_response(response: Response, shape: str | None, shape_with: Mapping[str, Any],
                schemas: Schemas) -> Output | None:
    """What a request part's value is, from its answer and its transform (None: not mechanical)."""
    if not response.is_json:
        return None
    schema = response.schema or {}
    if shape is None or shape in KEEP_SHAPE:
        return Output(schema, response.rows_path, (), schemas)
    if shape == "with_id":
        key = shape_with["id_key"]
        merged = {"allOf": [{"type": "object", "properties": {key: _id_schema(key)}}, plain_json(schema)]}
        return Output(frozen_json(merged), response.rows_path, (key,), schemas)
    if shape == "collection" and response.rows_path is not None:
        key, name = shape_with["id_key"], shape_with["collection"]
        item = schemas.field(schema, (*response.rows_path, ITEMS)) or {}
        total = schemas.field(schema, ("total",)) or {"type": "integer"}
        built = {"type": "object", "description": f"Every {name} of the {key.removesuffix('_id')}, all pages.",
                 "properties": {key: _id_schema(key), "total": plain_json(total),
                                name: {"type": "array", "items": plain_json(item)}}}
        return Output(frozen_json(built), (name,), (key,), schemas)
    return None


def of_items(response: Response, collection: str | None, find: str | None, added: Sequence[str],
             schemas: Schemas) -> Output | None:
    """A request part that selects entries of its answer (``items:``): the list of them, each
    with the fields ``add`` sets (text)."""
    if not response.is_json or not (collection or find):
        return None
    schema = response.schema or {}
    if collection:
        item = schemas.items_of(schemas.field(schema, (collection,)) or {}) or {}
    else:
        item = schemas.find(schema, find or "") or {}
    entry: dict[str, Any] = {"allOf": [plain_json(item)]}
    if added:
        entry["allOf"].append({"type": "object", "properties": {k: {"type": "string"} for k in added}})
    return Output(frozen_json({"type": "array", "items": entry}), (), (), schemas)


def _id_schema(key: str) -> dict[str, Any]:
    return {"type": "string", "description": f"The {key.removesuffix('_id')} asked for."}


def of_columns(columns: Sequence[Any], schemas: Schemas) -> Output:
    """A step's list of flat rows, one field per declared column (``model.Column``)."""
    item = {"type": "object", "properties": {c.name: {**COLUMN_SCHEMAS[c.type], "description": f"From `{c.source}`."}
                                             for c in columns}}
    return Output(frozen_json({"type": "array", "items": item}), (), (), schemas, chosen_columns=True)


def of_object(id_key: str, parts: Mapping[str, Output], schemas: Schemas) -> Output:
    """A ``compose`` element: ``{id_key: id, part: value, ...}`` (a part left out by the options
    is absent)."""
    built = {"type": "object", "properties": {id_key: _id_schema(id_key),
                                              **{n: plain_json(o.schema) for n, o in parts.items()}}}
    return Output(frozen_json(built), None, (id_key,), schemas)


def one_of(outputs: Sequence[Output], schemas: Schemas) -> Output | None:
    """The output of a dimension whose parts are alternatives (``when``): one schema of any of
    them; rows and ids only when they agree."""
    if not outputs:
        return None
    if len(outputs) == 1:
        return outputs[0]
    rows = {o.rows for o in outputs}
    ids = {o.ids for o in outputs}
    built = {"anyOf": [plain_json(o.schema) for o in outputs]}
    return Output(frozen_json(built), rows.pop() if len(rows) == 1 else None,
                  ids.pop() if len(ids) == 1 else (), schemas)


def each_row(output: Output) -> Output:
    """Every row of a value printed as an element of its own (a listing, a ``concat``): the
    row's schema as the table writes it (a ``$ref`` stays one)."""
    if output.rows is None:
        return output
    schemas, current = output.schemas, output.schema
    for step in (*output.rows, ITEMS):
        found = schemas.items_of(current) if step == ITEMS or isinstance(step, int) else \
            schemas.properties(current).get(step)
        if found is None:
            return Output(frozen_json(plain_json(output.row)), None, (), schemas, output.chosen_columns)
        current = found
    return Output(frozen_json(plain_json(current)), None, (), schemas, output.chosen_columns)

