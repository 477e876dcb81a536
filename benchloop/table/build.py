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
    Condition,
    Derived,
    Dimension,
    Element,
    Endpoint,
    EndpointName,
    Enumeration,
    EnumerationName,
    FanOutPart,
    Name,
    Option,
    PagedPart,
    Param,
    Part,
    Progress,
    RequestPart,
    Resource,
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
    frozen_map,
)
from .responses import Response, Schemas, frozen_json, plain_json

if TYPE_CHECKING:
    from typing import Any, TypeVar

    R = TypeVar("R")


def record(kind: type[R], data: Any, name: str | None = None, resolve: Any = None) -> R:
    """A record of the table as its model class (``name``: its key in the table)."""
    return msgspec.convert(data if name is None else {**data, KEY: name}, kind, dec_hook=resolve)


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


def transform(data: Any) -> Transform | None:
    """A ``shape:``: a transform's name, or ``{name, with}``."""
    return None if data is None else record(Transform, {"name": data} if isinstance(data, str) else data)


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
        """The entry a name of the table names (``model.Name``: the builder's mapping of them); a
        value the builder made (``StepArgs``) is kept."""
        if isinstance(kind, Name):
            return getattr(self, kind.table)[value]
        if isinstance(value, kind):
            return value
        raise NotImplementedError

    def record(self, kind: type[R], data: Any, name: str | None = None) -> R:
        return record(kind, data, name, self.resolve)

    def optional(self, kind: type[R], data: Any) -> R | None:
        return self.record(kind, data) if data else None

    def make(self, kind: type[R], data: Mapping[str, Any], **given: Any) -> R:
        """A record of the model from the keys of a table entry that are its fields (a null one
        left to its default) and the values worked out here (``given``)."""
        return self.record(kind, {**{k: v for k, v in data.items() if v is not None}, **given})

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
        """A part, its kind from its keys: a step, a waiter alone, a fan-out, paged, else one request."""
        common = dict(name=name, when=Condition.of(data.get("when")), shape=transform(data.get("shape")))
        if data.get("step"):
            step = self.steps[data["step"]]
            return self.make(StepPart, data, **common, step=step, params=self.step_args(step, data.get("with") or {}))
        kind: type[Part] = WaitPart if data.get("wait") else FanOutPart if data.get("each") else (
            PagedPart if data.get("pagination") else RequestPart)
        return self.make(kind, data, **common)

    def dimension(self, name: str, data: Mapping[str, Any], options: tuple[Option, ...], prints: bool = False,
                  listing: bool = False, combine: Combine | None = None) -> Dimension:
        archive = self.optional(Archive, data.get("archive"))
        raw_parts = data.get("parts") or {}
        if archive is not None and not archive.order:
            archive = replace(archive, order=tuple(raw_parts))  # default: the parts' own order
        parts = {n: self.part(n, p) for n, p in raw_parts.items()}
        if archive is not None:  # each part an entry of the archive, around a request or a step
            parts = {n: self.make(ArchiveEntry, {}, name=n, part=part, entry=raw_parts[n]["entry"],
                                  required=bool(raw_parts[n].get("required")), failures=raw_parts[n].get("failures"),
                                  label=raw_parts[n].get("label")) for n, part in parts.items()}
        el = Element.of(data.get("element"))
        # A files action with a combine (bl view) prints the combine's elements when it writes no file.
        output = (outputs.of_dimension(data, raw_parts, parts, el, listing, combine, self.schemas)
                  if prints or combine else None)
        option_name = DIMENSION_KINDS[name].option
        return self.make(Dimension, data, name=name, option=next((o for o in options if o.name == option_name), None),
                         parts=parts, element=el, output=output, archive=archive)

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
        return self.make(Action, data, resource=resource, name=name, options=options, dimensions=dims,
                         command=is_command, combine=combine)

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
                       base_url=Sources.of(data.get("base_url")), auth_header=auth.get("header", "X-API-Key"),
                       key=Sources.of(auth), auth_statuses=tuple(auth.get("statuses") or (401,)),
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
