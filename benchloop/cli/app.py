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

from ..base.errors import (
    EXIT_INTERRUPTED,
    EXIT_STDOUT_CLOSED,
    EXIT_USAGE,
    BenchloopError,
    StdoutClosed,
    UsageError,
)
from ..table.load import load_model
from ..version import __version__
from . import helpcache

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs every start, --help included, ~5 ms
if TYPE_CHECKING:
    import inspect
    from typing import Any

    from ..table.model import Spec

GLOBAL = "Global options"


class Invocation:
    """The resolved global options, handed to every command handler as ``ctx``."""

    def __init__(self, prog: str, path: list[str], options: dict[str, Any]):
        self.profile_values: dict[str, Any] = {}
        self.prog = prog
        self.path = path
        self.options = options

    def key_given(self) -> tuple[str | None, str | None]:
        """``(key, origin)`` of the global ``--api-key``: ``--api-key -`` reads it from stdin (once)."""
        from .commands import STDIN_TOKEN

        key = self.options["api_key"]
        if key == STDIN_TOKEN:
            from ..settings.keys import STDIN_ORIGIN, read_stdin_key

            self.options["api_key"] = key = read_stdin_key(sys.stdin)
            self.options["api_key_origin"] = STDIN_ORIGIN
        return key, self.options.get("api_key_origin")

    def settings_now(self):
        """The resolved settings of the global options (as every command resolves them)."""
        from ..settings import session

        opts = self.options
        key, origin = self.key_given()
        return session.settings(api_key=key, host=opts["host"], output_dir=opts["output_dir"],
                                config=opts["config"], profile=opts["profile"], ca_bundle=opts["ca_bundle"],
                                api_key_origin=origin)

    def runtime(self):
        from ..base.log import Log
        from ..settings import session

        opts = self.options
        settings = self.settings_now()
        self.profile_values = settings.values
        self.settings = settings
        log = Log(quiet=opts["quiet"], verbose=opts["verbose"], error_format=opts["error_format"])
        log.defer_json = True  # one JSON error object per command: printed after the advice (``run``)
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
            rt.log.flush()
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
        elif settings is not None and code == EXIT_AUTH:
            log.error(f"{mask_url(settings.host)} refused the API key from {settings.source('api_key')}; "
                      "check that it is the key of this backend")
        elif settings is not None and (log.network_failed or code == 4):
            log.error(f"network errors talking to {mask_url(settings.host)} (host from {settings.source('host')}); "
                      "check the URL and the network" + ("" if log.verbose else " (-v shows each retry)"))
        hidden = log.hidden_summary()
        if hidden and code is not None:
            log.info(hidden)

    settings: Any = None
    other_service = False  # the run failed on another service (AgentPlatform), not on Benchloop


def _global_parameters(spec: Spec) -> list[inspect.Parameter]:
    import inspect
    from typing import Annotated

    from cyclopts import Parameter, validators

    params = []
    for opt in spec.global_options:
        extra: dict[str, Any] = {"negative": opt.negative or ""} if opt.is_flag else {}
        if opt.type == "flag":
            extra["show_default"] = False
        if opt.min is not None:
            extra["validator"] = validators.Number(gte=opt.min)
        hint = opt.kind.hint(opt.choices, optional=opt.default_value is None)
        annotation = Annotated[hint, Parameter(name=list(opt.flags), help=opt.help, group=GLOBAL,  # type: ignore[valid-type]
                                               **extra)]
        params.append(inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY,
                                        default=opt.default_value, annotation=annotation))
    return params


def build_app(prog: str = "bl") -> Any:
    """The Cyclopts apps of a command line: the one returned parses the global options and
    nothing else; its default command (the launcher) hands every other token to the commands'
    app, which resolves the command and parses its options.

    Why two apps and not Cyclopts' meta app: a meta app looks for its commands among the
    tokens and, at each token that is not a command, assembles its argument collection again
    to try it as a global option; with the launcher's dozen global options that was seven
    assemblies (~45 ms, most of a command's own start-up) for one that is needed.  The
    options app has no commands, so it assembles once; the commands' app has no meta, so its
    command is resolved without assembling anything but the command's own options.

    A meta app gives an option after the command to the command when the command declares
    it (a download's ``-o``, ``config set --api-key``) and to the global options otherwise;
    :func:`_shield_command_options` keeps that rule by hiding the command's own options from
    the options app.
    """
    import inspect
    from typing import Annotated

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
        exit_on_error=False,  # its errors reach _main, which prints them as usage errors
        print_error=False,
    )
    for index, (name, resource) in enumerate(spec.resources.items()):
        # Built lazily (``commands.__getattr__``): a command builds only its own resource.
        app.command(f"benchloop.cli.commands:res__{name.replace('-', '_')}", name=name,
                    help=resource.help, sort_key=index)
    for index, command in enumerate(spec.commands.values()):
        # Their bodies are registered in ``builtin_commands.py``; the Cyclopts command is built on first use.
        app.command(f"benchloop.cli.builtin_commands:cmd__{command.name}", name=command.name, help=command.help,
                    sort_key=100 + index)

    def launcher(*tokens, **options):  # no annotations: Cyclopts reads __signature__
        tokens = tuple(t[len(OWN_TOKEN):] if t.startswith(OWN_TOKEN) else t for t in tokens)
        if not tokens:
            app.meta.default(launcher)  # only to list the global options on this page
            app.help_print([])
            return EXIT_USAGE
        if len(tokens) > 1 and tokens[1] == "--" and _passes_through(tokens[0]):
            tokens = (tokens[0], *tokens[2:])  # the "--" that _pass_through added
        command, bound, ignored = app.parse_args(list(tokens))
        path = [t for t in tokens if not t.startswith("-")][:2]
        resolved = {opt.name: opt.default_value for opt in spec.global_options}
        resolved.update(options)
        extra = {"ctx": Invocation(prog, path, resolved)} if "ctx" in ignored else {}
        return command(*bound.args, **bound.kwargs, **extra)

    launcher.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("tokens", inspect.Parameter.VAR_POSITIONAL,
                           annotation=Annotated[str, Parameter(show=False, allow_leading_hyphen=True)])]
        + _global_parameters(spec)
    )
    # --version anywhere (before a "--") is the version, as on a meta app; --help is the commands'
    # (most help pages never get here: fast_path writes them from the table).
    options = App(name=prog, help_flags=(), version=f"bmcli {__version__}", version_format="plaintext",
                  help_format="plaintext", suppress_keyboard_interrupt=False)
    options.default(launcher)
    return options


OWN_TOKEN = "\x00own:"  # in front of an option the command declares itself (see _shield_command_options)


def _shield_command_options(tokens: list[str]) -> list[str]:
    """``tokens`` with each option after the command that the command declares itself behind
    ``OWN_TOKEN``, so that the global options' parse leaves it to the command (the launcher
    takes the marks off).  A ``--`` and what follows it are the command's too, as is everything
    after the name of a command whose extra arguments pass through (``ap-cmd``)."""
    path = _command_path(tokens)
    if not path:
        return tokens
    own = set(_command_flags(path))
    start = tokens.index(path[0]) + 1
    out = tokens[:start]
    rest = _passes_through(path[0])
    for token in tokens[start:]:
        rest = rest or token == "--"
        out.append(OWN_TOKEN + token if rest or token.split("=", 1)[0] in own else token)
    return out


def _command_path(tokens: list[str]) -> list[str]:
    """Best-effort 'resource action' of a failed command line, for the usage hint."""
    spec = load_model()
    words = [t for t in tokens if not t.startswith("-")]
    for index, word in enumerate(words):
        if word in spec.resources or word in spec.commands:
            nxt = words[index + 1] if index + 1 < len(words) else None
            actions = spec.resources[word].actions if word in spec.resources else spec.commands[word].actions
            return [word, nxt] if nxt is not None and nxt in actions else [word]
    return []


def _command_flags(path: list[str]) -> list[str]:
    """The flags of the command at ``path`` itself (every action's when the action is not given)."""
    spec = load_model()
    flags: list[str] = []
    if len(path) >= 1 and path[0] in spec.resources:
        resource = spec.resources[path[0]]
        actions = [resource.actions[path[1]]] if len(path) > 1 else list(resource.actions.values())
        if resource.command:
            actions = list(resource.actions.values())
        flags += [flag for action in actions for opt in action.options for flag in opt.flags]
    elif path and path[0] in spec.commands:
        prefix = " ".join(path)
        flags += [flag for leaf in spec.command_leaves if leaf.path.startswith(prefix)
                  for opt in leaf.options for flag in opt.flags]
    return flags


def _flags_of(path: list[str]) -> list[str]:
    """Every flag the command at ``path`` accepts, global ones included."""
    flags = [flag for opt in load_model().global_options for flag in opt.all_flags]
    return list(dict.fromkeys([*flags, *_command_flags(path), "--help", "-h"]))


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
    if not path or flag in _global_flags() or flag not in _flags_of(path):
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
            from ..table.model import DIMENSION_KINDS

            offers = [f"{DIMENSION_KINDS[d].short} {ids}" for d in ("job", "group", "task") if d in action.dimensions]
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


def _value_flags() -> set[str]:
    """The global options' flags that take a value (the word after them is not a command)."""
    return {flag for opt in load_model().global_options if opt.takes_value for flag in opt.flags}


def _global_flags() -> set[str]:
    return {flag for opt in load_model().global_options for flag in opt.all_flags}


def fast_path(prog: str, tokens: list[str]) -> int | None:
    """--version and help pages without building the app; None when the app must run."""
    spec = load_model()
    value_flags = _value_flags()
    index = 0
    while index < len(tokens) and tokens[index].startswith("-"):
        token = tokens[index]
        if token == "--version":
            sys.stdout.write(f"bmcli {__version__}\n")
            return 0
        if token in ("--help", "-h"):
            break
        index += 2 if token in value_flags else 1

    def page(kind: str, *args: Any) -> Any:  # helppages (and textwrap) only for a page to write
        from . import helppages

        return getattr(helppages, kind)(prog, *args)

    def show(text: str) -> None:
        _PAGES.append(text)  # kept by _fast (helpcache) when it is all the command wrote
        sys.stdout.write(text)

    rest = tokens[index:]
    if rest[:1] == ["help"] and "help" not in spec.resources:
        # `bl help [RESOURCE [ACTION]]` is `bl [RESOURCE [ACTION]] --help`.
        topic = [t for t in rest[1:] if not t.startswith("-")]
        return fast_path(prog, [*topic, "--help"]) if topic else fast_path(prog, ["--help"])
    wants_help = "--help" in rest or "-h" in rest
    words = [t for t in rest if not t.startswith("-")]
    if not words:
        if wants_help or not tokens:
            show(page("root_page", spec))
            return 0 if wants_help else EXIT_USAGE
        return None
    name = words[0]
    if name in spec.commands:
        # Every built-in command's page; a group without its action prints its page and exits 2.
        if not (wants_help or (len(words) == 1 and spec.commands[name].actions)):
            return None
        text = page("builtin_page", spec.commands[name], words[1] if len(words) > 1 else None)
        if text:
            show(text)
            return 0 if wants_help else EXIT_USAGE
        return None
    resource = spec.resources.get(name)
    if resource is None:
        return None
    if resource.command:
        if wants_help:
            show(page("resource_page", name, spec))
            return 0
        return None
    action = words[1] if len(words) > 1 else None
    if action is not None and action in resource.actions:
        if wants_help:
            show(page("action_page", name, action, spec))
            return 0
        return None
    if action is None:
        show(page("resource_page", name, spec))
        return 0 if wants_help else EXIT_USAGE
    known = ", ".join(resource.actions)
    return usage_error(prog, [name], f'unknown action "{action}" (choose from {known})', _json_errors(tokens))


def main(argv: list[str] | None = None) -> int:
    prog = os.path.basename(sys.argv[0]) if argv is None else "bl"
    if prog not in ("bl", "bmcli"):
        prog = "bl"
    tokens = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _fast(prog, tokens)
        if code is not None:  # a help page or the version: written already
            return _finish(code, argv is None)
        if argv is None:
            _second_interrupt_exits()  # before the command is built: a Ctrl-C while starting up is handled too
        return _main(prog, tokens, argv is None)
    except KeyboardInterrupt:
        return _interrupted(argv is None)


_PAGES: list[str] = []  # the help pages fast_path wrote (one, or none)


def _fast(prog: str, tokens: list[str]) -> int | None:
    """A help page or the version, or None when the command must run.  A help page asked for
    again is read back as it was written (``helpcache``), without reading the model."""
    from ..table.load import SpecError

    try:
        cacheable = bool(tokens) and helpcache.asks_for_help(tokens)
        kept = helpcache.read(prog, tokens) if cacheable else None
        if kept is not None:
            sys.stdout.write(kept[1])
            return kept[0]
        _PAGES.clear()
        code = fast_path(prog, tokens)
        if cacheable and code is not None and len(_PAGES) == 1:
            helpcache.keep(prog, tokens, code, _PAGES[0])
        return code
    except SpecError as exc:
        sys.stderr.write(f"Error: invalid endpoint table: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:  # --version, a help page: the reader went away
        return _stdout_closed()


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
        code = app(_shield_command_options(tokens), exit_on_error=False, print_error=False,
                   result_action="return_value")
    except CycloptsError as exc:
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        path = _command_path(tokens)
        message = _parser_message(exc, path, message)
        code = usage_error(prog, path, message, _json_errors(tokens))
    except UsageError as exc:
        code = usage_error(prog, _command_path(tokens), str(exc), _json_errors(tokens))
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


def _exit_now(signum: int, frame: Any) -> None:
    """A second Ctrl-C: remove the temp files of workers still running and exit at once."""
    from ..base.files import remove_live_temps

    remove_live_temps()
    os._exit(EXIT_INTERRUPTED)


def _first_interrupt(signum: int, frame: Any) -> None:
    """The first Ctrl-C: from now on another one exits at once (switched here, in the signal
    handler itself, so no second Ctrl-C can arrive before it is armed), then the usual
    ``KeyboardInterrupt`` cancels the workers."""
    import signal

    signal.signal(signal.SIGINT, _exit_now)
    raise KeyboardInterrupt


def _second_interrupt_exits() -> None:
    import signal

    try:
        signal.signal(signal.SIGINT, _first_interrupt)
    except ValueError:  # not the main thread
        pass


def _interrupted(exit_process: bool) -> int:
    """Ctrl-C: the workers were cancelled and their connections shut down (``workers.run_pool``);
    a second Ctrl-C exits at once (``_first_interrupt``).  Temp files of workers that did not
    stop in time are removed and the process exits without waiting for them."""
    import signal

    from ..base.files import remove_live_temps

    previous = None
    if not exit_process:  # in-process callers (tests) get the same second-Ctrl-C rule meanwhile
        try:
            previous = signal.signal(signal.SIGINT, _exit_now)
        except ValueError:  # not the main thread
            pass
    try:
        sys.stderr.write("[error] interrupted: unfinished work was abandoned; completed files are intact "
                         "(rerun with --skip-existing to continue)\n")
        sys.stderr.flush()
        if not exit_process:
            return EXIT_INTERRUPTED
        # Exit now, without the interpreter's shutdown: it would wait for workers still in a read,
        # and it gives SIGINT back its default action, so a second Ctrl-C arriving meanwhile would
        # kill the process (exit -2) instead of ending it with 130.
        remove_live_temps()
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        os._exit(EXIT_INTERRUPTED)
    finally:
        if previous is not None and not exit_process:
            signal.signal(signal.SIGINT, previous)


def _pass_through(stdin_token: str, tokens: list[str]) -> list[str]:
    """A command that takes extra arguments (``ap-cmd``) owns every token after its name: the
    global options are read only before it (its --concurrency and -q are its own), so a
    ``--`` after the name keeps the meta app from taking them."""
    index = 0
    value_flags = _value_flags()
    while index < len(tokens) and tokens[index].startswith("-") and tokens[index] != stdin_token:
        index += 2 if tokens[index] in value_flags else 1
    if index >= len(tokens):
        return tokens
    if not _passes_through(tokens[index]):
        return tokens
    from .commands import keep_extras_as_typed

    return [*tokens[:index + 1], "--", *keep_extras_as_typed(tokens[index], tokens[index + 1:])]


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
