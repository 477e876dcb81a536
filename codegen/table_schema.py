"""Generate ``spec/benchloop.schema.json`` from the declaration of the table (``table/schema.py``).

The schema is for editors (completion and hover text on ``spec/benchloop.yaml``, whose first
line names it) and for any JSON Schema tool; the compiler itself decodes the table with the
declaration.  ``python -m codegen.docs`` writes it and ``--check`` fails when the file differs,
so a hand edit of the schema fails ``make docs-check``: change ``table/schema.py`` (or the record of
``table/model.py`` it imports) instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from benchloop.table import schema as declaration
from benchloop.table.model import HIDDEN, Name

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "spec" / "benchloop.schema.json"
HEADER = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "benchloop-endpoint-table",
          "title": "benchloop endpoint table"}


def table_schema() -> dict[str, Any]:
    """The JSON Schema of the table: the records' definitions, each with what its
    ``__post_init__`` checks (``schema_extra``), the table itself at the top."""
    generated = msgspec.json.schema(declaration.Table, schema_hook=_name)
    defs: dict[str, Any] = generated["$defs"]
    for name, definition in defs.items():
        record = getattr(declaration, name, None)
        extra = getattr(record, "schema_extra", None)
        for key, value in (extra or {}).items():
            if key == "properties":  # keywords of single fields (uniqueItems...)
                for name, keywords in value.items():
                    definition["properties"][name].update(keywords)
            else:
                definition[key] = value
        definition.pop("title", None)
        for key in [k for k in definition.get("properties", {}) if k.startswith(HIDDEN)]:
            del definition["properties"][key]  # the model's own (an entry's name is its key), never written
    top = defs.pop("Table")
    return {**HEADER, **top, "$defs": dict(sorted(defs.items()))}


def _name(kind: type) -> dict[str, Any]:
    """A field naming another entry of the table (``model.Name``) is its name in the YAML."""
    if isinstance(kind, Name):
        return {"type": "string"}
    raise NotImplementedError


def render() -> dict[Path, str]:
    return {OUT: json.dumps(table_schema(), indent=2, ensure_ascii=False) + "\n"}
