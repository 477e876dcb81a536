"""The typed model of the endpoint table: what every consumer reads.

``table.load`` gives the compiled table as plain JSON data (validated by the schema,
option references expanded, lints passed) and ``table.build`` turns it once into the
immutable, typed objects of this module: :class:`Spec`, :class:`Service`,
:class:`Endpoint`, :class:`Enumeration`, :class:`Option`, :class:`Resource`,
:class:`Action`, :class:`Dimension`, the kinds of :class:`Part`, the built-in
:class:`Command` objects and the global options.  Defaults are resolved, names are
resolved to the objects they name, and the facts several consumers need are computed
here once: id options of a dimension, usage lines, flag defaults, the variables a
template binds, request parameters with their types.

A record the engine reads as the table writes it (:class:`Pagination`, :class:`Option`,
:class:`Items`, :class:`Waiter` and its :class:`Acceptor`, :class:`Counts` and
:class:`Delay`, :class:`Compose` and its :class:`Sync`, :class:`Select`, :class:`Archive`,
:class:`StepParam`...) is declared here once, as the table's declaration too: its fields
are the YAML's keys (``field(name=...)`` where the model's name differs, ``Meta`` for the
JSON Schema's descriptions, ``__post_init__`` for what a type cannot say, a mapping made
read-only there), ``table/schema.py`` imports it for the compiler's decoding and the
generated ``spec/benchloop.schema.json``, and the builder decodes the compiled table into
it with ``msgspec.convert``.  A field that names another entry has that entry's name type
(:class:`Name`: ``EndpointName``...; mypy sees the entry): the YAML gives the name, the
builder's ``dec_hook`` the entry.  An entry's name is its key in the table (``KEY``); a
field of the model's own has an encode name starting with ``HIDDEN``, which the compiler
refuses in the YAML and the JSON Schema leaves out.

The command builder, help pages, ``bl describe``, the OpenAPI export, completion, the
docs generator, the engine, the steps, the sandbox routes, the Python client and the
MCP server all read this model; only the loader, the compiler and the lints walk the
raw table (botocore keeps the same split between its JSON data and ``model.py``).
This module imports nothing of the loader.

Everything is frozen all the way down: mappings are read-only views, sequences are
tuples, and a step's ``with:`` values are frozen when the model is built, so no
consumer can change the cached model for the next one.

The classes are ``msgspec.Struct(frozen=True)``: declared in C, no code compiled at
import (every command imports this module), and assigning to a field raises.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from msgspec import Meta, Struct, field
from msgspec.structs import force_setattr, replace

from .optiontypes import OptionType, option_type
from .outputs import Output
from .responses import Response, Schemas, frozen_json, plain_json
from .templates import PAGE_VARS, lone_var, template_vars

if TYPE_CHECKING:
    from typing import TypeAlias, TypeVar

PROG = "bl"
DEFAULT_SERVICE = "benchloop"

if TYPE_CHECKING:
    T = TypeVar("T")


def frozen_map(mapping: Mapping[str, T] | None = None) -> Mapping[str, T]:
    """A read-only view of a copy of ``mapping``."""
    return MappingProxyType(dict(mapping or {}))


# The encode name of a record's ``name``: an entry's name is its key in the table, which the
# builder gives (``build.Builder.record``); ``name:`` in the YAML is refused.  A field whose
# encode name starts with ``__`` (HIDDEN) is the model's alone: the compiler refuses such a key
# in the YAML and the JSON Schema leaves it out.
KEY = "__key__"
HIDDEN = "__"


class Name(type):
    """The type of a field that names another entry of the table (``EndpointName``...): the YAML
    gives the name, the builder's ``dec_hook`` the entry it names (``table`` is the builder's
    mapping of them), so the model holds the object.  The compiler's decoding keeps the name
    (the lints check that it exists) and the JSON Schema says a string."""

    table: str
    target: type

    def __instancecheck__(cls, value: object) -> bool:
        return isinstance(value, (str, cls.target))


class Made(type):
    """The run-time type of a field whose value the builder makes itself (``AnyPart``: a part of
    any kind, which no key tells apart): decoding keeps the value it is given."""

    target: tuple[type, ...]

    def __instancecheck__(cls, value: object) -> bool:
        return isinstance(value, cls.target)


def unique(record: Struct, key: str) -> None:
    """No value of the list ``key`` is given twice (a check of the table's declaration)."""
    values = getattr(record, key) or ()
    twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if twice is not None:
        raise ValueError(f"`{key}` gives {twice!r} twice")


def _given(record: Struct, key: str) -> bool:
    """Whether the table gives ``key``: neither None nor a record's empty default (``()``, ``frozen_map()``;
    a ``{}`` the YAML writes is a dict, and given)."""
    value = getattr(record, key)
    return not (value is None or value == () or (isinstance(value, MappingProxyType) and not value))


def _key(name: str) -> str:
    return name.rstrip("_")  # with_ is the table's with


def one_of(record: Struct, keys: tuple[str, ...]) -> None:
    """Exactly one of ``keys`` is given (a check of the table's declaration)."""
    given = [k for k in keys if _given(record, k)]
    if len(given) != 1:
        words = " or ".join(f"`{_key(k)}`" for k in keys)
        raise ValueError(
            f"give one of {words}"
            if not given
            else f"give one of {words}, not " + " and ".join(f"`{_key(k)}`" for k in given)
        )


def none_of(record: Struct, keys: tuple[str, ...], beside: str) -> None:
    """None of ``keys`` is given (they have no meaning beside ``beside``)."""
    given = [k for k in keys if _given(record, k)]
    if given:
        raise ValueError(f"`{_key(given[0])}` does not go with `{_key(beside)}`")


def freeze(record: Struct, *keys: str) -> None:
    """In a record's ``__post_init__``: its mappings (decoded as dicts) and JSON values read-only."""
    for key in keys:
        force_setattr(record, key, frozen_json(getattr(record, key)))


def named(record: Struct, key: str) -> None:
    """In a record's ``__post_init__``: each record of the mapping ``key`` named by its key."""
    force_setattr(record, key, MappingProxyType({k: replace(v, name=k) for k, v in getattr(record, key).items()}))


# --------------------------------------------------------------- dimensions
class DimensionKind(Struct, frozen=True):
    """What an id is: a group, a job or a download task, and how its ids are given."""

    name: str
    option: str  # the option carrying the ids
    flags: str  # as messages name it: "-g/--group"
    short: str  # as a usage hint names it: "-g"
    usage: str  # as usage lines show it (many ids)
    noun: str  # as tool descriptions name the ids

    def usage_for(self, option: Option | None) -> str:
        """The usage word of a dimension whose id option may take one id only (``--task-id TASK``)."""
        if option is not None and not option.kind.many:
            return self.usage.removesuffix("...")
        return self.usage


DIMENSION_KINDS: Mapping[str, DimensionKind] = MappingProxyType({
    "group": DimensionKind("group", "group", "-g/--group", "-g", "-g GROUP...", "group ids"),
    "job": DimensionKind("job", "job", "-j/--job", "-j", "-j JOB...", "job ids"),
    "task": DimensionKind("task", "task_id", "--task-id", "--task-id", "--task-id TASK...", "download-task ids"),
})
DIMENSIONS = tuple(DIMENSION_KINDS)
OPTION_DIMENSIONS: Mapping[str, str] = MappingProxyType({k.option: k.name for k in DIMENSION_KINDS.values()})


# ------------------------------------------------------------------ options
FLAG = Annotated[str, Meta(pattern="^--?[a-z][a-z0-9-]*$")]


class Setting(Struct, frozen=True, forbid_unknown_fields=True):
    """Where a setting comes from when it is not given: variables, a configuration key, a default
    (a global option's ``setting:``)."""

    env: tuple[str, ...] = ()
    config: str | None = None
    default: str | None = None


class Sources(Setting, frozen=True):
    """Where one setting comes from when it is not given, first found wins: the option of the
    running command (its flag), environment variables, a key of the configuration file, a default
    (a service's ``base_url:`` and ``auth:``, which the builder maps here)."""

    option: str | None = None
    flag: str | None = None
    # A key only (``settings.keys``): variables and a file key naming a command that prints
    # it, and a file key naming its entry in the OS keyring.
    command_env: tuple[str, ...] = ()
    command_config: str | None = None
    keyring: str | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> Sources:
        """A service's ``base_url:`` or ``auth:`` (``schema.ServiceAuth``: its ``command:`` flattened)."""
        data = data or {}
        command = data.get("command") or {}
        return cls(option=data.get("option"), flag=data.get("flag"), env=tuple(data.get("env") or ()),
                   config=data.get("config"), default=data.get("default"), keyring=data.get("keyring"),
                   command_env=tuple(command.get("env") or ()), command_config=command.get("config"))

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.flag:
            out["flag"] = self.flag
        if self.env:
            out["env"] = list(self.env)
        if self.config:
            out["config"] = self.config
        if self.command_env or self.command_config:
            out["command"] = {"env": list(self.command_env), "config": self.command_config}
        if self.keyring:
            out["keyring"] = self.keyring
        if self.default is not None:
            out["default"] = self.default
        return out


class OptionMessages(Struct, frozen=True, forbid_unknown_fields=True):
    """The option's own usage messages (instead of the generic ones)."""

    invalid: str | None = None
    duplicate: str | None = None
    min: str | None = None
    required: str | None = None


OptionTypeName = Literal["str", "int", "float", "flag", "bool", "choice", "ids", "list", "ints", "jmespath", "regex"]


class Option(Struct, frozen=True, forbid_unknown_fields=True):
    """One command-line option (``options:``, an action's ``options:``, ``global_options:``; a
    built-in command's argument is one too, positional)."""

    type: OptionTypeName
    help: Annotated[str, Meta(min_length=1)]
    flags: Annotated[tuple[FLAG, ...], Meta(min_length=1)] = ()
    default: Any = None
    min: int | float | None = None
    choices: Annotated[tuple[str, ...], Meta(min_length=1)] = ()
    messages: OptionMessages | None = None
    positional: Annotated[bool, Meta(description="Given by position, not by a flag.")] = False
    placeholder: str | None = field(default=None, name="metavar")
    negative: Annotated[
        Annotated[str, Meta(pattern="^--[a-z][a-z0-9-]*$")] | None,
        Meta(description="The flag that sets a bool option to false."),
    ] = None
    path: Annotated[
        Literal["dir", "file", "checked_dir", "file_or_dir"] | None,
        Meta(
            description="The value names a directory or a file (completion, the Python client). dir: an output root, made with its parents. file: a file the user named, checked before any request (no symlink or special file, its directory exists; '-' is stdout). checked_dir: a directory the user named for an action's files, checked before any request (no file, symlink or special file; made if missing, its parent exists). file_or_dir: a file as for file, or a directory where the action names its file (a value ending in '/', an existing directory, or a new name without an extension; made with its parents)."
        ),
    ] = None
    setting: Annotated[
        Setting | None, Meta(description="Where a global option's value comes from when the flag is not given.")
    ] = None
    values: Annotated[
        Annotated[tuple[str, ...], Meta(min_length=1)],
        Meta(
            description="The values the backend is known to take (not enforced: an unknown one is sent with a warning naming these)."
        ),
    ] = ()
    # Take values from this status enumeration (``statuses:``; the compiler expands it into ``values``).
    statuses: Annotated[str | None, Meta(description="Take values: from this status enumeration (statuses:).")] = None
    required: bool = field(default=False, name=HIDDEN + "required")  # a positional that must be given (arguments)
    name: str = field(default="", name=KEY)

    schema_extra: ClassVar[dict[str, Any]] = {
        "anyOf": [{"required": ["flags"]}, {"required": ["positional"]}],
        "not": {"required": ["values", "statuses"]},
    }

    def __post_init__(self) -> None:
        if not self.flags and not self.positional:
            raise ValueError("give `flags` or `positional: true`")
        if self.values and self.statuses is not None:
            raise ValueError("give `values` or `statuses`, not both")

    @property
    def kind(self) -> OptionType:
        return option_type(self.type)

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
    def all_flags(self) -> tuple[str, ...]:
        return (*self.flags, self.negative) if self.negative else self.flags

    @property
    def is_flag(self) -> bool:
        return self.kind.is_flag

    @property
    def takes_value(self) -> bool:
        return not self.kind.is_flag

    @property
    def repeatable(self) -> bool:
        return self.kind.many

    @property
    def reads_stdin(self) -> bool:
        return self.kind.stdin

    @property
    def default_value(self) -> Any:
        """The value a command sees when the option is not given (a flag is False)."""
        return bool(self.default) if self.kind.is_flag else self.default

    @property
    def metavar(self) -> str:
        if self.placeholder:
            return self.placeholder
        if self.type == "choice":
            return "{" + ",".join(self.choices) + "}"
        return self.kind.metavar

    def message(self, key: str, default: str) -> str:
        return (getattr(self.messages, key) if self.messages else None) or default


# ----------------------------------------------------------------- services
class Derived(Struct, frozen=True, forbid_unknown_fields=True):
    """A header variable computed from another one (``env`` from ``cluster``)."""

    source: str = field(name="from")
    values: Mapping[str, str] = field(default_factory=frozen_map, name="map")
    default: str = ""
    name: str = field(default="", name=KEY)

    def __post_init__(self) -> None:
        freeze(self, "values")


class ServiceCheck(Struct, frozen=True, forbid_unknown_fields=True):
    """bl config check: one cheap authenticated request of the service."""

    request: Annotated[EndpointName, Meta(description="An endpoint of the service.")]
    values: Annotated[Mapping[str, Any], Meta(description="Values of the endpoint's template variables.")] = field(
        default_factory=frozen_map, name="with")
    accept: Annotated[
        tuple[Annotated[int, Meta(ge=400)], ...],
        Meta(description="Error statuses that still mean the backend answered and took the key."),
    ] = ()

    def __post_init__(self) -> None:
        freeze(self, "values")


class Service(Struct, frozen=True):
    """One backend the table talks to: its base URL, its key and the headers of every request.

    Every service, the default one (Benchloop) included, resolves its base URL and key
    from the sources its table entry lists (``settings``); each gets its own HTTP client,
    so a key never reaches another service's origin.
    """

    name: str
    title: str
    help: str
    base_url: Sources
    auth_header: str
    key: Sources
    auth_statuses: tuple[int, ...] = (401,)
    key_required: str | None = None  # the usage error when no key is found
    headers: Mapping[str, str] = field(default_factory=frozen_map)  # name -> template
    derived: tuple[Derived, ...] = ()
    default: bool = False
    # Hosts of the service's SSO login page: a download redirected there is an authentication
    # failure (exit 3), whatever the words in any other URL (``transport`` ``is_login_url``).
    login_hosts: tuple[str, ...] = ()
    # The schema of its error bodies (``error:``; every status >= 400 of its endpoints).
    error: Response | None = None
    check: ServiceCheck | None = None  # ``bl config check``'s request

    def __post_init__(self) -> None:
        freeze(self, "headers")

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
class Param(Struct, frozen=True):
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


class Endpoint(Struct, frozen=True):
    """One HTTP operation of a backend."""

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
PaginationMode = Literal["single_page", "unique_scan", "task_scan"]  # engine/pagination.py implements them


class Pagination(Struct, frozen=True, forbid_unknown_fields=True):
    """How a part or an enumeration walks the pages of its request."""

    mode: Annotated[PaginationMode, Meta(description="A pagination algorithm of benchloop/engine/pagination.py.")]
    collection: str | None = None
    id_keys: Annotated[tuple[str, ...], Meta(min_length=1)] = ()
    tie_key: str | None = None
    page_size: int | str | None = None  # a number, a template ("{page_size}"), or the option's value
    keep_first: tuple[str, ...] = ()
    progress: str | None = None

    @property
    def declared(self) -> tuple[str, ...]:
        """The parameters the table gives (mode and progress aside)."""
        return tuple(k for k in ("collection", "id_keys", "tie_key", "page_size", "keep_first") if _given(self, k))

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


class Enumeration(Struct, frozen=True, forbid_unknown_fields=True):
    """A named way to list every item of a group (``enumerations:``), which a fan-out walks."""

    help: str
    request: EndpointName
    pagination: Pagination
    binds: Literal["group", "job", "task"]
    empty_probe: EndpointName | None = None
    name: str = field(default="", name=KEY)

    @property
    def id_key(self) -> str:
        return self.pagination.id_keys[0]

    @property
    def endpoints(self) -> list[Endpoint]:
        return [self.request] + ([self.empty_probe] if self.empty_probe else [])

    @property
    def scans(self) -> list[tuple[Endpoint, Pagination]]:
        return [(self.request, self.pagination)]


# ------------------------------------------------------------- small pieces
class Progress(Struct, frozen=True, forbid_unknown_fields=True):
    """The progress line of a long part or action (also the table's declaration: ``schema.py``)."""

    label: str
    unit: str
    action: str
    eta: bool = False
    detail: Literal["id", "path"] | None = None
    counts: Annotated[
        Literal["ids", "jobs"],
        Meta(
            description="A step's counter: each id of the command (one counter shared by the ids), or each job of one id."
        ),
    ] = "ids"


class Missing(Struct, frozen=True, forbid_unknown_fields=True):
    """When a download means 'nothing there', and the placeholder saved instead (also the
    table's declaration: ``schema.py``)."""

    status: tuple[int, ...] = ()
    content_types: Annotated[
        tuple[Annotated[str, Meta(pattern="^[a-z0-9*./+-]+$")], ...],
        Meta(description="Media types (lower case) whose answer means nothing there."),
    ] = ()
    placeholder: Annotated[
        Literal["empty_tgz"] | None,
        Meta(description="A name of engine/placeholders.py saved instead; absent: the download fails."),
    ] = None


class Delay(Struct, frozen=True, forbid_unknown_fields=True):
    """How long a waiter waits between two requests (also the table's declaration: ``schema.py``).

    From the answer: the first number of the ``hint`` fields, clamped to ``min``..``max``
    (``default`` without one).  Otherwise ``seconds``, or the value of the option ``option``
    (``--interval``), multiplied by ``backoff`` after each answer that changed nothing, up to
    ``max`` (never below the first wait), and spread by ``jitter`` (a fraction either way)."""

    hint: Annotated[
        Annotated[tuple[str, ...], Meta(min_length=1)],
        Meta(description="Fields of the answer giving the seconds to wait."),
    ] = ()
    low: Annotated[float, Meta(ge=0)] = field(default=0.0, name="min")
    high: Annotated[float, Meta(ge=0)] | None = field(default=None, name="max")
    default: Annotated[
        Annotated[float, Meta(ge=0)] | None, Meta(description="Seconds without a hint (default max).")
    ] = None
    option: Annotated[str | None, Meta(description="The option giving the seconds between two requests.")] = None
    seconds: float | None = None
    backoff: Annotated[
        Annotated[float, Meta(ge=1)],
        Meta(description="Factor on the wait after an answer that changed nothing."),
    ] = 1.0
    jitter: Annotated[
        Annotated[float, Meta(ge=0)], Meta(description="The wait varies by up to this fraction either way.")
    ] = 0.0


# The names the engine implements (tests/unit/table/test_speclint.py holds the registries equal to them).
TransformName = Literal["raw", "job_metrics", "filter_sections", "metrics_detail", "with_id", "collection", "first_report_content", "text_field", "task_job_ids", "behavior_status", "behavior_element", "behavior_list", "step_rows"]


class Transform(Struct, frozen=True, forbid_unknown_fields=True):
    """A transform with its ``with:`` values (``shape:`` in the table, or just its name;
    ``engine.transforms``)."""

    name: Annotated[TransformName, Meta(description="A transform of benchloop/engine/transforms.py.")]
    params: Mapping[str, Any] = field(default_factory=frozen_map, name="with")

    def __post_init__(self) -> None:
        freeze(self, "params")

    @classmethod
    def of(cls, data: Any) -> Transform | None:
        """A ``shape:``: a transform's name, or ``{name, with}``."""
        if data is None:
            return None
        data = {"name": data} if isinstance(data, str) else data
        return cls(data["name"], data.get("with") or {})


class Condition(Struct, frozen=True):
    """``when: OPTION`` / ``when: not OPTION``: a part runs only when the option is (not) given
    (a flag set, a value not empty); ``when: a|b|c``: when any of them is (``not a|b|c``: none)."""

    options: tuple[str, ...]
    equals: bool

    @classmethod
    def of(cls, text: str | None) -> Condition | None:
        """A part's ``when:`` (None: the part always runs)."""
        return cls(tuple(text.removeprefix("not ").split("|")), not text.startswith("not ")) if text else None

    @property
    def option(self) -> str:
        """The option, as messages and ``bl describe`` name it (``a|b`` for several)."""
        return "|".join(self.options)

    def holds(self, options: Mapping[str, Any]) -> bool:
        return any(options.get(name) not in (None, False, "", [], ()) for name in self.options) == self.equals


class ItemsFilter(Struct, frozen=True, forbid_unknown_fields=True):
    """Include and exclude globs, given by options, on one field of the entries."""

    field_: str = field(name="field")
    include: str | None = None  # the option holding the include glob
    exclude: str | None = None  # the option holding the exclude glob


class Items(Struct, frozen=True, forbid_unknown_fields=True):
    """The entries of an answer a part works on (``items:``; see ``engine.items``)."""

    collection: str | None = None  # a field of the answer holding a list
    find: str | None = None  # or: every object under this key, anywhere in the answer
    require: str | None = None  # keep entries whose field is a non-empty string
    unique: str | None = None  # keep the first entry of each value of this field
    label: str = "listing"
    add: Mapping[str, str] = field(default_factory=frozen_map)  # field -> template
    filter: ItemsFilter | None = None

    schema_extra: ClassVar[dict[str, Any]] = {
        "oneOf": [
            {"required": ["collection"], "not": {"required": ["find"]}},
            {"required": ["find"], "not": {"required": ["collection"]}},
        ]
    }

    def __post_init__(self) -> None:
        one_of(self, ("collection", "find"))
        freeze(self, "add")

    @property
    def field(self) -> str | None:
        """The field the filter globs apply to."""
        return self.filter.field_ if self.filter else None

    @property
    def include(self) -> str | None:
        return self.filter.include if self.filter else None

    @property
    def exclude(self) -> str | None:
        return self.filter.exclude if self.filter else None


# ------------------------------------------------------------------ waiters
class StatusEnum(Struct, frozen=True, forbid_unknown_fields=True):
    """A named status enumeration (``statuses:``): the values a status field takes, and which of
    them are final (the work is over).  ``in_progress`` is every other listed value; a status
    the table does not list is in neither, and a waiter says how it counts (``not_final``)."""

    values: Annotated[
        tuple[Annotated[str, Meta(min_length=1)], ...],
        Meta(min_length=1, description="Every value the backend is known to send, in the order counts list them."),
    ]
    final: Annotated[
        tuple[Annotated[str, Meta(min_length=1)], ...],
        Meta(description="The values after which nothing changes any more (a subset of values)."),
    ]
    help: str = ""
    name: str = field(default="", name=KEY)

    schema_extra: ClassVar[dict[str, Any]] = {"properties": {"values": {"uniqueItems": True},
                                                             "final": {"uniqueItems": True}}}

    def __post_init__(self) -> None:
        unique(self, "values")
        unique(self, "final")

    @property
    def in_progress(self) -> tuple[str, ...]:
        return tuple(v for v in self.values if v not in self.final)

    def holds(self, which: str, value: Any) -> bool:
        """Whether ``value`` is in the set ``which``: final, in_progress, not_final (anything that
        is not final, unknown values included) or known (any listed value)."""
        if which == "final":
            return value in self.final
        if which == "in_progress":
            return value in self.in_progress
        if which == "not_final":
            return value not in self.final
        return value in self.values


ACCEPTOR_STATES = ("success", "failure", "retry", "follow")
MATCHERS = ("path", "pathAll", "pathAny", "pathNone", "error")


class StatusSet(Struct, frozen=True, forbid_unknown_fields=True):
    """A set of a status enumeration."""

    statuses: Annotated[StatusesName, Meta(description="A status enumeration (statuses:).")]
    within: Annotated[
        Literal["final", "in_progress", "not_final", "known"], Meta(description="Which of its values (default final).")
    ] = field(default="final", name="set")


class Acceptor(Struct, frozen=True, forbid_unknown_fields=True):
    """When its matcher holds for an answer, the waiter moves to its state (botocore's acceptors).

    ``path`` compares the value of the JMESPath ``argument`` with ``expected``; ``pathAll``,
    ``pathAny`` and ``pathNone`` compare each element of a list ``argument`` (``pathAll`` is
    false on an empty list, ``pathNone`` true); ``error`` matches a failed request whose HTTP
    status is one of ``expected``.  ``expected`` is values (any of them), or a set of a status
    enumeration (``statuses`` and ``set``: final, in_progress, not_final or known).  ``fold`` compares strings trimmed and lower-cased.
    ``follow`` hands the wait to another waiter, its variables bound to fields of the answer
    (``binds``: variable -> fields, the first non-empty one).

    ``each`` (a JMESPath naming a list, ``@`` for the answer itself) makes the argument a
    per-element one: its value is the list of ``argument`` evaluated on every element, a
    null or missing value kept as null.  A JMESPath projection (``[].status``) drops those
    elements, so a job with no status would vanish from the wait instead of counting as
    not final; :func:`each_value` keeps them.
    """

    state: Literal["success", "failure", "retry", "follow"]
    matcher: Annotated[Literal["path", "pathAll", "pathAny", "pathNone", "error"], Meta(description="Default path.")] = (
        "path")
    argument: Annotated[
        str | None, Meta(description="JMESPath on the answer (path matchers); with each, on each element.")
    ] = None
    each: Annotated[
        str | None,
        Meta(
            description="JMESPath naming a list (@: the answer): the argument's value is the list of its value on every element, null kept (a JMESPath projection drops nulls)."
        ),
    ] = None
    # The values (a tuple, after __post_init__) or the set of a status enumeration it expects.
    given: Annotated[
        str | float | bool | None | Annotated[tuple[Any, ...], Meta(min_length=1)] | StatusSet,
        Meta(description="A value, a list of values (any of them), or a set of a status enumeration."),
    ] = field(default=None, name="expected")
    fold: Annotated[bool, Meta(description="Compare strings trimmed and lower-cased.")] = False
    waiter: Annotated[WaiterName | None, Meta(description="The waiter a follow acceptor hands over to.")] = None
    binds: Annotated[
        Mapping[str, Annotated[tuple[str, ...], Meta(min_length=1)]],
        Meta(
            description="Variables of the followed waiter's request: the first non-empty of these fields of the answer."
        ),
    ] = field(default_factory=frozen_map)

    schema_extra: ClassVar[dict[str, Any]] = {
        "allOf": [
            {
                "if": {"properties": {"state": {"const": "follow"}}},
                "then": {"required": ["waiter"]},
                "else": {"not": {"anyOf": [{"required": ["waiter"]}, {"required": ["binds"]}]}},
            },
            {
                "if": {"properties": {"matcher": {"const": "error"}}, "required": ["matcher"]},
                "then": {"required": ["expected"], "not": {"required": ["argument"]}},
                "else": {"required": ["argument", "expected"]},
            },
        ]
    }

    def __post_init__(self) -> None:
        if self.state == "follow" and self.waiter is None:
            raise ValueError("a `follow` acceptor names its `waiter`")
        if self.state != "follow":
            none_of(self, ("waiter", "binds"), f"state: {self.state}")
        if self.matcher == "error":
            if self.given is None:
                raise ValueError("an `error` acceptor gives the statuses it `expected`")
            none_of(self, ("argument",), "matcher: error")
        elif self.argument is None or self.given is None:
            raise ValueError("give `argument` and `expected`")
        if not isinstance(self.given, (tuple, StatusSet)):
            force_setattr(self, "given", (self.given,))
        freeze(self, "given", "binds")

    @property
    def expected(self) -> tuple[Any, ...]:
        """The values it expects (none when it expects a set of a status enumeration)."""
        return self.given if isinstance(self.given, tuple) else ()

    @property
    def statuses(self) -> StatusEnum | None:
        return self.given.statuses if isinstance(self.given, StatusSet) else None

    @property
    def within(self) -> str:
        """The set of ``statuses`` (``set:`` in the table)."""
        return self.given.within if isinstance(self.given, StatusSet) else "final"

    @property
    def follow(self) -> str | None:
        """The name of the waiter a ``follow`` acceptor hands over to."""
        return self.waiter.name if self.waiter is not None else None

    def accepts(self, value: Any) -> bool:
        """Whether one value is what the acceptor expects."""
        if self.fold and isinstance(value, str):
            value = value.strip().lower()
        if self.statuses is not None:
            return self.statuses.holds(self.within, value)
        return value in self.expected

    def matches(self, answer: Any, status: int | None) -> bool:
        """Whether the acceptor holds for an answer (``status``: the HTTP status of a failed
        request, whose answer is then its error body)."""
        if self.matcher == "error":
            return status is not None and status in self.expected
        if status is not None:
            return False
        value = each_value(self.each, self.argument, answer)
        if self.matcher == "path":
            return self.accepts(value)
        if not isinstance(value, list):
            return self.matcher == "pathNone" and value is None
        if self.matcher == "pathAll":
            return bool(value) and all(self.accepts(v) for v in value)
        if self.matcher == "pathAny":
            return any(self.accepts(v) for v in value)
        return not any(self.accepts(v) for v in value)

    def value(self, answer: Any) -> Any:
        """The argument's value in an answer (folded), as an "unknown status" message shows it."""
        value = each_value(self.each, self.argument, answer)
        return value.strip().lower() if self.fold and isinstance(value, str) else value


class Counts(Struct, frozen=True, forbid_unknown_fields=True):
    """What a waiter counts in each answer (a progress line as the counts change): the values of
    ``argument`` (a list; per element of ``each`` as :class:`Acceptor` says, so that an
    element without a value is counted as ``<missing>``), ordered as the status enumeration
    ``statuses`` lists them."""

    argument: Annotated[
        str, Meta(description="JMESPath on the answer: the list of values counted (with each: on each element).")
    ]
    each: Annotated[
        str | None,
        Meta(
            description="JMESPath naming a list (@: the answer): argument is read on each element, a null or missing value counted as <missing> (a projection would drop it)."
        ),
    ] = None
    statuses: Annotated[StatusesName | None, Meta(description="The status enumeration that orders them.")] = None
    # Filled in by the builder when the table says none (a cross-entry default).
    noun: Annotated[
        str,
        Meta(
            description="What the counted values are of, in the counts line (default: the enumeration's collection, else items)."
        ),
    ] = ""

    def tally(self, answer: Any) -> dict[str, int]:
        """How many times each value of the argument occurs in an answer, in the order of the
        status enumeration's values, then the other values by name (text: ``str``; null or
        missing: ``<missing>``)."""
        values = each_value(self.each, self.argument, answer)
        found: dict[str, int] = {}
        for value in values if isinstance(values, list) else ():
            key = value if isinstance(value, str) else MISSING if value is None else str(value)
            found[key] = found.get(key, 0) + 1
        order = list(self.statuses.values) if self.statuses else []
        return {k: found[k] for k in [*(k for k in order if k in found), *sorted(k for k in found if k not in order)]}


class Waiter(Struct, frozen=True, forbid_unknown_fields=True):
    """Ask a request (or walk an enumeration) until an acceptor says success or failure (engine/polling.py); a waiter with neither is a watch's (an action's watch:), whose answers are the engine's looks.

    It waits ``delay`` between answers, at most ``timeout`` (an option, seconds in total).  What
    it produces: the first non-empty string of the ``result`` fields of the last answer, the
    ``counts`` (``result: counts``: ``{"total", "by_status"}``), or the answer itself.
    """

    acceptors: Annotated[tuple[Acceptor, ...], Meta(min_length=1)]
    label: Annotated[Annotated[str, Meta(min_length=1)], Meta(description="How messages name the wait.")]
    help: str = ""
    request: Annotated[EndpointName | None, Meta(description="The endpoint asked each time.")] = None
    enumeration: Annotated[
        EnumerationName | None, Meta(description="Or: every page of this enumeration (the answer is the list of its items).")
    ] = None
    otherwise: Annotated[
        Literal["retry", "failure"], Meta(description="The state when no acceptor matches (default retry).")
    ] = "retry"
    result: Annotated[
        Literal["counts"] | Annotated[tuple[str, ...], Meta(min_length=1)] | None,
        Meta(
            description="What the waiter produces: the first non-empty string of these fields, or counts; default the last answer."
        ),
    ] = None
    delay: Delay = field(default_factory=Delay)
    timeout: Annotated[str | None, Meta(description="The option bounding the whole wait (seconds).")] = None
    message: Annotated[
        str | None, Meta(description="The log line of a retry (template: the dimension id and {wait}).")
    ] = None
    progress: Annotated[str | None, Meta(description="The label of the counts line (template).")] = None
    counts: Counts | None = None
    name: str = field(default="", name=KEY)

    schema_extra: ClassVar[dict[str, Any]] = {
        "oneOf": [
            {"required": ["request"], "not": {"required": ["enumeration"]}},
            {"required": ["enumeration"], "not": {"required": ["request"]}},
            {"not": {"anyOf": [{"required": ["request"]}, {"required": ["enumeration"]}]}},
        ]
    }

    def __post_init__(self) -> None:
        if self.request is not None and self.enumeration is not None:
            raise ValueError("give `request` or `enumeration`, not both")

    @property
    def followed(self) -> Mapping[str, Waiter]:
        """Every waiter a ``follow`` acceptor may hand over to, by name."""
        return MappingProxyType({a.waiter.name: a.waiter for a in self.acceptors if a.waiter is not None})

    @property
    def endpoints(self) -> list[Endpoint]:
        found = [self.request] if self.request else list(self.enumeration.endpoints if self.enumeration else ())
        for other in self.followed.values():
            found += other.endpoints
        return list(dict.fromkeys(found))

    @property
    def scans(self) -> list[tuple[Endpoint, Pagination]]:
        return self.enumeration.scans if self.enumeration else []


# -------------------------------------------------------------------- steps
class StepParam(Struct, frozen=True, forbid_unknown_fields=True):
    """One ``with:`` value a step or a combine takes (``steps:``, ``combines:``): its type and help."""

    type: Literal["endpoint", "enumeration", "part", "template", "text", "integer", "texts", "jmespath", "progress",
                  "columns", "column_names"]
    help: Annotated[str, Meta(min_length=1)]
    optional: bool = False
    binds: tuple[str, ...] = ()  # variables the step binds itself for this endpoint or template
    default: Any = None
    name: str = field(default="", name=KEY)

    def __post_init__(self) -> None:
        freeze(self, "default")


class StepDef(Struct, frozen=True):
    """A named step of the table (behaviour no generic part can express, ``engine/steps/``) or
    a named combine (``engine/combines/``): its help and the typed ``with:`` values it takes."""

    help: str = ""
    params: Mapping[str, StepParam] = field(default_factory=frozen_map, name="with")
    # What the step's value (or one element of the combine) is: the table's ``output:``,
    # frozen; the builder turns it into each dimension's :class:`Output` (``outputs.of_dimension``).
    output: Any = None
    name: str = field(default="", name=KEY)

    def __post_init__(self) -> None:
        named(self, "params")
        freeze(self, "output")


COLUMN_TYPES = ("number", "string", "boolean", "json")


class Column(Struct, frozen=True):
    """One column of a flat table a step builds (a ``columns`` value of its ``with:``): its name,
    the JMESPath expression that reads it from one document per row (``from``) and its type
    (``COLUMN_TYPES``: the value is converted to it, or null)."""

    name: str
    source: str = field(name="from")
    type: str = "json"


MISSING = "<missing>"  # how counts and messages name a value that is null or missing


def each_value(each: str | None, argument: str | None, answer: Any) -> Any:
    """The value of an acceptor's or a counts' ``argument`` in an answer: on the answer itself,
    or with ``each``, the list of its value on every element of the list ``each`` names (null
    where an element has none, or is no object: no element is ever dropped); None when
    ``each`` names no list."""
    if each is None:
        return _compiled(argument)(answer) if argument else answer
    items = _compiled(each)(answer)
    if not isinstance(items, list):
        return None
    if not argument:
        return list(items)
    compiled = _compiled(argument)
    return [compiled(item) for item in items]


def _compiled(expression: str) -> Any:
    from ..base.expressions import compile_expression

    cached = _EXPRESSIONS.get(expression)
    if cached is None:
        cached = _EXPRESSIONS[expression] = compile_expression(expression, "table")
    return cached


_EXPRESSIONS: dict[str, Any] = {}


class StepArgs(Mapping[str, Any]):
    """A step's ``with:`` values, typed by its declaration: endpoints and enumerations are the
    model's objects, lists are tuples, mappings read-only.  The typed getters say what a step
    expects (and fail loudly on a table that the lints should have refused)."""

    __slots__ = ("_values",)
    _values: Mapping[str, Any]

    def __init__(self, values: Mapping[str, Any]):
        object.__setattr__(self, "_values", MappingProxyType(dict(values)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("StepArgs is read-only")

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def _typed(self, key: str, kind: type[T] | tuple[type, ...]) -> Any:
        value = self._values[key]
        if not isinstance(value, kind):
            raise TypeError(f"with.{key} is {type(value).__name__}, not {kind}")
        return value

    def endpoint(self, key: str) -> Endpoint:
        return self._typed(key, Endpoint)

    def optional_endpoint(self, key: str) -> Endpoint | None:
        return self.endpoint(key) if self._values.get(key) is not None else None

    def enumeration(self, key: str) -> Enumeration:
        return self._typed(key, Enumeration)

    def text(self, key: str) -> str:
        return self._typed(key, str)

    def integer(self, key: str) -> int:
        return self._typed(key, int)

    def texts(self, key: str) -> tuple[str, ...]:
        return self._typed(key, tuple)

    def progress(self, key: str) -> Progress:
        return self._typed(key, Progress)

    def columns(self, key: str) -> tuple[Column, ...]:
        """A ``columns`` value: the column definitions, in the table's order."""
        value = self._typed(key, tuple)
        if not all(isinstance(c, Column) for c in value):
            raise TypeError(f"with.{key} is not a list of columns")
        return value

    def optional_texts(self, key: str) -> tuple[str, ...] | None:
        """A ``texts`` or ``column_names`` value that may be left out (None then)."""
        return self.texts(key) if self._values.get(key) is not None else None

    def expression(self, key: str) -> Any:
        """A ``jmespath`` value as a function of a document (``base.expressions``: compiled
        once per process and expression, read without jmespath's tree interpreter)."""
        return _compiled(self.text(key))

    @property
    def endpoints(self) -> dict[str, Endpoint]:
        return {k: v for k, v in self._values.items() if isinstance(v, Endpoint)}

    @property
    def enumerations(self) -> dict[str, Enumeration]:
        return {k: v for k, v in self._values.items() if isinstance(v, Enumeration)}

    def plain(self) -> dict[str, Any]:
        """The values as the table wrote them (endpoints and enumerations by name)."""
        return {k: v.name if isinstance(v, (Endpoint, Enumeration)) else _plain_progress(v)
                if isinstance(v, Progress) else _plain_columns(v) if _is_columns(v) else plain_json(v)
                for k, v in self._values.items()}


def _is_columns(value: Any) -> bool:
    return isinstance(value, tuple) and bool(value) and all(isinstance(c, Column) for c in value)


def _plain_columns(columns: tuple[Column, ...]) -> list[dict[str, str]]:
    return [{"name": c.name, "from": c.source, "type": c.type} for c in columns]


def _plain_progress(progress: Progress) -> dict[str, Any]:
    out: dict[str, Any] = {"label": progress.label, "unit": progress.unit, "action": progress.action}
    if progress.eta:
        out["eta"] = True
    out["counts"] = progress.counts
    return out


# -------------------------------------------------------------------- parts
class BasePart(Struct, frozen=True, kw_only=True):
    """What every kind of part has: its name, when it runs, how its answer is transformed and
    where a files action writes it."""

    name: str
    when: Condition | None = None
    shape: Transform | None = None
    file: str | None = None  # the path template a files action writes
    format: str | None = None  # "markdown" (the value is text) or JSON
    failure_id: str | None = None  # how a failure of this part is labelled (aggregated dimensions)
    # Files actions: said once after the command when the shape gave nothing to write for some of
    # the ids the part ran for (``{count}`` of ``{total}``): an RSI that is not created yet.
    absent: str | None = None

    @property
    def endpoints(self) -> list[Endpoint]:
        """Every endpoint this part may call."""
        return []

    @property
    def scans(self) -> list[tuple[Endpoint, Pagination]]:
        """The paginated requests this part may walk (its own, an enumeration's)."""
        return []

    @property
    def binary(self) -> bool:
        return False


class RequestPart(BasePart, frozen=True, kw_only=True):
    """One request (``request:``), optionally selecting the entries of its answer (``items:``)."""

    request: EndpointName
    items: Items | None = None

    @property
    def endpoints(self) -> list[Endpoint]:
        return [self.request]

    @property
    def binary(self) -> bool:
        return self.request.binary


class PagedPart(BasePart, frozen=True, kw_only=True):
    """A paginated request: one page, or every page by a scan (``pagination:``)."""

    request: EndpointName
    pagination: Pagination
    empty_probe: EndpointName | None = None  # asked when a scan found nothing: does the id exist?
    empty_probe_mode: str = "fail"  # "warn": an unknown id with an empty list is a warning
    count: str | None = None  # the collection counted on the "wrote" line

    @property
    def endpoints(self) -> list[Endpoint]:
        return [self.request] + ([self.empty_probe] if self.empty_probe else [])

    @property
    def scans(self) -> list[tuple[Endpoint, Pagination]]:
        return [(self.request, self.pagination)]


class FanOutPart(BasePart, frozen=True, kw_only=True):
    """The same request for every item an enumeration lists (``each:``), each written to its file."""

    each: EnumerationName
    request: EndpointName
    progress: Progress | None = None

    @property
    def endpoints(self) -> list[Endpoint]:
        return [self.request, *self.each.endpoints]

    @property
    def scans(self) -> list[tuple[Endpoint, Pagination]]:
        return [(self.each.request, self.each.pagination)]


class StepPart(BasePart, frozen=True, kw_only=True):
    """A named step (``step:``) with its typed ``with:`` values; a waiter may produce its input."""

    step: StepDef
    params: StepArgs = field(default_factory=lambda: StepArgs({}))
    wait: WaiterName | None = None
    items: Items | None = None
    missing: Missing | None = None

    @property
    def layout(self) -> str | None:
        """The path template of the files the step writes (``with.layout``)."""
        value = self.params.get("layout")
        return value if isinstance(value, str) else None

    @property
    def endpoints(self) -> list[Endpoint]:
        found = list(self.params.endpoints.values())
        for enum in self.params.enumerations.values():
            found += enum.endpoints
        if self.wait:
            found = self.wait.endpoints + found
        return list(dict.fromkeys(found))

    @property
    def scans(self) -> list[tuple[Endpoint, Pagination]]:
        return [(e.request, e.pagination) for e in self.params.enumerations.values()]

    @property
    def binary(self) -> bool:
        return any(e.binary for e in self.params.endpoints.values())


class WaitPart(BasePart, frozen=True, kw_only=True):
    """A waiter on its own (``wait:`` without a step): the part's value is what the waiter
    produces (``bl jobs wait``); a timeout of its waiter is the command's wait timeout."""

    wait: WaiterName

    @property
    def endpoints(self) -> list[Endpoint]:
        return self.wait.endpoints

    @property
    def scans(self) -> list[tuple[Endpoint, Pagination]]:
        return self.wait.scans


class ArchiveEntry(BasePart, frozen=True, kw_only=True):
    """A part of a download-task archive: a request or a step run per job into ``entry``."""

    part: EntryPart
    entry: str = ""  # the entry's path template inside the archive (``{job}``)
    required: bool = False  # a job succeeds only when this part succeeds
    failures: str | None = None  # the manifest key of this part's failures (not required)
    label: str | None = None  # how a failure of this part is named

    @property
    def endpoints(self) -> list[Endpoint]:
        return self.part.endpoints

    @property
    def scans(self) -> list[tuple[Endpoint, Pagination]]:
        return self.part.scans

    @property
    def binary(self) -> bool:
        return self.part.binary


Part = RequestPart | PagedPart | FanOutPart | StepPart | WaitPart | ArchiveEntry


class Watch(Struct, frozen=True, forbid_unknown_fields=True):
    """With this flag option given, the command is run again and again under this waiter (engine/watching.py): its combine is evaluated at each look, each change of its state is a line on stderr, and the watch ends when the combine is settled or the waiter says success (bl compare --watch)."""

    option: Annotated[str, Meta(description="The flag option that asks for the watch.")]
    waiter: Annotated[
        WaiterName,
        Meta(
            description="The waiter (waiters:) whose acceptors, delay, counts and timeout run the looks; its answer is the looked-at jobs and whether the combine is settled."
        ),
    ]


class Combine(Struct, frozen=True):
    """An action's named combine (``combine:``): what every id's value together becomes - the
    printed elements, the Python client's and the MCP tool's result (``engine/combines/``)."""

    definition: StepDef
    params: StepArgs = field(default_factory=lambda: StepArgs({}))

    @property
    def name(self) -> str:
        return self.definition.name


class Archive(Struct, frozen=True, forbid_unknown_fields=True):
    """The parts are entries of a download-task archive (one ZIP per task)."""

    file: str
    task_request: EndpointName
    kind: str = ""
    progress: Progress | None = None
    order: tuple[str, ...] = ()  # the builder fills in the parts' order when the table says none


class Select(Struct, frozen=True, forbid_unknown_fields=True):
    """Which parts run, chosen by the value of an option."""

    option: str
    choices: Mapping[str, tuple[str, ...]]

    def __post_init__(self) -> None:
        freeze(self, "choices")


class Element(Struct, frozen=True):
    """How one id's selected parts become its stdout element."""

    kind: str  # "part" (the one selected part, or the named one), "object" ({id_key: id, part: value...}), "shape"
    part: str | None = None
    id_key: str | None = None
    shape: Transform | None = None

    @classmethod
    def of(cls, data: Any) -> Element:
        """A dimension's ``element:``: absent (the one selected part), a part's name, or a mapping
        (``schema.Element``: ``compose`` or ``shape`` with its ``with``)."""
        if data is None or isinstance(data, str):
            return cls("part", part=None if data in (None, "part") else data)
        if "compose" in data:
            return cls("object", id_key=data["compose"])
        return cls("shape", shape=Transform(data["shape"], frozen_json(data.get("with") or {})))


class Dimension(Struct, frozen=True):
    name: str
    option: Option | None
    parts: Mapping[str, AnyPart]
    element: Element
    select: Select | None = None
    archive: Archive | None = None
    serial: bool = False
    progress: Progress | None = None
    aggregate_failures: str | None = None
    composite: bool = False
    # What one printed element is (printing actions): its schema, rows and columns.
    output: Output | None = None

    def __post_init__(self) -> None:
        freeze(self, "parts")

    @property
    def kind(self) -> DimensionKind:
        return DIMENSION_KINDS[self.name]

    def selected(self, options: Mapping[str, Any]) -> list[Part]:
        """The parts that run for these option values (``select`` then ``when``)."""
        names = list(self.parts)
        if self.select:
            names = list(self.select.choices[options[self.select.option]])
        parts = [self.parts[n] for n in names]
        return [p for p in parts if p.when is None or p.when.holds(options)]

    @property
    def usage(self) -> str:
        """How the ids of this dimension are given, for usage lines."""
        return self.kind.usage_for(self.option)


# ------------------------------------------------------------------ actions
class Section(Struct, frozen=True, forbid_unknown_fields=True):
    """A section of a composite command: another action, run with these options."""

    resource: str
    action: str
    options: Mapping[str, Any] = field(default_factory=frozen_map)
    name: str = field(default="", name=KEY)

    def __post_init__(self) -> None:
        freeze(self, "options")


class UntilStatus(Struct, frozen=True, forbid_unknown_fields=True):
    """An item is finished when its field is in the final set of the status enumeration."""

    field_: str = field(name="field")
    statuses: StatusesName


class Until(Struct, frozen=True, forbid_unknown_fields=True):
    """--until-done: the flag option (it implies the sync) and the waiter whose looks decide when to sync again: after a look in which an item reached a final status, until the waiter says success.

    An item is finished when its field ``status.field`` is in the set ``final`` of
    ``status.statuses``.  Files of the id as a whole (the export) are fetched again only when
    an item finished since they were last fetched."""

    option: Annotated[str, Meta(description="The flag option.")]
    wait: Annotated[WaiterName, Meta(description="A waiter of waiters: (its delay and timeout options are the action's).")]
    status: Annotated[
        UntilStatus,
        Meta(description="An item is finished when its field is in the final set of the status enumeration."),
    ]

    def finished(self, item_state: Mapping[str, Any]) -> bool:
        return self.status.statuses.holds("final", item_state.get(self.status.field_))


class Sync(Struct, frozen=True, forbid_unknown_fields=True):
    """Sync mode (--sync): the list section is fetched first and compared with the manifest; the other sections fetch only the items that changed.

    (``compose.sync``; ``engine/sync.py``): the ``list`` section first, its items (by ``key``)
    compared on their ``state`` fields with the ``manifest`` of the last sync; the ``refresh``
    sections every time; the others for the changed items only."""

    option: Annotated[str, Meta(description="The flag option that turns sync on.")]
    list: Annotated[str, Meta(description="The section whose file lists the items (fetched first on every sync).")]
    key: Annotated[str, Meta(description="The field of an item that identifies it.")]
    binds: Annotated[str, Meta(description="The template variable an item is (the enumerations' binds: job).")]
    state: Annotated[
        Annotated[tuple[str, ...], Meta(min_length=1)],
        Meta(description="Fields of an item whose change means its files are fetched again."),
    ]
    refresh: Annotated[tuple[str, ...], Meta(description="Sections written again on every sync (lists, aggregates).")]
    manifest: Annotated[str, Meta(description="Where the manifest is written (template: the id).")]
    until: Annotated[
        Until | None,
        Meta(
            description="--until-done: the flag option (it implies the sync) and the waiter whose looks decide when to sync again: after a look in which an item reached a final status, until the waiter says success."
        ),
    ] = None


class Compose(Struct, frozen=True, forbid_unknown_fields=True):
    """A composite command (``bl pull``): sections of other actions, chosen by an option."""

    option: str
    default: tuple[str, ...]
    sections: Annotated[Mapping[str, Section], Meta(min_length=1)]
    dimensions: Annotated[tuple[Literal["group", "job", "task"], ...], Meta(min_length=1)]
    sync: Annotated[
        Sync | None,
        Meta(
            description="Sync mode (--sync): the list section is fetched first and compared with the manifest; the other sections fetch only the items that changed."
        ),
    ] = None

    def __post_init__(self) -> None:
        named(self, "sections")


class Action(Struct, frozen=True):
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
    combine: Combine | None = None  # all ids' values become the elements together (``bl compare``)
    min_ids: int | None = None  # fewer different ids is a usage error (before any request)
    min_ids_message: str | None = None
    watch: Watch | None = None  # ``--watch``: the command again at every look of a waiter (``bl compare``)

    def __post_init__(self) -> None:
        freeze(self, "dimensions")

    @property
    def watch_options(self) -> tuple[str, ...]:
        """The options of the watch alone (its flag, its waiter's timeout and delay): a command-line
        mode that waits, so the Python client and the MCP tools do not take them."""
        if self.watch is None:
            return ()
        waiter = self.watch.waiter
        return tuple(n for n in (self.watch.option, waiter.timeout, waiter.delay.option) if n)

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

    def flag_of(self, name: str) -> str:
        """How messages name an option of this action (its first flag)."""
        opt = self.option(name)
        return opt.flag if opt is not None else f"--{name.replace('_', '-')}"

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

    @property
    def waits(self) -> bool:
        """True when the action's purpose is to wait (a part is a waiter on its own: ``jobs wait``)."""
        return any(isinstance(p, WaitPart) for d in self.dimensions.values() for p in d.parts.values())

    @property
    def stdout_options(self) -> tuple[str, ...]:
        """Options that only shape what is printed (``--output``, ``--query``): a Python caller
        gets values, so the Python client and the MCP tools leave them out or handle them."""
        return tuple(o.name for o in self.options if o.name in STDOUT_OPTIONS)


STDOUT_OPTIONS = ("output", "query")


class Resource(Struct, frozen=True):
    name: str
    help: str
    actions: Mapping[str, Action]
    command: bool = False
    description: str | None = None  # a command's (``command: true``) page: its one action's help


# ------------------------------------------------------------ built-in commands
class Command(Struct, frozen=True):
    """A command of bl itself (``commands:`` in the table): a group of actions, or a leaf with
    its arguments (positionals) and options.  Its handler is registered in ``cli.builtins``."""

    path: str  # "config set", "describe"
    help: str
    description: str | None = None
    notes: tuple[str, ...] = ()
    arguments: tuple[Option, ...] = ()
    options: tuple[Option, ...] = ()
    actions: Mapping[str, Command] = field(default_factory=frozen_map)

    def __post_init__(self) -> None:
        freeze(self, "actions")

    @property
    def name(self) -> str:
        return self.path.rsplit(" ", 1)[-1]

    @property
    def leaves(self) -> list[Command]:
        """This command when it is a leaf, else its actions."""
        return list(self.actions.values()) if self.actions else [self]

    @property
    def defaults(self) -> dict[str, Any]:
        return {o.name: o.default_value for o in (*self.arguments, *self.options)}


# ------------------------------------------------------------------- mcp
class Toolset(Struct, frozen=True, forbid_unknown_fields=True):
    """A toolset of the MCP server (``mcp.toolsets``): the resources whose tools it serves."""

    help: Annotated[str, Meta(min_length=1)]
    resources: Annotated[tuple[str, ...], Meta(min_length=1)]
    name: str = field(default="", name=KEY)


class Toolsets(Struct, frozen=True, forbid_unknown_fields=True):
    """The MCP server's toolsets and those served by default (``mcp:`` in the table; bl mcp serve
    --toolsets)."""

    toolsets: Mapping[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], Toolset]
    default: Annotated[tuple[str, ...], Meta(min_length=1)]
    budget: Annotated[int, Meta(ge=1024, description=(
        "Bytes of the tools array of tools/list that the default toolsets may take (compact JSON, UTF-8): "
        "what an agent reads before its first call; make docs reports the use."))] = 24 * 1024

    schema_extra: ClassVar[dict[str, Any]] = {"properties": {"toolsets": {"propertyNames": {"not": {"const": "all"}}}}}

    def __post_init__(self) -> None:
        if "all" in self.toolsets:
            raise ValueError("`all` is every toolset, not one of its own")
        named = {key: replace(toolset, name=key) for key, toolset in self.toolsets.items()}
        force_setattr(self, "toolsets", MappingProxyType(named))  # read-only, each named by its key


# ---------------------------------------------------------------------- spec
class Spec(Struct, frozen=True):
    endpoints: Mapping[str, Endpoint]
    enumerations: Mapping[str, Enumeration]
    options: Mapping[str, Option]
    resources: Mapping[str, Resource]
    services: Mapping[str, Service] = field(default_factory=frozen_map)
    global_options: tuple[Option, ...] = ()
    commands: Mapping[str, Command] = field(default_factory=frozen_map)
    steps: Mapping[str, StepDef] = field(default_factory=frozen_map)
    schemas: Schemas = field(default_factory=Schemas)  # the table's shared response shapes (``schemas:``)
    combines: Mapping[str, StepDef] = field(default_factory=frozen_map)
    waiters: Mapping[str, Waiter] = field(default_factory=frozen_map)
    statuses: Mapping[str, StatusEnum] = field(default_factory=frozen_map)
    mcp: Toolsets = field(default_factory=lambda: Toolsets(frozen_map(), ()))

    def service(self, name: str) -> Service:
        return self.services[name]

    @property
    def default_service(self) -> Service:
        return self.services[DEFAULT_SERVICE]

    def global_option(self, name: str) -> Option:
        return next(o for o in self.global_options if o.name == name)

    def action(self, resource: str, action: str) -> Action:
        return self.resources[resource].actions[action]

    @property
    def actions(self) -> list[Action]:
        return [a for r in self.resources.values() for a in r.actions.values()]

    def section_action(self, section: Section) -> Action:
        return self.action(section.resource, section.action)

    @property
    def command_leaves(self) -> list[Command]:
        """Every runnable built-in command (``config set``, ..., ``describe``)."""
        return [leaf for command in self.commands.values() for leaf in command.leaves]

    def command(self, path: str) -> Command:
        """The built-in command at a path such as "sandbox serve" or "describe"."""
        return next(c for c in self.command_leaves if c.path == path)

    def option_types(self) -> dict[str, str]:
        """Option name -> table type over shared and per-action options (first definition wins)."""
        types: dict[str, str] = {}
        for name, opt in self.options.items():
            types[name] = opt.type
        for action in self.actions:
            for opt in action.options:
                types.setdefault(opt.name, opt.type)
        return types

    def param_schema(self, template: Any) -> dict[str, Any]:
        """The JSON Schema of a query or body value whose template is one ``{variable}``: a page
        variable is an integer, a dimension's id a string, an option's value its type's."""
        name = lone_var(template)
        if name in PAGE_VARS:
            return {"type": "integer"}
        if name is None or name in DIMENSIONS:
            return {"type": "string"}  # text, or the id of the current dimension, one at a time
        return option_type(self.option_types().get(name, "str")).schema()

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
                found += part.endpoints
        return list(dict.fromkeys(found))


# A field of one of these types names another entry of the table (see ``Name``): mypy sees the
# entry the builder resolves the name to.
if TYPE_CHECKING:
    AnyPart: TypeAlias = Part
    EntryPart: TypeAlias = RequestPart | StepPart
    EndpointName: TypeAlias = Endpoint
    EnumerationName: TypeAlias = Enumeration
    WaiterName: TypeAlias = Waiter
    StatusesName: TypeAlias = StatusEnum
else:
    AnyPart = Made("AnyPart", (), {"target": (BasePart,)})
    EntryPart = Made("EntryPart", (), {"target": (RequestPart, StepPart)})
    EndpointName = Name("EndpointName", (), {"table": "endpoints", "target": Endpoint})
    EnumerationName = Name("EnumerationName", (), {"table": "enumerations", "target": Enumeration})
    WaiterName = Name("WaiterName", (), {"table": "waiters", "target": Waiter})
    StatusesName = Name("StatusesName", (), {"table": "statuses", "target": StatusEnum})
