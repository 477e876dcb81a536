"""Output formats of printing commands: json (default), jsonl, yaml, table, plus --query.

``json`` keeps the reference client's bytes exactly (docs/contract.md 3.1).
``jsonl`` prints one compact element per line, each as soon as it and every
id before it have finished.  ``--query`` is a JMESPath expression applied to
the whole array, as the AWS CLI does; with a query the output waits for all ids.
``table`` is for people: one row per element, one column per top-level key.
"""

from __future__ import annotations

import json
import shutil
from typing import Any, TextIO

from .errors import UsageError
from .writers import write_json_array


def compile_query(expression: str | None):
    if not expression:
        return None
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise UsageError(f"invalid --query expression: {exc}") from None


def jsonl_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render_table(rows: list[Any], width: int | None = None) -> str:
    width = width or shutil.get_terminal_size((120, 24)).columns
    if not rows:
        return "(no results)\n"
    if not all(isinstance(row, dict) for row in rows):
        rows = [{"value": row} for row in rows]
    columns: list[str] = []
    for row in rows:
        columns += [key for key in row if key not in columns]
    cells = [[_cell(row.get(col)).replace("\n", " ") for col in columns] for row in rows]
    limit = max(8, (width - 3 * len(columns)) // max(len(columns), 1))
    sizes = [min(limit, max(len(col), *(len(r[i]) for r in cells))) for i, col in enumerate(columns)]

    def fit(text: str, size: int) -> str:
        return text if len(text) <= size else text[: size - 1] + "…"

    lines = ["  ".join(fit(c, s).ljust(s) for c, s in zip(columns, sizes, strict=True)).rstrip(),
             "  ".join("-" * s for s in sizes)]
    lines += ["  ".join(fit(c, s).ljust(s) for c, s in zip(r, sizes, strict=True)).rstrip() for r in cells]
    return "\n".join(lines) + "\n"


def emit(stream: TextIO, elements: list[Any], fmt: str, pretty: bool, query=None) -> None:
    """Print the whole result in ``fmt`` (used for every format but streamed jsonl)."""
    result: Any = elements
    if query is not None:
        result = query.search(elements)
    if fmt == "json":
        if isinstance(result, list):
            write_json_array(stream, result, pretty)
        else:
            from .writers import dumps

            stream.write(dumps(result, pretty))
    elif fmt == "jsonl":
        for item in result if isinstance(result, list) else [result]:
            stream.write(jsonl_line(item))
    elif fmt == "yaml":
        import yaml

        stream.write(yaml.safe_dump(result, allow_unicode=True, sort_keys=False, default_flow_style=False))
    elif fmt == "table":
        stream.write(render_table(result if isinstance(result, list) else [result]))
    stream.flush()
