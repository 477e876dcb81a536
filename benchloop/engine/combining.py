"""Run an action's named combine over its ids' outcomes, print what it made, write its files.

The command line (``command.run``) and the Python client (``sdk``, hence the MCP server)
call :func:`combine_outcomes` the same way, after every id has finished; the command
line then prints the result (:func:`print_combined`) and writes the files the combine's
options asked for (:func:`write_files`) after printing, so a file that cannot be written
never costs the printed result.
"""

from __future__ import annotations

from typing import Any

from ..base import files as local
from ..base.errors import BenchloopError
from ..base.log import Log
from ..table.model import Action
from ..table.outputs import Output
from . import formats
from .combinecall import Combined
from .outcomes import Outcome
from .printing import Refused, closed_stdout


class OutcomesCall:
    """The engine's side of ``combinecall.CombineCall``: the ids' outcomes, as values."""

    def __init__(self, action: Action, options: dict[str, Any], outcomes: list[Outcome], log: Log,
                 secrets: tuple[str, ...] = ()):
        assert action.combine is not None
        self.ids = [o.ident for o in outcomes]
        self.failed = [o.ident for o in outcomes if o.failures]
        self.values = [(o.ident, o.value) for o in outcomes if not o.failures and o.value is not None]
        self.options = options
        self.params = action.combine.params
        self._log = log
        self._secrets = secrets

    @property
    def log(self) -> Log:
        return self._log

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets


def combine_outcomes(action: Action, options: dict[str, Any], outcomes: list[Outcome], log: Log,
                     secrets: tuple[str, ...] = ()) -> Combined:
    """What the action's combine makes of every id's outcome (``secrets``: the call's API keys,
    masked in what the combine makes for people to share)."""
    from .combines import COMBINES

    assert action.combine is not None, f"{action.command_line()} names no combine"
    return COMBINES[action.combine.name](OutcomesCall(action, options, outcomes, log, secrets))


def print_combined(stdout: Any, log: Log, result: Combined, output: str, pretty: bool, query: Any,
                   shape: Output | None = None) -> bool:
    """The combine's own rendering of ``output`` when it has one (and no ``--query`` reshapes the
    elements), else the elements in the generic format.  Whether lines were left out."""
    refused = Refused()
    with closed_stdout():
        if result.page is not None:  # --report -: the page is the output
            stdout.write(result.page())
            stdout.flush()
            return False
        if query is None and output in result.renderings:
            stdout.write(result.renderings[output]())
            stdout.flush()
            return False
        formats.emit(stdout, result.elements, output, pretty, query, note=log.note,
                     output=shape if result.declared else None, refuse=refused)
    return refused.report(log)


def write_files(log: Log, result: Combined) -> list[tuple[str, str]]:
    """Write the files the combine's options asked for (atomically; "wrote PATH"); the
    ``(path, message)`` of each one that could not be written, also logged as an error."""
    failed = []
    for path, produce in result.files.items():
        try:
            local.atomic_write(path, produce(), user_file=True)
        except (OSError, BenchloopError) as exc:  # the files module names the path and the reason
            error = local.local_error(exc, path) if isinstance(exc, OSError) else exc
            if isinstance(error, local.NoRoomError):
                raise error from None  # a full disk ends the command as everywhere else
            log.error(str(error))
            failed.append((path, str(error)))
            continue
        log.file("wrote", path)
    return failed
