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

from benchloop.globals import GLOBAL_OPTIONS
from benchloop.specload import load_spec

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "reference"
TEMPLATES = Path(__file__).resolve().parent / "templates"
DIM_USAGE = {"group": "-g GROUP...", "job": "-j JOB...", "task": "--task-id TASK"}


def option_row(opt: dict[str, Any]) -> dict[str, str]:
    flags = ", ".join(f"`{f}`" for f in opt["flags"])
    if opt.get("negative"):
        flags += f", `{opt['negative']}`"
    kind = opt["type"]
    if kind == "choice":
        kind = " \\| ".join(opt["choices"])
    default = opt.get("default")
    shown = "" if default in (None, False) else f"`{default}`"
    return {"flags": flags, "type": kind, "default": shown, "help": opt["help"].replace("|", "\\|")}


def usage(resource: str, action_name: str, action: dict[str, Any]) -> str:
    dims = " | ".join(DIM_USAGE[d] for d in action["dimensions"])
    command = resource if action_name == resource else f"{resource} {action_name}"
    return f"bl [GLOBAL OPTIONS] {command} ({dims}) [OPTIONS]"


def requests_of(spec: dict[str, Any], dim: dict[str, Any]) -> list[dict[str, Any]]:
    from benchloop.steps import ENDPOINT_PARAMS

    rows = []
    for name, part in dim["parts"].items():
        if part.get("step"):
            params = part.get("with") or {}
            used = [spec["endpoints"][params[k]] for k in ENDPOINT_PARAMS.get(part["step"], ()) if k in params]
            request = f"step `{part['step']}`: " + ", ".join(f"`{e['method']} {e['path']}`" for e in used)
        else:
            endpoint = spec["endpoints"][part["request"]]
            query = "&".join(f"{k}={v}" for k, v in (endpoint.get("query") or {}).items())
            request = f"`{endpoint['method']} {endpoint['path']}" + (f"?{query}" if query else "") + "`"
        rows.append({
            "part": name,
            "request": request,
            "pagination": (part.get("pagination") or {}).get("mode", "-"),
            "each": part.get("each", ""),
            "when": part.get("when", ""),
            "file": part.get("file") or part.get("entry", ""),
            "format": ("zip entry" if part.get("entry") else part.get("format", "json"))
            if (part.get("file") or part.get("entry")) else "",
        })
    return rows


def render() -> dict[Path, str]:
    spec = load_spec()
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.globals.update(option_row=option_row, usage=usage, requests_of=lambda d: requests_of(spec, d))
    pages = {OUT / "index.md": env.get_template("index.md.j2").render(
        spec=spec, globals=[option_row(o) for o in GLOBAL_OPTIONS])}
    page = env.get_template("resource.md.j2")
    for name, resource in spec["resources"].items():
        pages[OUT / f"{name}.md"] = page.render(name=name, resource=resource, spec=spec)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when docs/reference is stale")
    args = parser.parse_args(argv)
    pages = render()
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
