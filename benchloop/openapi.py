"""The endpoint table as an OpenAPI 3.1 document (`bl describe --openapi`).

The table's ``endpoints`` section is a small description of the backend's HTTP
operations; exporting it as OpenAPI lets standard tools check a backend
against it (the test suite runs schemathesis against the sandbox) and lets
people browse the API that ``bl`` relies on.

What the table knows becomes precise; what it does not know stays permissive
but true:

* Paths, methods and path parameters come straight from the table; endpoints
  that share a path and method become one operation (``x-benchloop-endpoints``
  lists them all).
* Query parameters: ``{skip}``/``{limit}`` are non-negative integers, a
  ``{flag}`` option is a boolean, an ``{int}`` option an integer, anything else
  a string; a literal value is the default.  ``x-benchloop-template`` keeps the
  table's template.  None is marked required: ``bl`` leaves out empty values.
* A POST's request body lists the table's ``body`` keys with the same typing.
* 200 answers are JSON objects or arrays; an endpoint walked by a paginated
  part answers an object holding its collection array.  ``response: binary``
  endpoints answer bytes of any media type.  Errors (401, 404, 400 and the
  rest) carry ``{"error": string}``.
* The API key travels in the ``X-API-Key`` header.
"""

from __future__ import annotations

import re
from typing import Any

from . import __version__

_VAR = re.compile(r"\{([^{}]+)\}")
_FULL = re.compile(r"^\{([^{}]+)\}$")
OPENAPI_VERSION = "3.1.0"
ERROR_REF = {"$ref": "#/components/schemas/Error"}
JSON_ANY = {"type": ["object", "array"]}


def _option_types(spec: dict[str, Any]) -> dict[str, str]:
    """Option name -> table type, over shared, per-action and global options."""
    from .globals import GLOBAL_OPTIONS

    types = {opt["name"]: opt["type"] for opt in GLOBAL_OPTIONS}
    for resource in spec["resources"].values():
        for action in resource["actions"].values():
            for opt in action["options"]:
                types.setdefault(opt["name"], opt.get("type", "str"))
    for name, opt in spec["options"].items():
        types[name] = opt["type"]
    return types


def value_schema(template: Any, types: dict[str, str]) -> dict[str, Any]:
    """JSON Schema of one query or body value, from its template."""
    if isinstance(template, bool):
        return {"type": "boolean", "default": template}
    if isinstance(template, int):
        return {"type": "integer", "default": template}
    if not isinstance(template, str):
        return {}
    full = _FULL.match(template)
    if not full:
        if not _VAR.search(template):
            return {"type": "string", "default": template}
        return {"type": "string"}
    name = full.group(1)
    if name in ("skip", "limit"):
        return {"type": "integer", "format": "int64", "minimum": 0}
    kind = types.get(name)
    if kind == "flag":
        return {"type": "boolean"}
    if kind == "int":
        return {"type": "integer"}
    return {"type": "string"}


def endpoint_usage(spec: dict[str, Any]) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, str]]:
    """Which resources and commands use each endpoint, and paginated collections."""
    resources: dict[str, list[str]] = {}
    commands: dict[str, list[str]] = {}
    collections: dict[str, str] = {}
    endpoints = spec["endpoints"]
    enums = spec.get("enumerations") or {}

    def use(endpoint: Any, rname: str, command: str) -> None:
        if isinstance(endpoint, str) and endpoint in endpoints:
            if rname not in resources.setdefault(endpoint, []):
                resources[endpoint].append(rname)
            if command not in commands.setdefault(endpoint, []):
                commands[endpoint].append(command)

    def use_enum(name: str, rname: str, command: str) -> None:
        enum = enums[name]
        use(enum["request"], rname, command)
        use(enum.get("empty_probe"), rname, command)
        if enum["pagination"].get("collection"):
            collections.setdefault(enum["request"], enum["pagination"]["collection"])

    for rname, resource in spec["resources"].items():
        for aname, action in resource["actions"].items():
            command = f"bl {rname}" if resource.get("command") else f"bl {rname} {aname}"
            for dim in action["dimensions"].values():
                if dim.get("archive"):
                    use(dim["archive"]["task_request"], rname, command)
                for part in dim["parts"].values():
                    use(part.get("request"), rname, command)
                    use(part.get("empty_probe"), rname, command)
                    collection = (part.get("pagination") or {}).get("collection")
                    if collection and part.get("request"):
                        collections.setdefault(part["request"], collection)
                    if part.get("each"):
                        use_enum(part["each"], rname, command)
                    for value in (part.get("with") or {}).values():
                        use(value, rname, command)
                        if isinstance(value, str) and value in enums:
                            use_enum(value, rname, command)
    # A composite command (`bl pull`) uses what its sections use.
    for rname, resource in spec["resources"].items():
        for aname, action in resource["actions"].items():
            if not action.get("compose"):
                continue
            command = f"bl {rname}" if resource.get("command") else f"bl {rname} {aname}"
            for section in action["compose"]["sections"].values():
                target = section["resource"]
                words = f"bl {target}" if spec["resources"][target].get("command") else \
                    f"bl {target} {section['action']}"
                for endpoint, used_by in list(commands.items()):
                    if words in used_by:
                        use(endpoint, rname, command)
    return resources, commands, collections


def _responses(endpoint: dict[str, Any], collection: str | None, has_input: bool) -> dict[str, Any]:
    if endpoint.get("response") == "binary":
        ok = {"description": "The bytes (any media type: a media file keeps its own type).",
              "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                          "*/*": {"schema": {"type": "string", "format": "binary"}}}}
    elif collection:
        schema = {"type": "object", "required": [collection],
                  "properties": {collection: {"type": "array"}, "total": {}}}
        ok = {"description": f"One page: the {collection} array and the total count.",
              "content": {"application/json": {"schema": schema}}}
    else:
        ok = {"description": "The JSON response.", "content": {"application/json": {"schema": dict(JSON_ANY)}}}
    responses: dict[str, Any] = {"200": ok}
    if endpoint.get("response") == "binary" and endpoint["method"] == "GET":
        responses["302"] = {"description": "Redirect (for example to a login page when the file needs a session)."}
    if has_input:
        responses["400"] = {"$ref": "#/components/responses/BadRequest"}
    responses["401"] = {"$ref": "#/components/responses/Unauthorized"}
    responses["404"] = {"$ref": "#/components/responses/NotFound"}
    responses["default"] = {"$ref": "#/components/responses/Error"}
    return responses


def _operation(name: str, endpoint: dict[str, Any], types: dict[str, str], tags: list[str],
               commands: list[str], collection: str | None) -> dict[str, Any]:
    params = []
    for key, template in (endpoint.get("query") or {}).items():
        params.append({"name": key, "in": "query", "required": False,
                       "schema": value_schema(template, types),
                       "x-benchloop-template": template})
    op: dict[str, Any] = {
        "operationId": name,
        "summary": endpoint["help"],
        "tags": list(tags),
        "parameters": params,
    }
    if endpoint["method"] == "POST":
        body = endpoint.get("body") or {}
        schema = {"type": "object",
                  "properties": {k: value_schema(v, types) for k, v in body.items()}}
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}},
                             "x-benchloop-template": dict(body)}
    op["responses"] = _responses(endpoint, collection, bool(params) or endpoint["method"] == "POST")
    op["x-benchloop-endpoints"] = [name]
    op["x-benchloop-commands"] = list(commands)
    return op


def _merge(op: dict[str, Any], name: str, other: dict[str, Any]) -> None:
    """A second endpoint of the same path and method joins the first's operation."""
    op["x-benchloop-endpoints"].append(name)
    known = {p["name"] for p in op["parameters"]}
    op["parameters"] += [p for p in other["parameters"] if p["name"] not in known]
    op["tags"] += [t for t in other["tags"] if t not in op["tags"]]
    op["x-benchloop-commands"] += [c for c in other["x-benchloop-commands"] if c not in op["x-benchloop-commands"]]
    merged = {**other["responses"], **op["responses"]}
    op["responses"] = {k: merged[k] for k in sorted(merged, key=lambda k: (k == "default", k))}
    if other["summary"] not in op["summary"]:
        op["summary"] = f"{op['summary']} / {other['summary']}"


def openapi_document(spec: dict[str, Any]) -> dict[str, Any]:
    from .config import DEFAULT_HOST

    types = _option_types(spec)
    resources, commands, collections = endpoint_usage(spec)
    paths: dict[str, dict[str, Any]] = {}
    for name, endpoint in spec["endpoints"].items():
        item = paths.setdefault(endpoint["path"], {})
        variables = list(dict.fromkeys(_VAR.findall(endpoint["path"])))
        if variables and "parameters" not in item:
            item["parameters"] = [{"name": var, "in": "path", "required": True, "schema": {"type": "string"}}
                                  for var in variables]
        op = _operation(name, endpoint, types, resources.get(name, []), commands.get(name, []),
                        collections.get(name))
        method = endpoint["method"].lower()
        if method in item:
            _merge(item[method], name, op)
        else:
            item[method] = op
    tags = [{"name": rname, "description": resource["help"]} for rname, resource in spec["resources"].items()]
    error = {"description": "", "content": {"application/json": {"schema": ERROR_REF}}}
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "benchmark-analysis backend (the operations bl uses)",
            "version": __version__,
            "description": "Generated from the benchloop endpoint table (spec/benchloop.yaml) by "
                           "`bl describe --openapi`. Response schemas are deliberately permissive where the "
                           "table does not describe a payload.",
        },
        "servers": [{"url": DEFAULT_HOST}],
        "security": [{"apiKey": []}],
        "tags": tags,
        "paths": paths,
        "components": {
            "securitySchemes": {"apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"],
                          "properties": {"error": {"type": "string"}}},
            },
            "responses": {
                "BadRequest": {**error, "description": "Invalid request (bad skip/limit, missing or invalid body)."},
                "Unauthorized": {**error, "description": "Missing or wrong API key."},
                "NotFound": {**error, "description": "Unknown id or path."},
                "Error": {**error, "description": "Any other error."},
            },
        },
    }
