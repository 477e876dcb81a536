"""An action watched while its work progresses: ``watch:`` in the table (``bl compare --watch``).

Why: a comparison of runs that are still running is wanted *as* they finish, and the user
should not script a loop around ``bl jobs wait``.  A watch runs the command's ids again at
every look and evaluates its combine on what they produced; the looks are the table's
waiter (``engine/polling.py``: its acceptors, delay with backoff and jitter, counts line and
timeout), asked through :class:`~.polling.Polling` with this module's ``ask``: each answer is
``{"jobs": <every id's rows>, "settled": <the combine's word>}``.  So the waiter's acceptors
end the watch when the combine is settled (every candidate decided) or when no job is in a
status that is not final (the runs are finished), and its ``--timeout`` bounds the whole
watch.

Each change of the combine's ``state`` is an ``[info]`` line (``state_line``) on stderr;
the combine's warnings are said once, not at every look.  At the end the last look's
result is printed in the chosen ``--output`` and its files written, as without a watch.
Exit codes: 0 settled (decided), :data:`EXIT_UNSETTLED` the work finished without being
settled, 124 the timeout passed first (the last look is printed), and the usual codes for
failures (an id that fails at a look ends the watch: its failure summary, exit 1 or 4; 401
exits 3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ..base.errors import EXIT_AUTH, EXIT_FAILURE, EXIT_WAIT_TIMEOUT, AuthError
from ..base.log import Log
from ..table.model import Action
from .outcomes import Outcome, summarize
from .runtime import Runtime

EXIT_UNSETTLED = 5  # the work finished, the combine was never settled (bl compare: undecided)


class _LookLog:
    """The command's log during the looks: each note said once over every look; the warnings
    of a look kept (``warnings``), to be said once, the last look's, before its result."""

    def __init__(self, log: Any):
        self._log = log
        self._said: set[tuple[str, str]] = set()
        self.warnings: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._log, name)

    def _once(self, kind: str, message: str) -> None:
        if (kind, message) not in self._said:
            self._said.add((kind, message))
            getattr(self._log, kind)(message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def note(self, message: str) -> None:
        self._once("note", message)

    def info(self, message: str) -> None:
        self._once("info", message)


class _Failed(Exception):
    def __init__(self, outcomes: list[Outcome]):
        super().__init__("an id failed")
        self.outcomes = outcomes


class _Stop(Exception):
    """The combine found nothing to combine: its problems were said."""


def run_watch(rt: Runtime, action: Action, dim: str, ids: list[str], opts: dict[str, Any], *,
              execute: Callable[..., list[Outcome]], runner: Callable[[Runtime], Any],
              error_lines: Callable[[Runtime, str], None]) -> int:
    """Watch the command (``action.watch``): look until settled or finished; print the last
    look; the exit code (see the module docstring).  ``execute``, ``runner`` and
    ``error_lines`` are ``command.py``'s (which imports this module, not the reverse)."""
    from ..table.templates import Context, render_label
    from . import formats
    from .combinecall import CombineError
    from .combining import combine_outcomes, print_combined, write_files
    from .polling import Polling, WaitTimeout

    watch = action.watch
    assert watch is not None and action.combine is not None
    waiter = watch.waiter
    once = _LookLog(rt.log)
    last: dict[str, Any] = {}

    def finished(answer: dict[str, Any]) -> bool:
        """Whether the waiter's acceptors call the work done, the combine aside."""
        return any(a.state == "success" and a.matches(answer, None) for a in waiter.acceptors)

    def ask(_waiter: Any, _variables: dict[str, Any], _check: Callable[[], float]) -> Any:
        outcomes = execute(rt, action, dim, ids, opts)
        if any(o.failures for o in outcomes):
            raise _Failed(outcomes)
        rows = [row for o in outcomes for row in (o.value or ()) if isinstance(row, dict)]
        answer = {"jobs": rows, "settled": False}
        once.warnings = []
        try:
            # The combine uses the step log's lines only (combinecall.CombineCall.log).
            result = combine_outcomes(action, opts, outcomes, cast(Log, once), rt.secrets(), rt, runner(rt))
        except CombineError as exc:
            if not finished(answer):  # nothing to compare yet (no job scored yet)
                once.note("nothing to compare yet, waiting for jobs to finish: "
                          + "; ".join(message.splitlines()[0] for _, message in exc.problems))
                return answer
            for _, message in exc.problems:
                error_lines(rt, message)
            summarize(rt.log, outcomes, noun="id(s)")
            raise _Stop from None
        last["outcomes"], last["result"], last["warnings"] = outcomes, result, once.warnings
        if result.state is not None and result.state != last.get("state"):
            looks = last.get("looks", 0)
            rt.log.note(f"{'watching' if not looks else 'changed'}: {result.state_line or result.state}")
            last["state"] = result.state
        last["looks"] = last.get("looks", 0) + 1
        answer["settled"] = bool(result.settled)
        return answer

    timeout = float(opts.get(waiter.timeout) or 0) if waiter.timeout else 0.0
    run = Polling(waiter, ask, sleep=rt.http.sleep, log=rt.log, timeout=timeout or float("inf"),
                  options=opts,
                  render=lambda text, variables: render_label(text, Context({"groups": ", ".join(ids), **variables})))
    timed_out = False
    try:
        run.run()
    except AuthError as exc:
        rt.log.error(f"authentication error: {exc}")
        return EXIT_AUTH
    except _Failed as exc:
        return summarize(rt.log, exc.outcomes, noun="id(s)")
    except _Stop:
        return EXIT_FAILURE
    except WaitTimeout as exc:
        if "result" not in last:  # no look had anything to compare: nothing to print
            rt.log.error(f"{exc}: nothing compared yet")
            return EXIT_WAIT_TIMEOUT
        rt.log.warn(f"{exc}: the last look follows")
        timed_out = True
    result = last["result"]
    for line in last["warnings"]:
        rt.log.warn(line)
    output = opts.get("output") or "json"
    refused = print_combined(rt.stdout, rt.log, result, output, rt.pretty, formats.compile_query(opts.get("query")),
                             action.dimensions[dim].output)
    unwritten = write_files(rt.log, result)
    code = summarize(rt.log, last["outcomes"], noun="id(s)")
    if code or unwritten or refused:
        return code or EXIT_FAILURE
    if timed_out:
        return EXIT_WAIT_TIMEOUT
    if not result.settled:
        rt.log.note(f"finished without a decision (exit {EXIT_UNSETTLED}): {result.state_line or result.state}")
        return EXIT_UNSETTLED
    return 0

