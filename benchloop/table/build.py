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
schemas, a service's sources, an action's options; what a dimension prints is ``derive``'s).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from . import derive, model
from .lazy import LazyMap, model_lock
from .responses import Response, Schemas, frozen_json, plain_json

if TYPE_CHECKING:
    from typing import Any, TypeVar

    R = TypeVar("R")


def record(kind: type[R], data: Any, key: str | None = None, resolve: Any = None, /, **given: Any) -> R:
    """A record of the model from a value of the table: of a mapping, the keys that are the record's
    fields (a null one left to its default), its ``key`` in the table (an entry's name) and the
    values worked out here (``given``)."""
    if isinstance(data, Mapping):
        data = {**{k: v for k, v in data.items() if v is not None}, **given, **({model.KEY: key} if key else {})}
    return msgspec.convert(data, kind, dec_hook=resolve)


def params(templates: Mapping[str, Any] | None) -> list[model.Param]:
    return [model.Param(k, frozen_json(v)) for k, v in (templates or {}).items()]


def endpoint(name: str, data: Mapping[str, Any], schemas: Schemas) -> model.Endpoint:
    body = data.get("body")
    body = {} if body is None and data["method"] == "POST" else body  # a POST sends an object
    return record(model.Endpoint, data, name=name, query=params(data.get("query")),
                  body=None if body is None else params(body),
                  response=Response.from_data(data.get("response"), schemas))


def option(data: Mapping[str, Any]) -> model.Option:
    """An option as the compiler expands it (``name`` in its body)."""
    return record(model.Option, {k: v for k, v in data.items() if k != "name"}, data["name"])


def argument(name: str, data: Mapping[str, Any]) -> model.Option:
    """A built-in command's argument: a positional option (a choice when it lists them)."""
    body = {k: v for k, v in data.items() if k != "required"}
    return record(model.Option, {"positional": True, "type": "choice" if data.get("choices") else "str",
                                 model.HIDDEN + "required": bool(data.get("required")), **body}, name)


def command(path: str, data: Mapping[str, Any]) -> model.Command:
    return record(model.Command, data, path=path,
                  arguments=[argument(n, a) for n, a in (data.get("arguments") or {}).items()],
                  options=[option({"name": n, **o}) for n, o in (data.get("options") or {}).items()],
                  actions={a: command(f"{path} {a}", b) for a, b in (data.get("actions") or {}).items()})


ENTRY_KEYS = ("entry", "required", "failures", "label")  # an archive part's own keys, beside its part's
# A step's ``with:`` value of these types is decoded as one (a name resolved), any other kept as written.
STEP_TYPES: Mapping[str, Any] = {"endpoint": model.EndpointName, "enumeration": model.EnumerationName,
                                 "progress": model.Progress, "columns": tuple[model.Column, ...]}


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
        self.enumerations = self.entries("enumerations", model.Enumeration)
        self.statuses = self.entries("statuses", model.StatusEnum)
        self.waiters = LazyMap(data.get("waiters") or {}, self.waiter, self.lock)
        self.steps, self.combines = self.entries("steps", model.StepDef), self.entries("combines", model.StepDef)

    def entries(self, table: str, kind: type[R]) -> LazyMap[R]:
        bodies = self.data.get(table) or {}
        return LazyMap(bodies, lambda n: self.record(kind, bodies[n], n), self.lock)

    def resolve(self, kind: Any, value: Any) -> Any:
        """The entry a name of the table names (``model.Name``: the builder's mapping of them); a
        value the builder made (``StepArgs``) is kept."""
        if isinstance(kind, model.Name):
            return getattr(self, kind.table)[value]
        if isinstance(value, kind):
            return value
        raise NotImplementedError

    def record(self, kind: type[R], data: Any, key: str | None = None, /, **given: Any) -> R:
        return record(kind, data, key, self.resolve, **given)

    def waiter(self, name: str) -> model.Waiter:
        waiter = self.record(model.Waiter, self.data["waiters"][name], name)
        if waiter.counts is None or waiter.counts.noun:
            return waiter
        noun = waiter.enumeration.pagination.collection if waiter.enumeration else None  # a cross-entry default
        return replace(waiter, counts=replace(waiter.counts, noun=noun or "items"))

    def step_args(self, step: model.StepDef, given: Mapping[str, Any]) -> model.StepArgs:
        """The ``with:`` values of a step part or a combine, each as its declared type (defaults
        filled in; an optional value left out is absent)."""
        values = {key: (given.get(key, p.default), STEP_TYPES.get(p.type)) for key, p in step.params.items()}
        return model.StepArgs({key: frozen_json(value if kind is None else self.record(kind, plain_json(value)))
                               for key, (value, kind) in values.items() if value is not None})

    def part(self, name: str, data: Mapping[str, Any]) -> model.Part:
        """A part, its kind from its keys: a step, a waiter alone, a fan-out, paged, else one request."""
        common = dict(name=name, when=model.Condition.of(data.get("when")),
                      shape=model.Transform.of(data.get("shape")))
        if data.get("step"):
            step = self.steps[data["step"]]
            return self.record(model.StepPart, data, **common, step=step,
                               params=self.step_args(step, data.get("with") or {}))
        kind: type[model.Part] = model.WaitPart if data.get("wait") else model.FanOutPart if data.get("each") else (
            model.PagedPart if data.get("pagination") else model.RequestPart)
        return self.record(kind, data, **common)

    def dimension(self, name: str, data: Mapping[str, Any], options: tuple[model.Option, ...], prints: bool,
                  listing: bool, combine: model.Combine | None) -> model.Dimension:
        archive = self.record(model.Archive, data["archive"]) if data.get("archive") else None
        raw_parts = data.get("parts") or {}
        if archive is not None and not archive.order:
            archive = replace(archive, order=tuple(raw_parts))  # default: the parts' own order
        parts = {n: self.part(n, p) for n, p in raw_parts.items()}
        if archive is not None:  # each part an entry of the archive (its entry, required, failures, label)
            parts = {n: self.record(model.ArchiveEntry, {k: raw_parts[n].get(k) for k in ENTRY_KEYS}, name=n,
                                    part=part) for n, part in parts.items()}
        el = model.Element.of(data.get("element"))
        # A files action with a combine (bl view) prints the combine's elements when it writes no file.
        output = (derive.dimension_output(data, raw_parts, parts, el, listing, combine, self.schemas)
                  if prints or combine else None)
        option = next((o for o in options if o.name == model.DIMENSION_KINDS[name].option), None)
        return self.record(model.Dimension, data, name=name, option=option, parts=parts, element=el, output=output,
                           archive=archive)

    def combine(self, data: Any) -> model.Combine | None:
        """An action's ``combine:``: a name, or ``{name, with}``."""
        if not data:
            return None
        name, given = (data, {}) if isinstance(data, str) else (data["name"], data.get("with") or {})
        definition = self.combines[name]
        return model.Combine(definition, self.step_args(definition, given))

    def action(self, resource: str, is_command: bool, name: str, data: Mapping[str, Any]) -> model.Action:
        options = tuple(option(o) for o in data["options"])
        combine = self.combine(data.get("combine"))
        listing = bool(data.get("stdout_when"))
        prints = data["writer"] == "stdout" or listing
        dims = {d: self.dimension(d, body, options, prints, listing, combine)
                for d, body in data["dimensions"].items()}
        return self.record(model.Action, data, resource=resource, name=name, options=options, dimensions=dims,
                           command=is_command, combine=combine)

    def resource(self, rname: str) -> model.Resource:
        res = self.data["resources"][rname]
        is_command = bool(res.get("command"))
        bodies = res["actions"]
        actions = LazyMap(bodies, lambda a: self.action(rname, is_command, a, bodies[a]), self.lock)
        # A command's page text is its action's help, read here so that listing the commands
        # builds no action.
        description = next(iter(bodies.values())).get("help") if is_command else None
        return model.Resource(rname, res["help"], actions, is_command, description)

    def service(self, name: str) -> model.Service:
        """A service of ``services:`` (the default one even when the table leaves it out)."""
        data = (self.data.get("services") or {}).get(name, {})
        auth = data.get("auth") or {}
        return self.record(
            model.Service, data, name=name, title=data.get("title", name), help=data.get("help", ""),
            base_url=model.Sources.of(data.get("base_url")), auth_header=auth.get("header", "X-API-Key"),
            key=model.Sources.of(auth), auth_statuses=auth.get("statuses") or (401,), key_required=auth.get("required"),
            derived=[self.record(model.Derived, v, k) for k, v in (data.get("derived") or {}).items()],
            default=name == model.DEFAULT_SERVICE, error=Response.error_body(data.get("error"), self.schemas))

    def spec(self) -> model.Spec:
        lazy, data = self.lock, self.data
        options, commands = data["options"], data.get("commands") or {}
        services = data.get("services") or {}
        return model.Spec(
            endpoints=self.endpoints, enumerations=self.enumerations,
            options=LazyMap(options, lambda n: option({"name": n, **options[n]}), lazy),
            resources=LazyMap(data["resources"], self.resource, lazy),
            services=LazyMap([*services, *([] if model.DEFAULT_SERVICE in services else [model.DEFAULT_SERVICE])],
                             self.service, lazy),
            global_options=tuple(option({"name": n, **o}) for n, o in (data.get("global_options") or {}).items()),
            commands=LazyMap(commands, lambda n: command(n, commands[n]), lazy),
            steps=self.steps, schemas=self.schemas, combines=self.combines, waiters=self.waiters,
            statuses=self.statuses,
            mcp=record(model.Toolsets, data["mcp"]) if data.get("mcp") else model.Toolsets(model.frozen_map(), ()))


def build_model(data: Mapping[str, Any]) -> model.Spec:
    """The model of a compiled table (see ``load.load_spec``)."""
    return Builder(data).spec()
