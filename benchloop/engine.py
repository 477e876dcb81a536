"""The generic pipeline: request -> paginate -> fan-out -> shape -> write.

One function runs every command of the table.  For each id of the chosen
dimension it walks the dimension's *parts* (selected by ``select``/``when``):
each part renders its endpoint's path, query and body from the id, the
options and earlier parts, fetches one page or walks all pages, applies its
shape, and either contributes to the id's stdout element or is written to its
file.  A part with ``each`` enumerates the jobs of a group and repeats itself
per job, concurrently.

Ids run on a thread pool of ``--concurrency`` workers sharing one HTTP client
(or one at a time where the table says ``serial``).  Results are reassembled
in input order.  A 401 anywhere cancels the remaining work and exits 3.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from . import formats, shapes, writers
from .errors import (
    EXIT_AUTH,
    EXIT_FAILURE,
    EXIT_NETWORK,
    EXIT_OK,
    ApiError,
    AuthError,
    BenchloopError,
    Cancelled,
    StepError,
)
from .http import current_slots, quote_segment, use_slots
from .log import Counter, Log
from .pagination import MODES, PaginationError, Scan

_FULL = re.compile(r"^\{([^{}]+)\}$")
_VAR = re.compile(r"\{([^{}]+)\}")


@dataclass
class Runtime:
    """What a command needs from the global options and configuration."""

    spec: dict[str, Any]
    log: Log
    pretty: bool
    concurrency: int
    output_dir: str
    http_factory: Callable[[int], Any]
    stdout: Any
    _http: Any = None

    _lock: Any = field(default_factory=threading.Lock)
    # Connections to keep: at least one per thread that can be in a request at once
    # (fewer makes threads queue on the pool, which some httpcore versions can stall).
    pool: int = 0

    @property
    def http(self) -> Any:
        # Created once, under a lock: workers racing here must share one client
        # (one connection pool), not build one each.
        if self._http is None:
            with self._lock:
                if self._http is None:
                    self._http = self.http_factory(self.pool or self.concurrency)
        return self._http

    def close(self) -> None:
        if self._http is not None:
            self._http.close()


@dataclass
class Context:
    """Variables visible to templates while one id is processed."""

    vars: dict[str, Any]
    parts: dict[str, Any] = field(default_factory=dict)

    def lookup(self, name: str) -> Any:
        if name.startswith("parts."):
            _, part, *fields = name.split(".")
            value = self.parts.get(part)
            for key in fields:
                value = value.get(key) if isinstance(value, dict) else None
            return value
        return self.vars.get(name)

    def child(self, **extra: Any) -> Context:
        return Context({**self.vars, **extra}, dict(self.parts))


def render_value(template: Any, ctx: Context) -> Any:
    """Query/body values: a lone ``{var}`` keeps its type; otherwise string substitution."""
    if not isinstance(template, str):
        return template
    full = _FULL.match(template)
    if full:
        return ctx.lookup(full.group(1))
    return _VAR.sub(lambda m: "" if ctx.lookup(m.group(1)) is None else str(ctx.lookup(m.group(1))), template)


def render_path(template: str, ctx: Context) -> str:
    return _VAR.sub(lambda m: quote_segment(str(ctx.lookup(m.group(1)))), template)


def render_file(template: str, ctx: Context) -> str:
    return _VAR.sub(lambda m: writers.safe_component(str(ctx.lookup(m.group(1)))), template)


def render_label(template: str, ctx: Context) -> str:
    return _VAR.sub(lambda m: str(ctx.lookup(m.group(1))), template)


@dataclass
class Failure:
    ident: str
    message: str
    network: bool


@dataclass
class Outcome:
    ident: str
    value: Any = None
    failures: list[Failure] = field(default_factory=list)

    @property
    def failure(self) -> Failure | None:
        return self.failures[0] if self.failures else None


class MultiFailure(BenchloopError):
    """Several independent failures of one id (e.g. one per artifact); the id may still succeed partly."""

    def __init__(self, failures: list[Failure], value: Any = None):
        super().__init__("; ".join(f"{f.ident}: {f.message}" for f in failures))
        self.failures = failures
        self.value = value
        self.network = all(f.network for f in failures)


# Threads beyond --concurrency: while one decodes and writes its last answer, its
# request slot already serves the next id (see ``http.use_slots``).
SPARE_THREADS = 2


def run_pool(idents: list[str], work: Callable[[str], Any], concurrency: int, rt: Runtime) -> list[Outcome]:
    """Run ``work`` per id, in parallel, keeping input order; a 401 cancels the rest.

    At most ``concurrency`` requests are on the wire at once: the workers share
    one gate of that many slots, held only while a request is in flight.  A
    pool started by a worker of another pool (a fan-out per id, a section of
    ``pull``) counts as one request of that outer pool while it runs, so the
    spare threads never multiply: nested pools stay within outer x inner
    ``concurrency``, as without spare threads.
    """
    gate = threading.BoundedSemaphore(concurrency) if concurrency > 1 and len(idents) > 1 else None

    def guarded(ident: str) -> Outcome:
        if gate is not None:
            use_slots(gate)
        try:
            return Outcome(ident, value=work(ident))
        except AuthError:
            if rt._http is not None:
                rt._http.cancelled.set()
            raise
        except MultiFailure as exc:
            return Outcome(ident, value=exc.value, failures=exc.failures)
        except BenchloopError as exc:
            return Outcome(ident, failures=[Failure(ident, str(exc), exc.network)])

    if concurrency <= 1 or len(idents) <= 1:
        return [guarded(ident) for ident in idents]
    outer = current_slots()
    if outer is not None:
        outer.acquire()
    pool = ThreadPoolExecutor(max_workers=min(concurrency + SPARE_THREADS, len(idents)))
    try:
        futures = [pool.submit(guarded, ident) for ident in idents]
        outcomes: list[Outcome] = []
        auth: AuthError | None = None
        for future in futures:
            try:
                outcomes.append(future.result())
            except AuthError as exc:
                auth = auth or exc
        if auth is not None:
            raise auth
        return outcomes
    except BaseException:
        # 401 or Ctrl-C: stop queued work now and make running workers stop at their
        # next request or chunk; their own cleanup removes temp files.
        if rt._http is not None:
            rt._http.cancelled.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        if outer is not None:
            outer.release()


class Pipeline:
    """Runs one action of the table for one dimension."""

    def __init__(self, rt: Runtime, resource: str, action: dict[str, Any], dim: str, opts: dict[str, Any]):
        self.rt = rt
        self.resource = resource
        self.action = action
        self.dim_name = dim
        self.dim = action["dimensions"][dim]
        self.opts = opts
        listing = action.get("stdout_when")
        self.files = action["writer"] == "files" and not (listing and opts.get(listing))
        self.root = opts.get("output_dir") or rt.output_dir
        self.skip_existing = bool(opts.get("skip_existing"))
        self.id_count = 1
        self._counters: dict[str, Counter] = {}
        self._counter_lock = threading.Lock()

    def shared_counter(self, label: str, unit: str, action: str, eta: bool = False) -> Counter:
        """One counter over all ids of the command (for steps that count per id themselves)."""
        with self._counter_lock:
            if label not in self._counters:
                self._counters[label] = Counter(self.rt.log, label, self.id_count, unit, action, eta)
            return self._counters[label]

    # -- requests ---------------------------------------------------------
    def request(self, name: str, ctx: Context, skip: int | None = None, limit: int | None = None) -> Any:
        endpoint = self.rt.spec["endpoints"][name]
        if skip is not None:
            ctx = ctx.child(skip=skip, limit=limit)
        path = render_path(endpoint["path"], ctx)
        params = {}
        for key, template in (endpoint.get("query") or {}).items():
            value = render_value(template, ctx)
            if value is None or value == "":
                continue
            params[key] = "true" if value is True else "false" if value is False else value
        body = None
        if endpoint["method"] == "POST":
            body = {k: render_value(v, ctx) for k, v in (endpoint.get("body") or {}).items()}
        return self.rt.http.request_json(endpoint["method"], path, params or None, body)

    def fetch(self, part: dict[str, Any], ctx: Context, ident: str, dest: str | None = None) -> Any:
        if part.get("step"):
            from . import steps

            return steps.run(part["step"], self, part, ctx, ident, dest)
        pagination = part.get("pagination")
        if not pagination:
            return self.request(part["request"], ctx)
        return self.paginate(part["request"], pagination, ctx, ident, part.get("empty_probe"))

    def paginate(self, request: str, pagination: dict[str, Any], ctx: Context, ident: str,
                 probe: str | None) -> Any:
        mode = MODES[pagination["mode"]]
        params = {k: v for k, v in pagination.items() if k not in ("mode", "progress")}
        if "page_size" in params:
            params["page_size"] = int(render_value(params["page_size"], ctx))
        else:
            params["page_size"] = int(self.opts.get("page_size") or 50)
        params["page"] = int(self.opts.get("page") or 1)
        label = f"{self.dim_name} {ident}"
        progress = pagination.get("progress")
        log = self.rt.log
        if progress:
            text = render_label(progress, ctx)
            unit = pagination.get("collection", "items")

            def on_page(count: int, total: int | None) -> None:
                log.progress(f"{text}: {count}/{'?' if total is None else total} {unit}, fetched")

            params["on_page"] = on_page
        try:
            result = mode(lambda skip, limit: self.request(request, ctx, skip, limit),
                          label=label, debug=log.debug, **params)
        except PaginationError as exc:
            raise StepError(str(exc)) from None
        if probe and isinstance(result, Scan) and not result.items:
            self.request(probe, ctx)
        return result

    # -- one id -----------------------------------------------------------
    def selected_parts(self) -> list[tuple[str, dict[str, Any]]]:
        parts = self.dim["parts"]
        names = list(parts)
        select = self.dim.get("select")
        if select:
            names = select["choices"][self.opts[select["option"]]]
        chosen = []
        for name in names:
            when = parts[name].get("when")
            if when:
                negate = when.startswith("not ")
                if bool(self.opts.get(when.removeprefix("not "))) == negate:
                    continue
            chosen.append((name, parts[name]))
        return chosen

    def path_for(self, part: dict[str, Any], ctx: Context) -> str:
        return writers.join_under(self.root, render_file(part["file"], ctx))

    def write(self, part: dict[str, Any], path: str, value: Any) -> None:
        from .steps import WRITTEN

        if value is None or value is WRITTEN:
            return
        if part.get("format") == "markdown":
            writers.atomic_write(path, value)
        else:
            writers.write_json_file(path, value, self.rt.pretty)
        note = ""
        if part.get("count") and isinstance(value, dict):
            count = part["count"]
            note = f" ({len(value.get(count) or [])} {count})"
        self.rt.log.info(f"wrote {path}{note}")

    def process(self, ident: str) -> Any:
        if self.dim.get("archive"):
            from .archive import run_archive

            return run_archive(self, ident)
        ctx = Context({**self.opts, self.dim_name: ident})
        values: dict[str, Any] = {}
        paths: dict[str, str] = {}
        sub_failures: list[Failure] = []
        aggregate = self.dim.get("aggregate_failures")
        selected = self.selected_parts()
        for name, part in selected:
            if part.get("each"):
                continue
            if self.files and part.get("file"):
                paths[name] = self.path_for(part, ctx)
                if self.skip_existing and writers.exists(paths[name]):
                    self.rt.log.info(f"skip existing {paths[name]}")
                    continue
            try:
                raw = self.fetch(part, ctx, ident, paths.get(name))
            except (AuthError, Cancelled, MultiFailure):
                raise
            except BenchloopError as exc:
                if not aggregate:
                    raise
                failure_id = render_label(part.get("failure_id", f"{{{self.dim_name}}}"), ctx)
                sub_failures.append(Failure(failure_id, str(exc), exc.network))
                continue
            ctx.parts[name] = raw
            values[name] = shapes.apply(part.get("shape"), raw, ident)
            if name in paths and aggregate:
                self.write(part, paths[name], values[name])
        if self.files and not aggregate:
            for name, value in values.items():
                if name in paths:
                    self.write(dict(selected)[name], paths[name], value)
        for _name, part in selected:
            if part.get("each"):
                sub_failures += self.fan_out(part, ctx, ident)
        if sub_failures:
            network = all(f.network for f in sub_failures)
            detail = "; ".join(f"{f.ident}: {f.message}" for f in sub_failures)
            message = f"failed to fetch {len(sub_failures)} {aggregate}: {detail}"
            raise StepError(f"network: {message}" if network else message, network=network)
        if self.files:
            return next(iter(paths.values()), ident)
        return self.element(ident, values)

    def element(self, ident: str, values: dict[str, Any]) -> Any:
        element = self.dim.get("element", "part")
        if isinstance(element, dict) and "shape" in element:
            ctx = Context({**self.opts, self.dim_name: ident})
            params = {k: render_value(v, ctx) for k, v in (element.get("with") or {}).items()}
            return shapes.SHAPES[element["shape"]](values, ident, **params)
        if isinstance(element, dict):
            return {element["compose"]: ident, **values}
        if element == "part":
            return next(iter(values.values()), None)
        return values.get(element)

    def enumerate(self, name: str, ctx: Context, ident: str) -> list[str]:
        """Every id a table enumeration lists for ``ident`` (e.g. all jobs of a group)."""
        enum = self.rt.spec["enumerations"][name]
        scan = self.paginate(enum["request"], enum["pagination"], ctx, ident, enum.get("empty_probe"))
        key = enum["pagination"]["id_keys"][0]
        return [str(item[key]) for item in scan.items]

    def fan_out(self, part: dict[str, Any], ctx: Context, ident: str) -> list[Failure]:
        children = self.enumerate(part["each"], ctx, ident)
        binds = self.rt.spec["enumerations"][part["each"]]["binds"]
        counter = None
        if part.get("progress"):
            spec = part["progress"]
            counter = Counter(self.rt.log, render_label(spec["label"], ctx), len(children),
                              spec["unit"], spec["action"], spec.get("eta", False))

        def one(child: str) -> None:
            cctx = ctx.child(**{binds: child})
            ok = True
            try:
                path = self.path_for(part, cctx)
                if self.skip_existing and writers.exists(path):
                    self.rt.log.info(f"skip existing {path}")
                    return
                raw = self.request(part["request"], cctx)
                self.write(part, path, shapes.apply(part.get("shape"), raw, child))
            except BenchloopError:
                ok = False
                raise
            finally:
                if counter:
                    counter.step(child, ok)

        outcomes = run_pool(children, one, self.rt.concurrency, self.rt)
        return [
            Failure(render_label(part.get("failure_id", f"{{{binds}}}"), ctx.child(**{binds: o.ident})),
                    f.message, f.network)
            for o in outcomes for f in o.failures
        ]


def run(rt: Runtime, resource: str, action: dict[str, Any], dim: str, ids: list[str],
        opts: dict[str, Any]) -> int:
    """Run one command over its ids; print data and the failure summary; return the exit code."""
    if action.get("compose"):
        from .compose import run_compose

        return run_compose(rt, action, dim, ids, opts)
    pipeline = Pipeline(rt, resource, action, dim, opts)
    pipeline.id_count = len(ids)
    progress = pipeline.dim.get("progress") or action.get("progress")
    counter = None
    if progress:
        counter = Counter(rt.log, progress["label"], len(ids), progress["unit"], progress["action"],
                          progress.get("eta", False))

    field_name = action.get("error_field")
    output = opts.get("output") or "json"
    query = formats.compile_query(opts.get("query"))
    stream = JsonlStream(rt, action, ids) if output == "jsonl" and query is None and not pipeline.files else None

    def work(ident: str) -> Any:
        try:
            result = pipeline.process(ident)
        except BenchloopError as exc:
            if counter:
                counter.step(ident, ok=False)
            if stream is not None:
                stream.failed(ident)
            # Actions with ``error_field`` report the backend's own message (brm).
            body = exc.body if isinstance(exc, ApiError) else None
            message = body.get(field_name) if field_name and isinstance(body, dict) else None
            if isinstance(message, str) and message:
                raise StepError(message) from None
            raise
        if counter:
            counter.step(result if progress.get("detail") == "path" else ident)
        if stream is not None:
            stream.done(ident, Outcome(ident, value=result))
        return result

    concurrency = 1 if pipeline.dim.get("serial") else rt.concurrency
    try:
        outcomes = run_pool(ids, work, concurrency, rt)
    except AuthError as exc:
        rt.log.error(f"authentication error: {exc}")
        return EXIT_AUTH
    if not pipeline.files:
        if stream is not None:
            stream.finish()
        else:
            elements = [e for outcome in outcomes for e in contributed(action, outcome, rt.log)]
            formats.emit(rt.stdout, elements, output, rt.pretty, query)
    return summarize(rt.log, outcomes)


def contributed(action: dict[str, Any], outcome: Outcome, log: Log) -> list[Any]:
    """The output elements one id contributes (none for failures and null bodies)."""
    if outcome.value is None:
        if not outcome.failures:
            log.warn(f"{outcome.ident}: the backend returned null; left out of the output")
        return []
    if action.get("stdout_when"):
        return list(outcome.value)  # listings print as one flat array
    return [outcome.value]


class JsonlStream:
    """Print jsonl lines as soon as an id and every id before it have finished."""

    def __init__(self, rt: Runtime, action: dict[str, Any], ids: list[str]):
        self.rt, self.action = rt, action
        self.index = {ident: n for n, ident in enumerate(ids)}
        self.ready: dict[int, Outcome] = {}
        self.next = 0
        self.total = len(ids)
        self.lock = threading.Lock()

    def done(self, ident: str, outcome: Outcome) -> None:
        with self.lock:
            self.ready[self.index[ident]] = outcome
            self._flush()

    def failed(self, ident: str) -> None:
        self.done(ident, Outcome(ident, failures=[Failure(ident, "", False)]))

    def _flush(self) -> None:
        while self.next in self.ready:
            for element in contributed(self.action, self.ready.pop(self.next), self.rt.log):
                self.rt.stdout.write(formats.jsonl_line(element))
            self.rt.stdout.flush()
            self.next += 1

    def finish(self) -> None:
        with self.lock:
            self.next = self.total


def summarize(log: Log, outcomes: list[Outcome], noun: str = "id(s)") -> int:
    failures = [f for o in outcomes for f in o.failures]
    if not failures:
        return EXIT_OK
    succeeded = sum(1 for o in outcomes if not o.failures or o.value is not None)
    code = EXIT_NETWORK if succeeded == 0 and all(f.network for f in failures) else EXIT_FAILURE
    log.failures(noun, failures, code)
    return code
