"""The generic pipeline: request -> paginate -> fan-out -> transform -> write.

One :class:`Pipeline` runs one action of the table for one dimension.  For each id it
walks the dimension's selected parts, each by its kind (``table.model``):

* a :class:`~benchloop.table.model.RequestPart` sends one request (optionally keeping
  the entries its ``items:`` selects);
* a :class:`~benchloop.table.model.PagedPart` fetches one page or walks every page
  (``pagination.py``), and asks whether an id with an empty list exists;
* a :class:`~benchloop.table.model.FanOutPart` enumerates the items of the id (every
  job of a group) and repeats its request per item, concurrently, each to its file;
* a :class:`~benchloop.table.model.StepPart` runs a named step (``steps/``), after its
  waiter (``polling.py``) when it has one;
* a :class:`~benchloop.table.model.WaitPart` runs a waiter on its own (``bl jobs wait``):
  its value is what the waiter produces.

Every request is rendered from the table's templates (``render.py``).  The part's
transform (``transforms.py``) then shapes the answer, which either contributes to the
id's stdout element or is written to its file.  A step gets a :class:`PipelineCall`,
the implementation of the narrow ``stepcall.StepCall`` protocol, never the pipeline.

Archives (``archive.py``) and composite commands (``compose.py``) are built on this
module; it knows neither.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from msgspec.structs import replace

from ..base import files
from ..base.errors import (
    ApiError,
    AuthError,
    BenchloopError,
    Cancelled,
    NetworkError,
    StepError,
    UsageError,
)
from ..base.log import ByteProgress, Counter
from ..table.model import (
    Action,
    Dimension,
    Endpoint,
    Enumeration,
    FanOutPart,
    Missing,
    PagedPart,
    Pagination,
    Part,
    RequestPart,
    StepPart,
    Waiter,
    WaitPart,
)
from ..table.templates import Context, render_file, render_label, render_value
from . import transforms
from .items import select
from .outcomes import Failure, MultiFailure, Outcome, aggregate, failure_of
from .pagination import (
    ITER_MODES,
    MODES,
    PAGE_SIZE,
    WALK_PAGE_SIZE,
    LazyScan,
    PaginationError,
    Scan,
    lazy_scan,
)
from .placeholders import PLACEHOLDERS
from .render import identity_check, render_headers, render_request
from .runtime import Runtime
from .scope import Scope
from .steps import STEPS, WRITTEN


class NothingThere(Exception):
    """A download's answer matched its part's ``missing`` rule."""


def streamable(part: Any) -> bool:
    """Whether a part walks pages into a shape that takes a listing read as it is used
    (``transforms.LAZY``): its value may hold a ``LazyScan``."""
    return isinstance(part, PagedPart) and part.shape is not None and part.shape.name in transforms.LAZY


def _holds_walk(value: Any) -> bool:
    """A document holding a ``LazyScan`` among its values (what a ``LAZY`` shape makes of one)."""
    return isinstance(value, dict) and any(isinstance(v, LazyScan) for v in value.values())


class Pipeline:
    """Runs one action of the table for one dimension."""

    def __init__(self, rt: Runtime, action: Action, dim: str, opts: Mapping[str, Any], id_count: int = 1,
                 scope: Scope | None = None, lazy: bool = False):
        self.rt = rt
        # Rows written as their pages arrive (``command.run``): a walked listing whose transform
        # takes one (``transforms.LAZY``) is a ``LazyScan``, and a step may stream its rows.
        self.lazy = lazy
        # A sync's restriction to the items that changed (``scope.py``), and what was done with them.
        self.scope = scope
        self.item_failures: list[Failure] = []  # the failures of a fan-out's items, by item

        self.action = action
        self.dim: Dimension = action.dimensions[dim]
        self.opts = dict(opts)
        self.files = action.writes_files(opts)
        self.root = opts.get("output_dir") or rt.output_dir
        self.skip_existing = bool(opts.get("skip_existing"))
        self.id_count = id_count
        self._counters: dict[str, Counter] = {}
        self._counter_lock = threading.Lock()
        self._absent: dict[str, list[int]] = {}  # part -> [nothing to write, written or not] (``absent:``)

    def shared_counter(self, label: str, unit: str, verb: str, eta: bool = False) -> Counter:
        """One counter over all ids of the command (for steps that count per id themselves)."""
        with self._counter_lock:
            if label not in self._counters:
                self._counters[label] = Counter(self.rt.log, label, self.id_count, unit, verb, eta)
            return self._counters[label]

    # -- requests ---------------------------------------------------------
    def request(self, endpoint: Endpoint, ctx: Context) -> Any:
        path, params, body = render_request(endpoint, ctx)
        expect = identity_check(endpoint, ctx)
        service = self.rt.spec.services.get(endpoint.service)
        try:
            if service is None or service.default:
                return self.rt.http.request_json(endpoint.method, path, params, body, expect=expect)
            http = self.rt.service_http(service.name, self.opts)
            return http.request_json(endpoint.method, path, params, body, headers=render_headers(service, ctx),
                                     expect=expect)
        except AuthError as exc:
            self.rt.failed_services.add(endpoint.service)
            if service is None or service.default:
                raise
            raise AuthError(f"{service.title} {exc}", exc.status) from None  # which service refused the key
        except NetworkError:
            self.rt.failed_services.add(endpoint.service)
            raise

    def download(self, endpoint: Endpoint | str, ctx: Context, dest: str, **kwargs: Any) -> int:
        """Stream an endpoint's bytes (or an absolute URL) into ``dest``; see ``Http.download``."""
        if isinstance(endpoint, str):
            return self.rt.http.download(endpoint, dest, **kwargs)
        path, params, _ = render_request(endpoint, ctx)
        return self.rt.http.download(path, dest, params=params, **kwargs)

    def fetch(self, part: RequestPart | PagedPart | StepPart | WaitPart, ctx: Context, ident: str,
              dest: str | None = None, lazy: bool | None = None) -> Any:
        """What one part of one id answers (a fan-out runs in ``fan_out`` instead); ``lazy``: a
        walked listing is read as it is used (default: as the command's rows are printed)."""
        if isinstance(part, WaitPart):
            return self.wait(part.wait, ctx, ident)
        if isinstance(part, StepPart):
            value = self.wait(part.wait, ctx, ident, before_step=True) if part.wait is not None else None
            return STEPS[part.step.name](PipelineCall(self, part, ctx, ident, dest, value))
        if isinstance(part, PagedPart):
            lazy = self.lazy if lazy is None else lazy
            return self.paginate(part.request, part.pagination, ctx, ident, part.empty_probe,
                                 part.empty_probe_mode == "warn", lazy=lazy and streamable(part))
        body = self.answer(part.request, ctx, dest)
        return select(part.items, body, ctx, self.opts) if part.items else body

    def answer(self, endpoint: Endpoint, ctx: Context, dest: str | None) -> Any:
        """What a request part or a fan-out's request answers: the JSON, or for an endpoint that
        answers bytes or text (``response: {binary|text: ...}``), the body streamed into the
        part's file (``WRITTEN``; the lints give such a part a file)."""
        if endpoint.response.is_json or dest is None:
            return self.request(endpoint, ctx)
        self.download(endpoint, ctx, dest)
        self.rt.log.file("wrote", dest, "")
        return WRITTEN

    def fetch_file(self, endpoint: Endpoint | str, ctx: Context, dest: str, missing: Missing | None,
                   on_bytes: Callable[[int], None] | None = None, size: int | None = None) -> str | None:
        """Download into ``dest``; None, or why the placeholder of the ``missing`` rule was saved."""
        check = None
        if missing is not None:
            def check(status: int, headers: Any, url: str) -> None:
                kind = str(headers.get("content-type", "")).split(";")[0].strip().lower()
                if status in missing.status:
                    raise NothingThere(f"not found (HTTP {status})")
                if status < 300 and kind in missing.content_types:
                    raise NothingThere(f"answered with {kind}, not the file")
        try:
            self.download(endpoint, ctx, dest, check=check, on_bytes=on_bytes, size=size)
        except NothingThere as exc:
            if missing is None or missing.placeholder is None:
                raise StepError(str(exc)) from None
            files.atomic_write(dest, PLACEHOLDERS[missing.placeholder]())
            return str(exc)
        return None

    def wait(self, waiter: Waiter, ctx: Context, ident: str, before_step: bool = False,
             on_answer: Callable[[Any, dict[str, int] | None], None] | None = None) -> Any:
        """Run a waiter for one id (``polling.py``).  Before a step (the export) a timeout is a
        failure of the id like any other; on its own it is the command's wait timeout.
        ``on_answer``: see :class:`~benchloop.engine.polling.Polling`."""
        from .polling import Polling, WaitTimeout

        timeout = float(self.opts.get(waiter.timeout) or 0) if waiter.timeout else 0.0

        def ask(current: Waiter, variables: dict[str, Any], check: Callable[[], Any]) -> Any:
            if current.enumeration is not None:
                enum = current.enumeration
                return self.paginate(enum.request, enum.pagination, ctx, ident, enum.empty_probe,
                                     before=check).items
            assert current.request is not None
            check()
            return self.request(current.request, ctx.child(**variables))

        run = Polling(waiter, ask, sleep=self.rt.http.sleep, log=self.rt.log, timeout=timeout or float("inf"),
                      options=self.opts, render=lambda text, variables: render_label(text, ctx.child(**variables)),
                      on_answer=on_answer)
        try:
            return run.run()
        except WaitTimeout as exc:
            if before_step:
                raise StepError(str(exc)) from None
            raise

    def _page_args(self, pagination: Pagination, ctx: Context) -> dict[str, Any]:
        args = pagination.mode_arguments()
        size = pagination.page_size
        value = render_value(size, ctx) if size is not None else self.opts.get("page_size")
        # An option without a value: a single page asks PAGE_SIZE items, a walk WALK_PAGE_SIZE.
        args["page_size"] = int(value) if value not in (None, "") else (
            WALK_PAGE_SIZE if pagination.walks else PAGE_SIZE)
        return args

    def paginate(self, endpoint: Endpoint, pagination: Pagination, ctx: Context, ident: str,
                 probe: Endpoint | None, probe_warns: bool = False,
                 before: Callable[[], Any] | None = None, lazy: bool = False) -> Any:
        """One page or every page of a paged endpoint (``pagination.py``): the walk (a ``Scan``;
        a ``LazyScan`` when ``lazy`` and the mode walks) or the page; ``before`` is called
        before each request (a wait's clock: it raises when the wait's time is up)."""
        args = self._page_args(pagination, ctx)
        args["page"] = int(self.opts.get("page") or 1)
        log = self.rt.log
        if pagination.progress:
            text = render_label(pagination.progress, ctx)
            unit = pagination.collection or "items"

            def on_page(count: int, total: int | None) -> None:
                log.progress(f"{text}: {count}/{'?' if total is None else total} {unit}, fetched")

            args["on_page"] = on_page
        def fetch(skip: int, limit: int) -> Any:
            if before is not None:
                before()
            return self.request(endpoint, ctx.child(skip=skip, limit=limit))

        try:
            if lazy and pagination.mode in ITER_MODES:
                del args["page"]
                result: Any = lazy_scan(pagination.mode, fetch, label=f"{self.dim.name} {ident}", debug=log.debug,
                                        **args)
            else:
                result = MODES[pagination.mode](fetch, label=f"{self.dim.name} {ident}", debug=log.debug, **args)
        except PaginationError as exc:
            raise StepError(str(exc)) from None
        collection = pagination.collection
        if isinstance(result, (Scan, LazyScan)):
            empty = not result.items
        else:  # one page: empty only when page 1 is (a later page may be past the end)
            empty = bool(collection) and args["page"] == 1 and isinstance(result, dict) and not result.get(collection)
        if empty:
            filters = self.filters_given(endpoint)
            if filters:  # nothing matched: say so, or the user sees an empty list and exit 0
                log.warn(f"{self.dim.name} {ident}: no {collection or 'items'} match {' '.join(filters)}")
            elif probe:
                self.probe(probe, ctx, ident, collection or "items", probe_warns)
        return result

    def absent_notes(self) -> list[str]:
        """The ``absent:`` lines of the parts that had nothing to write for some ids."""
        notes = []
        for part in self.dim.parts.values():
            counts = self._absent.get(part.name)
            if part.absent is not None and counts and counts[0]:
                notes.append(part.absent.replace("{count}", str(counts[0])).replace("{total}", str(counts[1])))
        return notes

    def filters_given(self, endpoint: Endpoint) -> list[str]:
        """The options given that filter an endpoint's answer (its query values from options), as
        typed: ``--status failed``."""
        out = []
        for param in endpoint.query:
            opt = self.action.option(param.var) if param.var else None
            value = self.opts.get(opt.name) if opt is not None and not opt.kind.is_flag else None
            if opt is not None and value not in (None, "") and opt.name not in ("page", "page_size"):
                out.append(f"{opt.flag} {value}")
        return out

    def probe(self, probe: Endpoint, ctx: Context, ident: str, collection: str, warns: bool) -> None:
        """Ask whether an id with an empty list exists: a 404 fails the id, or with
        ``empty_probe_mode: warn`` (the official client's exit code kept) is a warning."""
        if not warns:
            self.request(probe, ctx)
            return
        try:
            self.request(probe, ctx)
        except (AuthError, Cancelled):
            raise
        except BenchloopError as exc:
            if isinstance(exc, ApiError) and exc.status == 404:
                self.rt.log.warn(f"{self.dim.name} {ident} has no {collection} and does not exist ({exc}); "
                                 "check the id")
            else:  # the probe is advice only here: it never fails the id
                self.rt.log.debug(f"{self.dim.name} {ident}: existence check failed: {exc}")

    def enumerate(self, enum: Enumeration, ctx: Context, ident: str) -> list[str]:
        """Every id an enumeration lists for ``ident`` (e.g. all jobs of a group); in a sync, the
        items of the scope (the sync has the list already)."""
        if self.scope is not None and enum.binds == self.scope.binds:
            return list(self.scope.only)
        scan = self.paginate(enum.request, enum.pagination, ctx, ident, enum.empty_probe)
        return [str(item[enum.id_key]) for item in scan.items]

    # -- files --------------------------------------------------------------
    def path_for(self, template: str, ctx: Context) -> str:
        return files.join_under(self.root, render_file(template, ctx))

    def skip(self, path: str, size: int | None = None) -> bool:
        """``--skip-existing``: a complete file at ``path`` is left alone (the one place that decides);
        with ``size`` (announced by a listing), only a file of that size is complete."""
        if not (self.skip_existing and files.exists(path)):
            return False
        if size is not None:
            have = files.size_of(path)
            if have != size:
                self.rt.log.note(f"existing {path} is {have} bytes, the listing announced {size}: "
                                 "downloading it again")
                return False
        self.rt.log.file("skip existing", path)
        return True

    def kept(self, path: str) -> bool:
        """In a sync where no item changed: a file of the id as a whole that exists is left alone."""
        if self.scope is not None and self.scope.keep and files.exists(path):
            self.rt.log.file("skip unchanged", path)
            return True
        return False

    def write(self, part: Part, path: str, value: Any) -> bool:
        """Write a part's value; False when there is nothing to write (no report text)."""
        if part.absent is not None:
            with self._counter_lock:
                counts = self._absent.setdefault(part.name, [0, 0])
                counts[0] += value is None
                counts[1] += 1
        if value is None or value is WRITTEN:
            return False
        if part.format == "markdown":
            files.atomic_write(path, value)
        elif _holds_walk(value):
            self.write_streamed(path, value)
        else:
            files.write_json_file(path, value, self.rt.pretty)
        note = ""
        if isinstance(part, PagedPart) and part.count and isinstance(value, dict):
            listed = value.get(part.count)
            note = f" ({listed.handed if isinstance(listed, LazyScan) else len(listed or [])} {part.count})"
        self.rt.log.file("wrote", path, note)
        return True

    def write_streamed(self, path: str, value: Any) -> None:
        """A document holding a listing read as it is written (``LazyScan``): its text goes into
        the staged file as the pages arrive (``formats.streamed.write_document``: the bytes
        ``files.write_json_file`` writes of the whole listing), and the file is put in place
        only when the walk ended; a page that fails removes the staged file and fails the id,
        leaving the file of an earlier run as it was."""
        from .formats.streamed import write_document

        try:
            files.atomic_write_stream(path, lambda out: write_document(out, value, self.rt.pretty))
        except PaginationError as exc:
            raise StepError(str(exc)) from None

    # -- one id -------------------------------------------------------------
    def process(self, ident: str) -> Any:
        ctx = Context({**self.opts, self.dim.name: ident})
        values: dict[str, Any] = {}
        paths: dict[str, str] = {}
        failures: list[Failure] = []
        aggregate_noun = self.dim.aggregate_failures
        selected = self.dim.selected(self.opts)
        # The id's one part (before its fan-outs), a listing written to its file: nothing else
        # of the id reads it, so it is read as it is written, in about a page of memory.
        alone = sum(isinstance(p, (RequestPart, PagedPart, StepPart, WaitPart)) for p in selected) == 1
        for part in selected:
            if not isinstance(part, (RequestPart, PagedPart, StepPart, WaitPart)):
                continue  # fan-outs run after the other parts
            if self.files and part.file:
                paths[part.name] = self.path_for(part.file, ctx)
                if self.skip(paths[part.name]) or self.kept(paths[part.name]):
                    continue
            into_file = alone and part.name in paths and streamable(part)
            try:
                raw = self.fetch(part, ctx, ident, paths.get(part.name), lazy=into_file or None)
                if into_file:  # its later pages arrive (and may fail) as it is written
                    self.write(part, paths[part.name], transforms.apply(part.shape, raw, ident))
            except (AuthError, Cancelled, MultiFailure):
                raise
            except BenchloopError as exc:
                if not aggregate_noun:
                    raise
                failure_id = render_label(part.failure_id or f"{{{self.dim.name}}}", ctx)
                failures.append(failure_of(failure_id, exc))
                continue
            ctx.parts[part.name] = raw
            if into_file:
                continue  # written
            values[part.name] = transforms.apply(part.shape, raw, ident)
            if part.name in paths and aggregate_noun:
                self.write(part, paths[part.name], values[part.name])
        if self.files and not aggregate_noun:
            for part in selected:
                if part.name in values and part.name in paths:
                    self.write(part, paths[part.name], values[part.name])
        for part in selected:
            if isinstance(part, FanOutPart):
                failures += self.fan_out(part, ctx, ident)
        if failures:
            raise aggregate(failures, aggregate_noun or "parts")
        if self.files and (paths or self.action.combine is None):
            return next(iter(paths.values()), ident)
        return self.element(ident, values)  # printed, or what a files action's combine writes

    def element(self, ident: str, values: dict[str, Any]) -> Any:
        element = self.dim.element
        if element.kind == "shape":
            assert element.shape is not None
            ctx = Context({**self.opts, self.dim.name: ident})
            params = {k: render_value(v, ctx) for k, v in element.shape.params.items()}
            return transforms.TRANSFORMS[element.shape.name](values, ident, **params)
        if element.kind == "object":
            return {element.id_key: ident, **values}
        if element.part is None:
            return next(iter(values.values()), None)
        return values.get(element.part)

    def fan_out(self, part: FanOutPart, ctx: Context, ident: str) -> list[Failure]:
        enum = part.each
        children = self.enumerate(enum, ctx, ident)
        counter = self.rt.counter(part.progress, len(children), ctx) if part.progress else None
        template = part.file
        assert template is not None, "a fan-out writes files (the lints ensure it)"

        scope = self.scope

        def one(child: str) -> None:
            cctx = ctx.child(**{enum.binds: child})
            ok, error = True, None
            try:
                path = self.path_for(template, cctx)
                if self.skip(path):
                    return
                raw = self.answer(part.request, cctx, path)
                if (raw is WRITTEN or self.write(part, path, transforms.apply(part.shape, raw, child))) \
                        and scope is not None:
                    scope.wrote(child, path)
                if scope is not None:
                    scope.finished(child)
            except BaseException as exc:
                ok, error = False, exc
                raise
            finally:
                if counter:
                    counter.step(child, ok, error)

        outcomes = self.rt.map(children, one)
        failure_id = part.failure_id or f"{{{enum.binds}}}"
        failures = [replace(f, ident=render_label(failure_id, ctx.child(**{enum.binds: o.ident})))
                    for o in outcomes for f in o.failures]
        self.item_failures += [replace(f, ident=o.ident) for o in outcomes for f in o.failures]
        return failures

    def iterate(self, part: PagedPart, ident: str) -> Iterator[Any]:
        """The items of a walking part for one id, yielded as their pages arrive (the Python
        client's ``iter``): the algorithm of ``paginate`` (``pagination.ITER_MODES``), every
        request rendered by ``request``, the existence probe when nothing was found."""
        ctx = Context({**self.opts, self.dim.name: ident})
        args = self._page_args(part.pagination, ctx)
        found = False
        try:
            for item in ITER_MODES[part.pagination.mode](
                    lambda skip, limit: self.request(part.request, ctx.child(skip=skip, limit=limit)),
                    label=f"{self.dim.name} {ident}", debug=self.rt.log.debug, **args):
                found = True
                yield item
        except PaginationError as exc:
            raise StepError(str(exc)) from None
        if part.empty_probe and not found:
            self.request(part.empty_probe, ctx)


class PipelineCall:
    """The pipeline's side of ``stepcall.StepCall``: what one step of one id may use.

    Steps make requests only through ``request``/``fetch_file`` with the endpoints their
    ``with:`` names, rendered from the table's templates.
    """

    def __init__(self, pipeline: Pipeline, part: StepPart, ctx: Context, ident: str, dest: str | None,
                 value: Any = None):
        self._p = pipeline
        self._part = part
        self._ctx = ctx
        self.ident = ident
        self.dimension = pipeline.dim.name
        self.params = part.params
        self.options = pipeline.opts
        self.dest = dest
        self.input = value
        self.root = pipeline.root
        self.files = pipeline.files
        self.pretty = pipeline.rt.pretty
        self.log = pipeline.rt.log
        self.streams = pipeline.lazy and not pipeline.files

    def _context(self, variables: Mapping[str, Any]) -> Context:
        return self._ctx.child(**variables) if variables else self._ctx

    def request(self, key: str, **variables: Any) -> Any:
        return self._p.request(self.params.endpoint(key), self._context(variables))

    def has_key(self, key: str) -> bool:
        endpoint = self.params.endpoint(key)
        return bool(self._p.rt.service_http(endpoint.service, self.options).api_key)

    def require_key(self, key: str) -> None:
        if not self.has_key(key):
            service = self._p.rt.spec.services[self.params.endpoint(key).service]
            raise UsageError(service.key_required or f"no {service.title} API key is configured")

    def download(self, url: str, dest: str) -> int:
        return self._p.download(url, self._ctx, dest)

    def fetch_file(self, key: str, dest: str, on_bytes: Callable[[int], None] | None = None,
                   size: int | None = None, **variables: Any) -> str | None:
        missing = self._p.fetch_file(self.params.endpoint(key), self._context(variables), dest, self._part.missing,
                                     on_bytes, size)
        scope = self._p.scope
        if scope is not None:
            scope.wrote(variables.get(scope.binds), dest)
        return missing

    def items(self, body: Any, **variables: Any) -> list[dict[str, Any]]:
        items = self._part.items
        assert items is not None, f"step {self._part.step.name} needs 'items:' on its part"
        return select(items, body, self._context(variables), self.options)

    def earlier(self, part: str) -> Any:
        return self._ctx.parts.get(part)

    def enumerate(self, key: str) -> list[str]:
        return self._p.enumerate(self.params.enumeration(key), self._ctx, self.ident)

    def iterate(self, key: str) -> LazyScan:
        enum = self.params.enumeration(key)
        return self._p.paginate(enum.request, enum.pagination, self._ctx, self.ident, enum.empty_probe, lazy=True)

    def scan(self, key: str) -> list[dict[str, Any]]:
        enum = self.params.enumeration(key)
        return self._p.paginate(enum.request, enum.pagination, self._ctx, self.ident, enum.empty_probe).items

    def map(self, items: list[str], work: Callable[[str], Any]) -> list[Outcome]:
        scope = self._p.scope
        if scope is None or not set(items) <= set(scope.only):
            return self._p.rt.map(items, work)

        def each(item: str) -> Any:  # a sync's item: done once its work ended without an exception
            value = work(item)
            scope.finished(item)
            return value

        return self._p.rt.map(items, each)

    def counter(self, label: str, unit: str, verb: str, total: int | None = None, eta: bool = False) -> Counter:
        if total is None:
            return self._p.shared_counter(label, unit, verb, eta)
        return Counter(self.log, label, total, unit, verb, eta)

    def byte_progress(self, label: str, count: int) -> ByteProgress:
        return ByteProgress(self.log, label, count)

    def render(self, template: str) -> str:
        return render_label(template, self._ctx)

    def path(self, relative: str) -> str:
        return files.join_under(self.root, relative)

    def skip(self, path: str, size: int | None = None) -> bool:
        return self._p.skip(path, size)
