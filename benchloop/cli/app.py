"""Entry point of `bl` / `bmcli`: global options, built-in commands, dispatch.

The global options live on Cyclopts' meta app and are given before the
resource.  Resource commands are registered lazily from the compiled table
(see ``commands.py``); ``--help`` and ``--version`` never import httpx or
parse YAML.  Usage errors (ours and Cyclopts') are printed as

    Usage: bl metrics get [OPTIONS]
    Try 'bl metrics get --help' for help.
    Error: <message>

on stderr with exit 2, and nothing on stdout.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

from ..base.errors import (
    EXIT_INTERRUPTED,
    EXIT_STDOUT_CLOSED,
    EXIT_USAGE,
    BenchloopError,
    StdoutClosed,
    UsageError,
)
from ..table.globals import GLOBAL_OPTIONS
from ..table.model import load_model
from ..version import __version__

GLOBAL = "Global options"
BUILTINS = ("config", "sandbox", "describe", "completion", "mcp")


class Invocation:
    """The resolved global options, handed to every command handler as ``ctx``."""

    def __init__(self, prog: str, path: list[str], options: dict[str, Any]):
        self.profile_values: dict[str, Any] = {}
        self.prog = prog
        self.path = path
        self.options = options

    def runtime(self):
        from ..base.log import Log
        from ..settings import session

        opts = self.options
        settings = session.settings(api_key=opts["api_key"], host=opts["host"], output_dir=opts["output_dir"],
                                    config=opts["config"], profile=opts["profile"], ca_bundle=opts["ca_bundle"])
        self.profile_values = settings.values
        self.settings = settings
        log = Log(quiet=opts["quiet"], verbose=opts["verbose"], error_format=opts["error_format"])
        return session.runtime(settings, log, timeout=opts["timeout"], retry=opts["retry"],
                               concurrency=opts["concurrency"], pretty=opts["pretty"], ca_bundle=opts["ca_bundle"],
                               stdout=sys.stdout)

    def run(self, action: Any, dim: str, ids: list[str], opts: dict[str, Any]) -> int:
        from ..engine.command import run
        from . import update_check

        rt = self.runtime()
        check = update_check.start(self.profile_values)
        code = None
        try:
            code = run(rt, action, dim, ids, opts)
            return code
        finally:
            rt.close()
            self.other_service = bool(rt.failed_services) and "benchloop" not in rt.failed_services
            self.explain(rt.log, code)
            message = check.notice() if check else None
            if message and not self.options["quiet"]:
                sys.stderr.write(message + "\n")

    def explain(self, log: Any, code: int | None) -> None:
        """After a run: what a person needs to act on a missing key or a network failure (the
        host and where it came from), and the per-file lines a terminal did not show."""
        from ..base.errors import EXIT_AUTH
        from ..settings.config import mask_url

        settings = None if self.other_service else self.settings  # advice about Benchloop only
        if settings is not None and code == EXIT_AUTH and not settings.api_key:
            log.error("no API key is configured, so none was sent; set one with "
                      "'bl config set --api-key KEY' or the BENCHLOOP_API_KEY environment variable")
        elif settings is not None and (log.network_failed or code == 4):
            log.error(f"network errors talking to {mask_url(settings.host)} (host from {settings.source('host')}); "
                      "check the URL and the network" + ("" if log.verbose else " (-v shows each retry)"))
        hidden = log.hidden_summary()
        if hidden and code is not None:
            log.info(hidden)

    settings: Any = None
    other_service = False  # the run failed on another service (AgentPlatform), not on Benchloop


def _global_parameters() -> list:
    import inspect
    from typing import Literal

    from cyclopts import Parameter

    hints = {"str": str | None, "float": float, "int": int, "flag": bool, "bool": bool}
    params = []
    for opt in GLOBAL_OPTIONS:
        extra: dict[str, Any] = {}
        if opt["type"] == "flag":
            extra["negative"] = ""
            extra["show_default"] = False
        if opt["type"] == "bool":
            extra["negative"] = opt["negative"]
        if "min" in opt:
            from cyclopts import validators

            extra["validator"] = validators.Number(gte=opt["min"])
        hint = Literal[tuple(opt["choices"])] if opt["type"] == "choice" else hints[opt["type"]]
        annotation = Annotated[hint, Parameter(name=opt["flags"], help=opt["help"],
                                                              group=GLOBAL, **extra)]
        params.append(inspect.Parameter(opt["name"], inspect.Parameter.KEYWORD_ONLY,
                                        default=opt["default"], annotation=annotation))
    return params


def build_app(prog: str = "bl"):
    import inspect

    from cyclopts import App, Parameter

    spec = load_model()
    app = App(
        name=prog,
        help="Fetch and download benchmark analysis data (metrics, reports, job and task lists, ...) "
        "by group id or job id. `get` prints JSON on stdout; `download` writes files.",
        version=f"bmcli {__version__}",
        version_format="plaintext",
        help_format="plaintext",
        suppress_keyboard_interrupt=False,  # we print the summary and exit 130 ourselves
    )
    for index, (name, resource) in enumerate(spec.resources.items()):
        app.command(f"benchloop.cli.commands:res__{name.replace('-', '_')}", name=name,
                    help=resource.help, sort_key=index)
    from .builtin_options import BUILTIN_COMMANDS

    targets = {"config": "config_app", "sandbox": "sandbox_app", "describe": "describe_command",
               "completion": "completion_command", "mcp": "mcp_app"}  # in benchloop.cli.builtins, built from BUILTIN_COMMANDS
    for index, (name, command) in enumerate(BUILTIN_COMMANDS.items()):
        app.command(f"benchloop.cli.builtins:{targets[name]}", name=name, help=command["help"], sort_key=100 + index)

    def launcher(*tokens, **options):  # annotations come from __signature__
        if not tokens:
            app.help_print([])
            return EXIT_USAGE
        if len(tokens) > 1 and tokens[1] == "--" and _passes_through(tokens[0]):
            tokens = (tokens[0], *tokens[2:])  # the "--" that _pass_through added
        command, bound, ignored = app.parse_args(list(tokens))
        path = [t for t in tokens if not t.startswith("-")][:2]
        resolved = {opt["name"]: opt["default"] for opt in GLOBAL_OPTIONS}
        resolved.update(options)
        extra = {"ctx": Invocation(prog, path, resolved)} if "ctx" in ignored else {}
        return command(*bound.args, **bound.kwargs, **extra)

    launcher.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("tokens", inspect.Parameter.VAR_POSITIONAL,
                           annotation=Annotated[str, Parameter(show=False, allow_leading_hyphen=True)])]
        + _global_parameters()
    )
    app.meta.default(launcher)
    app.meta.suppress_keyboard_interrupt = False
    return app


def _command_path(app, tokens: list[str]) -> list[str]:
    """Best-effort 'resource action' of a failed command line, for the usage hint."""
    resources = load_model().resources
    words = [t for t in tokens if not t.startswith("-")]
    for index, word in enumerate(words):
        if word in resources or word in BUILTINS:
            nxt = words[index + 1] if index + 1 < len(words) else None
            actions = resources[word].actions if word in resources else {}
            return [word, nxt] if nxt in actions or (nxt and word in BUILTINS) else [word]
    return []


def _flags_of(path: list[str]) -> list[str]:
    """Every flag the command at ``path`` accepts, global ones included."""
    flags = [flag for opt in GLOBAL_OPTIONS for flag in [*opt["flags"], opt.get("negative") or ""] if flag]
    resources = load_model().resources
    if len(path) >= 1 and path[0] in resources:
        resource = resources[path[0]]
        actions = [resource.actions[path[1]]] if len(path) > 1 else list(resource.actions.values())
        if resource.command:
            actions = list(resource.actions.values())
        flags += [flag for action in actions for opt in action.options for flag in opt.flags]
    elif path and path[0] in BUILTINS:
        from .builtin_options import builtin_leaves

        prefix = " ".join(path)
        flags += [flag for name, leaf in builtin_leaves() if name.startswith(prefix)
                  for opt in leaf.get("options", ()) for flag in opt["flags"]]
    return list(dict.fromkeys([*flags, "--help", "-h"]))


def _did_you_mean(token: str, flags: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(token.split("=", 1)[0], [f for f in flags if f.startswith("--")], n=1,
                                      cutoff=0.6)
    return f" Did you mean {close[0]}?" if close else ""


def _misplaced_option(unused: list[str], path: list[str]) -> str | None:
    """An option of the command given before its resource, where only global options are read
    (``bl --output json jobs get``): say where it goes, instead of "Unknown option: --output.
    Did you mean --output?"."""
    flag = unused[0].split("=", 1)[0]
    if not path or flag in _GLOBAL_FLAGS or flag not in _flags_of(path):
        return None
    command = " ".join(path)
    shown = unused[0]
    if "=" not in shown and len(unused) > 1 and not unused[1].startswith("-") and unused[1] != path[0]:
        shown += f" {unused[1]}"  # its value (a flag is followed by the resource itself)
    place, head = ("action", "resource") if len(path) > 1 else ("command", "command")
    return (f"{flag} is an option of '{command}', not a global option: give it after the {place} "
            f"('{command} ... {shown}'); only global options go before the {head}")


def _parser_message(exc: Exception, path: list[str], message: str) -> str:
    """Cyclopts' message, made to teach: an unknown option is called one (with the closest
    flag of this command or the global ones), and a bare id says which option takes it."""
    from cyclopts.exceptions import UnknownCommandError, UnknownOptionError, UnusedCliTokensError

    from .commands import STDIN_TOKEN

    unused = [str(t) for t in (getattr(exc, "unused_tokens", None) or [])]
    if isinstance(exc, UnknownCommandError) and unused and unused[0].startswith("-"):
        misplaced = _misplaced_option(unused, path)
        if misplaced:
            return misplaced
        return f"Unknown option: {unused[0]}.{_did_you_mean(unused[0], _flags_of(path))}"
    if isinstance(exc, UnknownOptionError):
        token = getattr(exc, "token", None)
        value = str(getattr(token, "keyword", None) or getattr(token, "value", "") or "")
        if value.startswith("-"):
            return f"Unknown option: {value}.{_did_you_mean(value, _flags_of(path))}"
    resource = load_model().resources.get(path[0]) if path else None
    if isinstance(exc, UnusedCliTokensError) and unused and resource is not None:
        action = (next(iter(resource.actions.values())) if resource.command
                  else resource.actions.get(path[1]) if len(path) == 2 else None)
        if action is not None:
            ids = ",".join("-" if t == STDIN_TOKEN else t for t in unused)
            names = {"group": "-g", "job": "-j", "task": "--task-id"}
            offers = [f"{names[d]} {ids}" for d in ("job", "group", "task") if d in action.dimensions]
            if offers:
                shown = " ".join("-" if t == STDIN_TOKEN else t for t in unused)
                return (f"unexpected argument(s) {shown!r}: ids are given with an option, e.g. "
                        f"{' or '.join(offers)}")
    return message


def _json_errors(tokens: list[str]) -> bool:
    for index, token in enumerate(tokens):
        if token == "--error-format=json" or (token == "--error-format" and tokens[index + 1:index + 2] == ["json"]):
            return True
    return False


def usage_error(prog: str, path: list[str], message: str, as_json: bool = False) -> int:
    where = " ".join([prog, *path])
    if as_json:
        import json

        sys.stderr.write(json.dumps({"error": "usage", "message": message, "usage": f"{where} [OPTIONS]",
                                     "exit_code": EXIT_USAGE}, ensure_ascii=False) + "\n")
        return EXIT_USAGE
    sys.stderr.write(f"Usage: {where} [OPTIONS]\nTry '{where} --help' for help.\nError: {message}\n")
    return EXIT_USAGE


_GLOBAL_FLAGS = {flag for opt in GLOBAL_OPTIONS for flag in [*opt["flags"], opt.get("negative") or ""] if flag}
_VALUE_FLAGS = {flag for opt in GLOBAL_OPTIONS if opt["type"] not in ("flag", "bool") for flag in opt["flags"]}


def fast_path(prog: str, tokens: list[str]) -> int | None:
    """--version and help pages without building the app; None when the app must run."""
    index = 0
    while index < len(tokens) and tokens[index].startswith("-"):
        token = tokens[index]
        if token == "--version":
            sys.stdout.write(f"bmcli {__version__}\n")
            return 0
        if token in ("--help", "-h"):
            break
        index += 2 if token in _VALUE_FLAGS else 1
    from . import help as helptext

    rest = tokens[index:]
    spec = load_model()
    if rest[:1] == ["help"] and "help" not in spec.resources:
        # `bl help [RESOURCE [ACTION]]` is `bl [RESOURCE [ACTION]] --help`.
        topic = [t for t in rest[1:] if not t.startswith("-")]
        return fast_path(prog, [*topic, "--help"]) if topic else fast_path(prog, ["--help"])
    wants_help = "--help" in rest or "-h" in rest
    words = [t for t in rest if not t.startswith("-")]
    if not words:
        if wants_help or not tokens:
            sys.stdout.write(helptext.root_page(prog, spec))
            return 0 if wants_help else EXIT_USAGE
        return None
    name = words[0]
    if name in helptext.BUILTIN_HELP:
        # Every built-in command's page; a group without its action prints its page and exits 2.
        page = helptext.builtin_page(prog, name, words[1] if len(words) > 1 else None)
        if page and (wants_help or (len(words) == 1 and helptext.BUILTIN_HELP[name][1])):
            sys.stdout.write(page)
            return 0 if wants_help else EXIT_USAGE
        return None
    resource = spec.resources.get(name)
    if resource is None:
        return None
    if resource.command:
        if wants_help:
            sys.stdout.write(helptext.resource_page(prog, name, spec))
            return 0
        return None
    action = words[1] if len(words) > 1 else None
    if action in resource.actions:
        if wants_help:
            sys.stdout.write(helptext.action_page(prog, name, action, spec))
            return 0
        return None
    if action is None:
        sys.stdout.write(helptext.resource_page(prog, name, spec))
        return 0 if wants_help else EXIT_USAGE
    known = ", ".join(resource.actions)
    return usage_error(prog, [name], f'unknown action "{action}" (choose from {known})', _json_errors(tokens))


def main(argv: list[str] | None = None) -> int:
    prog = os.path.basename(sys.argv[0]) if argv is None else "bl"
    if prog not in ("bl", "bmcli"):
        prog = "bl"
    tokens = list(sys.argv[1:] if argv is None else argv)
    from ..table.load import SpecError

    try:
        code = fast_path(prog, tokens)
    except SpecError as exc:
        sys.stderr.write(f"Error: invalid endpoint table: {exc}\n")
        code = EXIT_USAGE
    except BrokenPipeError:  # --version, a help page: the reader went away
        code = _stdout_closed()
    if code is not None:
        return _finish(code, argv is None)
    return _main(prog, tokens, argv is None)


def _main(prog: str, tokens: list[str], exit_process: bool) -> int:
    from cyclopts.exceptions import CycloptsError

    from ..table.load import SpecError
    from .commands import STDIN_TOKEN

    tokens = _pass_through(STDIN_TOKEN, [STDIN_TOKEN if t == "-" else t for t in tokens])
    try:
        app = build_app(prog)
    except SpecError as exc:
        sys.stderr.write(f"Error: invalid endpoint table: {exc}\n")
        return _finish(EXIT_USAGE, exit_process)
    try:
        code = app.meta(tokens, exit_on_error=False, print_error=False, result_action="return_value")
    except CycloptsError as exc:
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        path = _command_path(app, tokens)
        message = _parser_message(exc, path, message)
        code = usage_error(prog, path, message, _json_errors(tokens))
    except UsageError as exc:
        code = usage_error(prog, _command_path(app, tokens), str(exc), _json_errors(tokens))
    except KeyboardInterrupt:
        return _interrupted(exit_process)
    except (StdoutClosed, BrokenPipeError):  # a built-in command's output (describe, completion, config)
        return _finish(_stdout_closed(), exit_process)
    except BenchloopError as exc:  # one that stops the command (a full disk): its own message
        sys.stderr.write(f"[error] {_clean(str(exc))}\n")
        code = 1
    except OSError as exc:  # a local file: its path and what went wrong, not "unexpected"
        from ..base.files import local_error

        sys.stderr.write(f"[error] {_clean(str(local_error(exc)))}\n")
        code = 1
    except Exception as exc:  # never a bare traceback; -v shows it
        if "-v" in tokens or "--verbose" in tokens:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"[error] unexpected error: {type(exc).__name__}: {_clean(str(exc))}\n")
        code = 1
    return _finish(code, exit_process)


def _clean(text: str) -> str:
    from ..base.log import Log

    return Log().clean(text)


def _interrupted(exit_process: bool) -> int:
    """Ctrl-C: the workers were cancelled and their connections shut down (``run_pool``); a
    second Ctrl-C exits at once.  Temp files of workers that did not stop in time are removed
    and the process exits without waiting for them."""
    import signal
    import threading

    from ..base.files import remove_live_temps

    def again(signum: int, frame: Any) -> None:
        remove_live_temps()
        os._exit(EXIT_INTERRUPTED)

    previous = None
    try:
        previous = signal.signal(signal.SIGINT, again)
    except ValueError:  # not the main thread
        pass
    try:
        sys.stderr.write("[error] interrupted: unfinished work was abandoned; completed files are intact "
                         "(rerun with --skip-existing to continue)\n")
        sys.stderr.flush()
        if not exit_process:
            return EXIT_INTERRUPTED
        busy = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
        if busy:
            remove_live_temps()
            try:
                sys.stdout.flush()
            except (OSError, ValueError):
                pass
            os._exit(EXIT_INTERRUPTED)
        # Nothing is left to wait for.  The interpreter's shutdown puts SIGINT's default action
        # back in place of ``again``; a second Ctrl-C arriving then would kill the process by
        # the signal (-2, not 130).  An ignored signal stays ignored through the shutdown.
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        if previous is not None and not exit_process:
            signal.signal(signal.SIGINT, previous)


def _pass_through(stdin_token: str, tokens: list[str]) -> list[str]:
    """A command that takes extra arguments (``ap-cmd``) owns every token after its name: the
    global options are read only before it (its --concurrency and -q are its own), so a
    ``--`` after the name keeps the meta app from taking them."""
    index = 0
    while index < len(tokens) and tokens[index].startswith("-") and tokens[index] != stdin_token:
        index += 2 if tokens[index] in _VALUE_FLAGS else 1
    if index >= len(tokens):
        return tokens
    if not _passes_through(tokens[index]):
        return tokens
    return [*tokens[:index + 1], "--", *tokens[index + 1:]]


def _passes_through(name: str) -> bool:
    resource = load_model().resources.get(name)
    return resource is not None and resource.command and any(a.extra_args for a in resource.actions.values())


def _stdout_closed() -> int:
    """The reader of stdout went away: stop without a word, as ``head`` expects; exit 141
    (128 + SIGPIPE, what a shell reports for a command killed by the broken pipe).  Whatever
    is still buffered for stdout goes to /dev/null, so no error follows at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass
    return EXIT_STDOUT_CLOSED


def _finish(code: Any, exit_process: bool) -> int:
    code = code if isinstance(code, int) else 0
    if exit_process:
        try:  # what is still buffered for stdout, now: a closed pipe is exit 141, never a traceback
            sys.stdout.flush()
        except BrokenPipeError:
            code = _stdout_closed()
        except (OSError, ValueError):
            pass
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
