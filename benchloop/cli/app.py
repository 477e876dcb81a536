"""Entry point of `bl` / `bmcli`: run the Cyclopts app and turn how a command ends into an exit code.

``main`` answers ``--version`` without Cyclopts (``fast_version``), builds the app
(``build``), runs it through its meta app, and maps what comes out: a command's
return value, a usage error (Cyclopts' or the table's, printed by ``errors``), a closed
stdout (141), Ctrl-C (130), a local failure (1, one ``[error]`` line, never a bare
traceback).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..base.errors import (
    EXIT_INTERRUPTED,
    EXIT_STDOUT_CLOSED,
    EXIT_USAGE,
    BenchloopError,
    KeyUnavailable,
    StdoutClosed,
    UsageError,
)
from .fast_version import VERSION_LINE, asks_for_version
from .invocation import STDIN_TOKEN

EXIT_TERMINATED = 143  # 128 + SIGTERM
if TYPE_CHECKING:
    from typing import Any


def main(argv: list[str] | None = None) -> int:
    prog = os.path.basename(sys.argv[0]) if argv is None else "bl"
    if prog not in ("bl", "bmcli"):
        prog = "bl"
    tokens = list(sys.argv[1:] if argv is None else argv)
    return run(prog, tokens, exit_process=argv is None)


def run(prog: str, tokens: list[str], exit_process: bool = False) -> int:
    """``prog TOKENS``: its exit code (the process exits with it when ``exit_process``)."""
    try:
        if asks_for_version(tokens):
            try:
                sys.stdout.write(VERSION_LINE + "\n")
            except BrokenPipeError:
                return _finish(_stdout_closed(), exit_process)
            return _finish(0, exit_process)
        if exit_process:
            _second_interrupt_exits()  # before the app is built: a Ctrl-C while starting up is handled too
        return _run(prog, tokens, exit_process)
    except KeyboardInterrupt:
        return _interrupted(exit_process, tokens)


def _run(prog: str, tokens: list[str], exit_process: bool) -> int:
    from cyclopts.exceptions import CycloptsError

    from ..table.load import SpecError
    from .build import build_app

    tokens = [STDIN_TOKEN if t == "-" else t for t in tokens]
    try:
        app = build_app(prog)
        tokens = _keep_extras_as_typed(tokens)
    except SpecError as exc:
        sys.stderr.write(f"Error: invalid endpoint table: {exc}\n")
        return _finish(EXIT_USAGE, exit_process)
    try:
        # What ``app.meta(tokens)`` does, without its two extra walks over the tokens (a walk
        # assembles the global options again at each run of options: ~4 ms each).  The
        # launcher's ``*tokens`` takes every token the global options leave: none is unknown.
        command, bound, unknown, _ = app.meta.parse_known_args(tokens)
        assert not unknown, unknown
        code = command(*bound.args, **bound.kwargs)
    except CycloptsError as exc:
        from .errors import parse_error

        code = parse_error(prog, tokens, exc)
    except KeyUnavailable as exc:  # the configuration, not the command line: no usage preface
        from .errors import config_failure

        code = config_failure(tokens, str(exc))
    except UsageError as exc:
        from .errors import usage_error

        code = usage_error(prog, tokens, str(exc))
    except KeyboardInterrupt:
        return _interrupted(exit_process, tokens)
    except (StdoutClosed, BrokenPipeError):  # a built-in command's output (describe, config)
        return _finish(_stdout_closed(), exit_process)
    except SystemExit as exc:
        if isinstance(exc.__context__, BrokenPipeError):  # rich's Console (a help page) on a closed stdout
            return _finish(_stdout_closed(), exit_process)
        raise
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


def _keep_extras_as_typed(tokens: list[str]) -> list[str]:
    """The tokens of a command that passes unknown arguments on (``ap-cmd``), its extras marked
    (``commands.keep_extras_as_typed``); any other command line unchanged."""
    from ..table.load import load_model

    resources = load_model().resources
    for index, token in enumerate(tokens):
        resource = resources.get(token)
        if resource is not None:
            if resource.command and any(a.extra_args for a in resource.actions.values()):
                from .commands import keep_extras_as_typed

                return [*tokens[:index + 1], *keep_extras_as_typed(token, tokens[index + 1:])]
            return tokens
    return tokens


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


def _terminated(signum: int, frame: Any) -> None:
    """SIGTERM (a CI job cancelled, ``kill``): no temp file is left behind; exit 143 at once
    (128 + SIGTERM, as a shell reports a command killed by it).  Completed files are intact."""
    from ..base.files import remove_live_temps

    remove_live_temps()
    os._exit(EXIT_TERMINATED)


def _second_interrupt_exits() -> None:
    import signal

    try:
        signal.signal(signal.SIGINT, _first_interrupt)
        signal.signal(signal.SIGTERM, _terminated)
    except ValueError:  # not the main thread
        pass


def interrupted_line(tokens: list[str]) -> str:
    """What Ctrl-C leaves, and how to go on, for the command ``tokens`` run: a command that
    writes files and has ``--skip-existing`` is rerun with it; ``--sync`` is rerun as it was."""
    line = "[error] interrupted: unfinished work was abandoned"
    try:
        from ..table.load import load_model

        resources = load_model().resources
        at = next((i for i, t in enumerate(tokens) if t in resources), None)
        resource = resources[tokens[at]] if at is not None else None
        actions = list(resource.actions.values()) if resource is not None else []
        if resource is not None and not resource.command:
            actions = [a for a in actions if a.name in tokens[(at or 0) + 1:]][:1]
    except Exception:  # noqa: BLE001 - an interrupt is reported whatever the table says
        actions = []
    names = {opt.name for action in actions for opt in action.options}
    if "sync" in names and "--sync" in tokens:
        return line + "; completed files are intact (rerun the same command: --sync fetches what is missing)"
    if "skip_existing" in names:
        return line + "; completed files are intact (rerun with --skip-existing to continue)"
    return line


def _interrupted(exit_process: bool, tokens: list[str]) -> int:
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
        sys.stderr.write(interrupted_line(tokens) + "\n")
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
