"""`bl describe`: the command line as one machine-readable JSON document.

Scripts, editors and agents should not scrape `--help`.  This module turns the
compiled endpoint table (plus the global options and the exit codes) into a
stable JSON document: for every command its path, options, dimensions, the
HTTP requests each dimension makes (method, path template, query, body,
pagination), where its output goes (stdout array, files, archive entries) and
in which format.  Nothing here knows a particular resource: it is a view of the
table, so a resource added to the YAML shows up without touching this file.

The document keeps the table's order (resources, actions, dimensions, parts,
options) so that its output is stable and diffs read like table diffs.  Its
JSON Schema is ``spec/describe.schema.json``; the tests validate the output
against it.  ``bl describe --openapi`` prints the endpoint table as an OpenAPI
3.1 document instead (see ``openapi.py``).

Conventions worth knowing when reading the output:

* Templates (``{group}``, ``{skip}``, ``{parts.job.group_id}``, ``{scope}``) are
  kept verbatim, exactly as the table writes them.
* A named step's ``with:`` values that name an endpoint or an enumeration are
  resolved into ``endpoints`` / ``enumerations``; a ``layout`` value is the path
  template of the files the step writes.

This module must stay light: no httpx, no YAML parsing (the compiled table is
read from the cache).
"""

from __future__ import annotations

import re
import sys
from typing import Annotated, Any

from cyclopts import Parameter

from . import __version__
from .errors import (
    EXIT_AUTH,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NETWORK,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
)

DESCRIBE_VERSION = 1
PROG = "bl"
ALIASES = ["bmcli"]
DIMENSIONS = ("group", "job", "task")
DIMENSION_OPTIONS = {"group": "group", "job": "job", "task": "task_id"}
_VAR = re.compile(r"\{([^{}]+)\}")

EXIT_CODES = [
    {"code": EXIT_OK, "name": "ok", "meaning": "Every id succeeded."},
    {"code": EXIT_FAILURE, "name": "failure",
     "meaning": "Some id failed (the others are still printed or written), or an unexpected error."},
    {"code": EXIT_USAGE, "name": "usage",
     "meaning": "Bad command line or configuration; nothing was requested."},
    {"code": EXIT_AUTH, "name": "auth", "meaning": "Authentication failed (HTTP 401); the remaining work was cancelled."},
    {"code": EXIT_NETWORK, "name": "network",
     "meaning": "No id succeeded and every failure was a transport error."},
    {"code": EXIT_INTERRUPTED, "name": "interrupted", "meaning": "Interrupted (Ctrl-C)."},
]

# What each pagination mode of pagination.py does, for readers of the document.
MODE_HELP = {
    "single_page": "One request at skip=(page-1)*page_size, limit=page_size.",
    "unique_scan": "Every page of the collection, de-duplicated by id_keys; steps back over runs of equal "
                   "tie_key values at page boundaries and re-scans with other page sizes when the "
                   "backend's total is not reached.",
    "task_scan": "Every page of the collection, de-duplicated by id_keys, until total items are seen.",
}

# Built-in flags of the root command that are not in GLOBAL_OPTIONS.
ROOT_FLAGS = [
    {"name": "help", "flags": ["--help", "-h"], "type": "flag", "default": False,
     "help": "Print help (works after any command too) and exit."},
    {"name": "version", "flags": ["--version"], "type": "flag", "default": False,
     "help": "Print the version and exit."},
]

_VALUE = {"str": "string", "choice": "string", "ids": "string", "list": "string", "int": "integer",
          "ints": "integer", "float": "number", "flag": None, "bool": None}


# ------------------------------------------------------------------ options
def describe_option(opt: dict[str, Any], dimension: str | None = None) -> dict[str, Any]:
    kind = opt["type"]
    repeatable = kind in ("ids", "list", "ints")
    return {
        "name": opt["name"],
        "flags": list(opt["flags"]),
        "long": [f for f in opt["flags"] if f.startswith("--")],
        "short": [f for f in opt["flags"] if not f.startswith("--")],
        "negative": opt.get("negative"),
        "type": kind,
        "value": _VALUE.get(kind, "string"),
        "repeatable": repeatable,
        "stdin": kind in ("ids", "ints"),
        "default": bool(opt.get("default")) if kind == "flag" else opt.get("default"),
        "choices": list(opt["choices"]) if opt.get("choices") else None,
        "min": opt.get("min"),
        "dimension": dimension,
        "help": opt["help"],
    }


def global_options() -> list[dict[str, Any]]:
    from .globals import GLOBAL_OPTIONS

    return [describe_option(opt) for opt in [*GLOBAL_OPTIONS, *ROOT_FLAGS]]


# ----------------------------------------------------------------- requests
def template_vars(*values: Any) -> list[str]:
    found: list[str] = []
    for value in values:
        if isinstance(value, dict):
            found += template_vars(*value.values())
        elif isinstance(value, str):
            found += [v for v in _VAR.findall(value) if v not in found]
    return list(dict.fromkeys(found))


def describe_request(spec: dict[str, Any], name: str) -> dict[str, Any]:
    endpoint = spec["endpoints"][name]
    out: dict[str, Any] = {
        "endpoint": name,
        "method": endpoint["method"],
        "path": endpoint["path"],
        "path_variables": template_vars(endpoint["path"]),
        "query": dict(endpoint.get("query") or {}),
    }
    if endpoint["method"] == "POST":
        out["body"] = dict(endpoint.get("body") or {})
    out["response"] = endpoint.get("response", "json")
    out["help"] = endpoint["help"]
    return out


def describe_pagination(pagination: dict[str, Any]) -> dict[str, Any]:
    mode = pagination["mode"]
    params = {k: v for k, v in pagination.items() if k not in ("mode", "progress")}
    if mode == "single_page":
        params = {"page": "{page}", **params}
    params.setdefault("page_size", "{page_size}")
    return {"mode": mode, "help": MODE_HELP.get(mode, ""), "parameters": params}


def describe_enumeration(spec: dict[str, Any], name: str) -> dict[str, Any]:
    enum = spec["enumerations"][name]
    out: dict[str, Any] = {
        "name": name,
        "help": enum.get("help", ""),
        "binds": enum["binds"],
        "request": describe_request(spec, enum["request"]),
        "pagination": describe_pagination(enum["pagination"]),
    }
    if enum.get("empty_probe"):
        out["empty_probe"] = describe_request(spec, enum["empty_probe"])
    return out


def _shape(shape: Any) -> dict[str, Any]:
    if isinstance(shape, str):
        return {"name": shape, "with": {}}
    return {"name": shape["name"], "with": dict(shape.get("with") or {})}


# -------------------------------------------------------------------- parts
def _step(spec: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
    params = dict(part.get("with") or {})
    endpoints = {k: describe_request(spec, v) for k, v in params.items()
                 if isinstance(v, str) and v in spec["endpoints"]}
    enums = {k: describe_enumeration(spec, v) for k, v in params.items()
             if isinstance(v, str) and v in (spec.get("enumerations") or {})}
    return {"name": part["step"], "with": params, "endpoints": endpoints, "enumerations": enums}


def _uses_binary(spec: dict[str, Any], part: dict[str, Any]) -> bool:
    names = [part["request"]] if part.get("request") else list((part.get("with") or {}).values())
    return any(isinstance(n, str) and spec["endpoints"].get(n, {}).get("response") == "binary" for n in names)


def describe_part(spec: dict[str, Any], options: dict[str, dict[str, Any]], part: dict[str, Any],
                  writes: bool, in_archive: bool) -> dict[str, Any]:
    """One part; ``writes`` when the action writes files (a stdout action ignores ``file``)."""
    out: dict[str, Any] = {}
    if part.get("when"):
        name = part["when"].removeprefix("not ")
        flag = (options.get(name) or {}).get("flags", [f"--{name}"])[0]
        out["when"] = {"option": name, "flag": flag, "equals": not part["when"].startswith("not ")}
    if part.get("each"):
        out["each"] = describe_enumeration(spec, part["each"])
    if part.get("step"):
        out["step"] = _step(spec, part)
    else:
        out["request"] = describe_request(spec, part["request"])
    if part.get("pagination"):
        out["pagination"] = describe_pagination(part["pagination"])
    if part.get("empty_probe"):
        out["empty_probe"] = describe_request(spec, part["empty_probe"])
    if part.get("shape"):
        out["shape"] = _shape(part["shape"])
    fmt = part.get("format") or ("binary" if _uses_binary(spec, part) else "json")
    layout = (part.get("with") or {}).get("layout") if part.get("step") else None
    if writes and in_archive and part.get("entry"):
        out["output"] = {"kind": "archive_entry", "path": part["entry"], "format": fmt}
        out["required"] = bool(part.get("required"))
    elif writes and part.get("file"):
        out["output"] = {"kind": "file", "path": part["file"], "format": part.get("format") or "json"}
    elif writes and isinstance(layout, str):
        out["output"] = {"kind": "file", "path": layout, "format": fmt}
    return out


def _element(element: Any) -> dict[str, Any]:
    if element in (None, "part"):
        return {"kind": "part"}
    if isinstance(element, str):
        return {"kind": "part", "part": element}
    if "compose" in element:
        return {"kind": "object", "id_key": element["compose"]}
    return {"kind": "shape", "shape": element["shape"], "with": dict(element.get("with") or {})}


def describe_dimension(spec: dict[str, Any], action: dict[str, Any], name: str, dim: dict[str, Any]) -> dict[str, Any]:
    options = {opt["name"]: opt for opt in action["options"]}
    option = options.get(DIMENSION_OPTIONS[name]) or {}
    writer = "stdout" if action["writer"] == "stdout" else "archive" if dim.get("archive") else "files"
    out: dict[str, Any] = {
        "option": option.get("name", DIMENSION_OPTIONS[name]),
        "flags": list(option.get("flags", [])),
        "writer": writer,
        "serial": bool(dim.get("serial")),
    }
    if dim.get("composite"):
        compose = action["compose"]
        out["sections"] = [s for s, sec in compose["sections"].items()
                           if name in spec["resources"][sec["resource"]]["actions"][sec["action"]]["dimensions"]]
        return out
    if action["writer"] == "stdout" or action.get("stdout_when"):
        out["element"] = _element(dim.get("element"))
    if dim.get("select"):
        select = dim["select"]
        flag = (options.get(select["option"]) or {}).get("flags", [f"--{select['option']}"])[0]
        out["select"] = {"option": select["option"], "flag": flag,
                         "choices": {k: list(v) for k, v in select["choices"].items()}}
    if dim.get("archive"):
        archive = dim["archive"]
        out["archive"] = {
            "path": archive["file"],
            "format": "zip",
            "kind": archive.get("kind", ""),
            "task_request": describe_request(spec, archive["task_request"]),
            "order": list(archive.get("order") or dim["parts"]),
        }
    writes = action["writer"] == "files"
    out["parts"] = {pname: describe_part(spec, options, part, writes, bool(dim.get("archive")))
                    for pname, part in dim["parts"].items()}
    outputs: list[dict[str, Any]] = []
    if not writes:
        outputs.append({"part": None, "kind": "stdout", "path": None, "format": "json"})
    elif dim.get("archive"):
        outputs.append({"part": None, "kind": "archive", "path": dim["archive"]["file"], "format": "zip"})
    for pname, part in out["parts"].items():
        if part.get("output"):
            outputs.append({"part": pname, **part["output"]})
    out["outputs"] = outputs
    return out


# ------------------------------------------------------------------ actions
def command_words(resource_name: str, resource: dict[str, Any], action_name: str) -> list[str]:
    return [resource_name] if resource.get("command") else [resource_name, action_name]


def _usage(words: list[str], action: dict[str, Any]) -> str:
    usage = {"group": "-g GROUP...", "job": "-j JOB...", "task": "--task-id TASK"}
    task_opt = next((o for o in action["options"] if o["name"] == "task_id"), {})
    if task_opt.get("type") == "ids":
        usage["task"] = "--task-id TASK..."
    dims = " | ".join(usage[d] for d in action["dimensions"])
    return f"{PROG} [GLOBAL OPTIONS] {' '.join(words)} ({dims}) [OPTIONS]"


def describe_action(spec: dict[str, Any], resource_name: str, resource: dict[str, Any],
                    action_name: str, action: dict[str, Any]) -> dict[str, Any]:
    words = command_words(resource_name, resource, action_name)
    dims = list(action["dimensions"])
    dim_of_option = {DIMENSION_OPTIONS[d]: d for d in dims}
    options = [describe_option(opt, dim_of_option.get(opt["name"])) for opt in action["options"]]
    id_options = [o["name"] for o in action["options"] if o["name"] in dim_of_option]
    out: dict[str, Any] = {
        "command": " ".join([PROG, *words]),
        "words": words,
        "usage": _usage(words, action),
        "help": action["help"],
        "writer": action["writer"],
        "options": options,
        "ids": {
            "options": id_options,
            "flags": [o["flags"] for o in options if o["name"] in id_options],
            "mutually_exclusive": len(id_options) > 1,
            "required": True,
            "max_ids": action.get("max_ids"),
        },
    }
    if action.get("stdout_when"):
        name = action["stdout_when"]
        flag = next(o["flags"][0] for o in action["options"] if o["name"] == name)
        out["stdout_when"] = {"option": name, "flag": flag}
    if action.get("compose"):
        compose = action["compose"]
        flag = next(o["flags"][0] for o in action["options"] if o["name"] == compose["option"])
        sections = {}
        for sname, section in compose["sections"].items():
            target_res = spec["resources"][section["resource"]]
            target = target_res["actions"][section["action"]]
            sections[sname] = {
                "command": " ".join([PROG, *command_words(section["resource"], target_res, section["action"])]),
                "resource": section["resource"],
                "action": section["action"],
                "options": dict(section.get("options") or {}),
                "dimensions": list(target["dimensions"]),
            }
        out["compose"] = {"option": compose["option"], "flag": flag, "default": list(compose["default"]),
                          "dimensions": list(compose["dimensions"]), "sections": sections}
    out["dimensions"] = {name: describe_dimension(spec, action, name, dim)
                         for name, dim in action["dimensions"].items()}
    return out


def describe_spec(spec: dict[str, Any], resource: str | None = None, action: str | None = None) -> dict[str, Any]:
    """The whole document, or narrowed to one resource (and one action)."""
    resources = spec["resources"]
    if resource is not None and resource not in resources:
        raise UsageError(f"unknown resource {resource!r}; choose from {', '.join(resources)}")
    if action is not None and action not in resources[resource]["actions"]:
        raise UsageError(f"unknown action {action!r} of {resource}; choose from "
                         f"{', '.join(resources[resource]['actions'])}")
    out_resources: dict[str, Any] = {}
    for rname, res in resources.items():
        if resource is not None and rname != resource:
            continue
        actions = {aname: describe_action(spec, rname, res, aname, act)
                   for aname, act in res["actions"].items() if action is None or aname == action}
        out_resources[rname] = {"help": res["help"], "command": bool(res.get("command")), "actions": actions}
    return {
        "describe_version": DESCRIBE_VERSION,
        "program": PROG,
        "aliases": list(ALIASES),
        "version": __version__,
        "global_options": global_options(),
        "exit_codes": [dict(code) for code in EXIT_CODES],
        "resources": out_resources,
    }


# ------------------------------------------------------------------ command
def describe(
    resource: Annotated[str | None, Parameter(help="Only this resource.")] = None,
    action: Annotated[str | None, Parameter(help="Only this action of RESOURCE.")] = None,
    /,
    *,
    openapi: Annotated[bool, Parameter(name="--openapi", negative="",
                                       help="Print the endpoint table as an OpenAPI 3.1 document instead.")] = False,
    ctx: Annotated[Any, Parameter(parse=False)] = None,
) -> int:
    """Print every command of the table (or one resource / action) as one JSON document."""
    from .specload import load_spec
    from .writers import dumps

    pretty = True if ctx is None else ctx.options.get("pretty", True)
    spec = load_spec()
    if openapi:
        if resource is not None:
            raise UsageError("--openapi describes the whole endpoint table; give no RESOURCE")
        from .openapi import openapi_document

        document = openapi_document(spec)
    else:
        document = describe_spec(spec, resource, action)
    sys.stdout.write(dumps(document, pretty))
    return 0
