"""The generic pipeline: request -> paginate -> fan-out -> shape -> write.

One :class:`Pipeline` runs one action of the table for one dimension.  For
each id it walks the dimension's selected parts: each part renders its
endpoint's declared path, query and body from the id, the options and earlier
parts (``render_request``: the only place a request is built), fetches one
page or walks all pages, or waits for a polling waiter, applies its shape, and
either contributes to the id's stdout element or is written to its file.  A
part with ``each`` enumerates the jobs of a group and repeats itself per job,
concurrently.  A named step gets a :class:`StepCall`: a narrow view with the
pipeline's request, download, sleep and pool functions, never the pipeline.

Archives (``archive.py``) and composite commands (``compose.py``) are built on
this module; it knows neither.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..base import files as writers
from ..base.errors import (
    ApiError,
    AuthError,
    BenchloopError,
    Cancelled,
    NetworkError,
    StepError,
    UsageError,
)
from ..base.log import Counter, Log
from ..table.model import (
    Action,
    Dimension,
    Endpoint,
    Enumeration,
    Missing,
    Pagination,
    Part,
    Progress,
    Service,
    Spec,
)
from ..table.templates import Context, render_file, render_label, render_path, render_value
from . import transforms as shapes
from .items import select
from .outcomes import Failure, MultiFailure, Outcome, aggregate, run_pool
from .pagination import MODES, PaginationError, Scan
from .placeholders import PLACEHOLDERS


class NothingThere(Exception):
    """A download's answer matched its part's ``missing`` rule."""


@dataclass
class Runtime:
    """What a command needs from the global options and configuration."""

    spec: Spec
    log: Log
    pretty: bool
    concurrency: int
    output_dir: str
    http_factory: Callable[[int], Any]
    stdout: Any
    _http: Any = None
    _lock: Any = field(default_factory=threading.Lock)
    # Connections to keep: at least one per thread that can be in a request at once.
    pool: int = 0
    # The clients of the other services (``services:``), by name: ``service_factory(service,
    # options)`` builds one at its first request, with that service's origin, key and auth
    # header only, so a key can never reach another service.
    service_factory: Callable[[Service, Mapping[str, Any]], Any] | None = None
    _services: dict[str, Any] = field(default_factory=dict)
    # Services that refused the key or could not be reached (which one a hint must name).
    failed_services: set[str] = field(default_factory=set)

    @property
    def http(self) -> Any:
        # Created once, under a lock: workers racing here must share one client
        # (one connection pool), not build one each.
        if self._http is None:
            with self._lock:
                if self._http is None:
                    self._http = self.http_factory(self.pool or self.concurrency)
        return self._http

    def service_http(self, name: str, options: Mapping[str, Any]) -> Any:
        """The client of service ``name`` (the default service: ``http``); ``options`` are the
        running command's, where a service may find its base URL and key."""
        service = self.spec.services[name]
        if service.default:
            return self.http
        if name not in self._services:
            with self._lock:
                if name not in self._services:
                    if self.service_factory is None:
                        raise BenchloopError(f"no {service.title} client is configured here")
                    self._services[name] = self.service_factory(service, options)
        return self._services[name]

    def _clients(self) -> list[Any]:
        return [c for c in (self._http, *self._services.values()) if c is not None]

    def cancel(self) -> None:
        """Make every request still to come (or sleeping before a retry) stop."""
        for client in self._clients():
            client.cancelled.set()

    def map(self, items: list[str], work: Callable[[str], Any], concurrency: int | None = None) -> list[Outcome]:
        return run_pool(items, work, self.concurrency if concurrency is None else concurrency, self.cancel)

    def close(self) -> None:
        for client in self._clients():
            client.close()

    def counter(self, progress: Progress, total: int, ctx: Context | None = None) -> Counter:
        label = render_label(progress.label, ctx) if ctx is not None else progress.label
        return Counter(self.log, label, total, progress.unit, progress.action, progress.eta)


def render_request(endpoint: Endpoint, ctx: Context) -> tuple[str, dict[str, Any] | None, Any]:
    """``(path, query, body)`` of an endpoint, from its declared templates only.

    Query values that resolve to null or "" are left out (unless the endpoint
    keeps that one empty), and so are body fields that resolve to null; a
    boolean query value is sent as ``true``/``false``.
    """
    path = render_path(endpoint.path, ctx)
    params: dict[str, Any] = {}
    for param in endpoint.query:
        value = render_value(param.template, ctx)
        if value is None or (value == "" and param.name not in endpoint.keep_empty):
            continue
        params[param.name] = "true" if value is True else "false" if value is False else value
    body = None
    if endpoint.body is not None:
        body = {}
        for param in endpoint.body:
            value = render_value(param.template, ctx)
            if value is not None:
                body[param.name] = value
    return path, params or None, body


def render_headers(service: Service, ctx: Context) -> dict[str, str] | None:
    """The service's headers for one request, from its templates; derived variables (``env``
    from ``cluster``) are computed from the context first.  A header whose value renders to
    null or "" is left out."""
    if not service.headers:
        return None
    sources = {d.source: ctx.lookup(d.source) for d in service.derived}
    hctx = ctx.child(**service.derive(sources)) if service.derived else ctx
    out = {}
    for name, template in service.headers.items():
        value = render_value(template, hctx)
        if value is not None and value != "":
            out[name] = str(value)
    return out or None


class Pipeline:
    """Runs one action of the table for one dimension."""

    def __init__(self, rt: Runtime, action: Action, dim: str, opts: Mapping[str, Any], id_count: int = 1):
        self.rt = rt
        self.action = action
        self.dim: Dimension = action.dimensions[dim]
        self.opts = dict(opts)
        self.files = action.writes_files(opts)
        self.root = opts.get("output_dir") or rt.output_dir
        self.skip_existing = bool(opts.get("skip_existing"))
        self.id_count = id_count
        self._counters: dict[str, Counter] = {}
        self._counter_lock = threading.Lock()

    def shared_counter(self, label: str, unit: str, verb: str, eta: bool = False) -> Counter:
        """One counter over all ids of the command (for steps that count per id themselves)."""
        with self._counter_lock:
            if label not in self._counters:
                self._counters[label] = Counter(self.rt.log, label, self.id_count, unit, verb, eta)
            return self._counters[label]

    # -- requests ---------------------------------------------------------
    def request(self, endpoint: Endpoint, ctx: Context) -> Any:
        path, params, body = render_request(endpoint, ctx)
        service = self.rt.spec.services.get(endpoint.service)
        try:
            if service is None or service.default:
                return self.rt.http.request_json(endpoint.method, path, params, body)
            http = self.rt.service_http(service.name, self.opts)
            return http.request_json(endpoint.method, path, params, body, headers=render_headers(service, ctx))
        except AuthError as exc:
            self.rt.failed_services.add(endpoint.service)
            if service is None or service.default:
                raise
            raise AuthError(f"{service.title} {exc}") from None  # which service refused the key
        except NetworkError:
            self.rt.failed_services.add(endpoint.service)
            raise

    def download(self, endpoint: Endpoint | str, ctx: Context, dest: str, **kwargs: Any) -> int:
        """Stream an endpoint's bytes (or an absolute URL) into ``dest``; see ``Http.download``."""
        if isinstance(endpoint, str):
            return self.rt.http.download(endpoint, dest, **kwargs)
        path, params, _ = render_request(endpoint, ctx)
        return self.rt.http.download(path, dest, params=params, **kwargs)

    def fetch(self, part: Part, ctx: Context, ident: str, dest: str | None = None) -> Any:
        value = None
        if part.wait is not None:
            value = self.wait(part, ctx, ident)
        if part.step:
            from .steps import run as run_step

            return run_step(part.step, StepCall(self, part, ctx, ident, dest, value))
        if part.wait is not None:
            return value
        if part.pagination is None:
            body = self.request(part.request, ctx)
        else:
            body = self.paginate(part.request, part.pagination, ctx, ident, part.empty_probe,
                                 part.empty_probe_mode == "warn")
        return select(part.items, body, ctx, self.opts) if part.items else body

    def fetch_file(self, endpoint: Endpoint | str, ctx: Context, dest: str, missing: Missing | None,
                   on_bytes: Callable[[int], None] | None = None) -> str | None:
        """Download into ``dest``; None, or why the placeholder of the ``missing`` rule was saved."""
        check = None
        if missing is not None:
            def check(status: int, headers: Any, url: str) -> None:
                kind = str(headers.get("content-type", "")).split(";")[0].strip().lower()
                if status in missing.status:
                    raise NothingThere(f"not found (HTTP {status})")
                if status < 300 and kind in missing.content_types:
                    raise NothingThere(f"the answer is {kind}, not the file")
        try:
            self.download(endpoint, ctx, dest, check=check, on_bytes=on_bytes)
        except NothingThere as exc:
            if missing is None or missing.placeholder is None:
                raise StepError(str(exc)) from None
            writers.atomic_write(dest, PLACEHOLDERS[missing.placeholder]())
            return str(exc)
        return None

    def wait(self, part: Part, ctx: Context, ident: str) -> str:
        from .waiter import Wait

        waiter = part.wait
        timeout = float(self.opts.get(waiter.timeout) or 0) or float("inf")
        run = Wait(waiter, lambda endpoint, extra: self.request(endpoint, ctx.child(**extra)),
                   self.rt.http.sleep, self.rt.log.info, timeout)
        message = waiter.message
        return run.run(lambda wait: render_label(message, ctx.child(wait=f"{wait:.1f}")) if message else None)

    def paginate(self, endpoint: Endpoint, pagination: Pagination, ctx: Context, ident: str,
                 probe: Endpoint | None, probe_warns: bool = False) -> Any:
        args = pagination.mode_arguments()
        size = pagination.page_size
        args["page_size"] = int(render_value(size, ctx)) if size is not None else int(self.opts.get("page_size") or 50)
        args["page"] = int(self.opts.get("page") or 1)
        log = self.rt.log
        if pagination.progress:
            text = render_label(pagination.progress, ctx)
            unit = pagination.collection or "items"

            def on_page(count: int, total: int | None) -> None:
                log.progress(f"{text}: {count}/{'?' if total is None else total} {unit}, fetched")

            args["on_page"] = on_page
        try:
            result = MODES[pagination.mode](
                lambda skip, limit: self.request(endpoint, ctx.child(skip=skip, limit=limit)),
                label=f"{self.dim.name} {ident}", debug=log.debug, **args)
        except PaginationError as exc:
            raise StepError(str(exc)) from None
        if probe and isinstance(result, Scan) and not result.items:
            self.probe(probe, ctx, ident, pagination.collection or "items", probe_warns)
        return result

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
        """Every id an enumeration lists for ``ident`` (e.g. all jobs of a group)."""
        scan = self.paginate(enum.request, enum.pagination, ctx, ident, enum.empty_probe)
        return [str(item[enum.id_key]) for item in scan.items]

    # -- files --------------------------------------------------------------
    def path_for(self, template: str, ctx: Context) -> str:
        return writers.join_under(self.root, render_file(template, ctx))

    def skip(self, path: str) -> bool:
        if self.skip_existing and writers.exists(path):
            self.rt.log.file("skip existing", path)
            return True
        return False

    def write(self, part: Part, path: str, value: Any) -> None:
        from ..table.stepdefs import WRITTEN

        if value is None or value is WRITTEN:
            return
        if part.format == "markdown":
            writers.atomic_write(path, value)
        else:
            writers.write_json_file(path, value, self.rt.pretty)
        note = ""
        if part.count and isinstance(value, dict):
            note = f" ({len(value.get(part.count) or [])} {part.count})"
        self.rt.log.file("wrote", path, note)

    # -- one id -------------------------------------------------------------
    def process(self, ident: str) -> Any:
        ctx = Context({**self.opts, self.dim.name: ident})
        values: dict[str, Any] = {}
        paths: dict[str, str] = {}
        failures: list[Failure] = []
        aggregate_noun = self.dim.aggregate_failures
        selected = self.dim.selected(self.opts)
        for part in selected:
            if part.each:
                continue
            if self.files and part.file:
                paths[part.name] = self.path_for(part.file, ctx)
                if self.skip(paths[part.name]):
                    continue
            try:
                raw = self.fetch(part, ctx, ident, paths.get(part.name))
            except (AuthError, Cancelled, MultiFailure):
                raise
            except BenchloopError as exc:
                if not aggregate_noun:
                    raise
                failure_id = render_label(part.failure_id or f"{{{self.dim.name}}}", ctx)
                failures.append(Failure(failure_id, str(exc), exc.network))
                continue
            ctx.parts[part.name] = raw
            values[part.name] = shapes.apply(part.shape, raw, ident)
            if part.name in paths and aggregate_noun:
                self.write(part, paths[part.name], values[part.name])
        if self.files and not aggregate_noun:
            for part in selected:
                if part.name in values and part.name in paths:
                    self.write(part, paths[part.name], values[part.name])
        for part in selected:
            if part.each:
                failures += self.fan_out(part, ctx, ident)
        if failures:
            raise aggregate(failures, aggregate_noun or "parts")
        if self.files:
            return next(iter(paths.values()), ident)
        return self.element(ident, values)

    def element(self, ident: str, values: dict[str, Any]) -> Any:
        element = self.dim.element
        if element.kind == "shape":
            ctx = Context({**self.opts, self.dim.name: ident})
            params = {k: render_value(v, ctx) for k, v in element.shape.params.items()}
            return shapes.SHAPES[element.shape.name](values, ident, **params)
        if element.kind == "object":
            return {element.id_key: ident, **values}
        if element.part is None:
            return next(iter(values.values()), None)
        return values.get(element.part)

    def fan_out(self, part: Part, ctx: Context, ident: str) -> list[Failure]:
        enum = part.each
        children = self.enumerate(enum, ctx, ident)
        counter = self.rt.counter(part.progress, len(children), ctx) if part.progress else None

        def one(child: str) -> None:
            cctx = ctx.child(**{enum.binds: child})
            ok = True
            try:
                path = self.path_for(part.file, cctx)
                if self.skip(path):
                    return
                raw = self.request(part.request, cctx)
                self.write(part, path, shapes.apply(part.shape, raw, child))
            except BenchloopError:
                ok = False
                raise
            finally:
                if counter:
                    counter.step(child, ok)

        outcomes = self.rt.map(children, one)
        failure_id = part.failure_id or f"{{{enum.binds}}}"
        return [Failure(render_label(failure_id, ctx.child(**{enum.binds: o.ident})), f.message, f.network)
                for o in outcomes for f in o.failures]

    def iterate(self, part: Part, ident: str) -> Iterator[Any]:
        """The items of a walking part for one id, yielded as their pages arrive (the Python
        client's ``iter``): the algorithm of ``paginate`` (``pagination.ITER_MODES``), every
        request rendered by ``request``, the existence probe when nothing was found."""
        from .pagination import ITER_MODES

        ctx = Context({**self.opts, self.dim.name: ident})
        pagination = part.pagination
        args = pagination.mode_arguments()
        size = pagination.page_size
        args["page_size"] = int(render_value(size, ctx)) if size is not None else int(self.opts.get("page_size") or 50)
        found = False
        try:
            for item in ITER_MODES[pagination.mode](
                    lambda skip, limit: self.request(part.request, ctx.child(skip=skip, limit=limit)),
                    label=f"{self.dim.name} {ident}", debug=self.rt.log.debug, **args):
                found = True
                yield item
        except PaginationError as exc:
            raise StepError(str(exc)) from None
        if part.empty_probe and not found:
            self.request(part.empty_probe, ctx)


class StepCall:
    """What a named step may use: its part, the id, and the pipeline's request functions.

    Steps make requests only through ``request``/``download`` with the
    endpoints their ``with:`` names, rendered from the table's templates.
    """

    def __init__(self, pipeline: Pipeline, part: Part, ctx: Context, ident: str, dest: str | None,
                 value: Any = None):
        self._p = pipeline
        self.part = part
        self.ctx = ctx
        self.ident = ident
        self.dest = dest  # the final path when the action writes files, else None
        self.input = value  # what the part's waiter produced, if it has one
        self.options = pipeline.opts
        self.dimension = pipeline.dim.name
        self.files = pipeline.files
        self.root = pipeline.root
        self.skip_existing = pipeline.skip_existing
        self.log = pipeline.rt.log
        self.pretty = pipeline.rt.pretty
        self.concurrency = pipeline.rt.concurrency

    def endpoint(self, key: str) -> Endpoint:
        return self.part.endpoints[key]

    def request(self, key: str, ctx: Context | None = None, **variables: Any) -> Any:
        """The JSON answer of the endpoint named by ``with.<key>``."""
        ctx = (ctx or self.ctx).child(**variables) if variables else (ctx or self.ctx)
        return self._p.request(self.endpoint(key), ctx)

    def has_key(self, key: str) -> bool:
        """Whether the service of ``with.<key>``'s endpoint has an API key configured."""
        endpoint = self.endpoint(key)
        return bool(self._p.rt.service_http(endpoint.service, self.options).api_key)

    def require_key(self, key: str) -> None:
        """A usage error (the service's own message) when the service of ``with.<key>``'s
        endpoint has no API key, before any request to it."""
        if not self.has_key(key):
            service = self._p.rt.spec.services[self.endpoint(key).service]
            raise UsageError(service.key_required or f"no {service.title} API key is configured")

    def download(self, key: str | None, dest: str, ctx: Context | None = None, *, url: str | None = None,
                 **kwargs: Any) -> int:
        """Stream the endpoint named by ``with.<key>`` (or an absolute ``url``) into ``dest``."""
        target: Endpoint | str = url if url is not None else self.endpoint(key or "")
        return self._p.download(target, ctx or self.ctx, dest, **kwargs)

    def fetch_file(self, key: str, dest: str, ctx: Context | None = None,
                   on_bytes: Callable[[int], None] | None = None) -> str | None:
        """Download ``with.<key>`` into ``dest`` under the part's ``missing`` rule; None, or why
        the rule's placeholder was saved instead."""
        return self._p.fetch_file(self.endpoint(key), ctx or self.ctx, dest, self.part.missing, on_bytes)

    def items(self, body: Any, ctx: Context | None = None) -> list[dict[str, Any]]:
        """The entries of ``body`` that the part's ``items:`` selects."""
        return select(self.part.items, body, ctx or self.ctx, self.options)

    def enumerate(self, key: str, ctx: Context | None = None) -> list[str]:
        return self._p.enumerate(self.part.enumerations[key], ctx or self.ctx, self.ident)

    def map(self, items: list[str], work: Callable[[str], Any]) -> list[Outcome]:
        return self._p.rt.map(items, work)

    def sleep(self, seconds: float) -> None:
        self._p.rt.http.sleep(seconds)

    def counter(self, label: str, unit: str, verb: str, total: int | None = None, eta: bool = False) -> Counter:
        """A progress counter; without ``total``, one shared by every id of the command."""
        if total is None:
            return self._p.shared_counter(label, unit, verb, eta)
        return Counter(self.log, label, total, unit, verb, eta)

    def path(self, relative: str) -> str:
        return writers.join_under(self.root, relative)
