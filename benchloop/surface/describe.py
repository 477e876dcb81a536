"""`bl describe`: the command line as one machine-readable JSON document.

Scripts, editors and agents should not scrape `--help`.  This module turns the
compiled endpoint table (plus the global options and the exit codes) into a
stable JSON document: for every command its path, options, dimensions, the
HTTP requests each dimension makes (method, path template, query, body,
pagination), where its output goes (stdout array, files, archive entries) and
in which format, and what one printed element is (``printed``: its schema, rows
and the columns of the flat formats).  Nothing here knows a particular resource: it is a view of the
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
* An action with a ``combine`` prints what its named combine makes of every id's
  value together (``bl compare``: one element per candidate), not one element per id.

This module must stay light: no httpx, no YAML parsing (the compiled table is
read from the cache).
"""

from __future__ import annotations

import sys
from typing import Any

from ..base.errors import (
    EXIT_AUTH,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NETWORK,
    EXIT_OK,
    EXIT_STDOUT_CLOSED,
    EXIT_SYNC_RETRY,
    EXIT_USAGE,
    EXIT_WAIT_TIMEOUT,
    UsageError,
)
from ..table.load import load_model
from ..table.model import (
    Acceptor,
    Action,
    ArchiveEntry,
    Compose,
    Dimension,
    Element,
    Endpoint,
    Enumeration,
    FanOutPart,
    Items,
    Option,
    PagedPart,
    Pagination,
    Part,
    RequestPart,
    Spec,
    StepPart,
    Waiter,
    WaitPart,
)
from ..table.responses import plain_json
from ..version import __version__

DESCRIBE_VERSION = 1
PROG = "bl"
ALIASES = ["bmcli"]

EXIT_CODES = [
    {"code": EXIT_OK, "name": "ok", "meaning": "Every id succeeded."},
    {"code": EXIT_FAILURE, "name": "failure",
     "meaning": "Some id failed (the others are still printed or written), or an unexpected error."},
    {"code": EXIT_USAGE, "name": "usage",
     "meaning": "Bad command line or configuration; nothing was requested."},
    {"code": EXIT_AUTH, "name": "auth", "meaning": "Authentication failed (HTTP 401); the remaining work was cancelled."},
    {"code": EXIT_NETWORK, "name": "network",
     "meaning": "No id succeeded and every failure was a transport error."},
    {"code": EXIT_WAIT_TIMEOUT, "name": "wait_timeout",
     "meaning": "A wait command's --timeout passed before the work was done (bl jobs wait)."},
    {"code": EXIT_SYNC_RETRY, "name": "sync_retry",
     "meaning": "A sync (pull --sync, --until-done) left only failures that may still succeed: run it again."},
    {"code": EXIT_INTERRUPTED, "name": "interrupted", "meaning": "Interrupted (Ctrl-C)."},
    {"code": EXIT_STDOUT_CLOSED, "name": "stdout_closed",
     "meaning": "stdout was closed by its reader (`| head`); stopped without a message."},
]

# What each pagination mode of pagination.py does, for readers of the document.
MODE_HELP = {
    "single_page": "One request at skip=(page-1)*page_size, limit=page_size.",
    "unique_scan": "Every page of the collection, de-duplicated by id_keys; steps back over runs of equal "
                   "tie_key values at page boundaries and re-scans with other page sizes when the "
                   "backend's total is not reached.",
    "task_scan": "Every page of the collection, de-duplicated by id_keys, until total items are seen.",
}

# Flags of the root command that are not global options of the table.
ROOT_FLAGS = (
    Option(name="help", flags=("--help", "-h"), type="flag", help="Print help (works after any command too) and exit.",
           default=False),
    Option(name="version", flags=("--version",), type="flag", help="Print the version and exit.", default=False),
)


# ------------------------------------------------------------------ options
def describe_option(opt: Option, dimension: str | None = None) -> dict[str, Any]:
    out = _option(opt, dimension)
    if opt.positional:
        out.update(positional=True, metavar=opt.metavar)
    return out


def _option(opt: Option, dimension: str | None) -> dict[str, Any]:
    return {
        "name": opt.name,
        "flags": list(opt.flags),
        "long": list(opt.long),
        "short": list(opt.short),
        "negative": opt.negative,
        "type": opt.type,
        "value": opt.kind.value_name,
        "repeatable": opt.repeatable,
        "stdin": opt.reads_stdin,
        "default": opt.default_value,
        "choices": list(opt.choices) or None,
        "min": opt.min,
        "dimension": dimension,
        "help": opt.help,
    }


def global_options(spec: Spec) -> list[dict[str, Any]]:
    return [describe_option(opt) for opt in (*spec.global_options, *ROOT_FLAGS)]


# ----------------------------------------------------------------- requests
def describe_request(endpoint: Endpoint) -> dict[str, Any]:
    out: dict[str, Any] = {
        "endpoint": endpoint.name,
        "method": endpoint.method,
        "path": endpoint.path,
        "path_variables": endpoint.path_vars,
        "query": {p.name: p.template for p in endpoint.query},
    }
    if endpoint.keep_empty:
        out["keep_empty"] = list(endpoint.keep_empty)
    if endpoint.body is not None:
        out["body"] = {p.name: p.template for p in endpoint.body}
    out["response"] = endpoint.response.describe()
    out["service"] = endpoint.service
    out["help"] = endpoint.help
    return out


def describe_services(spec: Spec) -> dict[str, Any]:
    """Each backend: where its base URL and key come from, its auth header and statuses, the
    headers every request carries (templates) and the variables derived for them."""
    out = {}
    for name, service in spec.services.items():
        out[name] = {
            "title": service.title, "help": service.help, "default": service.default,
            "base_url": service.base_url.describe(),
            "auth": {"header": service.auth_header, **service.key.describe(),
                     "statuses": list(service.auth_statuses)},
            "headers": dict(service.headers),
            "derived": {d.name: {"from": d.source, "map": dict(d.values), "default": d.default}
                        for d in service.derived},
        }
    return out


def describe_pagination(pagination: Pagination) -> dict[str, Any]:
    return {"mode": pagination.mode, "help": MODE_HELP.get(pagination.mode, ""),
            "parameters": pagination.parameters()}


def describe_enumeration(enum: Enumeration) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": enum.name,
        "help": enum.help,
        "binds": enum.binds,
        "request": describe_request(enum.request),
        "pagination": describe_pagination(enum.pagination),
    }
    if enum.empty_probe:
        out["empty_probe"] = describe_request(enum.empty_probe)
    return out


def _flag_of(name: str | None, options: dict[str, Option]) -> dict[str, str] | None:
    if not name:
        return None
    option = options.get(name)
    return {"option": name, "flag": option.flag if option else f"--{name.replace('_', '-')}"}


def describe_acceptor(acceptor: Acceptor) -> dict[str, Any]:
    out: dict[str, Any] = {"state": acceptor.state, "matcher": acceptor.matcher, "argument": acceptor.argument}
    if acceptor.each is not None:
        out["each"] = acceptor.each  # the argument is read on each element of this list
    if acceptor.statuses is not None:
        out["statuses"] = {"name": acceptor.statuses.name, "set": acceptor.within,
                           "values": [v for v in acceptor.statuses.values
                                      if acceptor.statuses.holds(acceptor.within, v)]}
    else:
        out["expected"] = plain_json(list(acceptor.expected))
    out["fold"] = acceptor.fold
    if acceptor.follow:
        out["follow"] = acceptor.follow
        out["binds"] = {k: list(v) for k, v in acceptor.binds.items()}
    return out


def describe_wait(wait: Waiter, options: dict[str, Option]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": wait.name, "help": wait.help}
    if wait.request is not None:
        out["request"] = describe_request(wait.request)
    if wait.enumeration is not None:
        out["enumeration"] = describe_enumeration(wait.enumeration)
    d = wait.delay
    out.update({
        "acceptors": [describe_acceptor(a) for a in wait.acceptors], "otherwise": wait.otherwise,
        "result": list(wait.result) if isinstance(wait.result, tuple) else wait.result,
        "delay": {"hint": list(d.hint), "min": d.low, "max": d.high, "default": d.default,
                  "option": _flag_of(d.option, options), "seconds": d.seconds, "backoff": d.backoff,
                  "jitter": d.jitter},
        "timeout": _flag_of(wait.timeout, options), "label": wait.label, "message": wait.message,
        "progress": wait.progress,
        "counts": {"argument": wait.counts.argument,
                   **({"each": wait.counts.each} if wait.counts.each is not None else {}),
                   "statuses": wait.counts.statuses.name if wait.counts.statuses else None} if wait.counts else None,
        "follows": {name: describe_wait(other, options) for name, other in wait.followed.items()},
    })
    return out


# -------------------------------------------------------------------- parts
def describe_items(items: Items) -> dict[str, Any]:
    return {"collection": items.collection, "find": items.find, "require": items.require, "unique": items.unique,
            "add": plain_json(items.add),
            "filter": {"field": items.field, "include": items.include, "exclude": items.exclude}
            if items.field else None}


def _step(part: StepPart) -> dict[str, Any]:
    return {"name": part.step.name, "with": part.params.plain(),
            "endpoints": {k: describe_request(e) for k, e in part.params.endpoints.items()},
            "enumerations": {k: describe_enumeration(e) for k, e in part.params.enumerations.items()}}


def _what(part: RequestPart | PagedPart | FanOutPart | StepPart | WaitPart, options: dict[str, Option],
          out: dict[str, Any]) -> None:
    """What a part requests (its kind's own keys), added to ``out``."""
    if isinstance(part, WaitPart):
        out["wait"] = describe_wait(part.wait, options)
        return
    if isinstance(part, FanOutPart):
        out["each"] = describe_enumeration(part.each)
    if isinstance(part, StepPart):
        if part.wait:
            out["wait"] = describe_wait(part.wait, options)
        out["step"] = _step(part)
    else:
        out["request"] = describe_request(part.request)
    if isinstance(part, PagedPart):
        out["pagination"] = describe_pagination(part.pagination)
        if part.empty_probe:
            out["empty_probe"] = describe_request(part.empty_probe)
            out["empty_probe_mode"] = part.empty_probe_mode
    if isinstance(part, (RequestPart, StepPart)) and part.items:
        out["items"] = describe_items(part.items)
    if isinstance(part, StepPart) and part.missing:
        out["missing"] = {"status": list(part.missing.status), "content_types": list(part.missing.content_types),
                          "placeholder": part.missing.placeholder}


def describe_part(part: Part, options: dict[str, Option], writes: bool) -> dict[str, Any]:
    """One part; ``writes`` when the action writes files (a stdout action ignores ``file``)."""
    inner = part.part if isinstance(part, ArchiveEntry) else part
    out: dict[str, Any] = {}
    if inner.when:
        flag = "|".join(options[o].flag if o in options else f"--{o}" for o in inner.when.options)
        out["when"] = {"option": inner.when.option, "flag": flag, "equals": inner.when.equals}
    _what(inner, options, out)
    if inner.shape:
        out["shape"] = {"name": inner.shape.name, "with": plain_json(inner.shape.params)}
    fmt = inner.format or ("binary" if inner.binary else "json")
    if writes and isinstance(part, ArchiveEntry):
        out["output"] = {"kind": "archive_entry", "path": part.entry, "format": fmt}
        out["required"] = part.required
    elif writes and inner.file:
        out["output"] = {"kind": "file", "path": inner.file, "format": inner.format or "json"}
    elif writes and isinstance(inner, StepPart) and inner.layout:
        out["output"] = {"kind": "file", "path": inner.layout, "format": fmt}
    return out


def _element(element: Element) -> dict[str, Any]:
    if element.kind == "part":
        return {"kind": "part", "part": element.part} if element.part else {"kind": "part"}
    if element.kind == "object":
        return {"kind": "object", "id_key": element.id_key}
    assert element.shape is not None
    return {"kind": "shape", "shape": element.shape.name, "with": plain_json(element.shape.params)}


def describe_dimension(spec: Spec, action: Action, dim: Dimension) -> dict[str, Any]:
    options = {opt.name: opt for opt in action.options}
    writer = "stdout" if action.writer == "stdout" else "archive" if dim.archive else "files"
    out: dict[str, Any] = {
        "option": dim.option.name if dim.option else dim.kind.option,
        "flags": list(dim.option.flags) if dim.option else [],
        "writer": writer,
        "serial": dim.serial,
    }
    if dim.composite and action.compose is not None:
        out["sections"] = [n for n, sec in action.compose.sections.items()
                           if dim.name in spec.section_action(sec).dimensions]
        return out
    if action.prints:
        out["element"] = _element(dim.element)
        if dim.output is not None:
            out["printed"] = dim.output.describe()
    if dim.select:
        flag = options[dim.select.option].flag if dim.select.option in options else f"--{dim.select.option}"
        out["select"] = {"option": dim.select.option, "flag": flag,
                         "choices": {k: list(v) for k, v in dim.select.choices.items()}}
    if dim.archive:
        out["archive"] = {"path": dim.archive.file, "format": "zip", "kind": dim.archive.kind,
                          "task_request": describe_request(dim.archive.task_request),
                          "order": list(dim.archive.order)}
    writes = action.writer == "files"
    out["parts"] = {name: describe_part(part, options, writes) for name, part in dim.parts.items()}
    outputs: list[dict[str, Any]] = []
    if not writes:
        outputs.append({"part": None, "kind": "stdout", "path": None, "format": "json"})
    elif dim.archive:
        outputs.append({"part": None, "kind": "archive", "path": dim.archive.file, "format": "zip"})
    for name, part in out["parts"].items():
        if part.get("output"):
            outputs.append({"part": name, **part["output"]})
    out["outputs"] = outputs
    return out


# ------------------------------------------------------------------ actions
def _compose(spec: Spec, action: Action, compose: Compose) -> dict[str, Any]:
    sections = {}
    for name, section in compose.sections.items():
        target = spec.section_action(section)
        sections[name] = {"command": target.command_line(PROG), "resource": section.resource,
                          "action": section.action, "options": plain_json(section.options),
                          "dimensions": list(target.dimensions)}
    return {"option": compose.option, "flag": action.flag_of(compose.option), "default": list(compose.default),
            "dimensions": list(compose.dimensions), "sections": sections}


def describe_action(spec: Spec, action: Action) -> dict[str, Any]:
    id_options = [o.name for o in action.options if action.dimension_of(o.name)]
    options = [describe_option(opt, action.dimension_of(opt.name)) for opt in action.options]
    out: dict[str, Any] = {
        "command": action.command_line(PROG),
        "words": action.words,
        "usage": action.usage(PROG),
        "help": action.help,
        "writer": action.writer,
        "options": options,
        "ids": {
            "options": id_options,
            "flags": [o["flags"] for o in options if o["name"] in id_options],
            "mutually_exclusive": len(id_options) > 1,
            "required": True,
            "max_ids": action.max_ids,
        },
    }
    if action.min_ids:
        out["ids"]["min_ids"] = action.min_ids
    if action.combine:
        out["combine"] = {"name": action.combine.name, "help": action.combine.definition.help,
                          "with": action.combine.params.plain()}
    if action.watch:
        out["watch"] = {"option": action.watch.option, "flag": action.flag_of(action.watch.option),
                        "waiter": action.watch.waiter.name, "help": action.watch.waiter.help}
    if action.extra_args:
        out["extra_args"] = True
    if action.stdout_when:
        out["stdout_when"] = {"option": action.stdout_when, "flag": action.flag_of(action.stdout_when)}
    if action.compose:
        out["compose"] = _compose(spec, action, action.compose)
    out["dimensions"] = {name: describe_dimension(spec, action, dim) for name, dim in action.dimensions.items()}
    return out


def describe_spec(spec: Spec, resource: str | None = None, action: str | None = None) -> dict[str, Any]:
    """The whole document, or narrowed to one resource (and one action)."""
    resources = spec.resources
    if resource is not None and resource not in resources:
        raise UsageError(f"unknown resource {resource!r}; choose from {', '.join(resources)}")
    if resource is not None and action is not None and action not in resources[resource].actions:
        raise UsageError(f"unknown action {action!r} of {resource}; choose from "
                         f"{', '.join(resources[resource].actions)}")
    out_resources: dict[str, Any] = {}
    for rname, res in resources.items():
        if resource is not None and rname != resource:
            continue
        actions = {aname: describe_action(spec, act)
                   for aname, act in res.actions.items() if action is None or aname == action}
        out_resources[rname] = {"help": res.help, "command": res.command, "actions": actions}
    return {
        "describe_version": DESCRIBE_VERSION,
        "program": PROG,
        "aliases": list(ALIASES),
        "version": __version__,
        "global_options": global_options(spec),
        "exit_codes": [dict(code) for code in EXIT_CODES],
        "services": describe_services(spec),
        "resources": out_resources,
    }


# ------------------------------------------------------------------ command
def describe(resource: str | None = None, action: str | None = None, *, openapi: bool = False,
             ctx: Any = None) -> int:
    """Print every command of the table (or one resource / action) as one JSON document."""
    from ..base.jsontext import dumps

    pretty = True if ctx is None else ctx.options.get("pretty", True)
    spec = load_model()
    if openapi:
        if resource is not None:
            raise UsageError("--openapi describes the whole endpoint table; give no RESOURCE")
        from .openapi import openapi_document

        document = openapi_document(spec)
    else:
        document = describe_spec(spec, resource, action)
    sys.stdout.write(dumps(document, pretty))
    return 0
