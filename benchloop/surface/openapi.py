"""The endpoint table as an OpenAPI 3.1 document (`bl describe --openapi`).

The table's ``endpoints`` section is a small description of the backend's HTTP
operations and its ``schemas`` section the shapes of their answers; exporting
both as OpenAPI lets standard tools check a backend against them (the test
suite runs schemathesis against the sandbox, openapi-spec-validator on the
document, and generates a client with openapi-python-client) and lets people
browse the API that ``bl`` relies on.

* Paths, methods and path parameters come straight from the table; endpoints
  that share a path and method become one operation (``x-benchloop-endpoints``
  lists them all).
* Query parameters: ``{skip}``/``{limit}`` are int64 integers from 0, a
  ``{flag}`` option is a boolean, an ``{int}`` option (or a literal number) an
  int64 integer, anything else a string; a literal value is the default.
  ``x-benchloop-template`` keeps the table's template.  The parameters the
  table lists under ``required`` are required (and not empty); ``bl`` leaves
  out the other ones when they are empty.
* A POST's request body lists the table's ``body`` keys with the same typing;
  it is required when one of its fields is.
* 200 answers carry the endpoint's ``response``: the JSON Schema of the table
  (its ``schemas`` become ``components/schemas``), or bytes (or text) of the
  media types it names.  The schemas are open: answers may carry more fields.
  Errors (400, 401, 404 and the rest) carry the service's ``error`` body.
* Services: the Benchloop operations use the document's server and its key
  scheme; an operation of another service (AgentPlatform, for ``ap-cmd``)
  carries that service's server on its path item, its own key scheme, its
  headers (``X-CLUSTER``, ``Env``) as required header parameters, and every
  auth status it uses (401 and 403).  Header names are case-insensitive, so
  the schemes spell a header one way (the first service's) even where ``bl``
  sends another spelling (``X-API-KEY`` to AgentPlatform).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..table.model import Endpoint, Service, Spec
from ..table.params import body_schema, query_schema
from ..table.responses import Response, ref_name, rewrite_refs
from ..table.templates import lone_var
from ..version import __version__

OPENAPI_VERSION = "3.1.0"
SCHEMA_PREFIX = "#/components/schemas/"
# Error answers every operation documents: status -> (component name, description).
_ERRORS = {
    "400": ("BadRequest", "Invalid request (a missing required parameter, a bad number, an invalid body)."),
    "401": ("Unauthorized", "Missing or wrong API key."),
    "403": ("Forbidden", "Wrong API key (AgentPlatform answers 403 too)."),
    "404": ("NotFound", "Unknown id or path."),
    "default": ("Error", "Any other error."),
}


def endpoint_usage(spec: Spec) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Which resources and commands use each endpoint."""
    resources: dict[str, list[str]] = {}
    commands: dict[str, list[str]] = {}
    for name, actions in spec.endpoint_users().items():
        resources[name] = list(dict.fromkeys(a.resource for a in actions))
        commands[name] = list(dict.fromkeys(a.command_line() for a in actions))
    return resources, commands


def response_schema(response: Response) -> dict[str, Any]:
    """The table's schema of a JSON answer, its references pointing into ``components``."""
    return rewrite_refs(dict(response.schema or {}), SCHEMA_PREFIX)


def _success(endpoint: Endpoint) -> dict[str, Any]:
    response = endpoint.response
    if response.is_json:
        described = response.schemas.resolve(response.schema).get("description")
        return {"description": described or endpoint.help,
                "content": {"application/json": {"schema": response_schema(response)}}}
    body = {"type": "string", "format": "binary"} if response.binary else {"type": "string"}
    what = "The bytes" if response.binary else "The text"
    return {"description": f"{what} ({', '.join(response.content_types)}).",
            "content": {media: {"schema": dict(body)} for media in response.content_types}}


def _error_prefix(service: Service) -> str:
    return "" if service.default else service.title.replace(" ", "")


def _responses(endpoint: Endpoint, service: Service, has_input: bool) -> dict[str, Any]:
    responses: dict[str, Any] = {"200": _success(endpoint)}
    if not endpoint.response.is_json and endpoint.method == "GET":
        responses["302"] = {"description": "Redirect (for example to a login page when the file needs a session)."}
    prefix = _error_prefix(service)
    statuses = [*(["400"] if has_input else []), "401", *(["403"] if 403 in service.auth_statuses else []),
                "404", "default"]
    for status in statuses:
        responses[status] = {"$ref": f"#/components/responses/{prefix}{_ERRORS[status][0]}"}
    return responses


def _query_parameter(spec: Spec, endpoint: Endpoint, name: str, template: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": endpoint.is_required(name),
            "schema": query_schema(spec, endpoint, name, template), "x-benchloop-template": template}


def _operation(spec: Spec, endpoint: Endpoint, tags: list[str], commands: list[str]) -> dict[str, Any]:
    params = [_query_parameter(spec, endpoint, p.name, p.template) for p in endpoint.query]
    used = f"Used by {', '.join(f'`{c}`' for c in commands)}." if commands else "Used by no command."
    op: dict[str, Any] = {
        "operationId": endpoint.name,
        "summary": endpoint.help,
        "description": f"{endpoint.help} {used}",
        "tags": list(tags),
        "parameters": params,
    }
    if endpoint.body is not None:
        op["requestBody"] = {"required": endpoint.body_required,
                             "content": {"application/json": {"schema": body_schema(spec, endpoint)}},
                             "x-benchloop-template": {p.name: p.template for p in endpoint.body}}
    service = spec.services[endpoint.service]
    if not service.default:
        derived = {d.name: d for d in service.derived}
        for header, template in service.headers.items():
            var = lone_var(template)
            rule = derived.get(var or "")
            schema = {"type": "string", "enum": sorted({*rule.values.values(), rule.default})} if rule else \
                {"type": "string", "minLength": 1}
            params.append({"name": header, "in": "header", "required": True, "schema": schema,
                           "x-benchloop-template": template})
        op["security"] = [{_scheme(service.name): []}]
    op["responses"] = _responses(endpoint, service, bool(params) or endpoint.body is not None)
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
        op["description"] = f"{op['description']} / {other['description']}"


def security_schemes(spec: Spec) -> dict[str, Any]:
    """One scheme per service; a header is spelled as the first service that names it spells it."""
    spelling: dict[str, str] = {}
    schemes = {}
    for name, service in spec.services.items():
        header = spelling.setdefault(service.auth_header.lower(), service.auth_header)
        scheme: dict[str, Any] = {"type": "apiKey", "in": "header", "name": header}
        if not service.default:
            sent = f" (bl sends it as {service.auth_header})" if header != service.auth_header else ""
            scheme["description"] = f"The {service.title} API key{sent}."
        schemes[_scheme(name)] = scheme
    return schemes


def _error_components(spec: Spec) -> tuple[dict[str, Any], dict[str, Any]]:
    """(schemas, responses) of every service's error body: ``Error``, ``Unauthorized``... for the
    default service, the same names prefixed by the title for the others."""
    schemas: dict[str, Any] = {}
    responses: dict[str, Any] = {}
    for service in spec.services.values():
        prefix = _error_prefix(service)
        error: Mapping[str, Any] = (service.error.schema if service.error is not None and service.error.schema
                                    is not None else {"type": "object"})
        if ref_name(error.get("$ref", "")) is None:  # an inline error schema becomes a component of its own
            schemas[f"{prefix}Error"] = rewrite_refs(dict(error), SCHEMA_PREFIX)
            error = {"$ref": f"{SCHEMA_PREFIX}{prefix}Error"}
        body = {"content": {"application/json": {"schema": rewrite_refs(dict(error), SCHEMA_PREFIX)}}}
        for _status, (name, description) in _ERRORS.items():
            if name == "Forbidden" and 403 not in service.auth_statuses:
                continue
            title = f"{service.title}: " if prefix else ""
            responses[f"{prefix}{name}"] = {"description": f"{title}{description}", **body}
    return schemas, responses


def openapi_document(spec: Spec) -> dict[str, Any]:

    resources, commands = endpoint_usage(spec)
    paths: dict[str, dict[str, Any]] = {}
    for name, endpoint in spec.endpoints.items():
        item = paths.setdefault(endpoint.path, {})
        if endpoint.path_vars and "parameters" not in item:
            item["parameters"] = [{"name": var, "in": "path", "required": True, "schema": {"type": "string"}}
                                  for var in endpoint.path_vars]
        service = spec.services[endpoint.service]
        if not service.default:  # another service's server, on its path item
            item["servers"] = [{"url": service.base_url.default or "", "description": service.title}]
        op = _operation(spec, endpoint, resources.get(name, []), commands.get(name, []))
        method = endpoint.method.lower()
        if method in item:
            _merge(item[method], name, op)
        else:
            item[method] = op
    tags = [{"name": rname, "description": resource.help} for rname, resource in spec.resources.items()]
    error_schemas, error_responses = _error_components(spec)
    schemas = {name: rewrite_refs(dict(schema), SCHEMA_PREFIX) for name, schema in spec.schemas.shapes.items()}
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "benchmark-analysis backend (the operations bl uses)",
            "version": __version__,
            "description": "Generated from the benchloop endpoint table (spec/benchloop.yaml) by "
                           "`bl describe --openapi`. Response schemas are open: the backend may add "
                           "fields to any answer, and only the fields bl relies on are required.",
        },
        "servers": [{"url": spec.default_service.base_url.default, "description": spec.default_service.title}],
        "security": [{"apiKey": []}],
        "x-benchloop-services": {name: {"url": s.base_url.default, "title": s.title,
                                        "security": _scheme(name)} for name, s in spec.services.items()},
        "tags": tags,
        "paths": paths,
        "components": {
            "securitySchemes": security_schemes(spec),
            "schemas": {**schemas, **error_schemas},
            "responses": error_responses,
        },
    }
