"""Generate docs/reference/ from the endpoint table with Jinja2.

``python -m codegen.docs`` writes the pages; ``--check`` exits 1 and names the
stale files when the checked-in pages differ from what the table generates
(CI runs it, so docs cannot drift from the spec).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import jinja2

from benchloop.table.load import load_model
from benchloop.table.model import (
    Action,
    ArchiveEntry,
    Dimension,
    FanOutPart,
    Option,
    PagedPart,
    Part,
    Spec,
    StepPart,
    WaitPart,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "reference"
TEMPLATES = Path(__file__).resolve().parent / "templates"


def option_row(opt: Option) -> dict[str, str]:
    flags = f"`{opt.metavar}` (positional)" if opt.positional else ", ".join(f"`{f}`" for f in opt.flags)
    if opt.negative:
        flags += f", `{opt.negative}`"
    kind = " \\| ".join(opt.choices) if opt.type == "choice" else opt.type
    shown = "" if opt.default in (None, False) else f"`{opt.default}`".replace("|", "\\|")
    return {"flags": flags, "type": kind, "default": shown, "help": opt.help.replace("|", "\\|")}


def _request(part: Part) -> str:
    """The requests of a part, as the reader sees them on the wire."""
    if isinstance(part, ArchiveEntry):
        part = part.part
    if isinstance(part, WaitPart):
        what = ([f"every page of `{part.wait.enumeration.request.method} {part.wait.enumeration.request.path}`"]
                if part.wait.enumeration else [])
        what += [f"`{e.method} {e.path}`" for e in part.wait.endpoints if e is not (
            part.wait.enumeration.request if part.wait.enumeration else None)]
        return f"wait `{part.wait.name}`: " + ", ".join(what)
    if isinstance(part, StepPart):
        used = part.wait.endpoints if part.wait else []
        used += list(part.params.endpoints.values())
        kind = f"wait, then step `{part.step.name}`" if part.wait else f"step `{part.step.name}`"
        requests = [f"`{e.method} {e.path}`" for e in used]
        requests += [f"every page of `{e.request.method} {e.request.path}`" for e in part.params.enumerations.values()]
        return f"{kind}: " + ", ".join(requests)
    endpoint = part.request
    query = "&".join(f"{p.name}={p.template}" for p in endpoint.query)
    return f"`{endpoint.method} {endpoint.path}" + (f"?{query}" if query else "") + "`"


def columns_of(dim: Dimension) -> dict[str, Any] | None:
    """The columns of the rows a step part of the dimension builds (a ``columns`` value of its
    ``with:``; only those a ``column_names`` value keeps, in its order), with the help of the
    step's ``columns`` parameter (what ``from`` reads)."""
    for part in dim.parts.values():
        if not isinstance(part, StepPart):
            continue
        kinds = {k: p.type for k, p in part.step.params.items()}
        key = next((k for k in part.params if kinds.get(k) == "columns"), None)
        if key is None:
            continue
        columns = {c.name: c for c in part.params.columns(key)}
        kept = next((part.params.texts(k) for k in part.params if kinds.get(k) == "column_names"), None)
        rows = [{"name": c.name, "from": c.source.replace("|", "\\|"), "type": c.type}
                for c in (columns[n] for n in kept)] if kept is not None else [
            {"name": c.name, "from": c.source.replace("|", "\\|"), "type": c.type} for c in columns.values()]
        return {"step": part.step.name, "help": part.step.params[key].help, "rows": rows}
    return None


def fields_of(action: Action, dim: Dimension) -> dict[str, Any] | None:
    """What one printed element holds (the dimension's output): where its rows are and the
    columns of the flat formats with their types and descriptions; None when the action
    prints nothing, or when the step's column list above says it all."""
    output = dim.output
    if output is None or not (action.prints or action.combine is not None):
        return None
    built = columns_of(dim)
    if built is not None and output.rows is None and \
            [c["name"] for c in built["rows"]] == list(output.column_names[:len(built["rows"])]):
        return None
    rows = ".".join(str(k) for k in output.rows) if output.rows else None

    def cell(text: str) -> str:
        return " ".join(text.split()).replace("|", "\\|")

    return {"rows": rows, "listed": output.rows == (), "ids": list(output.ids),
            "columns": [{"name": c.name, "types": " or ".join(c.types) or "any",
                         "description": cell(c.description)} for c in output.columns]}


def requests_of(dim: Dimension) -> list[dict[str, Any]]:
    rows = []
    for name, part in dim.parts.items():
        inner = part.part if isinstance(part, ArchiveEntry) else part
        entry = part.entry if isinstance(part, ArchiveEntry) else ""
        output = inner.file or entry or ""
        rows.append({
            "part": name,
            "request": _request(part),
            "pagination": inner.pagination.mode if isinstance(inner, PagedPart) else "-",
            "each": inner.each.name if isinstance(inner, FanOutPart) else "",
            "when": ("" if inner.when.equals else "not ") + inner.when.option if inner.when else "",
            "file": output,
            "format": ("zip entry" if entry else inner.format or "json") if output else "",
            "step": inner.step.name if isinstance(inner, StepPart) else "",
        })
    return rows


def output_line(action: Action) -> str:
    """Where an action's output goes, in words (a combine says what it makes of the ids)."""
    if action.combine is not None and action.writer == "files":
        what = action.combine.definition.help
        return (f"the file the combine `{action.combine.name}` writes of every id's value (the Python client "
                "returns its path): " + what[:1].lower() + what[1:])
    if action.combine is not None:
        what = action.combine.definition.help
        return f"one JSON array on stdout (the combine `{action.combine.name}` of every id's value): " + (
            what[:1].lower() + what[1:])
    return {"stdout": "one JSON array on stdout, one element per id",
            "text": "plain text on stdout"}.get(action.writer, "files under the output root (written atomically)")


def builtins_line(spec: Spec) -> str:
    words = []
    for name, command in spec.commands.items():
        words.append(f"`bl {name} {' | '.join(command.actions)}`" if command.actions else f"`bl {name}`")
    return ", ".join(words)


def render() -> dict[Path, str]:
    spec = load_model()
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.globals.update(option_row=option_row, requests_of=requests_of, output_line=output_line,
                       columns_of=columns_of, fields_of=fields_of)
    pages = {OUT / "index.md": env.get_template("index.md.j2").render(
        spec=spec, globals=[option_row(o) for o in spec.global_options], builtins=builtins_line(spec))}
    page = env.get_template("resource.md.j2")
    for name, resource in spec.resources.items():
        pages[OUT / f"{name}.md"] = page.render(name=name, resource=resource, spec=spec)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when docs/reference is stale")
    args = parser.parse_args(argv)
    from codegen import mcp_docs, stubs, table_schema

    # + the Python client's stubs and reference, the tool list of docs/mcp.md and the table's schema
    pages = {**render(), **stubs.render(), **mcp_docs.render(), **table_schema.render()}
    stale = [p for p, text in pages.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    extra = [p for p in OUT.glob("*.md") if p not in pages] if OUT.is_dir() else []
    if args.check:
        if stale or extra:
            for path in stale + extra:
                print(f"stale: {path.relative_to(ROOT)}", file=sys.stderr)
            print("docs/reference differs from spec/: run `make docs` and commit", file=sys.stderr)
            return 1
        print(f"docs/reference is up to date ({len(pages)} pages)")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    for path in extra:
        path.unlink()
    for path in stale:
        path.write_text(pages[path], encoding="utf-8")
    print(f"wrote {len(stale)} of {len(pages)} pages under {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
