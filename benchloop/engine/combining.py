"""Run an action's named combine over its ids' outcomes, print what it made, write its files.

The command line (``command.run``) and the Python client (``sdk``, hence the MCP server)
call :func:`combine_outcomes` the same way, after every id has finished; the command
line then prints the result (:func:`print_combined`) and writes the files the combine's
options asked for (:func:`write_files`) after printing, so a file that cannot be written
never costs the printed result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base import files as local
from ..base.errors import BenchloopError
from ..base.log import Log
from ..table.model import Action
from ..table.outputs import Output
from . import formats
from .combinecall import Combined, Ran
from .outcomes import Outcome
from .printing import Broken, Refused, closed_stdout, streams, write_elements
from .runtime import Runtime

# How a combine runs another command: ``(resource, option values) -> Ran`` (``command.runner``).
Runner = Callable[[str, dict[str, Any]], Ran]


class OutcomesCall:
    """The engine's side of ``combinecall.CombineCall``: the ids' outcomes, as values."""

    def __init__(self, action: Action, options: dict[str, Any], outcomes: list[Outcome], log: Log,
                 secrets: tuple[str, ...] = (), rt: Runtime | None = None, runner: Runner | None = None):
        assert action.combine is not None
        self.ids = [o.ident for o in outcomes]
        self.failed = [o.ident for o in outcomes if o.failures]
        self.values = [(o.ident, o.value) for o in outcomes if not o.failures and o.value is not None]
        self.options = options
        self.params = action.combine.params
        self._log = log
        self._secrets = secrets
        self._rt = rt
        self._runner = runner

    @property
    def log(self) -> Log:
        return self._log

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets

    @property
    def root(self) -> str:
        return self.options.get("output_dir") or (self._rt.output_dir if self._rt is not None else ".")

    def run(self, resource: str, values: dict[str, Any]) -> Ran:
        assert self._runner is not None, "a combine runs other commands only inside a command"
        return self._runner(resource, values)


def combine_outcomes(action: Action, options: dict[str, Any], outcomes: list[Outcome], log: Log,
                     secrets: tuple[str, ...] = (), rt: Runtime | None = None, runner: Runner | None = None
                     ) -> Combined:
    """What the action's combine makes of every id's outcome (``secrets``: the call's API keys,
    masked in what the combine makes for people to share; ``rt``: the command's runtime;
    ``runner``: how the combine runs another command, ``command.runner(rt)``)."""
    from .combines import COMBINES

    assert action.combine is not None, f"{action.command_line()} names no combine"
    return COMBINES[action.combine.name](OutcomesCall(action, options, outcomes, log, secrets, rt, runner))


def ran(action: Action, opts: dict[str, Any], outcomes: list[Outcome], log: Log, secrets: tuple[str, ...],
        rt: Runtime, runner: Runner) -> Ran:
    """What another command run by a combine wrote: its combine's files, and its failures."""
    failures = [(f.ident, f.message) for o in outcomes for f in o.failures]
    values = tuple((o.ident, o.value) for o in outcomes if not o.failures and o.value is not None)
    if action.combine is None:
        return Ran([], failures, values)
    result = combine_outcomes(action, opts, outcomes, log, secrets, rt, runner)
    unwritten = write_files(log, result)
    return Ran([p for p in result.files if p not in dict(unwritten)], failures + unwritten, values)


def print_combined(stdout: Any, log: Log, result: Combined, output: str, pretty: bool, query: Any,
                   shape: Output | None = None, broken: Broken | None = None) -> bool:
    """The combine's own rendering of ``output`` when it has one (and no ``--query`` reshapes the
    elements), else the elements in the generic format.  Whether lines were left out."""
    refused = Refused()
    if result.shape is not None:  # rows of columns the combine's with: declares
        shape = result.shape
    elif not result.declared:
        shape = None
    with closed_stdout():
        if result.page is not None:  # --report -: the page is the output
            stdout.write(result.page())
            stdout.flush()
            return False
        if query is None and output in result.renderings:
            stdout.write(result.renderings[output]())
            stdout.flush()
            return False
        if query is None and streams(result.elements):  # rows read page by page: as they arrive
            write_elements(stdout, [(getattr(e, "ident", ""), e) for e in result.elements], output, pretty,
                           broken or Broken(log), refused, shape, log.note)
            return refused.report(log)
        formats.emit(stdout, result.elements, output, pretty, query, note=log.note,
                     output=shape, refuse=refused)
    return refused.report(log)


def write_files(log: Log, result: Combined) -> list[tuple[str, str]]:
    """Write the files the combine's options asked for (atomically; "wrote PATH"; a content
    made piece by piece is written so); the ``(path, message)`` of each one that could not be
    written, also logged as an error.  With ``opens``, each file written is then opened in
    the user's browser.  What the combine could not make (``result.failures``) is said and
    counted first."""
    failed = []
    for path, message in result.failures:
        log.error(message)
        failed.append((path, message))
    for path, produce in result.files.items():
        try:
            content = produce()
            if isinstance(content, str):
                local.atomic_write(path, content, user_file=True)
            else:
                local.atomic_write_stream(path, lambda out, pieces=content: out.writelines(pieces), user_file=True)
        except (OSError, BenchloopError) as exc:  # the files module names the path and the reason
            error = local.local_error(exc, path) if isinstance(exc, OSError) else exc
            if isinstance(error, local.NoRoomError):
                raise error from None  # a full disk ends the command as everywhere else
            log.error(str(error))
            failed.append((path, str(error)))
            continue
        # A page the user asked for: its path is shown on a terminal too, where the per-file
        # lines of downloads are counted instead.
        log.touched("written", path)
        log.info(f"wrote {path}")
        if result.opens:
            browse(log, path)
    return failed


def browse(log: Log, path: str) -> None:
    """Open a written file in the user's browser (``webbrowser``: ``$BROWSER`` first); a machine
    without one says so, the file stays."""
    import os
    import webbrowser
    from pathlib import Path

    uri = Path(os.path.abspath(path)).as_uri()
    try:
        opened = webbrowser.open(uri)
    except webbrowser.Error:
        opened = False
    if not opened:
        log.warn(f"no browser could be opened here; open {uri} yourself")
