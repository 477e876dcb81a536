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
* Services: the Benchloop operations use the document's server and the
  ``X-API-Key`` header; an operation of another service (AgentPlatform, for
  ``ap-cmd``) carries that service's server on its path item, its own key
  scheme (``X-API-KEY``), its headers (``X-CLUSTER``, ``Env``) as required
  header parameters, and every auth status it uses (401 and 403).
"""

from __future__ import annotations

from typing import Any

from ..table.model import Endpoint, Spec
from ..table.templates import PAGE_VARS, VAR, lone_var
from ..version import __version__

OPENAPI_VERSION = "3.1.0"
ERROR_REF = {"$ref": "#/components/schemas/Error"}
JSON_ANY = {"type": ["object", "array"]}


def value_schema(spec: Spec, template: Any) -> dict[str, Any]:
    """JSON Schema of one query or body value, from its template."""
    if isinstance(template, bool):
        return {"type": "boolean", "default": template}
    if isinstance(template, int):
        return {"type": "integer", "default": template}
    if not isinstance(template, str):
        return {}
    variables = VAR.findall(template)
    if not variables:
        return {"type": "string", "default": template}
    if lone_var(template) in PAGE_VARS:
        return {"type": "integer", "format": "int64", "minimum": 0}
    return spec.param_schema(template)


def endpoint_usage(spec: Spec) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, str]]:
    """Which resources and commands use each endpoint, and paginated collections."""
    resources: dict[str, list[str]] = {}
    commands: dict[str, list[str]] = {}
    for name, actions in spec.endpoint_users().items():
        resources[name] = list(dict.fromkeys(a.resource for a in actions))
        commands[name] = list(dict.fromkeys(a.command_line() for a in actions))
    collections: dict[str, str] = {}
    for action in spec.actions:
        for dim in action.dimensions.values():
            for part in dim.parts.values():
                for endpoint, pagination in part.scans:
                    if pagination.collection:
                        collections.setdefault(endpoint.name, pagination.collection)
    return resources, commands, collections


def _responses(endpoint: Endpoint, collection: str | None, has_input: bool,
               auth_statuses: tuple[int, ...] = (401,)) -> dict[str, Any]:
    if endpoint.binary:
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
    if endpoint.binary and endpoint.method == "GET":
        responses["302"] = {"description": "Redirect (for example to a login page when the file needs a session)."}
    if has_input:
        responses["400"] = {"$ref": "#/components/responses/BadRequest"}
    responses["401"] = {"$ref": "#/components/responses/Unauthorized"}
    if 403 in auth_statuses:
        responses["403"] = {"$ref": "#/components/responses/Forbidden"}
    responses["404"] = {"$ref": "#/components/responses/NotFound"}
    responses["default"] = {"$ref": "#/components/responses/Error"}
    return responses


def _operation(spec: Spec, endpoint: Endpoint, tags: list[str], commands: list[str],
               collection: str | None) -> dict[str, Any]:
    params = [{"name": p.name, "in": "query", "required": False, "schema": value_schema(spec, p.template),
               "x-benchloop-template": p.template} for p in endpoint.query]
    op: dict[str, Any] = {
        "operationId": endpoint.name,
        "summary": endpoint.help,
        "tags": list(tags),
        "parameters": params,
    }
    if endpoint.body is not None:
        schema = {"type": "object", "properties": {p.name: value_schema(spec, p.template) for p in endpoint.body}}
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}},
                             "x-benchloop-template": {p.name: p.template for p in endpoint.body}}
    service = spec.services[endpoint.service]
    if not service.default:
        derived = {d.name: d for d in service.derived}
        for header, template in service.headers.items():
            var = lone_var(template)
            rule = derived.get(var or "")
            schema = {"type": "string", "enum": sorted({*rule.values.values(), rule.default})} if rule else \
                {"type": "string"}
            params.append({"name": header, "in": "header", "required": True, "schema": schema,
                           "x-benchloop-template": template})
        op["security"] = [{_scheme(service.name): []}]
    op["responses"] = _responses(endpoint, collection, bool(params) or endpoint.body is not None,
                                 service.auth_statuses)
    op["x-benchloop-endpoints"] = [endpoint.name]
    op["x-benchloop-commands"] = list(commands)
    return op

def _scheme(service: str) -> str:
    return "apiKey" if service == "benchloop" else f"{service}ApiKey"


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


def openapi_document(spec: Spec) -> dict[str, Any]:

    resources, commands, collections = endpoint_usage(spec)
    paths: dict[str, dict[str, Any]] = {}
    for name, endpoint in spec.endpoints.items():
        item = paths.setdefault(endpoint.path, {})
        if endpoint.path_vars and "parameters" not in item:
            item["parameters"] = [{"name": var, "in": "path", "required": True, "schema": {"type": "string"}}
                                  for var in endpoint.path_vars]
        service = spec.services[endpoint.service]
        if not service.default:  # another service's server, on its path item
            item["servers"] = [{"url": service.base_url.default or "", "description": service.title}]
        op = _operation(spec, endpoint, resources.get(name, []), commands.get(name, []), collections.get(name))
        method = endpoint.method.lower()
        if method in item:
            _merge(item[method], name, op)
        else:
            item[method] = op
    tags = [{"name": rname, "description": resource.help} for rname, resource in spec.resources.items()]
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
        "servers": [{"url": spec.default_service.base_url.default, "description": spec.default_service.title}],
        "security": [{"apiKey": []}],
        "x-benchloop-services": {name: {"url": s.base_url.default, "title": s.title,
                                        "security": _scheme(name)} for name, s in spec.services.items()},
        "tags": tags,
        "paths": paths,
        "components": {
            "securitySchemes": {_scheme(name): {"type": "apiKey", "in": "header", "name": s.auth_header,
                                                **({} if s.default else {"description": f"The {s.title} API key."})}
                                for name, s in spec.services.items()},
            "schemas": {
                "Error": {"type": "object", "required": ["error"],
                          "properties": {"error": {"type": "string"}}},
            },
            "responses": {
                "BadRequest": {**error, "description": "Invalid request (bad skip/limit, missing or invalid body)."},
                "Unauthorized": {**error, "description": "Missing or wrong API key."},
                "Forbidden": {**error, "description": "Wrong API key (AgentPlatform answers 403 too)."},
                "NotFound": {**error, "description": "Unknown id or path."},
                "Error": {**error, "description": "Any other error."},
            },
        },
    }
