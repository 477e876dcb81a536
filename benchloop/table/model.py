"""The typed model of the endpoint table: what every consumer reads.

``specload`` gives the compiled table as plain JSON data (validated by the
schema, option references expanded, lints passed).  This module turns it once
into immutable, typed objects - :class:`Spec`, :class:`Endpoint`,
:class:`Enumeration`, :class:`Option`, :class:`Resource`, :class:`Action`,
:class:`Dimension`, :class:`Part`, :class:`Pagination`, ... - with defaults
resolved and the facts that several consumers need computed in one place:
id options of a dimension, usage lines, flag defaults, the variables a
template binds, request parameters with their types.

The command builder, help pages, ``bl describe``, the OpenAPI export,
completion, the docs generator, the engine, the steps and the sandbox routes
all read this model; only the loader, the compiler and the lints walk the raw
table (botocore keeps the same split between its JSON data and ``model.py``).

The model is cheap to build (a few hundred small objects from the cached
JSON) and is built once per process by :func:`load_model`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .responses import Response, Schemas
from .templates import PAGE_VARS, lone_var, template_vars

PROG = "bl"
DIMENSIONS = ("group", "job", "task")
# The option that carries the ids of each dimension.
DIMENSION_OPTIONS = {"group": "group", "job": "job", "task": "task_id"}
OPTION_DIMENSIONS = {option: dim for dim, option in DIMENSION_OPTIONS.items()}
FLAG_TYPES = ("flag", "bool")
LIST_TYPES = ("ids", "list", "ints")
# The type of a request value whose template is one option of that table type.
_VALUE_TYPES = {"flag": "boolean", "bool": "boolean", "int": "integer", "float": "number",
                "ints": "integer-array", "ids": "string-array", "list": "string-array"}


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


# ------------------------------------------------------------------ options
@dataclass(frozen=True)
class Option:
    """One command-line option (a table option, a global option or a built-in's)."""

    name: str
    flags: tuple[str, ...]
    type: str
    help: str
    default: Any = None
    choices: tuple[str, ...] = ()
    min: int | None = None
    negative: str | None = None
    messages: Mapping[str, str] = field(default_factory=lambda: _frozen(None))
    positional: bool = False  # given by position (``GROUP_ID[@CLUSTER]``), not by a flag
    placeholder: str | None = None  # the table's ``metavar`` (a positional's name in usage lines)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Option:
        return cls(name=data["name"], flags=tuple(data.get("flags") or ()), type=data["type"], help=data["help"],
                   default=data.get("default"), choices=tuple(data.get("choices") or ()),
                   min=data.get("min"), negative=data.get("negative"), messages=_frozen(data.get("messages")),
                   positional=bool(data.get("positional")), placeholder=data.get("metavar"))

    @property
    def flag(self) -> str:
        """The first (canonical) flag, as messages name the option (a positional: its metavar)."""
        return self.flags[0] if self.flags else self.metavar

    @property
    def long(self) -> tuple[str, ...]:
        return tuple(f for f in self.flags if f.startswith("--"))

    @property
    def short(self) -> tuple[str, ...]:
        return tuple(f for f in self.flags if not f.startswith("--"))

    @property
    def is_flag(self) -> bool:
        return self.type in FLAG_TYPES

    @property
    def takes_value(self) -> bool:
        return not self.is_flag

    @property
    def repeatable(self) -> bool:
        return self.type in LIST_TYPES

    @property
    def reads_stdin(self) -> bool:
        return self.type in ("ids", "ints")

    @property
    def default_value(self) -> Any:
        """The value a command sees when the option is not given (a flag is False)."""
        return bool(self.default) if self.type == "flag" else self.default

    @property
    def metavar(self) -> str:
        if self.placeholder:
            return self.placeholder
        if self.is_flag:
            return ""
        if self.type == "choice":
            return "{" + ",".join(self.choices) + "}"
        return {"ids": "ID...", "list": "NAME...", "ints": "N...", "int": "INT",
                "float": "SECONDS"}.get(self.type, "TEXT")

    @property
    def value_type(self) -> str:
        """The JSON type of the option's value: string, integer, number, boolean, or X-array."""
        return _VALUE_TYPES.get(self.type, "string")

    def message(self, key: str, default: str) -> str:
        return self.messages.get(key) or default


# ----------------------------------------------------------------- services
DEFAULT_SERVICE = "benchloop"


@dataclass(frozen=True)
class Sources:
    """Where one setting of a service comes from, first found wins: the option of the running
    command (its flag), environment variables, a key of the configuration file, a default."""

    option: str | None = None
    flag: str | None = None
    env: tuple[str, ...] = ()
    config: str | None = None
    default: str | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Sources:
        data = data or {}
        env = data.get("env") or ()
        return cls(option=data.get("option"), flag=data.get("flag"),
                   env=(env,) if isinstance(env, str) else tuple(env), config=data.get("config"),
                   default=data.get("default"))

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.flag:
            out["flag"] = self.flag
        if self.env:
            out["env"] = list(self.env)
        if self.config:
            out["config"] = self.config
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Derived:
    """A template variable computed from another one (``env`` from ``cluster``)."""

    name: str
    source: str
    values: Mapping[str, str]
    default: str


@dataclass(frozen=True)
class Service:
    """One backend the table talks to: its base URL, its key and the headers of every request.

    The default service (Benchloop) is configured by the global options and the
    configuration file (``config.py``); another service's base URL and key come
    from the sources its table entry lists.  Each service gets its own HTTP
    client, so a key never reaches another service's origin.
    """

    name: str
    title: str
    help: str
    base_url: Sources
    auth_header: str
    key: Sources
    auth_statuses: tuple[int, ...] = (401,)
    key_required: str | None = None  # the usage error when no key is found
    headers: Mapping[str, str] = field(default_factory=lambda: _frozen(None))  # name -> template
    derived: tuple[Derived, ...] = ()
    default: bool = False
    # Hosts of the service's SSO login page: a download redirected there is an authentication
    # failure (exit 3), whatever the words in any other URL (``http.is_login_url``).
    login_hosts: tuple[str, ...] = ()
    # The schema of its error bodies (``error:``; every status >= 400 of its endpoints).
    error: Response | None = None

    @classmethod
    def from_data(cls, name: str, data: Mapping[str, Any], schemas: Schemas | None = None) -> Service:
        auth = data.get("auth") or {}
        derived = tuple(Derived(k, v["from"], _frozen(v.get("map")), v.get("default", ""))
                        for k, v in (data.get("derived") or {}).items())
        return cls(name=name, title=data.get("title", name), help=data.get("help", ""),
                   base_url=Sources.from_data(data.get("base_url")), auth_header=auth.get("header", "X-API-Key"),
                   key=Sources.from_data(auth), auth_statuses=tuple(auth.get("statuses") or (401,)),
                   key_required=auth.get("required"), headers=_frozen(data.get("headers")), derived=derived,
                   default=name == DEFAULT_SERVICE, login_hosts=tuple(data.get("login_hosts") or ()),
                   error=Response.error_body(data.get("error"), schemas if schemas is not None else Schemas()))

    @property
    def variables(self) -> list[str]:
        """The variables its header templates need (derived ones replaced by their sources)."""
        derived = {d.name: d.source for d in self.derived}
        return list(dict.fromkeys(derived.get(v, v) for v in template_vars(*self.headers.values())))

    def derive(self, values: Mapping[str, Any]) -> dict[str, str]:
        """The derived variables' values, from the values of their sources (compared lower-case)."""
        out = {}
        for d in self.derived:
            raw = values.get(d.source)
            out[d.name] = d.values.get(str(raw).lower(), d.default) if raw is not None else d.default
        return out


# ---------------------------------------------------------------- endpoints
@dataclass(frozen=True)
class Param:
    """A query parameter or body field of an endpoint: its wire name and template."""

    name: str
    template: Any

    @property
    def var(self) -> str | None:
        """The variable when the template is exactly one ``{var}`` (the value keeps its type)."""
        return lone_var(self.template)

    @property
    def variables(self) -> list[str]:
        return template_vars(self.template)


@dataclass(frozen=True)
class Endpoint:
    """One HTTP operation of the backend."""

    name: str
    method: str
    path: str
    help: str
    query: tuple[Param, ...] = ()
    body: tuple[Param, ...] | None = None  # None: no body (GET); () an empty JSON object
    response: Response = field(default_factory=Response)  # what a success answers (``responses.py``)
    keep_empty: tuple[str, ...] = ()  # query parameters sent even when their value is ""
    service: str = DEFAULT_SERVICE  # the backend that serves it (``services:``)
    required: tuple[str, ...] = ()  # query parameters and body fields the backend requires

    @classmethod
    def from_data(cls, name: str, data: Mapping[str, Any], schemas: Schemas | None = None) -> Endpoint:
        body = data.get("body")
        if body is None and data["method"] == "POST":
            body = {}
        return cls(name=name, method=data["method"], path=data["path"], help=data["help"],
                   query=tuple(Param(k, v) for k, v in (data.get("query") or {}).items()),
                   body=None if body is None else tuple(Param(k, v) for k, v in body.items()),
                   response=Response.from_data(data.get("response"), schemas),
                   keep_empty=tuple(data.get("keep_empty") or ()),
                   service=data.get("service", DEFAULT_SERVICE), required=tuple(data.get("required") or ()))

    @property
    def path_vars(self) -> list[str]:
        return template_vars(self.path)

    @property
    def variables(self) -> list[str]:
        """Every variable the endpoint's path, query and body name."""
        params = [p.template for p in (*self.query, *(self.body or ()))]
        return template_vars(self.path, *params)

    @property
    def binary(self) -> bool:
        return self.response.binary

    def is_required(self, name: str) -> bool:
        """True when the backend refuses the request without this query parameter or body field."""
        return name in self.required

    @property
    def body_required(self) -> bool:
        """True when the backend refuses the request without a body (a required body field)."""
        return any(p.name in self.required for p in self.body or ())


# --------------------------------------------------------------- pagination
@dataclass(frozen=True)
class Pagination:
    mode: str
    collection: str | None = None
    id_keys: tuple[str, ...] = ()
    tie_key: str | None = None
    page_size: int | str | None = None  # a number, a template ("{page_size}"), or the option's value
    keep_first: tuple[str, ...] = ()
    progress: str | None = None
    declared: tuple[str, ...] = ()  # the parameters the table gives, in its order

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Pagination | None:
        if not data:
            return None
        return cls(mode=data["mode"], collection=data.get("collection"), id_keys=tuple(data.get("id_keys") or ()),
                   tie_key=data.get("tie_key"), page_size=data.get("page_size"),
                   keep_first=tuple(data.get("keep_first") or ()), progress=data.get("progress"),
                   declared=tuple(k for k in data if k not in ("mode", "progress")))

    @property
    def walks(self) -> bool:
        """True when every page is fetched (not a single page)."""
        return self.mode != "single_page"

    def parameters(self) -> dict[str, Any]:
        """The table's parameters of the mode (for describe): page and page size as templates."""
        out: dict[str, Any] = {"page": "{page}"} if self.mode == "single_page" else {}
        for key in self.declared:
            value = getattr(self, key)
            out[key] = list(value) if isinstance(value, tuple) else value
        out.setdefault("page_size", "{page_size}")
        return out

    def mode_arguments(self) -> dict[str, Any]:
        """Keyword arguments of the pagination mode function (page and page size excluded)."""
        out: dict[str, Any] = {}
        if self.collection:
            out["collection"] = self.collection
        if self.id_keys:
            out["id_keys"] = list(self.id_keys)
        if self.tie_key:
            out["tie_key"] = self.tie_key
        if self.keep_first:
            out["keep_first"] = list(self.keep_first)
        return out


@dataclass(frozen=True)
class Enumeration:
    """A named way to list every item of a group (a fan-out walks it)."""

    name: str
    help: str
    request: Endpoint
    pagination: Pagination
    binds: str
    empty_probe: Endpoint | None = None

    @property
    def id_key(self) -> str:
        return self.pagination.id_keys[0]


# -------------------------------------------------------------------- parts
@dataclass(frozen=True)
class Shape:
    name: str
    params: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))

    @classmethod
    def from_data(cls, data: Any) -> Shape | None:
        if data is None:
            return None
        if isinstance(data, str):
            return cls(data)
        return cls(data["name"], _frozen(data.get("with")))


@dataclass(frozen=True)
class Progress:
    label: str
    unit: str
    action: str
    eta: bool = False
    detail: str | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Progress | None:
        if not data:
            return None
        return cls(data["label"], data["unit"], data["action"], bool(data.get("eta")), data.get("detail"))


@dataclass(frozen=True)
class Condition:
    """``when: FLAG`` / ``when: not FLAG``: a part runs only when the flag option is (not) set."""

    option: str
    equals: bool

    @classmethod
    def from_data(cls, text: str | None) -> Condition | None:
        if not text:
            return None
        return cls(text.removeprefix("not "), not text.startswith("not "))

    def holds(self, options: Mapping[str, Any]) -> bool:
        return bool(options.get(self.option)) == self.equals


@dataclass(frozen=True)
class Part:
    """One unit of work of a dimension: a request (paginated or not), or a named step."""

    name: str
    request: Endpoint | None = None
    step: str | None = None
    params: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))  # a step's ``with``, verbatim
    endpoints: Mapping[str, Endpoint] = field(default_factory=lambda: _frozen(None))  # a step's endpoints
    enumerations: Mapping[str, Enumeration] = field(default_factory=lambda: _frozen(None))
    pagination: Pagination | None = None
    shape: Shape | None = None
    file: str | None = None
    entry: str | None = None
    format: str | None = None
    when: Condition | None = None
    each: Enumeration | None = None
    empty_probe: Endpoint | None = None
    empty_probe_mode: str = "fail"  # "warn": an unknown id with an empty list is a warning, not a failure
    failure_id: str | None = None
    count: str | None = None
    required: bool = False
    failures: str | None = None
    label: str | None = None
    progress: Progress | None = None
    wait: Waiter | None = None
    items: Items | None = None
    missing: Missing | None = None

    @property
    def layout(self) -> str | None:
        """The path template of the files a step writes (``with.layout``)."""
        value = self.params.get("layout")
        return value if isinstance(value, str) else None

    @property
    def all_endpoints(self) -> list[Endpoint]:
        """Every endpoint this part may call (request, step endpoints, probes, enumerations, waiter)."""
        found = [self.request] if self.request else []
        found += list(self.endpoints.values())
        for enum in [self.each, *self.enumerations.values()]:
            if enum is not None:
                found += [enum.request] + ([enum.empty_probe] if enum.empty_probe else [])
        if self.empty_probe:
            found.append(self.empty_probe)
        if self.wait:
            found += [self.wait.request] + ([self.wait.poll.request] if self.wait.poll else [])
        return list(dict.fromkeys(found))

    @property
    def binary(self) -> bool:
        return any(e.binary for e in ([self.request] if self.request else list(self.endpoints.values())))


@dataclass(frozen=True)
class Items:
    """Which entries of an answer a part works on (``items:``; see ``items.py``)."""

    collection: str | None = None  # a field of the answer holding a list
    find: str | None = None  # or: every object under this key, anywhere in the answer
    require: str | None = None  # keep entries whose field is a non-empty string
    unique: str | None = None  # keep the first entry of each value of this field
    add: Mapping[str, Any] = field(default_factory=lambda: _frozen(None))  # field -> template
    field: str | None = None  # the field the filter globs apply to
    include: str | None = None  # the option holding the include glob
    exclude: str | None = None  # the option holding the exclude glob
    label: str = "listing"

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Items | None:
        if not data:
            return None
        globs = data.get("filter") or {}
        return cls(collection=data.get("collection"), find=data.get("find"), require=data.get("require"),
                   unique=data.get("unique"), add=_frozen(data.get("add")), field=globs.get("field"),
                   include=globs.get("include"), exclude=globs.get("exclude"), label=data.get("label", "listing"))


@dataclass(frozen=True)
class Missing:
    """When a download means "nothing there" (``missing:``), and what to save instead."""

    status: tuple[int, ...] = ()
    content_types: tuple[str, ...] = ()
    placeholder: str | None = None  # a name of ``placeholders.PLACEHOLDERS``; None: fail

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None) -> Missing | None:
        if not data:
            return None
        return cls(tuple(data.get("status") or ()), tuple(t.lower() for t in data.get("content_types") or ()),
                   data.get("placeholder"))


@dataclass(frozen=True)
class Poll:
    """While the status is one of ``values``, poll another endpoint bound to a field of the answer."""

    values: tuple[str, ...]
    request: Endpoint
    binds: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class Waiter:
    """Repeat a request until its answer's status says the work is done (the export flow).

    ``retry`` values repeat the first request after the wait hint; ``poll``
    values switch to polling another endpoint; ``success`` values end the wait
    and the part's value is the first of ``result`` fields of that answer.
    Everything is bounded by the ``timeout`` option (seconds in total).
    """

    request: Endpoint
    status: str
    success: tuple[str, ...]
    retry: tuple[str, ...]
    poll: Poll | None
    hint: tuple[str, ...]
    wait_range: tuple[float, float]
    default_wait: float
    timeout: str
    result: tuple[str, ...]
    label: str
    message: str | None = None  # the log line of a retry (template: the dimension id and {wait})


@dataclass(frozen=True)
class Archive:
    file: str
    kind: str
    task_request: Endpoint
    order: tuple[str, ...]
    progress: Progress | None = None


@dataclass(frozen=True)
class Select:
    option: str
    choices: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Element:
    """How one id's selected parts become its stdout element."""

    kind: str  # "part" (the one selected part, or the named one), "object" ({id_key: id, part: value...}), "shape"
    part: str | None = None
    id_key: str | None = None
    shape: Shape | None = None

    @classmethod
    def from_data(cls, data: Any) -> Element:
        if data in (None, "part"):
            return cls("part")
        if isinstance(data, str):
            return cls("part", part=data)
        if "compose" in data:
            return cls("object", id_key=data["compose"])
        return cls("shape", shape=Shape(data["shape"], _frozen(data.get("with"))))


@dataclass(frozen=True)
class Dimension:
    name: str
    option: Option | None
    parts: Mapping[str, Part]
    element: Element
    select: Select | None = None
    archive: Archive | None = None
    serial: bool = False
    progress: Progress | None = None
    aggregate_failures: str | None = None
    composite: bool = False

    def selected(self, options: Mapping[str, Any]) -> list[Part]:
        """The parts that run for these option values (``select`` then ``when``)."""
        names = list(self.parts)
        if self.select:
            names = list(self.select.choices[options[self.select.option]])
        return [self.parts[n] for n in names if self.parts[n].when is None or self.parts[n].when.holds(options)]

    @property
    def usage(self) -> str:
        """How the ids of this dimension are given, for usage lines."""
        if self.name == "task":
            return "--task-id TASK..." if self.option is not None and self.option.type == "ids" else "--task-id TASK"
        return {"group": "-g GROUP...", "job": "-j JOB..."}[self.name]


# ------------------------------------------------------------------ actions
@dataclass(frozen=True)
class Section:
    name: str
    resource: str
    action: str
    options: Mapping[str, Any]


@dataclass(frozen=True)
class Compose:
    option: str
    dimensions: tuple[str, ...]
    default: tuple[str, ...]
    sections: Mapping[str, Section]


@dataclass(frozen=True)
class Action:
    resource: str
    name: str
    help: str
    writer: str
    options: tuple[Option, ...]
    dimensions: Mapping[str, Dimension]
    command: bool = False  # the resource is a command of its own (``bl pull``)
    stdout_when: str | None = None
    compose: Compose | None = None
    max_ids: int | None = None
    max_ids_message: str | None = None
    error_field: str | None = None
    progress: Progress | None = None
    extra_args: bool = False  # unknown arguments are passed to the command (``ap-cmd``), not refused

    @property
    def positional(self) -> Option | None:
        return next((o for o in self.options if o.positional), None)

    @property
    def words(self) -> list[str]:
        return [self.resource] if self.command else [self.resource, self.name]

    def command_line(self, prog: str = PROG) -> str:
        return " ".join([prog, *self.words])

    def usage(self, prog: str = PROG) -> str:
        if self.positional is not None:
            extra = " [ARGS]..." if self.extra_args else ""
            return f"{prog} [GLOBAL OPTIONS] {' '.join(self.words)} {self.positional.metavar} [OPTIONS]{extra}"
        dims = " | ".join(d.usage for d in self.dimensions.values())
        return f"{prog} [GLOBAL OPTIONS] {' '.join(self.words)} ({dims}) [OPTIONS]"

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    @property
    def option_names(self) -> list[str]:
        return [o.name for o in self.options]

    @property
    def defaults(self) -> dict[str, Any]:
        """Every option's value when it is not given."""
        return {o.name: o.default_value for o in self.options}

    @property
    def id_options(self) -> list[Option]:
        """The options that carry ids (-g, -j, --task-id) this action accepts."""
        return [o for o in self.options if o.name in OPTION_DIMENSIONS]

    @property
    def visible_options(self) -> list[Option]:
        """Options shown in help: an id option of a dimension the action lacks stays hidden
        (it exists only to give a precise usage error)."""
        return [o for o in self.options
                if o.name not in OPTION_DIMENSIONS or OPTION_DIMENSIONS[o.name] in self.dimensions]

    def dimension_of(self, option: str) -> str | None:
        dim = OPTION_DIMENSIONS.get(option)
        return dim if dim in self.dimensions else None

    @property
    def prints(self) -> bool:
        """True when the action can print elements on stdout (always, or with its listing flag)."""
        return self.writer == "stdout" or self.stdout_when is not None

    def writes_files(self, options: Mapping[str, Any]) -> bool:
        return self.writer == "files" and not (self.stdout_when and options.get(self.stdout_when))


@dataclass(frozen=True)
class Resource:
    name: str
    help: str
    actions: Mapping[str, Action]
    command: bool = False


@dataclass(frozen=True)
class Spec:
    endpoints: Mapping[str, Endpoint]
    enumerations: Mapping[str, Enumeration]
    options: Mapping[str, Option]
    resources: Mapping[str, Resource]
    services: Mapping[str, Service] = field(default_factory=lambda: _frozen(None))
    schemas: Schemas = field(default_factory=Schemas)  # the table's shared response shapes (``schemas:``)

    def service(self, name: str) -> Service:
        return self.services[name]

    def action(self, resource: str, action: str) -> Action:
        return self.resources[resource].actions[action]

    @property
    def actions(self) -> list[Action]:
        return [a for r in self.resources.values() for a in r.actions.values()]

    def section_action(self, section: Section) -> Action:
        return self.action(section.resource, section.action)

    def option_types(self) -> dict[str, str]:
        """Option name -> table type over shared and per-action options (first definition wins)."""
        types: dict[str, str] = {}
        for name, opt in self.options.items():
            types[name] = opt.type
        for action in self.actions:
            for opt in action.options:
                types.setdefault(opt.name, opt.type)
        return types

    def param_type(self, template: Any) -> str:
        """The JSON type of a query or body value, from its template."""
        if isinstance(template, bool):
            return "boolean"
        if isinstance(template, int):
            return "integer"
        name = lone_var(template)
        if name is None:
            return "string"
        if name in PAGE_VARS:
            return "integer"
        if name in DIMENSIONS:
            return "string"  # the id of the current dimension, one at a time
        return _VALUE_TYPES.get(self.option_types().get(name, "str"), "string")

    def endpoint_users(self) -> dict[str, list[Action]]:
        """Endpoint name -> the actions whose requests use it (a composite uses its sections')."""
        users: dict[str, list[Action]] = {}
        # Composite actions last: they use what their sections use.
        for action in sorted(self.actions, key=lambda a: a.compose is not None):
            for endpoint in self.action_endpoints(action):
                if action not in users.setdefault(endpoint.name, []):
                    users[endpoint.name].append(action)
        return users

    def action_endpoints(self, action: Action) -> list[Endpoint]:
        found: list[Endpoint] = []
        if action.compose:
            for section in action.compose.sections.values():
                found += self.action_endpoints(self.section_action(section))
        for dim in action.dimensions.values():
            if dim.archive:
                found.append(dim.archive.task_request)
            for part in dim.parts.values():
                found += part.all_endpoints
        return list(dict.fromkeys(found))


# ------------------------------------------------------------------ building
class _Builder:
    """Turns the compiled table (plain data) into the model, resolving names once."""

    def __init__(self, data: Mapping[str, Any]):
        self.data = data
        self.schemas = Schemas(data.get("schemas"))
        self.endpoints = {n: Endpoint.from_data(n, e, self.schemas) for n, e in data["endpoints"].items()}
        self.enumerations = {n: self.enumeration(n, e) for n, e in (data.get("enumerations") or {}).items()}

    def enumeration(self, name: str, data: Mapping[str, Any]) -> Enumeration:
        probe = data.get("empty_probe")
        return Enumeration(name, data.get("help", ""), self.endpoints[data["request"]],
                           Pagination.from_data(data["pagination"]), data["binds"],
                           self.endpoints[probe] if probe else None)

    def waiter(self, data: Mapping[str, Any] | None) -> Waiter | None:
        if not data:
            return None
        poll = data.get("poll")
        low, high = data.get("wait_range", [1, 15])
        return Waiter(
            request=self.endpoints[data["request"]], status=data.get("status", "status"),
            success=tuple(data["success"]), retry=tuple(data.get("retry") or ()),
            poll=Poll(tuple(poll["when"]), self.endpoints[poll["request"]], poll["binds"], tuple(poll["fields"]))
            if poll else None,
            hint=tuple(data.get("hint") or ()), wait_range=(float(low), float(high)),
            default_wait=float(data.get("default_wait", high)), timeout=data["timeout"],
            result=tuple(data["result"]), label=data["label"], message=data.get("message"))

    def part(self, name: str, data: Mapping[str, Any]) -> Part:
        params = dict(data.get("with") or {})
        step_endpoints, step_enums = {}, {}
        if data.get("step"):
            from .stepdefs import ENDPOINT_PARAMS, OPTIONAL_ENDPOINT_PARAMS

            keys = (*ENDPOINT_PARAMS.get(data["step"], ()), *OPTIONAL_ENDPOINT_PARAMS.get(data["step"], ()))
            for key in keys:
                if key in params:
                    step_endpoints[key] = self.endpoints[params[key]]
            for key, value in params.items():
                if isinstance(value, str) and value in self.enumerations:
                    step_enums[key] = self.enumerations[value]
        request, probe, each = data.get("request"), data.get("empty_probe"), data.get("each")
        return Part(
            name=name, request=self.endpoints[request] if request else None, step=data.get("step"),
            params=_frozen(params), endpoints=_frozen(step_endpoints), enumerations=_frozen(step_enums),
            pagination=Pagination.from_data(data.get("pagination")), shape=Shape.from_data(data.get("shape")),
            file=data.get("file"), entry=data.get("entry"), format=data.get("format"),
            when=Condition.from_data(data.get("when")), each=self.enumerations[each] if each else None,
            empty_probe=self.endpoints[probe] if probe else None,
            empty_probe_mode=data.get("empty_probe_mode", "fail"), failure_id=data.get("failure_id"),
            count=data.get("count"), required=bool(data.get("required")), failures=data.get("failures"),
            label=data.get("label"), progress=Progress.from_data(data.get("progress")),
            wait=self.waiter(data.get("wait")), items=Items.from_data(data.get("items")),
            missing=Missing.from_data(data.get("missing")))

    def dimension(self, name: str, data: Mapping[str, Any], options: tuple[Option, ...]) -> Dimension:
        option = next((o for o in options if o.name == DIMENSION_OPTIONS[name]), None)
        select = data.get("select")
        archive = data.get("archive")
        return Dimension(
            name=name, option=option,
            parts=_frozen({n: self.part(n, p) for n, p in (data.get("parts") or {}).items()}),
            element=Element.from_data(data.get("element")),
            select=Select(select["option"], _frozen({k: tuple(v) for k, v in select["choices"].items()}))
            if select else None,
            archive=Archive(archive["file"], archive.get("kind", ""), self.endpoints[archive["task_request"]],
                            tuple(archive.get("order") or (data.get("parts") or {})),
                            Progress.from_data(archive.get("progress"))) if archive else None,
            serial=bool(data.get("serial")), progress=Progress.from_data(data.get("progress")),
            aggregate_failures=data.get("aggregate_failures"), composite=bool(data.get("composite")))

    def action(self, resource: str, command: bool, name: str, data: Mapping[str, Any]) -> Action:
        options = tuple(Option.from_data(o) for o in data["options"])
        compose = data.get("compose")
        return Action(
            resource=resource, name=name, help=data["help"], writer=data["writer"], options=options,
            dimensions=_frozen({d: self.dimension(d, body, options) for d, body in data["dimensions"].items()}),
            command=command, stdout_when=data.get("stdout_when"),
            compose=Compose(compose["option"], tuple(compose["dimensions"]), tuple(compose["default"]),
                            _frozen({n: Section(n, s["resource"], s["action"], _frozen(s.get("options")))
                                     for n, s in compose["sections"].items()})) if compose else None,
            max_ids=data.get("max_ids"), max_ids_message=data.get("max_ids_message"),
            error_field=data.get("error_field"), progress=Progress.from_data(data.get("progress")),
            extra_args=bool(data.get("extra_args")))

    def spec(self) -> Spec:
        resources = {}
        for rname, res in self.data["resources"].items():
            command = bool(res.get("command"))
            actions = {a: self.action(rname, command, a, body) for a, body in res["actions"].items()}
            resources[rname] = Resource(rname, res["help"], _frozen(actions), command)
        options = {n: Option.from_data({"name": n, **o}) for n, o in self.data["options"].items()}
        services = {n: Service.from_data(n, s, self.schemas) for n, s in (self.data.get("services") or {}).items()}
        services.setdefault(DEFAULT_SERVICE, Service.from_data(DEFAULT_SERVICE, {}, self.schemas))
        return Spec(_frozen(self.endpoints), _frozen(self.enumerations), _frozen(options), _frozen(resources),
                    _frozen(services), self.schemas)


def global_options() -> list[Option]:
    """The options given before the resource (``globals.GLOBAL_OPTIONS``)."""
    from .globals import GLOBAL_OPTIONS

    return [Option.from_data(o) for o in GLOBAL_OPTIONS]


def build_model(data: Mapping[str, Any]) -> Spec:
    """The model of a compiled table (see ``specload.load_spec``)."""
    return _Builder(data).spec()


_MODELS: dict[int, tuple[Any, Spec]] = {}


def load_model() -> Spec:
    """The model of the installed table, built once per compiled table."""
    from .load import load_spec

    data = load_spec()
    cached = _MODELS.get(id(data))
    if cached is None or cached[0] is not data:  # an id can be reused once its table is gone
        cached = _MODELS[id(data)] = (data, build_model(data))
    return cached[1]
