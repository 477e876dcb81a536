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

from ..table.model import Command, Option, Spec


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


def option_rows(options: list[Option] | tuple[Option, ...]) -> list[tuple[str, str]]:
    """Rows of options (a table action's, the global ones, a built-in command's): flags with the
    negative form and the value's placeholder, the help text and any default worth showing (not
    a plain flag's)."""
    rows = []
    for opt in options:
        flags = ", ".join(sorted(opt.flags, key=len))
        if opt.negative:
            flags += f", {opt.negative}"
        text = opt.help
        if opt.default not in (None, "") and not (opt.is_flag and not opt.negative):
            text += f" [default: {opt.default}]"
        rows.append((f"{flags} {opt.metavar}".strip(), text))
    return rows


def _paragraph(text: str) -> list[str]:
    return ["", *textwrap.wrap(text, _width())]


def root_page(prog: str, spec: Spec) -> str:
    lines = [f"Usage: {prog} [GLOBAL OPTIONS] RESOURCE ACTION [OPTIONS]"]
    lines += _paragraph("Fetch and download benchmark analysis data (metrics, trajectories, reports, job and task "
                        "lists, artifacts, analyses) by group id, job id or download-task id. Printing actions "
                        "write one JSON array on stdout; download actions write files. Logs and progress go "
                        "to stderr.")
    resources = [(name, res.help) for name, res in spec.resources.items()]
    lines += _rows("Resources", resources)
    lines += _rows("Built-in commands", [(name, command.help) for name, command in spec.commands.items()])
    lines += _rows("Global options (before the resource)", option_rows(list(spec.global_options)) +
                   [("--version", "Print the version and exit."), ("--help, -h", "Show this help and exit.")])
    lines += _paragraph(f"Run '{prog} RESOURCE --help' for its actions. Exit codes: 0 ok, 1 some id failed, "
                        "2 usage, 3 authentication, 4 network, 130 interrupted, 141 stdout closed.")
    return "\n".join(lines) + "\n"


def resource_page(prog: str, name: str, spec: Spec) -> str:
    resource = spec.resources[name]
    if resource.command:
        return action_page(prog, name, name, spec)
    lines = [f"Usage: {prog} [GLOBAL OPTIONS] {name} ACTION [OPTIONS]"]
    lines += _paragraph(resource.help)
    lines += _rows("Actions", [(a, act.help) for a, act in resource.actions.items()])
    lines += _paragraph(f"Run '{prog} {name} ACTION --help' for the options of an action.")
    return "\n".join(lines) + "\n"


def action_page(prog: str, name: str, action_name: str, spec: Spec) -> str:
    action = spec.action(name, action_name)
    lines = [f"Usage: {action.usage(prog)}"]
    lines += _paragraph(action.help)
    if action.positional is None:
        lines += _paragraph("Ids: repeat the option, separate with commas, or pass '-' to read them from stdin.")
    else:  # ap-cmd: one id by position, and everything after the command is its own
        lines += _paragraph("Global options go before the command" + (
            "; other arguments are merged into the output." if action.extra_args else "."))
    lines += _rows("Options", option_rows(action.visible_options))
    lines += _paragraph(f"Global options: see '{prog} --help'.")
    return "\n".join(lines) + "\n"


def _positional_usage(arguments: tuple[Option, ...]) -> str:
    """``SHELL``, ``[RESOURCE [ACTION]]``: each optional positional brackets the ones after it."""
    out = ""
    for arg in reversed(arguments):
        word = f"{arg.placeholder} {out}".strip()
        out = word if arg.required else f"[{word}]"
    return out


def command_page(usage: str, command: Command, notes: list[str]) -> str:
    """The help page of one built-in command (also ``python -m benchloop.sandbox --help``)."""
    lines = [usage, *_paragraph(command.description or command.help)]
    lines += _rows("Arguments", [(arg.placeholder or arg.name, arg.help) for arg in command.arguments])
    lines += _rows("Options", option_rows(command.options))
    for note in notes:
        lines += _paragraph(note)
    return "\n".join(lines) + "\n"


def builtin_page(prog: str, command: Command, action: str | None) -> str | None:
    """The help page of a built-in command or group; None for an unknown action."""
    name = command.name
    if command.actions and action is None:
        lines = [f"Usage: {prog} [GLOBAL OPTIONS] {name} ACTION [OPTIONS]", *_paragraph(command.help),
                 *_rows("Actions", [(a, body.help) for a, body in command.actions.items()]),
                 *_paragraph(f"Run '{prog} {name} ACTION --help' for the options of an action.")]
        return "\n".join(lines) + "\n"
    if command.actions and action not in command.actions:
        return None
    leaf = command.actions[action] if command.actions and action else command
    usage = " ".join(part for part in (f"Usage: {prog} [GLOBAL OPTIONS] {leaf.path}",
                                       _positional_usage(leaf.arguments),
                                       "[OPTIONS]" if leaf.options else "") if part)
    return command_page(usage, leaf, [*leaf.notes, f"Global options: see '{prog} --help'."])
