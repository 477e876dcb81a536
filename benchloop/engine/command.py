"""Run one command of the table over its ids: the top of the runtime.

``run`` picks how each id is processed - the generic pipeline
(``pipeline.py``), a task archive (``archive.py``) or a composite command
(``compose.py``) - runs the ids on the worker pool (``--concurrency`` at once,
or one at a time where the table says ``serial``), prints what a printing
command prints (``printing.py``) and returns the exit code.  A 401 anywhere
cancels the remaining work and exits 3.

Inside the engine the imports point one way too: command -> compose, archive ->
pipeline -> workers, outcomes; nothing below imports this module.  ``archive`` and
``compose`` are imported by the commands that use them only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base.errors import EXIT_AUTH, EXIT_FAILURE, ApiError, AuthError, BenchloopError, StepError
from ..base.ids import quoted
from ..table.model import Action
from .arguments import unknown_values
from .outcomes import Outcome, as_error, exit_code, failure_of, summarize
from .pipeline import Pipeline
from .runtime import Runtime


def process(pipeline: Pipeline, ident: str) -> Any:
    """One id of one dimension: a task archive, or the pipeline's parts."""
    if pipeline.dim.archive is not None:
        from .archive import run_archive  # task archives only (zip, temp dirs)

        return run_archive(pipeline, ident)
    return pipeline.process(ident)


def explained(ident: str, exc: BenchloopError) -> BenchloopError:
    """A 404 for an id that still carries the quotes of JSON output says so (the id was piped
    from ``--output json``/``jsonl`` as it was printed)."""
    if isinstance(exc, ApiError) and exc.status == 404 and quoted(ident):
        return StepError(f"{exc} (the id {ident} still has its quotes: pipe ids with --output text, "
                         "or jq -r)")
    return exc


def backend_message(action: Action, exc: BenchloopError) -> BenchloopError:
    """Actions with ``error_field`` report the backend's own message (brm)."""
    body = exc.body if isinstance(exc, ApiError) else None
    message = body.get(action.error_field) if action.error_field and isinstance(body, dict) else None
    if isinstance(message, str) and message:
        return StepError(message)
    return exc


def runner(rt: Runtime) -> Callable[[str, dict[str, Any]], Any]:
    """How a combine runs another command of the table (``CombineCall.run``: ``bl compare
    --report-dir`` runs ``bl view``): its arguments checked, its ids executed, its combine's
    files written, on this command's runtime."""

    def run_other(resource: str, values: dict[str, Any]) -> Any:
        from .arguments import bind
        from .combining import ran

        action = next(iter(rt.spec.resources[resource].actions.values()))
        dim, ids, opts = bind(action, values)
        return ran(action, opts, execute(rt, action, dim, ids, opts), rt.log, rt.secrets(), rt, run_other)

    return run_other


def execute(rt: Runtime, action: Action, dim: str, ids: list[str], opts: dict[str, Any],
            on_done: Callable[[Outcome], None] | None = None, lazy: bool = False) -> list[Outcome]:
    """Process every id (or every id x section of a composite); the outcomes in input order.

    ``on_done`` sees each id's outcome as soon as it is known (jsonl streams
    it).  A 401 raises ``AuthError`` after cancelling the remaining work.
    ``lazy``: a walked listing is read as its rows are printed (``pagination.LazyScan``)."""
    for message in unknown_values(action, opts):
        rt.log.warn(message)
    if action.compose is not None:
        sync = action.compose.sync
        if sync is not None and (opts.get(sync.option) or (sync.until is not None and opts.get(sync.until.option))):
            from .sync import run_sync  # pull --sync only

            return run_sync(rt, action, dim, ids, opts, process)
        from .compose import run_compose  # composite commands only

        return run_compose(rt, action, dim, ids, opts, process)
    pipeline = Pipeline(rt, action, dim, opts, id_count=len(ids), lazy=lazy)
    progress = pipeline.dim.progress or action.progress
    counter = rt.counter(progress, len(ids)) if progress else None

    def work(ident: str) -> Any:
        try:
            result = process(pipeline, ident)
        except Exception as exc:  # noqa: BLE001 - one bad id never takes the others down
            exc = explained(ident, as_error(exc, rt.log))
            if counter:
                counter.step(ident, ok=False, error=exc)
            if on_done is not None:
                on_done(Outcome(ident, failures=[failure_of(ident, exc)]))
            raise backend_message(action, exc) from None
        if counter:
            counter.step(result if progress and progress.detail == "path" else ident)
        if on_done is not None:
            on_done(Outcome(ident, value=result))
        return result

    outcomes = rt.map(ids, work, 1 if pipeline.dim.serial else None)
    for note in pipeline.absent_notes():  # what had nothing to write (an RSI not created yet)
        rt.log.note(note)
    return outcomes


def run(rt: Runtime, action: Action, dim: str, ids: list[str], opts: dict[str, Any]) -> int:
    """Run one command over its ids; print data and the failure summary; return the exit code."""
    if action.writer == "text":
        return run_text(rt, action, dim, ids, opts)
    if action.watch is not None and opts.get(action.watch.option):
        from .watching import run_watch  # bl compare --watch only

        return run_watch(rt, action, dim, ids, opts, execute=execute, runner=runner, error_lines=error_lines)
    output = opts.get("output") or "json"
    query = None
    stdout = rt.stdout
    prints = action.prints and not action.writes_files(opts)
    stream = None
    lazy = False
    broken = None
    if action.prints:  # the output formats: not loaded for a command that only writes files
        from . import formats
        from .combines.registry import STREAMING_COMBINES
        from .formats.streamed import STREAMING
        from .printing import Broken, Stream, print_all

        query = formats.compile_query(opts.get("query"))
        shape = action.dimensions[dim].output
        if prints and output == "parquet":  # a binary file: where it goes is known before any request
            from .formats import columnar

            columnar.require()
            stdout = columnar.Target(columnar.destination(rt.output_dir, rt.stdout), rt.stdout)
        if prints and formats.FORMATS[output].streams and query is None and action.combine is None:
            stream = Stream(stdout, rt.log, action, ids, formats.FORMATS[output](), output, shape)
        # Rows written as their pages arrive: no --query (it needs the whole array), a format
        # that writes rows, and no combine but one that only puts the ids' rows together.
        lazy = (prints and query is None and output in STREAMING
                and (action.combine is None or action.combine.name in STREAMING_COMBINES))
        broken = stream.broken if stream is not None else Broken(rt.log)
    try:
        outcomes = execute(rt, action, dim, ids, opts, stream.done if stream is not None else None, lazy=lazy)
    except AuthError as exc:
        rt.log.error(f"authentication error: {exc}")
        return EXIT_AUTH
    unwritten: list[tuple[str, str]] = []
    refused = False  # lines --output text left out (a value that would break its line)
    if not prints and action.combine is not None:  # a files action's combine (bl view): its files
        from .combinecall import CombineError
        from .combining import combine_outcomes, print_combined, write_files

        try:
            result = combine_outcomes(action, opts, outcomes, rt.log, rt.secrets(), rt, runner(rt))
        except CombineError as exc:
            for _, message in exc.problems:
                error_lines(rt, message)
            summarize(rt.log, outcomes, noun="id(s)")
            return EXIT_FAILURE
        if not result.files and (result.page is not None or result.elements):  # or what it prints instead
            from . import formats

            refused = print_combined(stdout, rt.log, result, opts.get("output") or "json", rt.pretty,
                                     formats.compile_query(opts.get("query")), action.dimensions[dim].output)
        unwritten = write_files(rt.log, result)
    if prints:
        if stream is not None:
            refused = stream.finish()
        elif action.combine is not None:  # every id's value together (bl compare, bl jobs table)
            from .combinecall import CombineError
            from .combining import combine_outcomes, print_combined, write_files

            try:
                result = combine_outcomes(action, opts, outcomes, rt.log, rt.secrets(), rt, runner(rt))
            except CombineError as exc:  # nothing to combine: said before anything is printed
                for _, message in exc.problems:
                    error_lines(rt, message)
                summarize(rt.log, outcomes, noun="id(s)")
                return EXIT_FAILURE
            refused = print_combined(stdout, rt.log, result, output, rt.pretty, query,
                                     action.dimensions[dim].output, broken)
            unwritten = write_files(rt.log, result)
        else:
            refused = print_all(stdout, rt.log, action, outcomes, output, rt.pretty, query,
                                action.dimensions[dim].output, broken)
    code = summarize(rt.log, outcomes, noun="pull step(s)" if action.compose is not None else "id(s)")
    cut = broken.code() if broken is not None else 0  # a listing whose page failed after some rows
    return code or cut or (EXIT_FAILURE if unwritten or refused else code)


def run_text(rt: Runtime, action: Action, dim: str, ids: list[str], opts: dict[str, Any]) -> int:
    """A text command (``ap-cmd``): its one id's text on stdout, or each failure's own message
    as one ``[error]`` line (no summary); exit 3 for a refused key, 4 when only the network failed."""
    try:
        outcomes = execute(rt, action, dim, ids, opts)
    except AuthError as exc:
        rt.log.error(f"authentication error: {exc}")
        return EXIT_AUTH
    for outcome in outcomes:
        if outcome.value is not None:
            rt.stdout.write(f"{outcome.value}\n")
            rt.stdout.flush()
        for failure in outcome.failures:
            error_lines(rt, failure.message)
    return exit_code(outcomes)


def error_lines(rt: Runtime, message: str) -> None:
    """An error of several lines (a hint under it): ``[error]`` on the first one only."""
    first, *rest = message.split("\n")
    if rt.log.json_errors or not rest:
        rt.log.error(message)
        return
    rt.log.error(first)
    for line in rest:
        rt.log.continued(line)
