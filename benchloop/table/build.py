"""Build the typed model (``model.py``) from the compiled table (plain JSON data).

Most records of the model are the table's own (``model.py`` declares each once, for the
compiler's decoding and for the engine), so they are decoded here by ``msgspec.convert``
(:meth:`Builder.record`): a field that names another entry (``model.Name``: an endpoint, an
enumeration, a waiter, a status enumeration) becomes the entry it names (:meth:`Builder.resolve`,
built on first use).  What stays here is name resolution no type says and the defaults that come
from another entry: the kind of each part (``step``, ``wait``, ``each``, ``pagination``, else one
request; inside an archive dimension an archive entry around one of those), a step's ``with:``
values typed by its declaration (an endpoint or enumeration only where it says so, never by a
coincidence of names), the records whose model gathers several entries (an endpoint's response
schemas, a service's sources, an action's options and outputs: ``outputs.of_dimension``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from . import outputs
from .lazy import LazyMap, model_lock
from .model import (
    DEFAULT_SERVICE,
    DIMENSION_KINDS,
    HIDDEN,
    KEY,
    Action,
    Archive,
    ArchiveEntry,
    Column,
    Combine,
    Command,
    Compose,
    Condition,
    Derived,
    Dimension,
    Element,
    Endpoint,
    EndpointName,
    Enumeration,
    EnumerationName,
    FanOutPart,
    Items,
    Missing,
    Name,
    Option,
    PagedPart,
    Pagination,
    Param,
    Part,
    Progress,
    RequestPart,
    Resource,
    Select,
    Service,
    ServiceCheck,
    Sources,
    Spec,
    StatusEnum,
    StepArgs,
    StepDef,
    StepParam,
    StepPart,
    Toolsets,
    Transform,
    Waiter,
    WaitPart,
    Watch,
    frozen_map,
)
from .responses import Response, Schemas, frozen_json, plain_json

if TYPE_CHECKING:
    from typing import Any, TypeVar

    R = TypeVar("R")


def record(kind: type[R], data: Any, name: str | None = None, resolve: Any = None) -> R:
    """A record of the table as its model class (``name``: its key in the table)."""
    return msgspec.convert(data if name is None else {**data, KEY: name}, kind, dec_hook=resolve)


def sources(data: Mapping[str, Any] | None) -> Sources:
    """A service's ``base_url:`` or ``auth:`` (its ``command:`` flattened)."""
    data, command = data or {}, (data or {}).get("command") or {}
    return Sources(option=data.get("option"), flag=data.get("flag"), env=tuple(data.get("env") or ()),
                   config=data.get("config"), default=data.get("default"), keyring=data.get("keyring"),
                   command_env=tuple(command.get("env") or ()), command_config=command.get("config"))


def endpoint(name: str, data: Mapping[str, Any], schemas: Schemas | None = None) -> Endpoint:
    body = data.get("body")
    body = {} if body is None and data["method"] == "POST" else body  # a POST sends an object
    return Endpoint(name=name, method=data["method"], path=data["path"], help=data["help"],
                    query=tuple(Param(k, frozen_json(v)) for k, v in (data.get("query") or {}).items()),
                    body=None if body is None else tuple(Param(k, frozen_json(v)) for k, v in body.items()),
                    response=Response.from_data(data.get("response"), schemas),
                    keep_empty=tuple(data.get("keep_empty") or ()),
                    service=data.get("service", DEFAULT_SERVICE), required=tuple(data.get("required") or ()))


def option(data: Mapping[str, Any]) -> Option:
    """An option as the compiler expands it (``name`` in its body)."""
    return record(Option, {k: v for k, v in data.items() if k != "name"}, data["name"])


def argument(name: str, data: Mapping[str, Any]) -> Option:
    """A built-in command's argument: a positional option (a choice when it lists them)."""
    body = {k: v for k, v in data.items() if k != "required"}
    return record(Option, {"positional": True, "type": "choice" if data.get("choices") else "str",
                           HIDDEN + "required": bool(data.get("required")), **body}, name)


def command(path: str, data: Mapping[str, Any]) -> Command:
    return Command(
        path=path, help=data["help"], description=data.get("description"), notes=tuple(data.get("notes") or ()),
        arguments=tuple(argument(n, a) for n, a in (data.get("arguments") or {}).items()),
        options=tuple(option({"name": n, **o}) for n, o in (data.get("options") or {}).items()),
        actions=frozen_map({a: command(f"{path} {a}", body) for a, body in (data.get("actions") or {}).items()}))


def step_def(name: str, data: Mapping[str, Any]) -> StepDef:
    params = {key: record(StepParam, p, key) for key, p in (data.get("with") or {}).items()}
    return StepDef(name, data.get("help", ""), frozen_map(params), frozen_json(data.get("output")))


def condition(text: str | None) -> Condition | None:
    return Condition(tuple(text.removeprefix("not ").split("|")), not text.startswith("not ")) if text else None


def transform(data: Any) -> Transform | None:
    return None if data is None else record(Transform, {"name": data} if isinstance(data, str) else data)


def element(data: Any) -> Element:
    """A dimension's ``element:``: absent (the one selected part), a part's name, or a mapping."""
    if data is None or isinstance(data, str):
        return Element("part", part=None if data in (None, "part") else data)
    if "compose" in data:
        return Element("object", id_key=data["compose"])
    return Element("shape", shape=transform({"name": data["shape"], "with": data.get("with") or {}}))


# A step's ``with:`` value of these types is decoded as one (a name resolved), any other kept as written.
STEP_TYPES: Mapping[str, Any] = {"endpoint": EndpointName, "enumeration": EnumerationName, "progress": Progress,
                                 "columns": tuple[Column, ...]}


class Builder:
    """Turns the compiled table (plain data) into the model, resolving names once.

    Every named entry (resources and their actions, endpoints, enumerations, options,
    services, built-in commands, steps, combines, waiters, status enumerations, shared response
    schemas) is built on first use (:class:`~.lazy.LazyMap`): a command builds its own action
    and what it names, a help page only what it shows.
    """

    def __init__(self, data: Mapping[str, Any]):
        self.data, self.lock = data, model_lock()
        self.schemas = Schemas(data.get("schemas"), self.lock)
        endpoints = data["endpoints"]
        self.endpoints = LazyMap(endpoints, lambda n: endpoint(n, endpoints[n], self.schemas), self.lock)
        self.enumerations = self.entries("enumerations", Enumeration)
        self.statuses = self.entries("statuses", StatusEnum)
        self.waiters = LazyMap(data.get("waiters") or {}, self.waiter, self.lock)
        steps, combines = data.get("steps") or {}, data.get("combines") or {}
        self.steps = LazyMap(steps, lambda n: step_def(n, steps[n]), self.lock)
        self.combines = LazyMap(combines, lambda n: step_def(n, combines[n]), self.lock)

    def entries(self, table: str, kind: type[R]) -> LazyMap[R]:
        bodies = self.data.get(table) or {}
        return LazyMap(bodies, lambda n: self.record(kind, bodies[n], n), self.lock)

    def resolve(self, kind: Any, value: Any) -> Any:
        """The entry a name of the table names (``model.Name``: the builder's mapping of them)."""
        if isinstance(kind, Name):
            return getattr(self, kind.table)[value]
        raise NotImplementedError

    def record(self, kind: type[R], data: Any, name: str | None = None) -> R:
        return record(kind, data, name, self.resolve)

    def optional(self, kind: type[R], data: Any) -> R | None:
        return self.record(kind, data) if data else None

    def waiter(self, name: str) -> Waiter:
        waiter = self.record(Waiter, self.data["waiters"][name], name)
        if waiter.counts is None or waiter.counts.noun:
            return waiter
        noun = waiter.enumeration.pagination.collection if waiter.enumeration else None  # a cross-entry default
        return replace(waiter, counts=replace(waiter.counts, noun=noun or "items"))

    def step_args(self, step: StepDef, given: Mapping[str, Any]) -> StepArgs:
        """The ``with:`` values of a step part or a combine, each as its declared type (defaults
        filled in; an optional value left out is absent)."""
        values = {key: given.get(key, param.default) for key, param in step.params.items()}
        return StepArgs({key: frozen_json(self.record(STEP_TYPES[step.params[key].type], plain_json(value))
                                          if step.params[key].type in STEP_TYPES else value)
                         for key, value in values.items() if value is not None})

    def part(self, name: str, data: Mapping[str, Any]) -> Part:
        common: dict[str, Any] = dict(name=name, when=condition(data.get("when")), shape=transform(data.get("shape")),
                                      file=data.get("file"), format=data.get("format"),
                                      failure_id=data.get("failure_id"), absent=data.get("absent"))
        wait = self.waiters[data["wait"]] if data.get("wait") else None
        if data.get("step"):
            step = self.steps[data["step"]]
            return StepPart(**common, step=step, params=self.step_args(step, data.get("with") or {}), wait=wait,
                            items=self.optional(Items, data.get("items")),
                            missing=self.optional(Missing, data.get("missing")))
        if wait is not None:
            return WaitPart(**common, wait=wait)
        request = self.endpoints[data["request"]]
        if data.get("each"):
            return FanOutPart(**common, each=self.enumerations[data["each"]], request=request,
                              progress=self.optional(Progress, data.get("progress")))
        if data.get("pagination"):
            probe = data.get("empty_probe")
            return PagedPart(**common, request=request, pagination=self.record(Pagination, data["pagination"]),
                             empty_probe=self.endpoints[probe] if probe else None,
                             empty_probe_mode=data.get("empty_probe_mode", "fail"), count=data.get("count"))
        return RequestPart(**common, request=request, items=self.optional(Items, data.get("items")))

    def archive_entry(self, name: str, data: Mapping[str, Any]) -> ArchiveEntry:
        inner = self.part(name, data)
        assert isinstance(inner, (RequestPart, StepPart)), f"archive part {name} must be a request or a step"
        return ArchiveEntry(name=name, part=inner, entry=data["entry"], required=bool(data.get("required")),
                            failures=data.get("failures"), label=data.get("label"))

    def dimension(self, name: str, data: Mapping[str, Any], options: tuple[Option, ...], prints: bool = False,
                  listing: bool = False, combine: Combine | None = None) -> Dimension:
        archive = self.optional(Archive, data.get("archive"))
        raw_parts = data.get("parts") or {}
        if archive is not None and not archive.order:
            archive = replace(archive, order=tuple(raw_parts))  # default: the parts' own order
        parts: dict[str, Part] = {n: self.archive_entry(n, p) if archive else self.part(n, p)
                                  for n, p in raw_parts.items()}
        el = element(data.get("element"))
        # A files action with a combine (bl view) prints the combine's elements when it writes no file.
        output = (outputs.of_dimension(data, raw_parts, parts, el, listing, combine, self.schemas)
                  if prints or combine else None)
        option_name = DIMENSION_KINDS[name].option
        return Dimension(
            name=name, option=next((o for o in options if o.name == option_name), None), parts=frozen_map(parts),
            element=el, output=output, select=self.optional(Select, data.get("select")), archive=archive,
            serial=bool(data.get("serial")), progress=self.optional(Progress, data.get("progress")),
            aggregate_failures=data.get("aggregate_failures"), composite=bool(data.get("composite")))

    def combine(self, data: Any) -> Combine | None:
        """An action's ``combine:``: a name, or ``{name, with}``."""
        if not data:
            return None
        name, given = (data, {}) if isinstance(data, str) else (data["name"], data.get("with") or {})
        definition = self.combines[name]
        return Combine(definition, self.step_args(definition, given))

    def action(self, resource: str, is_command: bool, name: str, data: Mapping[str, Any]) -> Action:
        options = tuple(option(o) for o in data["options"])
        combine = self.combine(data.get("combine"))
        listing = bool(data.get("stdout_when"))
        prints = data["writer"] == "stdout" or listing
        dims = {d: self.dimension(d, body, options, prints, listing, combine)
                for d, body in data["dimensions"].items()}
        return Action(
            resource=resource, name=name, help=data["help"], writer=data["writer"], options=options,
            dimensions=frozen_map(dims), command=is_command, stdout_when=data.get("stdout_when"),
            compose=self.optional(Compose, data.get("compose")), max_ids=data.get("max_ids"),
            max_ids_message=data.get("max_ids_message"), error_field=data.get("error_field"),
            progress=self.optional(Progress, data.get("progress")), extra_args=bool(data.get("extra_args")),
            combine=combine, min_ids=data.get("min_ids"), min_ids_message=data.get("min_ids_message"),
            watch=self.optional(Watch, data.get("watch")))

    def resource(self, rname: str) -> Resource:
        res = self.data["resources"][rname]
        is_command = bool(res.get("command"))
        bodies = res["actions"]
        actions = LazyMap(bodies, lambda a: self.action(rname, is_command, a, bodies[a]), self.lock)
        # A command's page text is its action's help, read here so that listing the commands
        # builds no action.
        description = next(iter(bodies.values())).get("help") if is_command else None
        return Resource(rname, res["help"], actions, is_command, description)

    def service(self, name: str) -> Service:
        """A service of ``services:`` (the default one even when the table leaves it out)."""
        data = (self.data.get("services") or {}).get(name, {})
        auth = data.get("auth") or {}
        return Service(name=name, title=data.get("title", name), help=data.get("help", ""),
                       base_url=sources(data.get("base_url")), auth_header=auth.get("header", "X-API-Key"),
                       key=sources(auth), auth_statuses=tuple(auth.get("statuses") or (401,)),
                       key_required=auth.get("required"), headers=frozen_map(data.get("headers")),
                       derived=tuple(self.record(Derived, v, k) for k, v in (data.get("derived") or {}).items()),
                       default=name == DEFAULT_SERVICE, login_hosts=tuple(data.get("login_hosts") or ()),
                       error=Response.error_body(data.get("error"), self.schemas),
                       check=self.optional(ServiceCheck, data.get("check")))

    def spec(self) -> Spec:
        lazy, data = self.lock, self.data
        options, commands = data["options"], data.get("commands") or {}
        services = data.get("services") or {}
        return Spec(
            endpoints=self.endpoints, enumerations=self.enumerations,
            options=LazyMap(options, lambda n: option({"name": n, **options[n]}), lazy),
            resources=LazyMap(data["resources"], self.resource, lazy),
            services=LazyMap([*services, *([] if DEFAULT_SERVICE in services else [DEFAULT_SERVICE])],
                             self.service, lazy),
            global_options=tuple(option({"name": n, **o}) for n, o in (data.get("global_options") or {}).items()),
            commands=LazyMap(commands, lambda n: command(n, commands[n]), lazy),
            steps=self.steps, schemas=self.schemas, combines=self.combines, waiters=self.waiters,
            statuses=self.statuses, mcp=record(Toolsets, data["mcp"]) if data.get("mcp") else Toolsets(frozen_map(), ()))


def build_model(data: Mapping[str, Any]) -> Spec:
    """The model of a compiled table (see ``load.load_spec``)."""
    return Builder(data).spec()
