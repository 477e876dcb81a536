"""Generate the tool list and the toolsets' sizes of docs/mcp.md from the endpoint table.

The page is written by hand except the parts between ``<!-- tools:start -->`` and
``<!-- tools:end -->`` (one row per tool of ``bl mcp serve``) and between
``<!-- toolsets:start -->`` and ``<!-- toolsets:end -->`` (each toolset, its tools and the
size of its ``tools/list``), read from the same generator the server uses
(``benchloop.mcp_server.tools``; tests/cli/mcp/test_mcp_toolsets.py measures the same sizes with the
SDK's client over stdio).
``python -m codegen.docs`` rewrites it with the other generated pages and
``--check`` fails when it is stale (``make docs`` / ``make docs-check``).
"""

from __future__ import annotations

import re
from pathlib import Path

from benchloop.mcp_server.tools import (
    DOWNLOADS,
    WRITES,
    Tool,
    all_tools,
    id_arguments,
    list_size,
    parse_toolsets,
    select,
    served_resources,
)
from benchloop.table.load import load_model

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "mcp.md"
README = ROOT / "README.md"
START, END = "<!-- tools:start -->", "<!-- tools:end -->"
SETS_START, SETS_END = "<!-- toolsets:start -->", "<!-- toolsets:end -->"
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


def toolset_of(tool: Tool) -> str:
    """The toolset that serves a tool: ``name (default)`` for one of the default set, ``-`` for
    describe (served whatever the toolsets), and ``all`` only for a resource that no toolset
    names (the guide lets a new resource leave ``mcp:`` alone: ``--toolsets all`` serves it)."""
    if tool.resource is None:
        return "-"
    spec = load_model()
    name = next((n for n, t in spec.mcp.toolsets.items() if tool.resource in t.resources), None)
    if name is None:
        return "`all` only"
    return f"`{name}`" + (" (default)" if name in spec.mcp.default else "")


def row(tool: Tool) -> str:
    gates = " and ".join(_GATE[g] for g in tool.gates)
    served = "always" if tool.resource is None else "with its toolset" + (f" and {gates}" if gates else "")
    arguments = ", ".join(f"`{name}`" for name in tool.input_schema["properties"]) or "-"
    return (f"| `{tool.name}` | {tool.kind} | {toolset_of(tool)} | {served} | `{tool.title}` | {needs(tool)} "
            f"| {arguments} |")


def table() -> str:
    lines = [START, "",
             "| tool | kind | toolset | served | same as | needs | arguments |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [row(tool) for tool in all_tools(load_model())]
    lines += ["", END]
    return "\n".join(lines)


def served(toolsets: tuple[str, ...], gates: bool = False) -> list[Tool]:
    spec = load_model()
    return select(all_tools(spec), allow_writes=gates, allow_downloads=gates,
                  toolsets=served_resources(spec, toolsets))


def _size(tools: list[Tool]) -> str:
    size = list_size(tools)
    return f"{size / 1024:.1f} KB ({size:,} bytes)"


def toolsets_table() -> str:
    """Each toolset with its tools and the size of a ``tools/list`` serving it alone (with
    describe), then the default set, every toolset, and every tool with both gates open."""
    spec = load_model()
    default = spec.mcp.default
    lines = [SETS_START, "",
             "| toolset | what | tools (gated ones in parentheses) | `tools/list` alone |",
             "| --- | --- | --- | --- |"]
    for name, toolset in spec.mcp.toolsets.items():
        plain = [t.name for t in served((name,)) if t.action is not None]
        gated = [t.name for t in served((name,), gates=True) if t.action is not None and t.name not in plain]
        listed = (", ".join(f"`{n}`" for n in plain) or "none") + (f" ({', '.join(f'`{n}`' for n in gated)})" if gated else "")
        mark = " (default)" if name in default else ""
        lines.append(f"| `{name}`{mark} | {_cell(toolset.help)} | {listed or '-'} | {_size(served((name,)))} |")
    every = parse_toolsets(spec, "all")
    loose = [r for r in spec.resources if not any(r in t.resources for t in spec.mcp.toolsets.values())]
    unlisted = [t for t in served(every, gates=True) if t.resource in loose]
    if unlisted:  # a resource the table added without a toolset: served by `--toolsets all` only
        names = ", ".join(f"`{t.name}`" for t in unlisted)
        owners = dict.fromkeys(t.resource for t in unlisted)
        lines.append(f"| (none: `all` only) | Resources of no toolset ({', '.join(f'`{r}`' for r in owners)}). "
                     f"| {names} | - |")
    lines += ["",
              f"The default set ({', '.join(default)}): {len(served(default))} tools, {_size(served(default))}, "
              f"of its budget of {spec.mcp.budget / 1024:.1f} KB ({spec.mcp.budget:,} bytes, `mcp: budget`). "
              f"`--toolsets all`: {len(served(every))} tools, {_size(served(every))}; with `--allow-writes` and "
              f"`--allow-downloads DIR` too: {len(served(every, gates=True))} tools, "
              f"{_size(served(every, gates=True))}. Each count includes `describe`.",
              "", SETS_END]
    return "\n".join(lines)


def render() -> dict[Path, str]:
    text = PAGE.read_text(encoding="utf-8")
    for start, end, make in ((START, END, table), (SETS_START, SETS_END, toolsets_table)):
        pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
        if not pattern.search(text):
            raise SystemExit(f"{PAGE.relative_to(ROOT)}: no {start} ... {end} block")
        text = pattern.sub(lambda _m, make=make: make(), text, count=1)
    # The transcript of `bl mcp serve --http` shows how many tools the default toolsets serve.
    spec = load_model()
    count = len(served(spec.mcp.default))
    text = re.sub(r"(mcp serving http://\S+ \()\d+( tools\))", lambda m: f"{m.group(1)}{count}{m.group(2)}", text)
    # The prose's figures of `--toolsets pull` (describe alone; pull and describe).
    alone, gated = list_size(served(("pull",))), list_size(served(("pull",), gates=True))
    text = re.sub(r"\(which alone is [\d.]+ KB, [\d,]+ bytes\)",
                  lambda _m: f"(which alone is {alone / 1024:.1f} KB, {alone:,} bytes)", text)
    text = re.sub(r"serves `pull` and `describe` \([\d.]+ KB, [\d,]+ bytes\)",
                  lambda _m: f"serves `pull` and `describe` ({gated / 1024:.1f} KB, {gated:,} bytes)", text)
    # README's sentence on the sizes of the default and of `all`.
    readme = README.read_text(encoding="utf-8")
    default, every = served(spec.mcp.default), served(parse_toolsets(spec, "all"))
    readme = re.sub(r"result: \d+ tools, [\d.]+ KB, by default; \d+ tools, [\d.]+ KB, with `--toolsets all`\)",
                    lambda _m: (f"result: {len(default)} tools, {list_size(default) / 1024:.1f} KB, by default; "
                                f"{len(every)} tools, {list_size(every) / 1024:.1f} KB, with `--toolsets all`)"), readme)
    return {PAGE: text, README: readme}
