"""Help pages written straight from the table, without building the Cyclopts app.

``--help`` is the page people open most, so it takes the fast path: the
compiled table (cached JSON) has every help string, flag, type, default and
choice, and plain text is enough.  Nothing heavy is imported here (no
cyclopts, rich, httpx or yaml), which keeps ``bl --help`` near the
interpreter's start-up time.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any

from .globals import GLOBAL_OPTIONS

BUILTIN_HELP = {
    "config": ("Show or edit the configuration file.",
               {"set": "Store --api-key/--host/-o (and --profile NAME) in the config file; other content is kept.",
                "show": "Print the effective configuration as JSON (the API key masked).",
                "path": "Print the path of the configuration file in use."}),
    "sandbox": ("Run the local sandbox backend (for demos and tests).",
                {"serve": "Serve the endpoint table from a deterministic synthetic dataset until interrupted."}),
    "describe": ("Print the machine-readable command schema (or --openapi) as JSON.", {}),
    "completion": ("Print a shell completion script (bash, zsh or fish).", {}),
}
DIM_USAGE = {"group": "-g GROUP...", "job": "-j JOB...", "task": "--task-id TASK"}


def _width() -> int:
    try:
        return max(60, min(int(os.environ.get("COLUMNS", "100")), 120))
    except ValueError:
        return 100


def _rows(title: str, rows: list[tuple[str, str]]) -> list[str]:
    if not rows:
        return []
    width = _width()
    left = min(max(len(name) for name, _ in rows) + 2, 30)
    out = ["", f"{title}:"]
    for name, text in rows:
        wrapped = textwrap.wrap(text, width - left - 2) or [""]
        first = f"  {name}".ljust(left + 2)
        if len(name) + 2 > left:
            out.append(f"  {name}")
            first = " " * (left + 2)
        out.append(first + wrapped[0])
        out += [" " * (left + 2) + line for line in wrapped[1:]]
    return out


def _type(opt: dict[str, Any]) -> str:
    kind = opt["type"]
    if kind in ("flag", "bool"):
        return ""
    if kind == "choice":
        return "{" + ",".join(opt["choices"]) + "}"
    return {"ids": "ID...", "list": "NAME...", "ints": "N...", "int": "INT", "float": "SECONDS"}.get(kind, "TEXT")


def option_rows(options: list[dict[str, Any]]) -> list[tuple[str, str]]:
    rows = []
    for opt in options:
        flags = ", ".join(sorted(opt["flags"], key=len))
        if opt.get("negative"):
            flags += f", {opt['negative']}"
        kind = _type(opt)
        text = opt["help"]
        if opt.get("default") not in (None, False, "") and opt["type"] not in ("flag",):
            text += f" [default: {opt['default']}]"
        rows.append((f"{flags} {kind}".strip(), text))
    return rows


def _paragraph(text: str) -> list[str]:
    return ["", *textwrap.wrap(text, _width())]


def root_page(prog: str, spec: dict[str, Any]) -> str:
    lines = [f"Usage: {prog} [GLOBAL OPTIONS] RESOURCE ACTION [OPTIONS]"]
    lines += _paragraph("Fetch and download benchmark analysis data (metrics, trajectories, reports, job and task "
                        "lists, artifacts, analyses) by group id, job id or download-task id. Printing actions "
                        "write one JSON array on stdout; download actions write files. Logs and progress go "
                        "to stderr.")
    resources = [(name, res["help"]) for name, res in spec["resources"].items()]
    lines += _rows("Resources", resources)
    lines += _rows("Built-in commands", [(name, text) for name, (text, _) in BUILTIN_HELP.items()])
    lines += _rows("Global options (before the resource)", option_rows(GLOBAL_OPTIONS) +
                   [("--version", "Print the version and exit."), ("--help, -h", "Show this help and exit.")])
    lines += _paragraph(f"Run '{prog} RESOURCE --help' for its actions. Exit codes: 0 ok, 1 some id failed, "
                        "2 usage, 3 authentication, 4 network, 130 interrupted.")
    return "\n".join(lines) + "\n"


def resource_page(prog: str, name: str, spec: dict[str, Any]) -> str:
    resource = spec["resources"][name]
    if resource.get("command"):
        return action_page(prog, name, name, spec)
    lines = [f"Usage: {prog} [GLOBAL OPTIONS] {name} ACTION [OPTIONS]"]
    lines += _paragraph(resource["help"])
    lines += _rows("Actions", [(a, act["help"]) for a, act in resource["actions"].items()])
    lines += _paragraph(f"Run '{prog} {name} ACTION --help' for the options of an action.")
    return "\n".join(lines) + "\n"


def action_page(prog: str, name: str, action_name: str, spec: dict[str, Any]) -> str:
    resource = spec["resources"][name]
    action = resource["actions"][action_name]
    command = name if resource.get("command") else f"{name} {action_name}"
    dims = " | ".join(DIM_USAGE[d] for d in action["dimensions"])
    lines = [f"Usage: {prog} [GLOBAL OPTIONS] {command} ({dims}) [OPTIONS]"]
    lines += _paragraph(action["help"])
    lines += _paragraph("Ids: repeat the option, separate with commas, or pass '-' to read them from stdin.")
    id_options = {"group": "group", "job": "job", "task": "task_id"}
    hidden = {opt for dim, opt in id_options.items() if dim not in action["dimensions"]}
    lines += _rows("Options", option_rows([o for o in action["options"] if o["name"] not in hidden]))
    lines += _paragraph(f"Global options: see '{prog} --help'.")
    return "\n".join(lines) + "\n"


def builtin_page(prog: str, name: str, action: str | None) -> str | None:
    """Built-in commands keep Cyclopts' own help; only their overview is written here."""
    if action:
        return None
    text, actions = BUILTIN_HELP[name]
    if not actions:
        return None
    lines = [f"Usage: {prog} {name} ACTION [OPTIONS]", *_paragraph(text), *_rows("Actions", list(actions.items()))]
    return "\n".join(lines) + "\n"
