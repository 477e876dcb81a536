"""Usage errors as the contract prints them (docs/contract.md 1.4).

Every usage error, Cyclopts' (parsing) or the table's (``bind``, settings), is three
lines on stderr, exit 2, nothing on stdout::

    Usage: bl metrics get [OPTIONS]
    Try 'bl metrics get --help' for help.
    Error: <message>

or, with ``--error-format json``, one JSON object.  The message is Cyclopts' own
(``str(exc)``, its last line), but for the contract's three that teach: an unknown
option is suggested among the global flags too, an option of the action given before
the resource says where it goes, and a bare id says which option takes it.

Why not Cyclopts' ``error_formatter``: Cyclopts prints what it returns through a rich
Console, which wraps the line at the terminal's width and draws no usage hint of the
table's own errors (raised by the command after parsing, where Cyclopts has no error
path), so one renderer here serves both.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..base.errors import EXIT_AUTH, EXIT_USAGE
from .invocation import STDIN_TOKEN

if TYPE_CHECKING:
    from cyclopts.exceptions import CycloptsError


def command_path(tokens: list[str]) -> list[str]:
    """Best-effort 'resource action' of a command line, for the usage hint."""
    from ..table.load import load_model

    spec = load_model()
    words = [t for t in tokens if not t.startswith("-")]
    for index, word in enumerate(words):
        if word in spec.resources or word in spec.commands:
            nxt = words[index + 1] if index + 1 < len(words) else None
            actions = spec.resources[word].actions if word in spec.resources else spec.commands[word].actions
            return [word, nxt] if nxt is not None and nxt in actions else [word]
    return []


def parse_error(prog: str, tokens: list[str], exc: CycloptsError) -> int:
    """Cyclopts' error as a usage error."""
    text = str(exc).strip()
    message = text.splitlines()[-1] if text else type(exc).__name__
    path = command_path(tokens)
    return usage_error(prog, tokens, _unknown_option(exc, path) or _bare_ids(exc, path) or message)


def _unknown_option(exc: CycloptsError, path: list[str]) -> str | None:
    """An unknown option, suggested among the command's flags and the global ones.

    Cyclopts suggests among the command's own flags only, although the global options are
    accepted there too (fallthrough), and before the resource, where only the meta app's
    options are read, it calls an unknown option an unknown command."""
    from cyclopts.exceptions import UnknownCommandError, UnknownOptionError

    if isinstance(exc, UnknownCommandError):
        unused = [str(t) for t in (exc.unused_tokens or [])]
        if not unused or not unused[0].startswith("-"):
            return None
        return _misplaced_option(unused, path) or f"Unknown option: {unused[0]}.{_did_you_mean(unused[0], path)}"
    if isinstance(exc, UnknownOptionError):
        flag = str(exc.token.keyword or exc.token.value or "")
        if flag.startswith("-"):
            return f"Unknown option: {flag}.{_did_you_mean(flag, path)}"
    return None


def _command_flags(path: list[str]) -> list[str]:
    """The flags of the command at ``path`` itself (every action's when the action is not given)."""
    from ..table.load import load_model

    spec = load_model()
    if path and path[0] in spec.resources:
        resource = spec.resources[path[0]]
        actions = [resource.actions[path[1]]] if len(path) > 1 else list(resource.actions.values())
        return [flag for action in actions for opt in action.options for flag in opt.flags]
    if path and path[0] in spec.commands:
        prefix = " ".join(path)
        return [flag for leaf in spec.command_leaves if leaf.path.startswith(prefix)
                for opt in leaf.options for flag in opt.flags]
    return []


def _global_flags() -> list[str]:
    from ..table.load import load_model

    return [flag for opt in load_model().global_options for flag in opt.all_flags]


def _did_you_mean(token: str, path: list[str]) -> str:
    import difflib

    flags = [f for f in dict.fromkeys([*_global_flags(), *_command_flags(path)]) if f.startswith("--")]
    close = difflib.get_close_matches(token.split("=", 1)[0], flags, n=1, cutoff=0.6)
    return f" Did you mean {close[0]}?" if close else ""


def _misplaced_option(unused: list[str], path: list[str]) -> str | None:
    """An option of the command given before its resource, where only global options are read
    (``bl --output json jobs get``): say where it goes."""
    flag = unused[0].split("=", 1)[0]
    if not path or flag in _global_flags() or flag not in _command_flags(path):
        return None
    command = " ".join(path)
    shown = unused[0]
    if "=" not in shown and len(unused) > 1 and not unused[1].startswith("-") and unused[1] != path[0]:
        shown += f" {unused[1]}"  # its value (a flag is followed by the resource itself)
    place, head = ("action", "resource") if len(path) > 1 else ("command", "command")
    return (f"{flag} is an option of '{command}', not a global option: give it after the {place} "
            f"('{command} ... {shown}'); only global options go before the {head}")


def _bare_ids(exc: CycloptsError, path: list[str]) -> str | None:
    """A bare id (``bl metrics get G1-J0001``) says which options take ids, where Cyclopts says
    "Unused Tokens"."""
    from cyclopts.exceptions import UnusedCliTokensError

    from ..table.load import load_model
    from ..table.model import DIMENSION_KINDS

    unused = [str(t) for t in (exc.unused_tokens or [])]
    resource = load_model().resources.get(path[0]) if path else None
    if not isinstance(exc, UnusedCliTokensError) or not unused or resource is None:
        return None
    action = (next(iter(resource.actions.values())) if resource.command
              else resource.actions.get(path[1]) if len(path) == 2 else None)
    if action is None:
        return None
    ids = ",".join("-" if t == STDIN_TOKEN else t for t in unused)
    offers = [f"{DIMENSION_KINDS[d].short} {ids}" for d in ("job", "group", "task") if d in action.dimensions]
    if not offers:
        return None
    shown = " ".join("-" if t == STDIN_TOKEN else t for t in unused)
    return f"unexpected argument(s) {shown!r}: ids are given with an option, e.g. {' or '.join(offers)}"


def _json_errors(tokens: list[str]) -> bool:
    for index, token in enumerate(tokens):
        if token == "--error-format=json" or (token == "--error-format" and tokens[index + 1:index + 2] == ["json"]):
            return True
    return False


def config_failure(tokens: list[str], message: str) -> int:
    """Print a key source's failure (``KeyUnavailable``: a key command that failed); exit 3, the
    code of every key problem, without the usage preface (the command line is fine)."""
    if _json_errors(tokens):
        import json

        sys.stderr.write(json.dumps({"error": "configuration", "message": message, "exit_code": EXIT_AUTH},
                                    ensure_ascii=False) + "\n")
        return EXIT_AUTH
    sys.stderr.write(f"[error] configuration error: {message}\n")
    return EXIT_AUTH


def usage_error(prog: str, tokens: list[str], message: str) -> int:
    """Print a usage error of the command line ``tokens``; its exit code."""
    where = " ".join([prog, *command_path(tokens)])
    if _json_errors(tokens):
        import json

        sys.stderr.write(json.dumps({"error": "usage", "message": message, "usage": f"{where} [OPTIONS]",
                                     "exit_code": EXIT_USAGE}, ensure_ascii=False) + "\n")
        return EXIT_USAGE
    sys.stderr.write(f"Usage: {where} [OPTIONS]\nTry '{where} --help' for help.\nError: {message}\n")
    return EXIT_USAGE
