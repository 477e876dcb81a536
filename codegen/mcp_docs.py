"""Generate the tool list of docs/mcp.md from the endpoint table.

The page is written by hand except the part between ``<!-- tools:start -->``
and ``<!-- tools:end -->``: one row per tool of ``bl mcp serve``, read from
the same generator the server uses (``benchloop.mcp_server.tools``).
``python -m codegen.docs`` rewrites it with the other generated pages and
``--check`` fails when it is stale (``make docs`` / ``make docs-check``).
"""

from __future__ import annotations

import re
from pathlib import Path

from benchloop.mcp_server.tools import DOWNLOADS, WRITES, Tool, all_tools, id_arguments
from benchloop.table.load import load_model

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "mcp.md"
START, END = "<!-- tools:start -->", "<!-- tools:end -->"
_GATE = {WRITES: "`--allow-writes`", DOWNLOADS: "`--allow-downloads DIR`"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def needs(tool: Tool) -> str:
    """What a call must give: the one id argument (``required``), or one of several."""
    ids = id_arguments(tool.action, tool.input_schema["properties"]) if tool.action is not None else []
    if not ids:
        return "-"
    names = ", ".join(f"`{name}`" for name in ids)
    return names if len(ids) == 1 else f"one of {names}"


def row(tool: Tool) -> str:
    served = " + ".join(_GATE[g] for g in tool.gates) or "always"
    arguments = ", ".join(f"`{name}`" for name in tool.input_schema["properties"]) or "-"
    return f"| `{tool.name}` | {tool.kind} | {served} | `{tool.title}` | {needs(tool)} | {arguments} |"


def table() -> str:
    lines = [START, "",
             "| tool | kind | served | same as | needs | arguments |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [row(tool) for tool in all_tools(load_model())]
    lines += ["", END]
    return "\n".join(lines)


def render() -> dict[Path, str]:
    text = PAGE.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{PAGE.relative_to(ROOT)}: no {START} ... {END} block")
    return {PAGE: pattern.sub(lambda _m: table(), text, count=1)}
