"""The Python client, generated at run time from the typed model of the endpoint table.

``Client`` resolves its settings as the CLI does (``session.settings``) and
keeps one :class:`pipeline.Runtime`, hence one HTTP client and connection
pool, for its lifetime.  Every resource of the table is an attribute and
every action a method (``bl.metrics.get(...)``): the method's keywords are the
action's options (``output`` and ``query`` excepted: the client returns Python
values), checked by ``arguments.bind`` exactly as the CLI checks its flags,
then run by ``engine.execute``, the engine the CLI runs.  A printing action
returns the CLI's JSON array as Python values; a download returns a
:class:`DownloadResult`.  Resources whose action walks pages get ``iter``, a
generator over the items of every page (``Pipeline.iterate``).

Calls are thread-safe: each call gets its own small Runtime (its own log, to
collect the files it wrote, and its own worker pool of ``concurrency``
requests) over the client's one HTTP client, created once under a lock.
Nothing here imports a command-line framework; nothing is printed.

The type stubs (``client.pyi``) are generated from the same model by
``codegen/stubs.py``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..base import errors as internal
from ..base.masking import shown_url
from ..table.model import (
    Action,
    PagedPart,
    Resource,
    Spec,
)
from .errors import (
    AuthError,
    BenchloopError,
    NetworkError,
    PartialFailure,
    UsageError,
    WaitTimeout,
)
from .methods import (
    attribute,
    bind_call,
    docstring,
    iter_options,
    iter_target,
    returns,
    sdk_options,
    signature,
    values_for,
)
from .results import DownloadResult
from .sdklog import LoggingLog

_MISSING = object()


def make_method(action: Action) -> Callable[..., Any]:
    options = sdk_options(action)
    where = f"{attribute(action.resource)}.{attribute(action.name)}"

    def method(self: ResourceClient, **kwargs: Any) -> Any:
        values = values_for(where, options, kwargs)
        return self._client._call(action, values)

    method.__name__ = attribute(action.name)
    method.__qualname__ = f"{attribute(action.resource)}.{method.__name__}"
    method.__doc__ = docstring(action.help, options, returns(action))
    method.__signature__ = signature(options)  # type: ignore[attr-defined]
    return method


def make_iter(resource: Resource) -> Callable[..., Iterator[Any]] | None:
    target = iter_target(resource)
    if target is None:
        return None
    action, parts = target
    options = iter_options(action, parts)
    where = f"{attribute(resource.name)}.iter"

    def iterate(self: ResourceClient, **kwargs: Any) -> Iterator[Any]:
        values = values_for(where, options, kwargs)
        return self._client._iterate(action, parts, values)

    iterate.__name__ = "iter"
    iterate.__qualname__ = f"{attribute(resource.name)}.iter"
    iterate.__doc__ = docstring(
        f"Every item of every page ({action.command_line()} with every page walked), yielded one page "
        "at a time, in the order and with the de-duplication of --all.", options,
        "an iterator over the items.")
    iterate.__signature__ = signature(options)  # type: ignore[attr-defined]
    return iterate


class ResourceClient:
    """One resource of the table, bound to a client; its methods are the resource's actions."""

    resource: Resource

    def __init__(self, client: Client):
        self._client = client

    def __repr__(self) -> str:
        return f"<benchloop resource {self.resource.name}: {', '.join(self.resource.actions)}>"


_CLASSES: dict[int, tuple[Spec, dict[str, type[ResourceClient]]]] = {}
_CLASSES_LOCK = threading.Lock()


def library_resources(spec: Spec) -> list[Resource]:
    """The resources a library offers: every one but those whose actions print text for a shell
    (``bl ap-cmd`` rebuilds a command line to paste; a script has no use for it)."""
    return [r for r in spec.resources.values() if any(a.writer != "text" for a in r.actions.values())]


def resource_classes(spec: Spec) -> dict[str, type[ResourceClient]]:
    """One class per resource of the model, built once per model."""
    with _CLASSES_LOCK:
        cached = _CLASSES.get(id(spec))
        if cached is not None and cached[0] is spec:
            return cached[1]
        classes: dict[str, type[ResourceClient]] = {}
        for resource in library_resources(spec):
            name = resource.name
            body: dict[str, Any] = {"resource": resource, "__doc__": resource.help}
            for action in resource.actions.values():
                body[attribute(action.name)] = make_method(action)
            if resource.command:
                # A one-action resource is a command of its own (`bl pull`): callable too.
                body["__call__"] = body[attribute(next(iter(resource.actions)))]
            iterate = make_iter(resource)
            if iterate is not None:
                body["iter"] = iterate
            cls_name = "".join(w.capitalize() for w in attribute(name).split("_")) + "Resource"
            classes[name] = type(cls_name, (ResourceClient,), body)
        _CLASSES[id(spec)] = (spec, classes)
        return classes


# ---------------------------------------------------------------- client
def _fspath(value: Any) -> str | None:
    return os.fspath(value) if value is not None else None


class Client:
    """A client of the benchmark-analysis backend, generated from the endpoint table.

    Settings are resolved as the CLI resolves them: an argument wins over the
    environment (``BENCHLOOP_HOST``, ``BENCHLOOP_API_KEY``, ``BENCHLOOP_PROFILE``,
    ``BENCHLOOP_CONFIG``, ``BENCHLOOP_OUTPUT_DIR``), which wins over the
    configuration file, which wins over the defaults.  ``concurrency``,
    ``retry`` and ``timeout`` are the CLI's global options of the same names.
    ``progress`` is called with each progress line (the CLI's ``[progress]``
    lines, without the prefix).  Use it as a context manager, or call
    ``close()``: it closes the one HTTP client.

    The resolved settings are attributes: ``host``, ``api_key`` (a key command or the
    keyring is asked once, here; pass it on to share it), ``profile``, ``output_dir``,
    ``concurrency``.  The repr never shows the key.
    """

    def __init__(self, host: str | None = None, api_key: str | None = None, profile: str | None = None,
                 config: str | os.PathLike[str] | None = None, concurrency: int = 5, retry: int = 4,
                 timeout: float = 300.0, *, output_dir: str | os.PathLike[str] | None = None,
                 ca_bundle: str | os.PathLike[str] | None = None, pretty: bool = True,
                 progress: Callable[[str], Any] | None = None):
        from ..settings import session

        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise UsageError(f'Invalid value "{concurrency}" for --concurrency. Must be >= 1.')
        if isinstance(retry, bool) or not isinstance(retry, int):
            raise UsageError(f'Invalid value for --retry: unable to convert "{retry}" into int.')
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise UsageError(f'Invalid value for --timeout: unable to convert "{timeout}" into float.')
        self._progress = progress
        self._log = LoggingLog(progress)
        ca_bundle = _fspath(ca_bundle)
        try:
            settings = session.settings(api_key=api_key, host=host, output_dir=_fspath(output_dir),
                                        config=_fspath(config), profile=profile, ca_bundle=ca_bundle,
                                        warn=self._log.warn)
            self._rt = session.runtime(settings, self._log, timeout=float(timeout), retry=retry,
                                       concurrency=concurrency, pretty=pretty, ca_bundle=ca_bundle)
        except internal.UsageError as exc:
            raise UsageError(str(exc)) from None
        self.host = settings.host
        self.api_key = settings.api_key
        self.profile = settings.profile
        self.output_dir = settings.output_dir
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._auth_epoch = 0
        self._closed = False
        for name, cls in resource_classes(self._rt.spec).items():
            setattr(self, attribute(name), cls(self))
        from .dataset import Dataset

        self.dataset = Dataset(self)  # the local dataset of runs (docs/dataset.md)

    # -- lifetime -------------------------------------------------------------
    def close(self) -> None:
        """Close the HTTP client (its connections); the client cannot be used afterwards."""
        with self._lock:
            self._closed = True
        self._rt.close()

    def cancel(self) -> None:
        """Stop every request of this client now, from any thread: blocked reads end, retry and
        poll waits end, and the calls in progress raise.  Call :meth:`resume` once they have
        ended to use the client again."""
        self._rt.http  # noqa: B018 - made now, so that a call about to send its first request stops too
        self._rt.cancel()

    def resume(self) -> None:
        """Make the client usable again after :meth:`cancel` (its calls in progress have ended)."""
        for http in self._rt._clients():
            http.cancelled.clear()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        # A repr ends up in logs, tracebacks and notebooks: the host's user info masked.
        return f"<benchloop.Client {shown_url(self.host)}>"

    @property
    def resources(self) -> list[str]:
        """The attribute names of the resources."""
        return [attribute(r.name) for r in library_resources(self._rt.spec)]

    # -- calls ----------------------------------------------------------------
    def _call_runtime(self) -> Any:
        """A Runtime for one call: its own log and pool, the client's one HTTP client."""
        from ..engine.runtime import Runtime

        if self._closed:
            raise BenchloopError("the client is closed")
        base = self._rt
        log = LoggingLog(self._progress, base.log.secrets, collect=True)
        return Runtime(base.spec, log, base.pretty, base.concurrency, base.output_dir,
                       lambda _pool: base.http, None)

    def _after_cancel(self, auth: bool) -> None:
        """A 401 (or an interrupt) set the shared cancel switch: later calls must run again."""
        with self._lock:
            if auth:
                self._auth_epoch += 1
            http = self._rt._http
            if http is not None:
                http.cancelled.clear()

    def _call(self, action: Action, values: dict[str, Any]) -> Any:
        from ..engine.command import execute, runner
        from ..engine.outcomes import exit_code
        from ..engine.printing import contributed

        dim, ids, opts = bind_call(action, values)
        rt = self._call_runtime()
        epoch = self._auth_epoch
        try:
            outcomes = execute(rt, action, dim, ids, opts)
        except internal.AuthError as exc:
            self._after_cancel(auth=True)
            raise AuthError(str(exc)) from None
        except internal.UsageError as exc:  # brm run: the checks after its first request
            raise UsageError(str(exc)) from None
        except BaseException:
            self._after_cancel(auth=False)
            raise
        failures = [(f.ident, f.message) for o in outcomes for f in o.failures]
        if failures and self._auth_epoch != epoch and any(m == "cancelled" for _, m in failures):
            raise AuthError("authentication failed (HTTP 401) in another call of this client")
        result: Any
        if action.prints and not action.writes_files(opts) and action.combine is not None:
            # Every id's value together (bl.compare, bl.jobs.table); files its options ask for
            # (report=...) are written, and one that cannot be is a failure of the call.
            from ..engine.combinecall import CombineError
            from ..engine.combining import combine_outcomes, write_files

            try:
                combined = combine_outcomes(action, opts, outcomes, rt.log, rt.secrets(), rt, runner(rt))
            except CombineError as exc:  # nothing could be combined: a failure of that id
                raise PartialFailure([*failures, *exc.problems], []) from None
            result = list(combined.elements)
            if combined.page is not None:  # report="-": the page, on stdout as from the CLI
                import sys

                sys.stdout.write(combined.page())
                sys.stdout.flush()
            failures += write_files(rt.log, combined)
        elif action.combine is not None:
            # A files action whose combine writes them (bl.view): the path of its file.
            from ..engine.combinecall import CombineError
            from ..engine.combining import combine_outcomes, write_files

            try:
                combined = combine_outcomes(action, opts, outcomes, rt.log, rt.secrets(), rt, runner(rt))
            except CombineError as exc:
                raise PartialFailure([*failures, *exc.problems], None) from None
            unwritten = write_files(rt.log, combined)
            failures += unwritten
            result = next((p for p in combined.files if p not in dict(unwritten)), None)
        elif action.prints and not action.writes_files(opts):
            result = [e for o in outcomes for e in contributed(action, o, rt.log)]
        else:
            result = DownloadResult(list(rt.log.paths), list(rt.log.skipped), failures, list(rt.log.placeholders))
        if failures:
            code = exit_code(outcomes)
            if code == internal.EXIT_NETWORK:
                raise NetworkError(failures, [] if isinstance(result, list) else result)
            if code == internal.EXIT_WAIT_TIMEOUT:
                raise WaitTimeout(failures, result)
            raise PartialFailure(failures, result)
        return result

    def _rows(self, action: Action, values: dict[str, Any]) -> tuple[Iterator[Any], list[tuple[str, str]]]:
        """A printing action's elements as its pages arrive (a walked listing read as it is
        used, the rows of a streaming combine such as ``jobs table``'s), and the failures known
        before the first row; a page that fails later raises from the iterator (the CLI's
        ``[error]`` line).  ``client.dataset.sync`` writes a group of any size through this."""
        from ..engine.combining import combine_outcomes
        from ..engine.command import execute, runner
        from ..engine.pagination import Streamed
        from ..engine.printing import contributed

        dim, ids, opts = bind_call(action, values)
        rt = self._call_runtime()
        try:
            outcomes = execute(rt, action, dim, ids, opts, lazy=True)
        except internal.AuthError as exc:
            self._after_cancel(auth=True)
            raise AuthError(str(exc)) from None
        failures = [(f.ident, f.message) for o in outcomes for f in o.failures]
        if action.combine is not None:
            elements = combine_outcomes(action, opts, outcomes, rt.log, rt.secrets(), rt, runner(rt)).elements
        else:
            elements = [e for o in outcomes for e in contributed(action, o, rt.log)]

        def rows() -> Iterator[Any]:
            for element in elements:
                if isinstance(element, Streamed):  # an id's listing of rows: its rows, as they arrive
                    yield from element
                else:
                    yield element

        return rows(), failures

    def _iterate(self, action: Action, parts: dict[str, PagedPart], values: dict[str, Any]) -> Iterator[Any]:
        values = dict(values)
        for part in parts.values():
            # Select the walking part as --all (``when: all``) or a ``select`` choice would.
            if part.when is not None:
                values.update(dict.fromkeys(part.when.options, part.when.equals))
        dim, ids, opts = bind_call(action, values)
        if dim not in parts:
            from ..table.model import DIMENSION_KINDS

            raise UsageError(f"{action.resource} iter does not support {DIMENSION_KINDS[dim].flags} ({dim} dimension)")
        rt = self._call_runtime()
        return self._walk(rt, action, dim, parts[dim], ids, opts)

    def _walk(self, rt: Any, action: Action, dim: str, part: PagedPart, ids: list[str],
              opts: dict[str, Any]) -> Iterator[Any]:
        from ..engine.pipeline import Pipeline

        pipeline = Pipeline(rt, action, dim, opts, id_count=len(ids))
        for ident in ids:
            try:
                yield from pipeline.iterate(part, ident)
            except internal.AuthError as exc:
                raise AuthError(str(exc)) from None
            except internal.BenchloopError as exc:
                if exc.network:
                    raise NetworkError([(ident, str(exc))], []) from None
                raise PartialFailure([(ident, str(exc))], []) from None
