"""The MCP tools of the endpoint table, generated from the typed model (no SDK needed).

Which tools exist and what they may do comes from the table, never from a list
of resource names, so a resource added to spec/benchloop.yaml is a tool at once:

* a printing action (``writer: stdout``) whose requests are all GETs is a
  read-only tool, ``<resource>_<action>`` (``metrics_get``, ``brm_list``);
* a printing action that sends anything else (a POST: ``report trigger``,
  ``brm run``) is a write, served only with ``--allow-writes``;
* a download action (``writer: files``) is a download tool, served only with
  ``--allow-downloads DIR`` (and ``--allow-writes`` too if it sends a POST);
* a download action with a listing flag (``stdout_when``, ``--list-only``) is
  also a read-only listing tool, ``<resource>_list``, with the flag set;
* ``describe`` is the ``bl describe`` document (no request).

Actions with another writer (plain text, ``ap-cmd``) are not tools, nor is a download whose
combine writes a page for people (``bl view``: an agent reads ``trajectory_steps``), nor
are waits (a part that is a waiter on its own, ``bl jobs wait``): a call would hold a
worker for as long as the backend's work lasts, past any call timeout; an agent asks
``jobs_get`` again instead.

Each tool's input schema comes from the action's options: ids as arrays of
strings, every other option with its type, choices, minimum, default and help,
plus ``query`` (JMESPath, as ``--query``) on tools that return data.  A tool that
returns data takes no option that names a local file (``path:`` in the table, such
as ``bl compare --report``): only download tools write, under their directory.

What is required: a tool with one kind of id lists it in ``required``
(``jobs_get`` needs ``group``).  A tool with several kinds needs exactly one
of them; the schema says so in words (its ``description`` and each id
argument's), not with a root ``anyOf``/``oneOf``: the Anthropic API refuses
tool schemas with ``oneOf``/``anyOf``/``allOf`` at the top level, and Claude
Code drops tools with root ``if``/``then``, so such a schema would lose the
tool (or the whole session) in the most used clients.  The MCP SDK checks no
arguments against the schema; the runner checks them as the CLI does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..table.model import (
    DIMENSION_KINDS,
    OPTION_DIMENSIONS,
    STDOUT_OPTIONS,
    Action,
    Option,
    Spec,
)
from ..table.responses import plain_json
from .compact import compact

READ, LISTING, WRITE, DOWNLOAD, DESCRIBE = "read", "listing", "write", "download", "describe"
# The gates: a tool is served only when every one of its gates is open.
WRITES, DOWNLOADS = "writes", "downloads"
SAFE_METHODS = ("GET", "HEAD")
# Options that only shape what the CLI prints: a tool returns JSON (``query`` is its own argument).
# The table's download options: where files go, whether existing ones are kept and whether a
# file of another size than announced is. A listing writes nothing, so its tool has none; a
# download tool's output_dir is relative to its DIR.
FILE_OPTIONS = ("output_dir", "skip_existing", "allow_size_mismatch")
QUERY_HELP = "JMESPath on the result, as --query ('[].job_id'); also gets a cut result's rest."


def attribute(name: str) -> str:
    """A resource or action name as part of a tool name (``job-meta`` -> ``job_meta``)."""
    return name.replace("-", "_")


@dataclass(frozen=True)
class Tool:
    """One MCP tool: its name, what it runs and the JSON Schema of its arguments."""

    name: str
    kind: str  # READ, LISTING, WRITE, DOWNLOAD or DESCRIBE
    description: str
    input_schema: Mapping[str, Any]
    action: Action | None = None
    gates: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))  # values the tool sets
    accepted: tuple[str, ...] = ()  # argument names (the schema's plus hidden id options)
    query: bool = True

    @property
    def table_action(self) -> Action:
        """The action of a tool that runs one (every tool but describe)."""
        assert self.action is not None, f"{self.name} runs no action"
        return self.action

    @property
    def resource(self) -> str | None:
        return self.action.resource if self.action else None

    @property
    def read_only(self) -> bool:
        return self.kind in (READ, LISTING, DESCRIBE)

    @property
    def annotations(self) -> dict[str, Any]:
        """MCP tool annotations (hints for clients; the title is the tool's own)."""
        out: dict[str, Any] = {"read_only_hint": self.read_only}
        if not self.read_only:
            out["destructive_hint"] = False  # triggers start work, downloads add files: nothing is deleted
            out["idempotent_hint"] = self.kind == DOWNLOAD
        out["open_world_hint"] = False  # the configured backend only
        return out

    @property
    def title(self) -> str:
        if self.action is None:
            return "bl describe"
        words = self.action.command_line()
        if self.kind == LISTING:
            return f"{words} {self.action.flag_of(self.action.stdout_when or '')}"
        return words

    def element_schema(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The schema of one element the tool's action prints (the table's outputs; one of them
        when its dimensions print different things) and the named schemas it refers to, as
        ``#/$defs/NAME`` (each once)."""
        if self.action is None or self.kind == DOWNLOAD:
            return None
        outputs = [d.output for d in self.action.dimensions.values() if d.output is not None]
        if not outputs:
            return None
        schemas = outputs[0].schemas
        element = plain_json(outputs[0].schema) if len(outputs) == 1 else {"anyOf": [plain_json(o.schema) for o in outputs]}
        return compact(*schemas.bundle(element))

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The structured result: ``result`` is the elements as the table declares them (their
        structure, without the table's prose: ``compact.py``), or what ``query`` made of them -
        the second branch accepts any value, so that a client that validates results never
        refuses a queried result or an answer the backend shaped otherwise (the CLI prints
        those too).  A download tool has none: its result is the same for every one (the files
        written, as the server's instructions say), not worth its place in every tool list."""
        if self.kind == DOWNLOAD:
            return None
        bundled = self.element_schema()
        defs: dict[str, Any] = {}
        result: dict[str, Any] = {}
        if bundled is not None:
            element, defs = bundled
            result["anyOf"] = [{"type": "array", "items": element}, {}]
        return {  # what the fields mean is said once, in the server's instructions (``server.py``)
            **({"$defs": defs} if defs else {}),
            "type": "object",
            "properties": {
                "result": result,
                "truncated": {"type": "object"},
                "failures": {"type": "array", "items": {"type": "object", "properties": {
                    "id": {"type": "string"}, "message": {"type": "string"}}}},
                "failures_left_out": {"type": "integer"},
            },
            "required": ["result"],
        }


def wire(tool: Tool) -> dict[str, Any]:
    """The tool as ``tools/list`` sends it (MCP's camelCase names, nothing that is None): what the
    server gives the SDK, and what docs/mcp.md measures."""
    hints = {"read_only_hint": "readOnlyHint", "destructive_hint": "destructiveHint",
             "idempotent_hint": "idempotentHint", "open_world_hint": "openWorldHint"}
    out: dict[str, Any] = {"name": tool.name, "title": tool.title, "description": tool.description,
                           "inputSchema": plain_json(tool.input_schema)}
    if tool.output_schema is not None:
        out["outputSchema"] = tool.output_schema
    out["annotations"] = {hints[k]: v for k, v in tool.annotations.items()}
    return out


def list_size(tools: list[Tool]) -> int:
    """Bytes of the ``tools`` array of a ``tools/list`` result listing ``tools`` (compact JSON,
    UTF-8, as the SDK writes it): the array itself, without the result object around it."""
    return len(json.dumps([wire(t) for t in tools], ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


ENVELOPE = ("Every tool's structured result is {result, truncated, failures, failures_left_out}: result is the "
            "elements the command prints (with query: what the expression made of them; for a download tool the "
            "files written: directory, paths, skipped, placeholders), cut to the size budget when long (truncated then says "
            "what was left out and the query that asks for it); failures lists the ids that failed with the "
            "CLI's messages (failures_left_out: how many are not listed).")


# ----------------------------------------------------------- classification
def sends_writes(spec: Spec, action: Action) -> bool:
    """True when some request of the action is not a GET (a trigger, a run)."""
    return any(e.method not in SAFE_METHODS for e in spec.action_endpoints(action))


def tool_name(action: Action) -> str:
    """``<resource>_<action>``; a resource that is one command (``pull``) is just its name."""
    return attribute(action.resource) if action.command else f"{attribute(action.resource)}_{attribute(action.name)}"


def _listing_name(spec: Spec, action: Action) -> str:
    resource = spec.resources[action.resource]
    if "list" in resource.actions:  # the resource has a `list` action of its own
        return f"{attribute(action.resource)}_{attribute(action.name)}_list"
    return f"{attribute(action.resource)}_list"


def kinds(spec: Spec, action: Action) -> list[tuple[str, tuple[str, ...]]]:
    """The tools an action gives: ``[(kind, gates), ...]``."""
    if action.writer not in ("stdout", "files"):
        return []  # another writer (ap-cmd's plain text) has no JSON result to return: not a tool yet
    if action.writer == "files" and action.combine is not None:
        return []  # a page for people (bl view); an agent reads the steps (trajectory_steps)
    if action.waits:
        return []  # a wait lasts as long as the backend's work: not a tool call
    writes = sends_writes(spec, action)
    if action.writer == "stdout":
        return [(WRITE, (WRITES,))] if writes else [(READ, ())]
    out: list[tuple[str, tuple[str, ...]]] = []
    if action.stdout_when:
        out.append((LISTING, (WRITES,) if writes else ()))
    out.append((DOWNLOAD, (WRITES, DOWNLOADS) if writes else (DOWNLOADS,)))
    return out


# ------------------------------------------------------------------ schemas
# A sentence ends at ". ", but not after "e.g" or "i.e" ("... separately (e.g. template): ...").
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\. ")


def _help(opt: Option) -> str:
    """An option's help as an argument's: its first sentence, which says what it is (ids: "Group
    id(s)."; repeating a flag or '-' is for shells), unless that is too short to say anything
    (the rest is the CLI's: ``bl help``, ``describe``).  The CLI's flag is the argument's name in
    another spelling, so it is not repeated here."""
    text = opt.help.strip()
    first = _SENTENCE_END.split(text, 1)[0].rstrip(".") + "."  # the first sentence says what it is
    if opt.name not in OPTION_DIMENSIONS and len(first) < 40:
        return text
    return brief(first)


def brief(text: str, at: int = 80) -> str:
    """A long sentence without its last remarks: cut at its first ``" ("`` or ``"; "`` when
    what comes before says enough (the words of the CLI's help, shorter)."""
    if len(text) <= at:
        return text
    cuts = [i for i in (text.find(" ("), text.find("; ")) if i >= 30]
    return text[:min(cuts)].rstrip(".:,") + "." if cuts else text


def setting_options(spec: Spec) -> set[str]:
    """Options that set where a service is or its key (``--ap-base-url``, ``--ap-api-key``): never
    tool arguments, so a tool reaches only the backends configured when the server started."""
    return {sources.option for service in spec.services.values() for sources in (service.base_url, service.key)
            if sources.option}


def option_schema(opt: Option) -> dict[str, Any]:
    """The JSON Schema of one option's argument: its type's (``table.optiontypes``), with the
    option's choices, minimum and default.  Ids are always a list (one id a list of one)."""
    kind = opt.kind
    if opt.name in OPTION_DIMENSIONS:
        schema: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
        if not kind.many:  # one download-task id (--task-id of trajectory, metadata, artifacts)
            schema["maxItems"] = 1
        schema["description"] = _help(opt)
        return schema
    schema = kind.schema(opt.choices if kind.choices else ())
    if kind.is_flag:
        schema["default"] = bool(opt.default)
    if opt.min is not None and kind.json_type in ("integer", "number") and not kind.many:
        schema["minimum"] = opt.min
    if opt.default is not None and "default" not in schema and not kind.many:
        schema["default"] = opt.default
    schema["description"] = _help(opt)
    return schema


def _object(properties: dict[str, Any], required: list[str] | None = None,
            description: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    if description:
        schema["description"] = description
    return schema


def id_arguments(action: Action, properties: Mapping[str, Any]) -> list[str]:
    """The id arguments of the tool, one per dimension of the action (``group``, ``job``, ``task_id``)."""
    ids = {DIMENSION_KINDS[d].option for d in action.dimensions if d in DIMENSION_KINDS}
    return [name for name in properties if name in ids]


def require_ids(action: Action, properties: dict[str, Any]) -> tuple[list[str], str | None]:
    """``(required, description)`` of the input schema: the one id argument is required; of several,
    exactly one is, which the schema's description says in words (see the module docstring)."""
    ids = id_arguments(action, properties)
    if len(ids) == 1:
        return ids, None
    if not ids:
        return [], None
    return [], f"Exactly one of {', '.join(ids[:-1])} or {ids[-1]} is required."


def action_tool(spec: Spec, action: Action, kind: str, gates: tuple[str, ...]) -> Tool:
    """The tool of one action of the table (READ, WRITE, LISTING or DOWNLOAD)."""
    settings = setting_options(spec)
    options = [o for o in action.options if o.name not in STDOUT_OPTIONS and o.name not in settings
               and o.name not in action.watch_options]  # a watch waits: a command-line mode only
    fixed: dict[str, Any] = {}
    if action.stdout_when:  # the listing tool sets the flag; the download tool leaves it off
        fixed[action.stdout_when] = kind == LISTING
        options = [o for o in options if o.name != action.stdout_when]
    if kind == LISTING:
        options = [o for o in options if o.name not in FILE_OPTIONS]
    if kind != DOWNLOAD:  # a tool that returns data writes no local file (compare's --report)
        options = [o for o in options if o.path is None]
    hidden = [o.name for o in options if o.name in OPTION_DIMENSIONS and not action.dimension_of(o.name)]
    properties = {o.name: option_schema(o) for o in options if o.name not in hidden}
    if kind == DOWNLOAD and "output_dir" in properties:
        properties["output_dir"] = {"type": "string",
                                    "description": "A directory under the server's download directory (default: it)."}
    query = kind != DOWNLOAD
    if query:
        properties["query"] = {"type": "string", "description": QUERY_HELP}
    command = action.command_line()
    if kind == LISTING:
        lead = f"The listing of `{command} {action.flag_of(action.stdout_when or '')}`; nothing is downloaded."
    elif kind == DOWNLOAD:
        lead = f"`{command}`, under the download directory."
    else:
        lead = f"`{command}`." + (" Changes the backend's state (starts work there)." if kind == WRITE else "")
    first = action.help.split(". ", 1)[0].rstrip(".") + "."  # the CLI's help page says the rest
    description = " ".join(p for p in (first, lead) if p)
    name = _listing_name(spec, action) if kind == LISTING else tool_name(action)
    required, rule = require_ids(action, properties)
    return Tool(name=name, kind=kind, description=description, input_schema=_object(properties, required, rule),
                action=action,
                gates=gates, fixed=MappingProxyType(fixed), accepted=tuple([*properties, *hidden]), query=query)


def describe_tool(spec: Spec) -> Tool:
    properties = {
        "resource": {"type": "string", "enum": list(spec.resources),
                     "description": "Only this resource (the document of `bl describe RESOURCE`)."},
        "action": {"type": "string", "description": "Only this action of the resource."},
        "query": {"type": "string", "description": QUERY_HELP.replace("the result", "the document")},
    }
    return Tool(name="describe", kind=DESCRIBE,
                description="The machine-readable schema of the command line (`bl describe`): every command, its "
                            "options, ids, the HTTP requests it makes and its output. No request is made.",
                input_schema=_object(properties), accepted=tuple(properties))


def all_tools(spec: Spec) -> list[Tool]:
    """Every tool the table gives, gated ones included, in the table's order; ``describe`` last."""
    tools = [action_tool(spec, action, kind, gates) for action in spec.actions
             for kind, gates in kinds(spec, action)]
    tools.append(describe_tool(spec))
    names = [t.name for t in tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two tools of the endpoint table have the same name: {', '.join(duplicates)}")
    return tools


def resource_names(spec: Spec) -> list[str]:
    """The names --tools accepts: the resources of the table, and describe."""
    return [*spec.resources, "describe"]


def parse_tools(spec: Spec, text: str | None) -> set[str] | None:
    """``--tools metrics,jobs`` -> the resource names; None when not given. ValueError names the unknown."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    known = resource_names(spec)
    unknown = [n for n in names if n not in known and n.replace("_", "-") not in known]
    if unknown or not names:
        what = f"unknown resource(s) {', '.join(unknown)}" if unknown else "no resource named"
        raise ValueError(f"--tools: {what}; choose from {', '.join(known)}")
    return {n if n in known else n.replace("_", "-") for n in names}


ALL = "all"


def parse_toolsets(spec: Spec, text: str | None) -> tuple[str, ...]:
    """``--toolsets jobs,compare`` -> the toolsets' names, in the table's order (``all``: just
    that); the table's default when not given.  ValueError names the unknown."""
    sets = spec.mcp.toolsets
    if text is None:
        return spec.mcp.default
    names = [n.strip() for n in text.split(",") if n.strip()]
    if ALL in names:
        return (ALL,)
    unknown = [n for n in names if n not in sets]
    if unknown or not names:
        what = f"unknown toolset(s) {', '.join(unknown)}" if unknown else "no toolset named"
        raise ValueError(f"--toolsets: {what}; choose from {', '.join(sets)} or all")
    return tuple(n for n in sets if n in names)


def served_resources(spec: Spec, toolsets: tuple[str, ...]) -> set[str]:
    """The resources whose tools the named toolsets serve (``all``: every resource, those of no
    toolset too: a resource just added to the table is served by ``--toolsets all``)."""
    if ALL in toolsets:
        return set(spec.resources)
    return {r for name in toolsets for r in spec.mcp.toolsets[name].resources}


def select(tools: list[Tool], *, allow_writes: bool, allow_downloads: bool,
           toolsets: set[str] | None) -> list[Tool]:
    """The tools served: gates open, and (with --tools) the named resources only (describe always)."""
    open_gates = {g for g, on in ((WRITES, allow_writes), (DOWNLOADS, allow_downloads)) if on}
    served = []
    for tool in tools:
        if not set(tool.gates) <= open_gates:
            continue
        if toolsets is not None and tool.kind != DESCRIBE and tool.resource not in toolsets:
            continue
        served.append(tool)
    return served


def gate_message(tool: Tool, toolsets: set[str] | None, allow_writes: bool, allow_downloads: bool) -> str:
    """Why a tool of the table is not served (for a call of it)."""
    missing = [flag for gate, flag, on in ((WRITES, "--allow-writes", allow_writes),
                                           (DOWNLOADS, "--allow-downloads DIR", allow_downloads))
               if gate in tool.gates and not on]
    if missing:
        return (f"tool {tool.name} is not enabled: this server was started without {' and '.join(missing)} "
                f"(`bl mcp serve {' '.join(missing)}`)")
    return (f"tool {tool.name} is not enabled: this server serves only the tools of the resources "
            f"{','.join(sorted(toolsets or ()))} (bl mcp serve --toolsets, --tools)")
