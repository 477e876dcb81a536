"""The shape of the endpoint table: what every key of ``spec/benchloop.yaml`` is.

These records are what the compiler decodes the YAML into (``msgspec.convert``: a wrong type,
an unknown key or a missing one is refused with its path, which ``compiler.py`` turns into
``file:line: key``), and the source of ``spec/benchloop.schema.json``, which ``python -m
codegen.docs`` generates from them (``--check`` fails on a hand edit) so that editors keep
completion and hover text: each field's description is its ``Meta(description=...)``.

What a type cannot say (two keys that exclude each other, one that needs another) is the
record's ``__post_init__``, so that it is refused at the same place, with the same path; what
names another entry of the table (an endpoint, an enumeration, a waiter...) is checked by
the lints (``lint.py``), which see the whole table.

Every record the engine reads as the table writes it (a pagination, an option, ``items:``,
a waiter and its acceptors, a compose, a select, an archive, a step's parameters...) is
declared once, in ``model.py``, and imported here: one class for the YAML and the model,
and every command imports the model while this module is read only when a table is
compiled.  Declared here are the mappings the model reads in another form (an endpoint's
templates as parameters, a part as one of its kinds, a dimension, an action, a service's
sources, a command's arguments, a response) and the table itself; ``build.py`` maps those.

A new key of the table is one field of its record (and, where it names another entry, one lint).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from msgspec import Meta, Struct, field

# Records that are the model's too (table/model.py declares them: every command imports the model,
# while this module is read only when a table is compiled).  codegen.table_schema reads each
# record's ``schema_extra`` here, by its name.
from .model import (  # noqa: F401 - records of the table
    Acceptor,
    Archive,
    Compose,
    Counts,
    Delay,
    Derived,
    Enumeration,
    Items,
    ItemsFilter,
    Missing,
    Option,
    OptionMessages,
    Pagination,
    PaginationMode,
    Progress,
    Section,
    Select,
    ServiceCheck,
    Setting,
    StatusEnum,
    StatusSet,
    StepParam,
    Sync,
    Toolset,
    Toolsets,
    Transform,
    TransformName,
    Until,
    UntilStatus,
    Waiter,
    Watch,
    none_of,
    one_of,
    unique,
)


class Record(Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A mapping of the table: its keys are the fields, any other key is refused."""

    # Extra JSON Schema of the record's definition (what __post_init__ checks, for editors).
    schema_extra: ClassVar[dict[str, Any]] = {}


class Endpoint(Record, frozen=True):
    """One HTTP operation of a backend (``endpoints:``): method, path template, query and body templates, and what a success answers."""

    method: Literal["GET", "POST"]
    path: Annotated[str, Meta(pattern="^/")]
    help: Annotated[str, Meta(min_length=1)]
    query: dict[str, str | int | bool] | None = None
    body: dict[str, str | int | bool] | None = None
    response: Response | None = None
    keep_empty: Annotated[
        list[str] | None, Meta(description="Query parameters sent even when their value renders to an empty string.")
    ] = None
    service: Annotated[str | None, Meta(description="The service that serves it (default: benchloop).")] = None
    required: Annotated[
        list[str] | None,
        Meta(description="Query parameters and body fields the backend refuses the request without (400)."),
    ] = None

    schema_extra: ClassVar[dict[str, Any]] = {"properties": {"required": {"uniqueItems": True}}}

    def __post_init__(self) -> None:
        unique(self, "required")


class Part(Record, frozen=True):
    """One piece of what an id gives: a request (paged, or fanned out with ``each``), a step or a waiter."""

    request: str | None = None
    when: Annotated[
        Annotated[str, Meta(pattern="^(not )?[a-z_][a-z0-9_]*(\\|[a-z_][a-z0-9_]*)*$")] | None,
        Meta(
            description="Run the part only when the option is given (a flag set, a value not empty); several joined by '|': when any is; 'not ...': when none is."
        ),
    ] = None
    pagination: Pagination | None = None
    empty_probe: str | None = None
    empty_probe_mode: Literal["fail", "warn"] | None = None
    shape: Shape | None = None
    file: str | None = None
    format: Literal["json", "markdown"] | None = None
    count: str | None = None
    each: str | None = None
    progress: Progress | None = None
    failure_id: str | None = None
    absent: Annotated[
        str | None,
        Meta(
            description="Files actions: the line said after the command when this part's shape gave nothing to write for some ids ({count} of {total}), e.g. an RSI not created yet."
        ),
    ] = None
    step: str | None = None
    with_: dict[str, Any] | None = field(default=None, name="with")
    entry: str | None = None
    required: bool | None = None
    failures: str | None = None
    label: str | None = None
    wait: Annotated[
        str | None, Meta(description="A waiter (waiters:): alone, the part's value; before a step, its input.")
    ] = None
    items: Items | None = None
    missing: Missing | None = None
    output: Output | None = None

    schema_extra: ClassVar[dict[str, Any]] = {
        "oneOf": [
            {"required": ["request"], "not": {"anyOf": [{"required": ["step"]}, {"required": ["wait"]}]}},
            {"required": ["step"], "not": {"required": ["request"]}},
            {"required": ["wait"], "not": {"anyOf": [{"required": ["request"]}, {"required": ["step"]}]}},
        ]
    }

    def __post_init__(self) -> None:
        if self.step is not None:
            none_of(self, ("request",), "step")
        elif self.wait is not None:
            none_of(self, ("request",), "wait")
        elif self.request is None:
            raise ValueError("give one of `request`, `step` or `wait`")


class Element(Record, frozen=True):
    """How one id's parts become its element (the mapping form): an object of every part's
    value under the id (``compose``: the key of the id), or a transform of them (``shape``)."""

    compose: Annotated[str | None, Meta(description="The key of the id in the object of the parts' values.")] = None
    shape: Annotated[str | None, Meta(description="A transform (engine/transforms.py) of the parts' values.")] = None
    with_: dict[str, Any] | None = field(default=None, name="with")

    schema_extra: ClassVar[dict[str, Any]] = {"oneOf": [{"required": ["compose"]}, {"required": ["shape"]}]}

    def __post_init__(self) -> None:
        one_of(self, ("compose", "shape"))


class Dimension(Record, frozen=True):
    """How one kind of id (group, job or task) is served: its parts and its element."""

    parts: Annotated[dict[str, Part], Meta(min_length=1)]
    element: Annotated[
        str | Element | None,
        Meta(
            description="The part that is the element (a name), or how the parts become it; absent: the one selected part."
        ),
    ] = None
    select: Select | None = None
    serial: bool | None = None
    progress: Progress | None = None
    aggregate_failures: str | None = None
    archive: Archive | None = None
    output: Output | None = None


class ActionCombine1(Record, frozen=True):
    """A combine with its ``with:`` values."""

    name: str
    with_: dict[str, Any] | None = field(default=None, name="with")


class Action(Record, frozen=True):
    """One command of a resource (``bl RESOURCE ACTION``)."""

    help: Annotated[str, Meta(min_length=1)]
    writer: Literal["stdout", "files", "text"]
    options: dict[str, OptionRef] | None = None
    progress: Progress | None = None
    dimensions: Annotated[dict[Literal["group", "job", "task"], Dimension], Meta(min_length=1)] | None = None
    stdout_when: str | None = None
    compose: Compose | None = None
    id_options: list[Literal["group", "job", "task"]] | None = None
    max_ids: Annotated[int, Meta(ge=1)] | None = None
    max_ids_message: str | None = None
    error_field: str | None = None
    extra_args: Annotated[
        bool | None,
        Meta(
            description="Unknown arguments are handed to the command (not refused); global options go before the resource."
        ),
    ] = None
    combine: Annotated[
        str | ActionCombine1 | None,
        Meta(
            description="A named combine (combines:): every id's value together becomes the elements printed and returned."
        ),
    ] = None
    min_ids: Annotated[Annotated[int, Meta(ge=1)] | None, Meta(description="Fewer different ids is a usage error.")] = (
        None
    )
    min_ids_message: Annotated[str, Meta(min_length=1)] | None = None
    watch: Annotated[
        Watch | None,
        Meta(
            description="With this flag option given, the command is run again and again under this waiter (engine/watching.py): its combine is evaluated at each look, each change of its state is a line on stderr, and the watch ends when the combine is settled or the waiter says success (bl compare --watch)."
        ),
    ] = None

    schema_extra: ClassVar[dict[str, Any]] = {
        "oneOf": [
            {"required": ["dimensions"], "not": {"required": ["compose"]}},
            {"required": ["compose"], "not": {"required": ["dimensions"]}},
        ]
    }

    def __post_init__(self) -> None:
        one_of(self, ("dimensions", "compose"))


class Resource(Record, frozen=True):
    """A resource of the command line (``resources:``): its actions, or one command of its own."""

    help: Annotated[str, Meta(min_length=1)]
    actions: Annotated[dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9-]*$")], Action], Meta(min_length=1)]
    command: bool | None = None


class ServiceBaseUrl(Record, frozen=True):
    """Where the service's base URL comes from."""

    option: Annotated[
        str | None, Meta(description="The option of the running command that gives the value (its flag).")
    ] = None
    flag: Annotated[str, Meta(pattern="^--?[a-z][a-z0-9-]*$")] | None = None
    env: list[Annotated[str, Meta(pattern="^[A-Z_][A-Z0-9_]*$")]] | None = None
    config: Annotated[str | None, Meta(description="Key of the configuration file's profile table.")] = None
    default: str | None = None


class ServiceAuthCommand(Record, frozen=True):
    """A command that prints the key (its first line): named by these variables or this key of the configuration file."""

    env: list[Annotated[str, Meta(pattern="^[A-Z_][A-Z0-9_]*$")]] | None = None
    config: str | None = None


class ServiceAuth(Record, frozen=True):
    """The service's key: the header it goes in and where it comes from."""

    header: Annotated[str, Meta(pattern="^[A-Za-z0-9-]+$")]
    option: Annotated[
        str | None, Meta(description="The option of the running command that gives the value (its flag).")
    ] = None
    flag: Annotated[str, Meta(pattern="^--?[a-z][a-z0-9-]*$")] | None = None
    env: list[Annotated[str, Meta(pattern="^[A-Z_][A-Z0-9_]*$")]] | None = None
    config: Annotated[str | None, Meta(description="Key of the configuration file's profile table.")] = None
    default: str | None = None
    command: Annotated[
        ServiceAuthCommand | None,
        Meta(
            description="A command that prints the key (its first line): named by these variables or this key of the configuration file."
        ),
    ] = None
    keyring: Annotated[
        str | None,
        Meta(description="Key of the configuration file naming the key's entry in the OS keyring (the keyring extra)."),
    ] = None
    statuses: Annotated[list[Annotated[int, Meta(ge=400)]], Meta(min_length=1)] | None = None
    required: Annotated[str | None, Meta(description="The usage error when no key is found.")] = None


class Service(Record, frozen=True):
    """A backend the table talks to (``services:``): base URL, key and headers."""

    title: Annotated[str, Meta(min_length=1)]
    help: Annotated[str, Meta(min_length=1)]
    base_url: ServiceBaseUrl
    auth: ServiceAuth
    headers: Annotated[
        dict[Annotated[str, Meta(pattern="^[A-Za-z0-9-]+$")], str] | None,
        Meta(description="Headers of every request of the service; values are templates."),
    ] = None
    derived: Annotated[
        dict[str, Derived] | None,
        Meta(description="Template variables computed from another variable (lower-cased, looked up in map)."),
    ] = None
    login_hosts: Annotated[
        list[Annotated[str, Meta(pattern="^[A-Za-z0-9.-]+$")]] | None,
        Meta(
            description="Hosts of the service's SSO login page: a download redirected there is an authentication failure."
        ),
    ] = None
    error: Annotated[
        JsonSchema | None, Meta(description="The schema of the service's error bodies (every status of 400 or more).")
    ] = None
    check: Annotated[
        ServiceCheck | None, Meta(description="bl config check: one cheap authenticated request of the service.")
    ] = None


class Argument(Record, frozen=True):
    """A positional argument of a built-in command."""

    metavar: str
    help: Annotated[str, Meta(min_length=1)]
    choices: Annotated[list[str], Meta(min_length=1)] | None = None
    required: bool | None = None


class Command(Record, frozen=True):
    """A command of bl itself (``commands:``): a group of actions, or a leaf with its arguments and options."""

    help: Annotated[str, Meta(min_length=1)]
    description: str | None = None
    notes: list[str] | None = None
    arguments: dict[str, Argument] | None = None
    options: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], Option] | None = None
    actions: dict[str, Command] | None = None


class StepOutput(Record, frozen=True):
    """What a step's value is: an output (``json``, ``rows``, ``ids``), or rows of the columns a
    ``with:`` value of type columns names (``columns``)."""

    json: JsonSchema | None = None
    rows: Annotated[
        FieldPath | None, Meta(description="Where the element's rows are ([]: the element is the list of rows).")
    ] = None
    ids: Annotated[list[str] | None, Meta(description="Keys of the element shown in front of every row.")] = None
    columns: Annotated[
        str | None, Meta(description="The with: value (of type columns) whose columns the step's rows have.")
    ] = None

    schema_extra: ClassVar[dict[str, Any]] = {
        "oneOf": [
            {"required": ["json"], "not": {"required": ["columns"]}},
            {
                "required": ["columns"],
                "not": {"anyOf": [{"required": ["json"]}, {"required": ["rows"]}, {"required": ["ids"]}]},
            },
        ]
    }

    def __post_init__(self) -> None:
        one_of(self, ("json", "columns"))
        if self.columns is not None:
            none_of(self, ("rows", "ids"), "columns")


class Step(Record, frozen=True):
    """A named step (``steps:``): behaviour no generic part expresses, and the typed ``with:`` values it takes."""

    help: Annotated[str, Meta(min_length=1)]
    with_: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], StepParam] = field(name="with")
    items_from: Annotated[
        str | None,
        Meta(
            description="The with: value (an endpoint, or an earlier part) whose answer the part's items: select from."
        ),
    ] = None
    output: Annotated[StepOutput | None, Meta(description="What the step's value is (the part's output).")] = None


class Response(Record, frozen=True):
    """What a success answers: JSON with its schema (and the path of its collection of rows), or
    bytes or text of the given media types."""

    json: JsonSchema | None = None
    rows: Annotated[
        FieldPath | None, Meta(description="Where the answer's collection of rows is (an array of objects).")
    ] = None
    identity: Annotated[
        Annotated[dict[str, Annotated[str, Meta(pattern="^\\{[a-z_][a-z0-9_]*\\}$")]], Meta(min_length=1)] | None,
        Meta(
            description="Fields of the answer that must name the id asked for: field -> '{variable}' of the request. An answer naming another id is refused and asked again on a new connection; a missing or null field is accepted."
        ),
    ] = None
    binary: ContentTypes | None = None
    text: ContentTypes | None = None

    schema_extra: ClassVar[dict[str, Any]] = {
        "oneOf": [
            {"required": ["json"], "not": {"anyOf": [{"required": ["binary"]}, {"required": ["text"]}]}},
            {
                "required": ["binary"],
                "not": {
                    "anyOf": [
                        {"required": ["json"]},
                        {"required": ["text"]},
                        {"required": ["rows"]},
                        {"required": ["identity"]},
                    ]
                },
            },
            {
                "required": ["text"],
                "not": {
                    "anyOf": [
                        {"required": ["json"]},
                        {"required": ["binary"]},
                        {"required": ["rows"]},
                        {"required": ["identity"]},
                    ]
                },
            },
        ]
    }

    def __post_init__(self) -> None:
        one_of(self, ("json", "binary", "text"))
        if self.json is None:
            none_of(self, ("rows", "identity"), "binary" if self.binary is not None else "text")


class CombineDef(Record, frozen=True):
    """A named combine (``combines:``): what every id's value together becomes."""

    help: Annotated[str, Meta(min_length=1)]
    with_: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], StepParam] | None = field(default=None, name="with")
    output: Annotated[
        Output | Annotated[Literal["rows"], Meta(description="Each element is one row of an id's value.")] | None,
        Meta(description="What one element the combine makes is."),
    ] = None


class Output(Record, frozen=True):
    """What one printed element is: its JSON Schema, the path of its rows (an array of objects; absent: the element is one row) and the element's keys repeated in front of each row."""

    json: JsonSchema
    rows: Annotated[
        FieldPath | None, Meta(description="Where the element's rows are ([]: the element is the list of rows).")
    ] = None
    ids: Annotated[list[str] | None, Meta(description="Keys of the element shown in front of every row.")] = None


class Table(Record, frozen=True):
    """The endpoint table (spec/benchloop.yaml)."""

    version: Literal[1]
    endpoints: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], Endpoint]
    options: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], Option]
    resources: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9-]*$")], Resource]
    enumerations: dict[str, Enumeration] | None = None
    statuses: Annotated[
        dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], StatusEnum] | None,
        Meta(description="Named status enumerations: the values a status takes and which of them are final."),
    ] = None
    waiters: Annotated[
        dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], Waiter] | None,
        Meta(description="Named waiters (engine/polling.py): ask until an acceptor says the work is done."),
    ] = None
    allow_lists: dict[str, list[str]] | None = None
    stdout_options: list[str] | None = None
    mcp: Annotated[Toolsets | None, Meta(description="The MCP server's toolsets (bl mcp serve --toolsets).")] = None
    services: dict[str, Service] | None = None
    global_options: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], Option] | None = None
    commands: dict[str, Command] | None = None
    steps: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], Step] | None = None
    schemas: Annotated[
        dict[Annotated[str, Meta(pattern="^[A-Z][A-Za-z0-9]*$")], JsonSchema] | None,
        Meta(
            description='Shapes of the backend\'s answers (JSON Schema 2020-12), referenced as {"$ref": "#/schemas/NAME"} by endpoint responses, service errors and each other.'
        ),
    ] = None
    combines: dict[Annotated[str, Meta(pattern="^[a-z][a-z0-9_]*$")], CombineDef] | None = None


Template = str
OptionRef = str | Option
Shape = (
    Annotated[
        TransformName,
        Meta(description="A transform of benchloop/engine/transforms.py."),
    ]
    | Transform
)
JsonSchema = Annotated[
    dict[str, Any],
    Meta(
        description="A JSON Schema (2020-12); references into the table are written #/schemas/NAME. The lints check references, types and requiredness; the test suite checks each against the 2020-12 meta-schema."
    ),
]
ContentTypes = Annotated[
    Annotated[list[Annotated[str, Meta(pattern="^[a-z*]+/[A-Za-z0-9*.+-]+$")]], Meta(min_length=1)],
    Meta(description="The media types the answer may come as (*/* for any)."),
]
FieldPath = Annotated[
    list[str | int],
    Meta(description="A path of field names (an integer or '*' steps into an array's items); [] is the answer itself."),
]
