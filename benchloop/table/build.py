"""Build the typed model (``model.py``) from the compiled table (plain JSON data).

Names are resolved once here: a request's endpoint name becomes its
:class:`~.model.Endpoint`, an ``each:`` its :class:`~.model.Enumeration`, a step's
``with:`` values their declared types (an endpoint or enumeration only where the
step's declaration says so, never by a coincidence of names), and every default is
filled in.  The kind of each part follows from its keys: ``step`` (a step),
``each`` (a fan-out), ``pagination`` (paged), else one request; inside an archive
dimension every part is an archive entry around one of those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec

from . import outputs
from .lazy import LazyMap, model_lock
from .model import (
    DEFAULT_SERVICE,
    DIMENSION_KINDS,
    KEY,
    Acceptor,
    Action,
    Archive,
    ArchiveEntry,
    Column,
    Combine,
    Command,
    Compose,
    Condition,
    Counts,
    Delay,
    Derived,
    Dimension,
    Element,
    Endpoint,
    Enumeration,
    FanOutPart,
    Items,
    Missing,
    Option,
    PagedPart,
    Pagination,
    Param,
    Part,
    Progress,
    RequestPart,
    Resource,
    Section,
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
    Sync,
    Toolsets,
    Transform,
    Until,
    Waiter,
    WaitPart,
    Watch,
    frozen_map,
)
from .outputs import Output
from .responses import Response, Schemas, frozen_json

if TYPE_CHECKING:
    from typing import Any, TypeVar

    R = TypeVar("R")


def sources(data: Mapping[str, Any] | None) -> Sources:
    data = data or {}
    env = data.get("env") or ()
    command = data.get("command") or {}
    return Sources(option=data.get("option"), flag=data.get("flag"),
                   env=(env,) if isinstance(env, str) else tuple(env), config=data.get("config"),
                   default=data.get("default"), command_env=tuple(command.get("env") or ()),
                   command_config=command.get("config"), keyring=data.get("keyring"))


def option(data: Mapping[str, Any]) -> Option:
    return Option(name=data["name"], flags=tuple(data.get("flags") or ()), type=data.get("type", "str"),
                  help=data["help"], default=data.get("default"), choices=tuple(data.get("choices") or ()),
                  min=data.get("min"), negative=data.get("negative"), messages=frozen_map(data.get("messages")),
                  positional=bool(data.get("positional")), placeholder=data.get("metavar"),
                  required=bool(data.get("required")), path=data.get("path"),
                  setting=sources(data["setting"]) if data.get("setting") is not None else None,
                  values=tuple(data.get("values") or ()))


def service(name: str, data: Mapping[str, Any], schemas: Schemas | None = None,
            endpoints: Mapping[str, Endpoint] | None = None) -> Service:
    auth = data.get("auth") or {}
    derived = tuple(Derived(k, v["from"], frozen_map(v.get("map")), v.get("default", ""))
                    for k, v in (data.get("derived") or {}).items())
    return Service(name=name, title=data.get("title", name), help=data.get("help", ""),
                   base_url=sources(data.get("base_url")), auth_header=auth.get("header", "X-API-Key"),
                   key=sources(auth), auth_statuses=tuple(auth.get("statuses") or (401,)),
                   key_required=auth.get("required"), headers=frozen_map(data.get("headers")), derived=derived,
                   default=name == DEFAULT_SERVICE, login_hosts=tuple(data.get("login_hosts") or ()),
                   error=Response.error_body(data.get("error"), schemas if schemas is not None else Schemas()),
                   check=ServiceCheck((endpoints or {})[check["request"]], frozen_json(check.get("with") or {}),
                                      tuple(check.get("accept") or ())) if (check := data.get("check")) else None)


def endpoint(name: str, data: Mapping[str, Any], schemas: Schemas | None = None) -> Endpoint:
    body = data.get("body")
    if body is None and data["method"] == "POST":
        body = {}
    return Endpoint(name=name, method=data["method"], path=data["path"], help=data["help"],
                    query=tuple(Param(k, frozen_json(v)) for k, v in (data.get("query") or {}).items()),
                    body=None if body is None else tuple(Param(k, frozen_json(v)) for k, v in body.items()),
                    response=Response.from_data(data.get("response"), schemas),
                    keep_empty=tuple(data.get("keep_empty") or ()),
                    service=data.get("service", DEFAULT_SERVICE), required=tuple(data.get("required") or ()))


def pagination(data: Mapping[str, Any]) -> Pagination:
    return Pagination(mode=data["mode"], collection=data.get("collection"), id_keys=tuple(data.get("id_keys") or ()),
                      tie_key=data.get("tie_key"), page_size=data.get("page_size"),
                      keep_first=tuple(data.get("keep_first") or ()), progress=data.get("progress"),
                      declared=tuple(k for k in data if k not in ("mode", "progress")))


def keyed(kind: type[R], name: str, data: Mapping[str, Any]) -> R:
    """A record of the table whose name is its key (``model.KEY``)."""
    return msgspec.convert({**data, KEY: name}, kind)


def sync(data: Mapping[str, Any] | None, waiters: Mapping[str, Waiter], statuses: Mapping[str, StatusEnum]
         ) -> Sync | None:
    if not data:
        return None
    until = data.get("until")
    return Sync(data["option"], data["list"], data["key"], data["binds"], tuple(data["state"]),
                tuple(data["refresh"]), data["manifest"],
                Until(until["option"], waiters[until["wait"]], until["status"]["field"],
                      statuses[until["status"]["statuses"]]) if until else None)


def transform(data: Any) -> Transform | None:
    if data is None:
        return None
    if isinstance(data, str):
        return Transform(data)
    return Transform(data["name"], frozen_json(data.get("with") or {}))


def progress(data: Mapping[str, Any] | None) -> Progress | None:
    return msgspec.convert(data, Progress) if data else None


def condition(text: str | None) -> Condition | None:
    if not text:
        return None
    return Condition(tuple(text.removeprefix("not ").split("|")), not text.startswith("not "))


def items(data: Mapping[str, Any] | None) -> Items | None:
    if not data:
        return None
    globs = data.get("filter") or {}
    return Items(collection=data.get("collection"), find=data.get("find"), require=data.get("require"),
                 unique=data.get("unique"), add=frozen_json(data.get("add") or {}), field=globs.get("field"),
                 include=globs.get("include"), exclude=globs.get("exclude"), label=data.get("label", "listing"))


def missing(data: Mapping[str, Any] | None) -> Missing | None:
    return msgspec.convert(data, Missing) if data else None


def element(data: Any) -> Element:
    if data in (None, "part"):
        return Element("part")
    if isinstance(data, str):
        return Element("part", part=data)
    if "compose" in data:
        return Element("object", id_key=data["compose"])
    return Element("shape", shape=Transform(data["shape"], frozen_json(data.get("with") or {})))


def step_def(name: str, data: Mapping[str, Any]) -> StepDef:
    params = {key: StepParam(key, p["type"], p.get("help", ""), bool(p.get("optional")), tuple(p.get("binds") or ()),
                             frozen_json(p.get("default")))
              for key, p in (data.get("with") or {}).items()}
    return StepDef(name, data.get("help", ""), frozen_map(params), frozen_json(data.get("output")))


def command(path: str, data: Mapping[str, Any]) -> Command:
    return Command(
        path=path, help=data["help"], description=data.get("description"), notes=tuple(data.get("notes") or ()),
        arguments=tuple(option({"name": n, "positional": True, "type": "choice" if a.get("choices") else "str", **a})
                        for n, a in (data.get("arguments") or {}).items()),
        options=tuple(option({"name": n, **o}) for n, o in (data.get("options") or {}).items()),
        actions=frozen_map({a: command(f"{path} {a}", body) for a, body in (data.get("actions") or {}).items()}))


class Builder:
    """Turns the compiled table (plain data) into the model, resolving names once.

    Every named entry (resources and their actions, endpoints, enumerations, options,
    services, built-in commands, steps, combines, shared response schemas) is built on
    first use (:class:`~.lazy.LazyMap`): a command builds its own action
    and what it names, a help page only what it shows.
    """

    def __init__(self, data: Mapping[str, Any]):
        self.data = data
        self.lock = model_lock()
        self.schemas = Schemas(data.get("schemas"), self.lock)
        endpoints = data["endpoints"]
        self.endpoints = LazyMap(endpoints, lambda n: endpoint(n, endpoints[n], self.schemas), self.lock)
        enumerations = data.get("enumerations") or {}
        self.enumerations = LazyMap(enumerations, lambda n: self.enumeration(n, enumerations[n]), self.lock)
        steps, combines = data.get("steps") or {}, data.get("combines") or {}
        self.steps = LazyMap(steps, lambda n: step_def(n, steps[n]), self.lock)
        self.combines = LazyMap(combines, lambda n: step_def(n, combines[n]), self.lock)
        self.statuses = LazyMap(data.get("statuses") or {}, self.status_enum, self.lock)
        self.waiters = LazyMap(data.get("waiters") or {}, self.waiter, self.lock)

    def enumeration(self, name: str, data: Mapping[str, Any]) -> Enumeration:
        probe = data.get("empty_probe")
        return Enumeration(name, data.get("help", ""), self.endpoints[data["request"]],
                           pagination(data["pagination"]), data["binds"],
                           self.endpoints[probe] if probe else None)

    def status_enum(self, name: str) -> StatusEnum:
        return keyed(StatusEnum, name, (self.data.get("statuses") or {})[name])

    def acceptor(self, data: Mapping[str, Any]) -> Acceptor:
        expected = data.get("expected")
        statuses = within = None
        if isinstance(expected, dict):
            statuses, within = self.statuses[expected["statuses"]], expected.get("set", "final")
            expected = ()
        elif not isinstance(expected, list):
            expected = () if expected is None else [expected]
        return Acceptor(state=data["state"], matcher=data.get("matcher", "path"), argument=data.get("argument"),
                        each=data.get("each"),
                        expected=tuple(frozen_json(e) for e in expected), statuses=statuses,
                        within=within or "final", fold=bool(data.get("fold")), follow=data.get("waiter"),
                        binds=frozen_map({k: tuple(v) for k, v in (data.get("binds") or {}).items()}))

    def waiter(self, name: str) -> Waiter:
        data = (self.data.get("waiters") or {})[name]
        acceptors = tuple(self.acceptor(a) for a in data["acceptors"])
        counts = data.get("counts")
        enumeration = self.enumerations[data["enumeration"]] if data.get("enumeration") else None
        noun = ((counts or {}).get("noun") or (enumeration.pagination.collection if enumeration else None)
                or "items")
        result = data.get("result")
        return Waiter(
            name=name, help=data.get("help", ""), acceptors=acceptors, label=data["label"],
            request=self.endpoints[data["request"]] if data.get("request") else None, enumeration=enumeration,
            otherwise=data.get("otherwise", "retry"),
            result=tuple(result) if isinstance(result, list) else result,
            delay=msgspec.convert(data.get("delay") or {}, Delay),
            timeout=data.get("timeout"), message=data.get("message"), progress=data.get("progress"),
            counts=Counts(counts["argument"], self.statuses[counts["statuses"]] if counts.get("statuses") else None,
                          noun, counts.get("each")) if counts else None,
            followed=frozen_map({a.follow: self.waiters[a.follow] for a in acceptors if a.follow}))

    def step_args(self, step: StepDef, given: Mapping[str, Any]) -> StepArgs:
        """The ``with:`` values of a step part or a combine, each as its declared type (defaults
        filled in)."""
        values: dict[str, Any] = {}
        for key, param in step.params.items():
            value = given.get(key, param.default)
            if value is None:
                continue  # an optional value left out
            if param.type == "endpoint":
                value = self.endpoints[value]
            elif param.type == "enumeration":
                value = self.enumerations[value]
            elif param.type == "progress":
                value = progress(value)
            elif param.type == "columns":
                value = tuple(Column(c["name"], c["from"], c.get("type", "json")) for c in value)
            values[key] = frozen_json(value)
        return StepArgs(values)

    def part(self, name: str, data: Mapping[str, Any]) -> Part:
        common: dict[str, Any] = dict(name=name, when=condition(data.get("when")), shape=transform(data.get("shape")),
                                      file=data.get("file"), format=data.get("format"),
                                      failure_id=data.get("failure_id"), absent=data.get("absent"))
        request = self.endpoints[data["request"]] if data.get("request") else None
        if data.get("step"):
            step = self.steps[data["step"]]
            return StepPart(**common, step=step, params=self.step_args(step, data.get("with") or {}),
                            wait=self.waiters[data["wait"]] if data.get("wait") else None,
                            items=items(data.get("items")),
                            missing=missing(data.get("missing")))
        if data.get("wait"):
            return WaitPart(**common, wait=self.waiters[data["wait"]])
        assert request is not None, f"part {name} has neither request nor step (the lints refuse this)"
        if data.get("each"):
            return FanOutPart(**common, each=self.enumerations[data["each"]], request=request,
                              progress=progress(data.get("progress")))
        if data.get("pagination"):
            probe = data.get("empty_probe")
            return PagedPart(**common, request=request, pagination=pagination(data["pagination"]),
                             empty_probe=self.endpoints[probe] if probe else None,
                             empty_probe_mode=data.get("empty_probe_mode", "fail"), count=data.get("count"))
        return RequestPart(**common, request=request, items=items(data.get("items")))

    def archive_entry(self, name: str, data: Mapping[str, Any]) -> ArchiveEntry:
        inner = self.part(name, data)
        assert isinstance(inner, (RequestPart, StepPart)), f"archive part {name} must be a request or a step"
        return ArchiveEntry(name=name, part=inner, entry=data["entry"], required=bool(data.get("required")),
                            failures=data.get("failures"), label=data.get("label"))

    # ------------------------------------------------------------ outputs
    def part_output(self, data: Mapping[str, Any], part: Part) -> Output | None:
        """What one part's value is (see ``outputs``): declared, or worked out of its answer
        and transform, or of its step's declaration; None when neither says."""
        if data.get("output"):
            return outputs.declared(data["output"], self.schemas)
        if isinstance(part, StepPart):
            declared = part.step.output
            if not declared:
                return None
            if "columns" in declared:
                return outputs.of_columns(part.params.get(declared["columns"]) or (), self.schemas)
            return outputs.declared(declared, self.schemas)
        if isinstance(part, WaitPart):  # the last answer of its request, when it produces that
            waiter = part.wait
            if waiter.result is not None or waiter.request is None:
                return None
            shape = part.shape
            return outputs.of_response(waiter.request.response, shape.name if shape else None,
                                       shape.params if shape else {}, self.schemas)
        items = getattr(part, "items", None)
        if isinstance(part, RequestPart) and items is not None and part.shape is None:
            return outputs.of_items(part.request.response, items.collection, items.find, tuple(items.add),
                                    self.schemas)
        if isinstance(part, (RequestPart, PagedPart)) and items is None:
            shape = part.shape
            return outputs.of_response(part.request.response, shape.name if shape else None,
                                       shape.params if shape else {}, self.schemas)
        return None

    def dimension_output(self, data: Mapping[str, Any], raw_parts: Mapping[str, Any], parts: Mapping[str, Part],
                         el: Element, listing: bool, combine: Combine | None) -> Output | None:
        """What one printed element of a dimension is (None: it cannot be worked out; the
        lints refuse that for a printing action)."""
        if data.get("output"):
            found: Output | None = outputs.declared(data["output"], self.schemas)
        else:
            each = {n: self.part_output(raw_parts[n], p) for n, p in parts.items()}
            if el.kind == "object" and el.id_key and all(o is not None for o in each.values()):
                found = outputs.of_object(el.id_key, {n: o for n, o in each.items() if o is not None}, self.schemas)
            elif el.kind == "part" and el.part:
                found = each.get(el.part)
            elif el.kind == "part" and all(o is not None for o in each.values()):
                found = outputs.one_of([o for o in each.values() if o is not None], self.schemas)
            else:
                found = None
        if found is not None and listing:
            found = outputs.each_row(found)  # a listing prints its entries one by one
        if combine is not None:
            declared = combine.definition.output
            if declared == "rows":
                found = outputs.each_row(found) if found is not None else None
            elif declared:
                found = outputs.declared(declared, self.schemas)
            else:
                found = None
        return found

    def dimension(self, name: str, data: Mapping[str, Any], options: tuple[Option, ...], prints: bool = False,
                  listing: bool = False, combine: Combine | None = None) -> Dimension:
        option_name = DIMENSION_KINDS[name].option
        opt = next((o for o in options if o.name == option_name), None)
        select = data.get("select")
        archive = data.get("archive")
        raw_parts = data.get("parts") or {}
        parts: dict[str, Part] = {n: self.archive_entry(n, p) if archive else self.part(n, p)
                                  for n, p in raw_parts.items()}
        el = element(data.get("element"))
        # A files action with a combine (bl view) prints the combine's elements when it writes no file.
        output = self.dimension_output(data, raw_parts, parts, el, listing, combine) if prints or combine else None
        return Dimension(
            name=name, option=opt, parts=frozen_map(parts), element=el, output=output,
            select=Select(select["option"], frozen_map({k: tuple(v) for k, v in select["choices"].items()}))
            if select else None,
            archive=Archive(archive["file"], archive.get("kind", ""), self.endpoints[archive["task_request"]],
                            tuple(archive.get("order") or raw_parts), progress(archive.get("progress")))
            if archive else None,
            serial=bool(data.get("serial")), progress=progress(data.get("progress")),
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
        compose = data.get("compose")
        combine = self.combine(data.get("combine"))
        listing = bool(data.get("stdout_when"))
        prints = data["writer"] == "stdout" or listing
        dims = {d: self.dimension(d, body, options, prints, listing, combine)
                for d, body in data["dimensions"].items()}
        return Action(
            resource=resource, name=name, help=data["help"], writer=data["writer"], options=options,
            dimensions=frozen_map(dims),
            command=is_command, stdout_when=data.get("stdout_when"),
            compose=Compose(compose["option"], tuple(compose["dimensions"]), tuple(compose["default"]),
                            frozen_map({n: Section(n, s["resource"], s["action"], frozen_json(s.get("options") or {}))
                                        for n, s in compose["sections"].items()}),
                            sync(compose.get("sync"), self.waiters, self.statuses)) if compose else None,
            max_ids=data.get("max_ids"), max_ids_message=data.get("max_ids_message"),
            error_field=data.get("error_field"), progress=progress(data.get("progress")),
            extra_args=bool(data.get("extra_args")), combine=combine,
            min_ids=data.get("min_ids"), min_ids_message=data.get("min_ids_message"),
            watch=Watch(data["watch"]["option"], self.waiters[data["watch"]["waiter"]]) if data.get("watch") else None)

    def resource(self, rname: str) -> Resource:
        res = self.data["resources"][rname]
        is_command = bool(res.get("command"))
        bodies = res["actions"]
        actions = LazyMap(bodies, lambda a: self.action(rname, is_command, a, bodies[a]), self.lock)
        # A command's page text is its action's help, read here so that listing the commands
        # builds no action.
        description = next(iter(bodies.values())).get("help") if is_command else None
        return Resource(rname, res["help"], actions, is_command, description)

    def spec(self) -> Spec:
        lazy, data = self.lock, self.data
        options, commands = data["options"], data.get("commands") or {}
        services = data.get("services") or {}
        return Spec(
            endpoints=self.endpoints, enumerations=self.enumerations,
            options=LazyMap(options, lambda n: option({"name": n, **options[n]}), lazy),
            resources=LazyMap(data["resources"], self.resource, lazy),
            services=LazyMap([*services, *([] if DEFAULT_SERVICE in services else [DEFAULT_SERVICE])],
                             lambda n: service(n, services.get(n, {}), self.schemas, self.endpoints), lazy),
            global_options=tuple(option({"name": n, **o}) for n, o in (data.get("global_options") or {}).items()),
            commands=LazyMap(commands, lambda n: command(n, commands[n]), lazy),
            steps=self.steps, schemas=self.schemas, combines=self.combines, waiters=self.waiters,
            statuses=self.statuses,
            mcp=msgspec.convert(data["mcp"], Toolsets) if data.get("mcp") else Toolsets(frozen_map(), ()))


def build_model(data: Mapping[str, Any]) -> Spec:
    """The model of a compiled table (see ``load.load_spec``)."""
    return Builder(data).spec()
