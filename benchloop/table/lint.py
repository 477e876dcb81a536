"""Expansion and cross-reference lints of the endpoint table.

The JSON Schema checks the shape of each entry; these checks cover what a
schema cannot: references between entries (requests, enumerations, shapes,
pagination modes, steps, combines), that every path-template variable is bound
where the endpoint is used (by parts, enumerations, archives and named steps),
that every variable of a file, archive entry or step template is bound, that
JMESPath values compile and columns are unique, and that no two outputs share
a path template.  For the answers (``responses.py``): every
endpoint declares its response and every service its error body, every
``$ref`` names a schema, no schema is closed, and every field the table reads
(a pagination's collection, ids and total, ``items:`` fields, a waiter's
status, hint and result, shape parameters, ``{parts.NAME.FIELD}``, an
action's ``error_field``) is declared in the answer it is read from, so a typo
in a field name fails here instead of at run time against a real backend.
They run when the table is compiled and again as tests
(``tests/unit/table/test_speclint.py`` holds one broken table per message).

``lint`` walks the table one concern at a time (options, compose, dimensions,
parts, outputs); each check is a small function that appends messages to the
``_Lint`` it is given, so a new key gets a new function.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .model import DIMENSION_KINDS, DIMENSIONS
from .responses import ITEMS, Schemas, ref_name, types_of
from .templates import PAGE_VARS, VAR, template_vars

DIMENSION_OPTION_NAMES = {k.name: k.option for k in DIMENSION_KINDS.values()}
RESERVED = {"ctx"} | set(__import__("keyword").kwlist)
JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
# The field every walking pagination mode reads its total from (``engine/pagination.py``).
PAGE_TOTAL = "total"
# Keywords whose value is a mapping of names to schemas, or a list of schemas, or one schema.
_NAMED_SCHEMAS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_ONE_SCHEMA = ("items", "additionalProperties", "unevaluatedProperties", "not", "contains", "if", "then", "else",
               "propertyNames")
# Every keyword of JSON Schema 2020-12 (core, applicator, validation, meta-data, format, content).
KEYWORDS = frozenset((
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items",
    "contains", "properties", "patternProperties", "additionalProperties", "propertyNames",
    "unevaluatedItems", "unevaluatedProperties", "type", "enum", "const", "multipleOf", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems",
    "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required",
    "dependentRequired", "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    "format", "contentEncoding", "contentMediaType", "contentSchema",
))


def expand(spec: dict[str, Any]) -> dict[str, Any]:
    """Resolve option references into full, named option definitions."""
    spec = copy.deepcopy(spec)
    shared = spec["options"]
    _expand_statuses(spec)
    for resource in spec["resources"].values():
        for action in resource["actions"].values():
            if action.get("compose"):
                dims = action["compose"]["dimensions"]
                action["dimensions"] = {d: {"parts": {}, "composite": True} for d in DIMENSIONS if d in dims}
    for resource in spec["resources"].values():
        for action in resource["actions"].values():
            expanded = []
            dims = set(action["dimensions"])
            if dims & {"group", "job"}:
                # Both id options exist wherever either does, so that an unsupported one
                # gets a precise usage error instead of "unknown option".
                dims |= {"group", "job"}
            if action.get("id_options"):
                dims = set(action["id_options"])
            own = action.get("options") or {}
            for dim in DIMENSIONS:
                option = DIMENSION_OPTION_NAMES[dim]
                if dim in dims and option in shared and option not in own:
                    expanded.append({"name": option, **shared[option]})
            for name, ref in (action.get("options") or {}).items():
                body = shared.get(ref) if isinstance(ref, str) else ref
                expanded.append({"name": name, **(body or {"missing": ref})})
            if action["writer"] == "stdout" or action.get("stdout_when"):
                for name in spec.get("stdout_options") or ():
                    expanded.append({"name": name, **(shared.get(name) or {"missing": name})})
            action["options"] = expanded
    return spec


def _expand_statuses(spec: dict[str, Any]) -> None:
    """An option with ``statuses: NAME`` takes the values of that status enumeration (an unknown
    name is left for the lints to report)."""
    statuses = spec.get("statuses") or {}
    bodies = list(spec["options"].values())
    for resource in spec["resources"].values():
        for action in resource["actions"].values():
            bodies += [o for o in (action.get("options") or {}).values() if isinstance(o, dict)]
    for body in bodies:
        name = body.get("statuses")
        if isinstance(name, str) and name in statuses:
            body["values"] = list(statuses[name]["values"])
            del body["statuses"]


def _all_option_names(spec: dict[str, Any]) -> set[str]:
    names = set(spec["options"]) | set(spec.get("global_options") or {})
    for resource in spec["resources"].values():
        for action in resource["actions"].values():
            names |= {opt["name"] for opt in action["options"]}
    return names


@dataclass
class _Lint:
    """What every check needs: the table, every option name, the problems found."""

    spec: dict[str, Any]
    known: set[str]
    problems: list[str] = field(default_factory=list)
    schemas: Schemas = field(default_factory=Schemas)
    # Normalized output template -> the first place that writes it, over all resources.
    files: dict[str, str] = field(default_factory=dict)

    def add(self, message: str) -> None:
        self.problems.append(message)


@dataclass
class _Output:
    """A path template a files action writes under the output root."""

    where: str
    dim: str
    part: str | None  # None: the dimension's archive file
    template: str


def _check_endpoint_use(
    spec: dict[str, Any], where: str, name: str, bound: set[str], known: set[str], problems: list[str]
) -> None:
    endpoint = spec["endpoints"].get(name)
    if endpoint is None:
        problems.append(f"{where}: unknown endpoint {name!r}")
        return
    for var in template_vars(endpoint["path"]):
        if var not in bound:
            problems.append(f"{where}: path variable {{{var}}} of endpoint {name!r} is not bound")
    service = endpoint.get("service", "benchloop")
    for var in _service_vars(spec, service):
        if var not in bound:
            problems.append(f"{where}: header variable {{{var}}} of service {service!r} is not bound ({name!r})")
    values = list((endpoint.get("query") or {}).values()) + list((endpoint.get("body") or {}).values())
    for value in values:
        for var in template_vars(str(value)):
            root = var.split(".")[0]
            if var.startswith("parts."):
                part = var.split(".")[1]
                if f"parts.{part}" not in bound:
                    problems.append(f"{where}: {{{var}}} of endpoint {name!r} names no earlier part")
            elif root not in known | set(PAGE_VARS) | set(DIMENSIONS) | bound:
                problems.append(f"{where}: {{{var}}} of endpoint {name!r} names no option")


def _check_bound(c: _Lint, where: str, label: str, template: str, bound: set[str]) -> None:
    for var in template_vars(template):
        if var not in bound:
            c.add(f"{where}: {label} variable {{{var}}} is not bound")


def _check_uses(c: _Lint, where: str, label: str, template: str, var: str) -> None:
    """A template written once per ``var`` value must tell the values apart."""
    if var not in template_vars(template):
        c.add(f"{where}: {label} {template!r} does not use {{{var}}}: every {var} would write the same path")


def _check_step(spec: dict[str, Any], where: str, part: dict[str, Any], problems: list[str],
                bound: set[str] | None = None, known: set[str] | None = None) -> None:
    """The step is declared (``steps:``); its ``with:`` gives every value the declaration asks
    for, each of its declared type (an endpoint that is usable where the part is, an existing
    enumeration or earlier part, a template whose variables are bound) and nothing else.

    ``bound``: what the part has bound (dimension id, archive job, each, earlier parts);
    the step's own ``binds`` are added per ``with:`` key.
    """
    bound, known = set(bound or ()), set(known or ())
    name = part["step"]
    declared = (spec.get("steps") or {}).get(name)
    if declared is None:
        problems.append(f"{where}: unknown step {name!r}")
        return
    params = part.get("with") or {}
    checked = _check_values(spec, where, "step", name, declared, params, problems, bound)
    for key, param, value in checked:
        binds = bound | set(param.get("binds") or ())
        if param["type"] == "endpoint":
            _check_endpoint_use(spec, where, value, binds, known, problems)
        elif param["type"] in ("template", "progress"):
            for var in template_vars(value["label"] if param["type"] == "progress" else value):
                if var not in binds:
                    problems.append(f"{where}: with.{key} variable {{{var}}} is not bound")


def _check_values(spec: dict[str, Any], where: str, what: str, name: str, declared: dict[str, Any],
                  params: dict[str, Any], problems: list[str], bound: set[str],
                  columns: list[str] | None = None) -> list[tuple[str, dict[str, Any], Any]]:
    """The ``with:`` of a step part or a combine against its declaration: no key it does not
    declare, every value it needs, each of its type; ``(key, declaration, value)`` of each
    value that is fine.  ``column_names`` name columns of the part's own ``columns`` value,
    or (a combine) of ``columns``: the columns the action's rows have (a combine's own
    ``columns`` value declares rows it makes itself)."""
    for key in params:
        if key not in (declared.get("with") or {}):
            takes = ", ".join(declared.get("with") or {}) or "nothing"
            problems.append(f"{where}: {what} {name!r} takes no 'with.{key}' (it takes: {takes})")
    own = next((_column_names(v) for k, v in params.items()
                if (declared.get("with") or {}).get(k, {}).get("type") == "columns" and isinstance(v, list)), None)
    checked = []
    for key, param in (declared.get("with") or {}).items():
        value = params.get(key, param.get("default"))
        if value is None:
            if not param.get("optional"):
                problems.append(f"{where}: {what} {name!r} needs 'with.{key}' ({param['type']})")
            continue
        problem = _step_value(spec, param["type"], value, bound)
        if problem is None and param["type"] == "column_names":
            # a combine's names are of the action's rows (its own columns are rows it makes)
            problem = _unknown_columns(value, columns if columns is not None else own or [])
        if problem:
            problems.append(f"{where}: with.{key} of {what} {name!r} {problem}")
            continue
        checked.append((key, param, value))
    return checked


def _column_names(columns: list[Any]) -> list[str]:
    return [c["name"] for c in columns if isinstance(c, dict) and isinstance(c.get("name"), str)]


def _unknown_columns(names: list[str], columns: list[str]) -> str | None:
    unknown = [n for n in names if n not in columns]
    if unknown:
        return f"names no column {unknown[0]!r} (the columns: {', '.join(columns) or 'none'})"
    if len(set(names)) != len(names):
        return "names a column twice"
    return None


def _columns_value(value: Any) -> str | None:
    """Why ``value`` is not a list of columns ``{name, from, type}``: unique names, valid
    JMESPath, known types; or None."""
    from .model import COLUMN_TYPES

    if not isinstance(value, list) or not value:
        return "must be a list of columns {name, from, type}"
    names: list[str] = []
    for i, column in enumerate(value):
        if not isinstance(column, dict) or set(column) - {"name", "from", "type"} or not isinstance(
                column.get("name"), str) or not column["name"] or not isinstance(column.get("from"), str):
            return f"column {i} must be {{name, from, type}} (name and from are text)"
        if column["name"] in names:
            return f"declares column {column['name']!r} twice"
        names.append(column["name"])
        if column.get("type", "json") not in COLUMN_TYPES:
            return f"column {column['name']!r}: type must be one of {', '.join(COLUMN_TYPES)}"
        problem = _jmespath_problem(column["from"])
        if problem:
            return f"column {column['name']!r}: from {problem}"
    return None


def _jmespath_problem(value: Any) -> str | None:
    """Why ``value`` is not a JMESPath expression (one line), or None."""
    if not isinstance(value, str):
        return "must be a JMESPath expression"
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        jmespath.compile(value)
    except JMESPathError as exc:
        return f"is not a valid JMESPath expression ({str(exc).splitlines()[0]})"
    return None


def _regex_problem(value: Any) -> str | None:
    """Why ``value`` is not a Python regular expression (one line), or None."""
    import re

    if not isinstance(value, str):
        return "must be a regular expression"
    try:
        re.compile(value)
    except re.error as exc:
        return f"is not a valid regular expression ({exc})"
    return None


def _step_value(spec: dict[str, Any], kind: str, value: Any, bound: set[str]) -> str | None:
    """Why ``value`` is not a ``with:`` value of type ``kind``, or None."""
    if kind == "endpoint":
        return None if isinstance(value, str) and value in spec["endpoints"] else "must name an endpoint"
    if kind == "enumeration":
        enums = spec.get("enumerations") or {}
        return None if isinstance(value, str) and value in enums else "must name an enumeration"
    if kind == "part":
        return None if isinstance(value, str) and f"parts.{value}" in bound else "must name an earlier part"
    if kind == "integer":
        return None if isinstance(value, int) and not isinstance(value, bool) else "must be an integer"
    if kind in ("texts", "column_names"):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else "must be a list of strings"
    if kind == "columns":
        return _columns_value(value)
    if kind == "progress":
        ok = isinstance(value, dict) and {"label", "unit", "action"} <= set(value) and set(value) <= {
            "label", "unit", "action", "eta", "counts"} and value.get("counts", "ids") in ("ids", "jobs")
        return None if ok else "must be a progress counter (label, unit, action; eta, counts: ids or jobs)"
    if kind == "jmespath":
        return _jmespath_problem(value)
    return None if isinstance(value, str) else "must be a string"


def lint(spec: dict[str, Any]) -> list[str]:
    c = _Lint(spec, _all_option_names(spec), schemas=Schemas(spec.get("schemas")))
    _lint_options(c, "global_options", [{"name": n, **o} for n, o in (spec.get("global_options") or {}).items()],
                  own_globals=True)
    for path, command in _command_leaves(spec.get("commands") or {}):
        _lint_options(c, f"commands.{path}", [{"name": n, **o} for n, o in (command.get("options") or {}).items()],
                      own_globals=True)
    _lint_services(c)
    _lint_responses(c)
    _lint_enumerations(c)
    _lint_statuses(c)
    _lint_waiters(c)
    _lint_combines(c)
    for rname, resource in spec["resources"].items():
        for aname, action in resource["actions"].items():
            _lint_action(c, rname, aname, action)
    _lint_declared_outputs(c)
    _lint_toolsets(c)
    if not c.problems:  # the model builds only from a table without other problems
        _lint_printed(c)
    return c.problems


def _lint_toolsets(c: _Lint) -> None:
    """Toolsets name resources, each resource is in one toolset at most (one in none is served by
    ``--toolsets all``), and the default names toolsets."""
    mcp = c.spec.get("mcp")
    if not mcp:
        return
    where = "mcp"
    owner: dict[str, str] = {}
    for name, toolset in mcp["toolsets"].items():
        for resource in toolset["resources"]:
            if resource not in c.spec["resources"]:
                c.add(f"{where}: toolset {name!r} names unknown resource {resource!r}")
            elif resource in owner:
                c.add(f"{where}: resource {resource!r} is in toolsets {owner[resource]!r} and {name!r}")
            owner.setdefault(resource, name)
    for name in mcp["default"]:
        if name not in mcp["toolsets"]:
            c.add(f"{where}: default names unknown toolset {name!r}")


def _declared_outputs(spec: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every ``output:`` of the table with where it is."""
    found: list[tuple[str, Any]] = []
    for kind in ("steps", "combines"):
        for name, body in (spec.get(kind) or {}).items():
            if isinstance(body.get("output"), Mapping):
                found.append((f"{kind}.{name}.output", body["output"]))
    for rname, resource in spec["resources"].items():
        for aname, action in resource["actions"].items():
            for dname, dim in (action.get("dimensions") or {}).items():
                where = f"resources.{rname}.actions.{aname}.dimensions.{dname}"
                if dim.get("output"):
                    found.append((f"{where}.output", dim["output"]))
                for pname, part in (dim.get("parts") or {}).items():
                    if isinstance(part, Mapping) and part.get("output"):
                        found.append((f"{where}.parts.{pname}.output", part["output"]))
    return found


def _lint_declared_outputs(c: _Lint) -> None:
    """Each declared output's schema is well formed, its rows a list of objects, its ids fields."""
    for where, output in _declared_outputs(c.spec):
        if "json" not in output:
            continue  # {columns: NAME}: checked with the step's values
        _check_schema(c, f"{where}.json", output["json"])
        rows = output.get("rows")
        if rows is not None and c.schemas.rows(output["json"], rows) is None:
            c.add(f"{where}: rows {_dotted(rows)!r} is not an array of objects in the output's schema")
        for key in output.get("ids") or ():
            if not c.schemas.declares(output["json"], [key]):
                c.add(f"{where}: id {key!r} is not a field of the output's schema")
    for name, step in (c.spec.get("steps") or {}).items():
        columns = (step.get("output") or {}).get("columns") if isinstance(step.get("output"), Mapping) else None
        where = f"steps.{name}.output"
        if columns is not None and ((step.get("with") or {}).get(columns) or {}).get("type") != "columns":
            c.add(f"{where}: columns {columns!r} names no with: value of type columns")


def _lint_printed(c: _Lint) -> None:
    """Every dimension of a printing action says what it prints: worked out of its answers,
    transforms and steps, or declared (``output:``)."""
    from .build import build_model

    model = build_model(c.spec)
    for action in model.actions:
        if not action.prints:
            continue
        for name, dim in action.dimensions.items():
            if dim.output is None:
                where = f"resources.{action.resource}.actions.{action.name}.dimensions.{name}"
                c.add(f"{where}: what it prints cannot be worked out of its parts; declare output: {{json: SCHEMA}}")


def _command_leaves(commands: dict[str, Any], prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for name, command in commands.items():
        path = f"{prefix}{name}"
        out += _command_leaves(command["actions"], f"{path}.actions.") if command.get("actions") else [(path, command)]
    return out


def _service_vars(spec: dict[str, Any], name: str) -> list[str]:
    """Variables an endpoint of service ``name`` needs for its headers (derived ones by their source)."""
    service = (spec.get("services") or {}).get(name) or {}
    derived = {k: v["from"] for k, v in (service.get("derived") or {}).items()}
    found = [derived.get(v, v) for value in (service.get("headers") or {}).values() for v in template_vars(value)]
    return list(dict.fromkeys(found))


def _lint_services(c: _Lint) -> None:
    """Endpoints name a known service; a service's derived variables and key options make sense."""
    services = c.spec.get("services") or {}
    for name, endpoint in c.spec["endpoints"].items():
        service, where = endpoint.get("service", "benchloop"), f"endpoints.{name}"
        if service != "benchloop" and service not in services:
            c.add(f"{where}: unknown service {service!r}")
    for name, service in services.items():
        where = f"services.{name}"
        derived = service.get("derived") or {}
        headers = " ".join((service.get("headers") or {}).values())
        for var in derived:
            if var not in template_vars(headers):
                c.add(f"{where}: derived variable {{{var}}} is used by no header")
        if name == "benchloop" and (headers or derived):
            c.add(f"{where}: the default service has no header templates")
        for part in ("base_url", "auth"):
            option = (service.get(part) or {}).get("option")
            source = f"{where}.{part}"
            if option and option not in c.known:
                c.add(f"{source}: option {option!r} is defined by no action")
        check = service.get("check")
        if check:
            check_where = f"{where}.check"
            endpoint = c.spec["endpoints"].get(check["request"])
            if endpoint is not None and endpoint.get("service", "benchloop") != name:
                c.add(f"{check_where}: endpoint {check['request']!r} is not one of the service's")
            _check_endpoint_use(c.spec, check_where, check["request"], set(check.get("with") or {}),
                                c.known, c.problems)


# ---------------------------------------------------------------- responses
def _lint_responses(c: _Lint) -> None:
    """Every endpoint declares what it answers and every service its error body; every schema
    is well formed (references resolve, types exist, required fields are declared) and open."""
    for name, schema in c.schemas.shapes.items():
        _check_schema(c, f"schemas.{name}", schema)
    for name, endpoint in c.spec["endpoints"].items():
        where, response = f"endpoints.{name}", endpoint.get("response")
        if response is None:
            c.add(f"{where}: no response declared (json: SCHEMA, binary: [TYPES] or text: [TYPES])")
        elif "json" in response:
            _check_schema(c, f"{where}.response.json", response["json"])
            rows = response.get("rows")
            if rows is not None and c.schemas.rows(response["json"], rows) is None:
                c.add(f"{where}: response rows {_dotted(rows)!r} is not an array of objects in the response")
            _check_identity(c, where, name, endpoint, response.get("identity") or {})
        names = set(endpoint.get("query") or {}) | set(endpoint.get("body") or {})
        for param in endpoint.get("required") or ():
            if param not in names:
                c.add(f"{where}: required {param!r} is no query parameter or body field")
    for name, service in (c.spec.get("services") or {}).items():
        where = f"services.{name}"
        if "error" not in service:
            c.add(f"{where}: no error body declared (error: SCHEMA)")
        else:
            _check_schema(c, f"{where}.error", service["error"])


def _check_identity(c: _Lint, where: str, name: str, endpoint: dict[str, Any], identity: dict[str, Any]) -> None:
    """Each identity field is declared in the answer's schema, and names a variable the request
    itself binds (its path or query): the id the answer must carry is the one that was asked."""
    _check_fields(c, f"{where}.response.identity", name, "identity field", [str(k).split(".") for k in identity])
    params = [str(v) for v in (endpoint.get("query") or {}).values()]
    bound = set(template_vars(endpoint.get("path", ""), *params))
    for answer_field, template in identity.items():
        var = str(template).strip("{}")
        if var not in bound:
            c.add(f"{where}: identity field {answer_field!r}: {template!r} names no variable of the request (its path and query bind {sorted(bound)})")


def _check_schema(c: _Lint, where: str, schema: Any) -> None:
    """One schema and every schema inside it."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, Mapping):
        c.add(f"{where}: a schema must be an object")
        return
    for key in schema:
        if key not in KEYWORDS and not str(key).startswith("x-"):
            c.add(f"{where}: unknown keyword {key!r} (in YAML, a comma splits an unquoted text of a {{...}} mapping)")
    ref = schema.get("$ref")
    name = ref_name(ref) if ref is not None else None
    if ref is not None and (name is None or name not in c.schemas):
        c.add(f"{where}: $ref {ref!r} names no schema (write #/schemas/NAME)")
    for kind in types_of(schema):
        if kind not in JSON_TYPES:
            c.add(f"{where}: unknown type {kind!r}")
    declared = c.schemas.properties(schema)
    for name in schema.get("required") or ():
        if name not in declared:
            c.add(f"{where}: required field {name!r} is not declared in properties")
    for key in ("additionalProperties", "unevaluatedProperties"):
        if schema.get(key) is False:
            c.add(f"{where}: {key}: false closes the answer; the backend may add fields at any time")
        elif isinstance(schema.get(key), Mapping) and not _any_value(c.schemas, schema[key]):
            c.add(f"{where}: {key} with a type refuses fields the backend may add (describe the values instead)")
    for key, value in schema.items():
        if key in _NAMED_SCHEMAS and isinstance(value, Mapping):
            for name, sub in value.items():
                _check_schema(c, f"{where}.{key}.{name}", sub)
        elif key in _SCHEMA_LISTS and isinstance(value, (list, tuple)):
            for i, sub in enumerate(value):
                _check_schema(c, f"{where}.{key}.{i}", sub)
        elif key in _ONE_SCHEMA and isinstance(value, Mapping):
            _check_schema(c, f"{where}.{key}", value)


def _any_value(schemas: Schemas, schema: Any) -> bool:
    """True when the schema takes a value of any type: it names none, or one of its
    ``anyOf``/``oneOf`` branches takes any (``anyOf: [{$ref: X}, {description: ...}]``)."""
    resolved = schemas.resolve(schema)
    if types_of(resolved):
        return False
    branches = [*(resolved.get("anyOf") or ()), *(resolved.get("oneOf") or ())]
    return not branches or any(_any_value(schemas, branch) for branch in branches)


def _dotted(path: Any) -> str:
    return ".".join(str(step) for step in path) if isinstance(path, (list, tuple)) else str(path)


def _answer(c: _Lint, endpoint: str | None) -> Any:
    """The JSON schema of an endpoint's answer; None when there is none to check fields
    against (an unknown endpoint, no response, bytes or text: other lints say so)."""
    response = (c.spec["endpoints"].get(endpoint or "") or {}).get("response") or {}
    return response.get("json")


def _check_fields(c: _Lint, where: str, endpoint: str | None, label: str, paths: list[Any]) -> None:
    """Each field path is declared in the endpoint's answer (a typo in the table is an error)."""
    schema = _answer(c, endpoint)
    if schema is None:
        return
    for path in paths:
        steps = path if isinstance(path, (list, tuple)) else [path]
        if not c.schemas.declares(schema, steps):
            c.add(f"{where}: {label} {_dotted(steps)!r} is not declared in the response of endpoint {endpoint!r}")


def _check_collection(c: _Lint, where: str, endpoint: str | None, label: str, collection: str,
                      item_fields: list[str]) -> None:
    """A collection field is declared as an array, and the fields read from its entries are declared."""
    schema = _answer(c, endpoint)
    if schema is None:
        return
    found = c.schemas.field(schema, [collection])
    if found is None:
        _check_fields(c, where, endpoint, f"{label} collection", [collection])
        return
    if not c.schemas.is_array(found):
        c.add(f"{where}: {label} collection {collection!r} is not an array in the response of endpoint {endpoint!r}")
        return
    _check_fields(c, where, endpoint, f"{label} field", [[collection, ITEMS, key] for key in item_fields])


def _check_pagination_fields(c: _Lint, where: str, endpoint: str | None, pagination: dict[str, Any] | None) -> None:
    """A walking mode reads the collection, its entries' id and tie fields, the total and the kept fields."""
    if not pagination or pagination["mode"] == "single_page":
        return
    if pagination.get("collection"):
        keys = [*(pagination.get("id_keys") or ()), *([pagination["tie_key"]] if pagination.get("tie_key") else [])]
        _check_collection(c, where, endpoint, "pagination", pagination["collection"], keys)
    _check_fields(c, where, endpoint, "pagination field", [PAGE_TOTAL, *(pagination.get("keep_first") or ())])


def _items_answer(c: _Lint, part: dict[str, Any], dim: dict[str, Any]) -> str | None:
    """The endpoint whose answer a part's ``items:`` select from: the part's request, else the
    endpoint or earlier part named by the ``with:`` value that the step's declaration gives as
    its ``items_from``."""
    if part.get("request"):
        return part["request"]
    declared = (c.spec.get("steps") or {}).get(part.get("step") or "") or {}
    source = (part.get("with") or {}).get(declared.get("items_from") or "")
    if source in c.spec["endpoints"]:
        return source
    return (dim["parts"].get(source) or {}).get("request") if isinstance(source, str) else None


def _check_items(c: _Lint, where: str, endpoint: str | None, items: dict[str, Any]) -> None:
    named = [items.get("require"), items.get("unique"), (items.get("filter") or {}).get("field")]
    entry_fields: list[str] = list(dict.fromkeys(f for f in named if f))
    if items.get("collection"):
        _check_collection(c, where, endpoint, "items", items["collection"], entry_fields)
    schema = _answer(c, endpoint)
    if items.get("find") and schema is not None:
        found = c.schemas.find(schema, items["find"])
        if found is None:
            c.add(f"{where}: items find {items['find']!r} is declared nowhere in the response of endpoint {endpoint!r}")
        else:
            for name in entry_fields:
                if name not in c.schemas.properties(found):
                    c.add(f"{where}: items field {name!r} of {items['find']!r} is not declared in the response of endpoint {endpoint!r}")


def _check_shape_fields(c: _Lint, where: str, part: dict[str, Any]) -> None:
    """Shape parameters that name fields of the part's answer (collection, path, sections) are declared."""
    shape = part.get("shape")
    if not isinstance(shape, dict) or not part.get("request"):
        return
    params = shape.get("with") or {}
    paths = [[params["collection"]]] if isinstance(params.get("collection"), str) else []
    paths += [params["path"]] if isinstance(params.get("path"), list) else []
    paths += [[name] for name in params.get("sections") or {}] if isinstance(params.get("sections"), dict) else []
    _check_fields(c, where, part["request"], f"shape {shape['name']!r} field", paths)


def _check_part_templates(c: _Lint, where: str, part: dict[str, Any], requests: dict[str, str]) -> None:
    """``{parts.NAME.FIELD}`` in the part's request reads a field declared in part NAME's answer."""
    endpoint = c.spec["endpoints"].get(part.get("request") or "")
    if endpoint is None:
        return
    values = [*(endpoint.get("query") or {}).values(), *(endpoint.get("body") or {}).values()]
    for var in template_vars(*[str(v) for v in values]):
        steps = var.split(".")
        if steps[0] == "parts" and len(steps) > 2 and steps[1] in requests:
            _check_fields(c, where, requests[steps[1]], f"{{{var}}} field", [steps[2:]])


def _check_error_field(c: _Lint, where: str, action: dict[str, Any]) -> None:
    """``error_field`` is declared in the error body of the service of every endpoint the action's parts call."""
    name = action.get("error_field")
    if not name:
        return
    services = set()
    for dim in action["dimensions"].values():
        for part in dim["parts"].values():
            endpoints = [part.get("request")] + [v for v in (part.get("with") or {}).values() if isinstance(v, str)]
            for endpoint in endpoints:
                if endpoint in c.spec["endpoints"]:
                    services.add(c.spec["endpoints"][endpoint].get("service", "benchloop"))
    for service in sorted(services):
        error = ((c.spec.get("services") or {}).get(service) or {}).get("error")
        if error is not None and name not in c.schemas.properties(error):
            c.add(f"{where}: error_field {name!r} is not declared in the error body of service {service!r}")


def _lint_enumerations(c: _Lint) -> None:
    for name, enum in (c.spec.get("enumerations") or {}).items():
        where = f"enumerations.{name}"
        _check_endpoint_use(c.spec, where, enum["request"], {"group"}, c.known, c.problems)
        _check_pagination_fields(c, where, enum["request"], enum["pagination"])
        if enum.get("empty_probe"):
            _check_endpoint_use(c.spec, where, enum["empty_probe"], {"group"}, c.known, c.problems)


STEP_ONLY_TYPES = ("endpoint", "enumeration", "part", "template", "progress")


def _lint_combines(c: _Lint) -> None:
    """A combine works on the values the ids produced: it makes no request and binds nothing."""
    for name, combine in (c.spec.get("combines") or {}).items():
        where = f"combines.{name}"
        for key, param in (combine.get("with") or {}).items():
            if param["type"] in STEP_ONLY_TYPES:
                c.add(f"{where}: with.{key} of type {param['type']} is for steps (a combine makes no request)")


def _row_columns(spec: dict[str, Any], action: dict[str, Any]) -> list[str]:
    """The columns of the rows an action's steps build: of each step part, its ``column_names``
    value (the columns it keeps) or else the names of its ``columns`` value."""
    found: list[str] = []
    for dim in action["dimensions"].values():
        for part in dim["parts"].values():
            declared = ((spec.get("steps") or {}).get(part.get("step") or "") or {}).get("with") or {}
            given = part.get("with") or {}
            kinds = {key: p["type"] for key, p in declared.items()}
            kept = next((v for k, v in given.items() if kinds.get(k) == "column_names"), None)
            every = next((_column_names(v) for k, v in given.items() if kinds.get(k) == "columns"
                          and isinstance(v, list)), [])
            for column in kept if isinstance(kept, list) else every:
                if column not in found:
                    found.append(column)
    return found


def _lint_combine(c: _Lint, where: str, action: dict[str, Any]) -> None:
    """The combine is declared (``combines:``), its ``with:`` is what it declares, and it
    combines what is printed (a ``stdout`` action) or writes the files (a ``files`` action
    whose parts write none themselves, ``bl view``)."""
    combine = action.get("combine")
    if not combine:
        return
    name, params = (combine, {}) if isinstance(combine, str) else (combine["name"], combine.get("with") or {})
    declared = (c.spec.get("combines") or {}).get(name)
    if declared is None:
        c.add(f"{where}: unknown combine {name!r}")
        return
    own_files = [f"{d}.{p}" for d, body in (action.get("dimensions") or {}).items()
                 for p, part in (body.get("parts") or {}).items() if isinstance(part, dict) and part.get("file")]
    if action["writer"] not in ("stdout", "files"):
        c.add(f"{where}: combine {name!r} needs the stdout or the files writer (it makes what is printed or written)")
    elif action["writer"] == "files" and (own_files or action.get("stdout_when") or action.get("compose")):
        c.add(f"{where}: combine {name!r} writes its action's files: no part may write one, nor stdout_when or compose ({', '.join(own_files) or 'given'})")
    _check_values(c.spec, where, "combine", name, declared, params, c.problems, set(), _row_columns(c.spec, action))


def _lint_watch(c: _Lint, where: str, action: dict[str, Any], options: dict[str, Any]) -> None:
    """``watch:`` names a flag option of the action and a waiter that asks nothing itself (the
    engine's looks are its answers) whose timeout and delay options are number options of the
    action; the action combines what it prints (the combine says when the watch is settled)."""
    watch = action.get("watch")
    if not watch:
        return
    if options.get(watch["option"], {}).get("type") != "flag":
        c.add(f"{where}: watch names no flag option {watch['option']!r}")
    if not action.get("combine") or action["writer"] != "stdout":
        c.add(f"{where}: watch needs a combine and the stdout writer (the combine says when it is settled)")
    body = (c.spec.get("waiters") or {}).get(watch["waiter"])
    if body is None:
        c.add(f"{where}: watch names unknown waiter {watch['waiter']!r}")
        return
    if body.get("request") or body.get("enumeration"):
        c.add(f"{where}: the waiter of a watch asks nothing itself: {watch['waiter']!r} has a request or enumeration")
    for key, option in (("timeout", body.get("timeout")), ("delay option", (body.get("delay") or {}).get("option"))):
        if option and options.get(option, {}).get("type") not in ("int", "float"):
            c.add(f"{where}: {key} of waiter {watch['waiter']!r} names no number option of the action {option!r}")


def _lint_action(c: _Lint, rname: str, aname: str, action: dict[str, Any]) -> None:
    where = f"resources.{rname}.actions.{aname}"
    options = {opt["name"]: opt for opt in action["options"]}
    _lint_options(c, where, action["options"], bool(action.get("extra_args")))
    _lint_positional(c, where, action)
    if action.get("compose"):
        _lint_compose(c, where, action["compose"], options)
    listing = action.get("stdout_when")
    if listing and options.get(listing, {}).get("type") != "flag":
        c.add(f"{where}: stdout_when names no flag option {listing!r}")
    _check_error_field(c, where, action)
    _lint_combine(c, where, action)
    _lint_watch(c, where, action, options)
    if action.get("min_ids") and action.get("max_ids") and action["min_ids"] > action["max_ids"]:
        c.add(f"{where}: min_ids {action['min_ids']} is above max_ids {action['max_ids']}")
    outputs: list[_Output] = []
    for dname, dim in action["dimensions"].items():
        outputs += _lint_dimension(c, f"{where}.dimensions.{dname}", dname, dim, action, options)
    if action["writer"] == "files":
        _lint_outputs(c, rname, action, outputs)


def _lint_positional(c: _Lint, where: str, action: dict[str, Any]) -> None:
    """One positional at most, a string, for a one-id command; the text writer prints one id."""
    positional = [opt for opt in action["options"] if opt.get("positional")]
    if len(positional) > 1:
        c.add(f"{where}: more than one positional option")
    for opt in positional:
        if opt.get("type") != "str" or opt.get("flags"):
            c.add(f"{where}: positional option {opt['name']!r} must be a 'str' without flags")
        if opt["name"] not in DIMENSION_OPTION_NAMES.values() or action.get("max_ids") != 1:
            c.add(f"{where}: positional option {opt['name']!r} must be the id of a one-id action (max_ids: 1)")
    if action["writer"] == "text" and action.get("max_ids") != 1:
        c.add(f"{where}: the text writer prints one id's text (max_ids: 1)")
    if action.get("extra_args") and not positional:
        c.add(f"{where}: extra_args needs a positional option (where the extra arguments start)")


def _lint_options(c: _Lint, where: str, options: list[dict[str, Any]], own_globals: bool = False) -> None:
    """``own_globals``: global options are only read before the resource, so the action may
    reuse their flags (ap-cmd's --concurrency and -q are its own)."""
    global_flags = {flag: name for name, opt in (c.spec.get("global_options") or {}).items() for flag in opt["flags"]}
    flags: set[str] = set()
    for opt in options:
        if opt["name"] in RESERVED:
            c.add(f"{where}: option name {opt['name']!r} is reserved (Python keyword or ctx)")
        if "missing" in opt:
            c.add(f"{where}: option {opt['name']!r} refers to unknown option {opt['missing']!r}")
            continue
        if "statuses" in opt:
            c.add(f"{where}: option {opt['name']!r} names unknown statuses {opt['statuses']!r}")
        for flag in opt.get("flags") or ():
            if flag in flags:
                c.add(f"{where}: flag {flag} defined twice")
            # An action's own option of a global option's name overrides it (-o/--output-dir).
            if flag in global_flags and global_flags[flag] != opt["name"] and not own_globals:
                c.add(f"{where}: flag {flag} shadows a global option")
            flags.add(flag)
        if opt["type"] == "choice" and opt.get("default") not in opt.get("choices", []):
            c.add(f"{where}: option {opt['name']!r} default is not one of its choices")
        if opt["type"] == "jmespath" and opt.get("default") is not None:
            problem = _jmespath_problem(opt["default"])
            if problem:
                c.add(f"{where}: default of option {opt['name']!r} {problem}")
        if opt["type"] == "regex" and opt.get("default") is not None:
            problem = _regex_problem(opt["default"])
            if problem:
                c.add(f"{where}: default of option {opt['name']!r} {problem}")


def _target(spec: dict[str, Any], section: dict[str, Any]) -> dict[str, Any] | None:
    return spec["resources"].get(section["resource"], {}).get("actions", {}).get(section["action"])


def _lint_compose(c: _Lint, where: str, compose: dict[str, Any], options: dict[str, Any]) -> None:
    if compose["option"] not in options:
        c.add(f"{where}: compose option {compose['option']!r} is not an option of the action")
    for sname, section in compose["sections"].items():
        target = _target(c.spec, section)
        if target is None:
            c.add(f"{where}: section {sname!r} names unknown action {section['resource']} {section['action']}")
        elif target.get("compose"):
            c.add(f"{where}: section {sname!r} is itself composite")
    for dname in compose["dimensions"]:
        if not any(dname in (_target(c.spec, sec) or {}).get("dimensions", {}) for sec in compose["sections"].values()):
            c.add(f"{where}: no section supports dimension {dname!r}")
    for name in compose["default"]:
        if name not in compose["sections"]:
            c.add(f"{where}: default names unknown section {name!r}")
    if compose.get("sync"):
        _lint_sync(c, f"{where}.sync", compose, options)


def _lint_sync(c: _Lint, where: str, compose: dict[str, Any], options: dict[str, Any]) -> None:
    """The sync flag is an option; the list section writes one file per group listing items that
    carry the key and state fields; the other named sections exist; the manifest is per group."""
    sync = compose["sync"]
    if options.get(sync["option"], {}).get("type") != "flag":
        c.add(f"{where}: option {sync['option']!r} is no flag option of the action")
    for name in [sync["list"], *sync["refresh"]]:
        if name not in compose["sections"]:
            c.add(f"{where}: names unknown section {name!r}")
    _check_bound(c, where, "manifest", sync["manifest"], {"group"})
    until = sync.get("until")
    if until:
        if options.get(until["option"], {}).get("type") != "flag":
            c.add(f"{where}: until option {until['option']!r} is no flag option of the action")
        if until["wait"] not in (c.spec.get("waiters") or {}):
            c.add(f"{where}: until names unknown waiter {until['wait']!r}")
        if until["status"]["statuses"] not in (c.spec.get("statuses") or {}):
            c.add(f"{where}: until names unknown statuses {until['status']['statuses']!r}")
        if until["status"]["field"] not in sync["state"]:
            c.add(f"{where}: until status field {until['status']['field']!r} is not a state field")
    section = compose["sections"].get(sync["list"])
    target = _target(c.spec, section) if section else None
    parts = ((target or {}).get("dimensions", {}).get("group") or {}).get("parts") or {}
    listed = [p for p in parts.values() if p.get("file") and (p.get("pagination") or {}).get("collection")]
    if target is not None and len(listed) != 1:
        c.add(f"{where}: list section {sync['list']!r} writes no one file of a paginated collection per group")
    elif listed:
        collection = listed[0]["pagination"]["collection"]
        _check_collection(c, where, listed[0].get("request"), "sync", collection, [sync["key"], *sync["state"]])


def _lint_dimension(c: _Lint, where: str, dname: str, dim: dict[str, Any], action: dict[str, Any],
                    options: dict[str, Any]) -> list[_Output]:
    """Select, element and archive of one dimension, then its parts in order; returns its outputs."""
    _lint_select(c, where, dim, options)
    if action["writer"] == "stdout":
        _lint_element(c, where, dim)
    bound = {dname}
    outputs: list[_Output] = []
    if dim.get("archive"):
        bound.add("job")
        outputs.append(_lint_archive(c, where, dname, dim))
    requests: dict[str, str] = {}  # earlier part -> its request, for {parts.NAME.FIELD}
    for pname, part in dim["parts"].items():
        part_where = f"{where}.parts.{pname}"
        part_bound = _lint_part(c, part_where, part, bound, action, options)
        outputs += _part_outputs(c, part_where, dname, pname, part, part_bound, dim, action)
        _check_part_templates(c, part_where, part, requests)
        if part.get("items"):
            _check_items(c, part_where, _items_answer(c, part, dim), part["items"])
        bound.add(f"parts.{pname}")
        if part.get("request"):
            requests[pname] = part["request"]
    return outputs


def _lint_select(c: _Lint, where: str, dim: dict[str, Any], options: dict[str, Any]) -> None:
    select = dim.get("select")
    if not select:
        return
    opt = options.get(select["option"])
    if opt is None or opt.get("type") != "choice":
        c.add(f"{where}: select option {select['option']!r} is not a choice option of the action")
    elif sorted(select["choices"]) != sorted(opt["choices"]):
        c.add(f"{where}: select choices differ from the option's choices")
    for parts in select["choices"].values():
        for part in parts:
            if part not in dim["parts"]:
                c.add(f"{where}: select names unknown part {part!r}")


def _lint_element(c: _Lint, where: str, dim: dict[str, Any]) -> None:
    element = dim.get("element")
    unconditional = [p for p in dim["parts"].values() if "when" not in p]
    if element in (None, "part") and not dim.get("select") and len(unconditional) > 1:
        c.add(f"{where}: element 'part' needs exactly one selected part")
    if isinstance(element, str) and element not in ("part", *dim["parts"]):
        c.add(f"{where}: element names unknown part {element!r}")


def _lint_archive(c: _Lint, where: str, dname: str, dim: dict[str, Any]) -> _Output:
    """The archive's request, order and file; its entries, unique within the archive."""
    archive = dim["archive"]
    _check_endpoint_use(c.spec, where, archive["task_request"], {"task"}, c.known, c.problems)
    for name in archive.get("order", []):
        if name not in dim["parts"]:
            c.add(f"{where}: archive order names unknown part {name!r}")
    # The archive file is rendered with the task id only, each entry with the job only.
    _check_bound(c, f"{where}.archive", "file", archive["file"], {dname})
    _check_uses(c, f"{where}.archive", "file", archive["file"], dname)
    entries: dict[str, str] = {}
    for pname, part in dim["parts"].items():
        if not part.get("entry"):
            continue
        part_where = f"{where}.parts.{pname}"
        _check_bound(c, part_where, "entry", part["entry"], {"job"})
        _check_uses(c, part_where, "entry", part["entry"], "job")
        norm = VAR.sub("{}", part["entry"])
        if norm in entries:
            c.add(f"{part_where}: archive entry {part['entry']!r} also used by {entries[norm]}")
        entries.setdefault(norm, part_where)
    return _Output(f"{where}.archive", dname, None, archive["file"])


def _lint_part(c: _Lint, where: str, part: dict[str, Any], bound: set[str], action: dict[str, Any],
               options: dict[str, Any]) -> set[str]:
    """References of one part (enumeration, when, pagination, endpoints, step, shape); returns its bound variables."""
    part_bound = set(bound)
    if part.get("each"):
        enum = (c.spec.get("enumerations") or {}).get(part["each"])
        if enum is None:
            c.add(f"{where}: unknown enumeration {part['each']!r}")
        else:
            part_bound.add(enum["binds"])
        if action["writer"] != "files":
            c.add(f"{where}: 'each' parts need the files writer")
    if part.get("when"):
        for name in part["when"].removeprefix("not ").split("|"):
            if name not in options:
                c.add(f"{where}: when names no option of the action {name!r}")
    _check_pagination_fields(c, where, part.get("request"), part.get("pagination"))
    _check_shape_fields(c, where, part)
    if part.get("wait"):
        _lint_wait_use(c, where, part["wait"], part_bound, options)
    if part.get("step"):
        _check_step(c.spec, where, part, c.problems, part_bound, c.known)
    elif part.get("request"):
        _check_endpoint_use(c.spec, where, part["request"], part_bound, c.known, c.problems)
    if part.get("empty_probe"):
        _check_endpoint_use(c.spec, where, part["empty_probe"], part_bound, c.known, c.problems)
    elif part.get("empty_probe_mode"):
        c.add(f"{where}: empty_probe_mode without empty_probe")
    pagination = part.get("pagination") or {}
    if part.get("empty_probe") and pagination.get("mode") == "single_page" and not pagination.get("collection"):
        c.add(f"{where}: empty_probe of a single page needs its collection (asked only when page 1 is empty)")
    if part.get("wait") and not part.get("step") and action["writer"] != "stdout":
        c.add(f"{where}: a waiter on its own is printed: 'wait' without 'step' needs the stdout writer")
    _lint_body_part(c, where, part, action)
    return part_bound


def _lint_body_part(c: _Lint, where: str, part: dict[str, Any], action: dict[str, Any]) -> None:
    """A request part (not a step's) of an endpoint that answers bytes or text streams them into
    its file: it needs one, in a files action, and has nothing to page, pick or reshape."""
    endpoint = (c.spec.get("endpoints") or {}).get(part.get("request") or "")
    if part.get("step") or not endpoint or "json" in (endpoint.get("response") or {"json": None}):
        return
    kind, name = next(iter(endpoint["response"]), "bytes"), part["request"]
    if action["writer"] != "files" or not part.get("file") or any(part.get(k) for k in ("pagination", "items", "shape")):
        c.add(f"{where}: endpoint {name!r} answers {kind}, not JSON: its part writes it to a `file:` of a files action (no pagination, items or shape)")


def _waiter_chain(spec: dict[str, Any], name: str) -> list[tuple[str, dict[str, Any], set[str]]]:
    """A waiter and every waiter it may follow, each with the variables its request sees bound
    besides the part's (a followed waiter's ``binds``); a cycle or an unknown name ends the walk
    (``_lint_waiters`` reports those)."""
    waiters = spec.get("waiters") or {}
    out: list[tuple[str, dict[str, Any], set[str]]] = []
    todo: list[tuple[str, set[str]]] = [(name, set())]
    while todo:
        current, bound = todo.pop(0)
        if current not in waiters or any(current == seen for seen, _, _ in out):
            continue
        body = waiters[current]
        out.append((current, body, bound))
        for acceptor in body.get("acceptors") or ():
            if acceptor.get("state") == "follow" and acceptor.get("waiter"):
                todo.append((acceptor["waiter"], set(acceptor.get("binds") or {})))
    return out


def _lint_wait_use(c: _Lint, where: str, name: str, bound: set[str], options: dict[str, Any]) -> None:
    """Where a part waits: the waiter exists, its requests' variables are bound there, and the
    options it reads (timeout, delay) are number options of the action."""
    if name not in (c.spec.get("waiters") or {}):
        c.add(f"{where}: unknown waiter {name!r}")
        return
    for wname, body, extra in _waiter_chain(c.spec, name):
        if body.get("request"):
            _check_endpoint_use(c.spec, where, body["request"], bound | extra, c.known, c.problems)
        for key, option in (("timeout", body.get("timeout")), ("delay option", (body.get("delay") or {}).get("option"))):
            if option and options.get(option, {}).get("type") not in ("int", "float"):
                c.add(f"{where}: {key} of waiter {wname!r} names no number option of the action {option!r}")


def _lint_statuses(c: _Lint) -> None:
    for name, body in (c.spec.get("statuses") or {}).items():
        where = f"statuses.{name}"
        for value in body["final"]:
            if value not in body["values"]:
                c.add(f"{where}: final value {value!r} is not one of its values")


def _lint_waiters(c: _Lint) -> None:
    """Each waiter's request or enumeration exists; its acceptors' expressions compile and name
    known status enumerations and waiters (no cycle of follows); the fields it reads (hint,
    result, binds) are declared in the answers they are read from."""
    waiters = c.spec.get("waiters") or {}
    statuses = c.spec.get("statuses") or {}
    for name, body in waiters.items():
        where = f"waiters.{name}"
        request = body.get("request")
        if request is not None and request not in c.spec["endpoints"]:
            c.add(f"{where}: unknown endpoint {request!r}")
            request = None
        enum = body.get("enumeration")
        if enum is not None and enum not in (c.spec.get("enumerations") or {}):
            c.add(f"{where}: unknown enumeration {enum!r}")
        for i, acceptor in enumerate(body["acceptors"]):
            _lint_acceptor(c, f"{where}.acceptors.{i}", acceptor, request, waiters, statuses)
        counts = body.get("counts") or {}
        if counts:
            for key in ("argument", "each"):
                problem = _jmespath_problem(counts[key]) if counts.get(key) is not None else None
                if problem:
                    c.add(f"{where}: counts {key} {problem}")
            if counts.get("statuses") and counts["statuses"] not in statuses:
                c.add(f"{where}: counts names unknown statuses {counts['statuses']!r}")
        if body.get("result") == "counts" and not counts:
            c.add(f"{where}: result counts needs counts")
        if isinstance(body.get("result"), list):
            _check_fields(c, where, request, "result field", list(body["result"]))
        delay = body.get("delay") or {}
        _check_fields(c, where, request, "delay hint field", list(delay.get("hint") or ()))
        if len([k for k in ("hint", "option", "seconds") if k in delay]) > 1:
            c.add(f"{where}: delay takes one of hint, option or seconds")
        if delay.get("min") is not None and delay.get("max") is not None and delay["min"] > delay["max"]:
            c.add(f"{where}: delay min {delay['min']} is above max {delay['max']}")
        chain = [n for n, _, _ in _waiter_chain(c.spec, name)]
        follows = {a.get("waiter") for w in chain for a in waiters[w].get("acceptors") or ()}
        if name in follows:
            c.add(f"{where}: follows itself (a cycle of follow acceptors)")


def _lint_acceptor(c: _Lint, where: str, acceptor: dict[str, Any], request: str | None,
                   waiters: dict[str, Any], statuses: dict[str, Any]) -> None:
    for key in ("argument", "each"):
        problem = _jmespath_problem(acceptor[key]) if acceptor.get(key) is not None else None
        if problem:
            c.add(f"{where}: {key} {problem}")
    expected = acceptor.get("expected")
    if isinstance(expected, dict) and expected.get("statuses") not in statuses:
        c.add(f"{where}: expected names unknown statuses {expected.get('statuses')!r}")
    if acceptor.get("matcher") == "error" and not all(
            isinstance(e, int) and 400 <= e <= 599 for e in (expected if isinstance(expected, list) else [expected])):
        c.add(f"{where}: an error matcher expects HTTP statuses (400 to 599)")
    followed = acceptor.get("waiter")
    if followed is not None and followed not in waiters:
        c.add(f"{where}: unknown waiter {followed!r}")
    for var, fields in (acceptor.get("binds") or {}).items():
        _check_fields(c, where, request, f"binds {var!r} field", list(fields))


def _part_outputs(c: _Lint, where: str, dname: str, pname: str, part: dict[str, Any], part_bound: set[str],
                  dim: dict[str, Any], action: dict[str, Any]) -> list[_Output]:
    """What one part writes: its ``file``, or a step's ``with.layout`` (archive parts: see _lint_archive)."""
    if dim.get("archive"):
        if not part.get("entry"):
            c.add(f"{where}: an archive part needs 'entry'")
        return []
    if action["writer"] != "files":
        return []
    outputs = []
    layout = (part.get("with") or {}).get("layout") if part.get("step") else None
    if isinstance(layout, str):
        outputs.append(_Output(where, dname, pname, layout))
    if not part.get("file"):
        if not part.get("step"):
            c.add(f"{where}: a files action needs 'file'")
        return outputs
    _check_bound(c, where, "file", part["file"], part_bound)
    if action.get("max_ids") != 1:
        each = (c.spec.get("enumerations") or {}).get(part.get("each") or "")
        _check_uses(c, where, "file", part["file"], each["binds"] if each else dname)
    return [*outputs, _Output(where, dname, pname, part["file"])]


def _exclusive(dim: dict[str, Any], a: str | None, b: str | None) -> bool:
    """Two parts of one dimension that never run in the same command (when/not when, select)."""
    if a is None or b is None or a == b:
        return False
    when_a, when_b = dim["parts"][a].get("when"), dim["parts"][b].get("when")
    if when_a and when_b and when_a != when_b and when_a.removeprefix("not ") == when_b.removeprefix("not "):
        return True
    select = dim.get("select")
    if not select:
        return False
    return not any(a in names and b in names for names in select["choices"].values())


def _same_path(action: dict[str, Any], a: _Output, b: _Output) -> bool:
    """Within a dimension any variable may take any value; across dimensions they differ."""
    if a.dim != b.dim:
        return a.template == b.template
    same = VAR.sub("{}", a.template) == VAR.sub("{}", b.template)
    return same and not _exclusive(action["dimensions"][a.dim], a.part, b.part)


def _lint_outputs(c: _Lint, rname: str, action: dict[str, Any], outputs: list[_Output]) -> None:
    """No two outputs of one action, and no two resources, write the same path template."""
    for i, out in enumerate(outputs):
        norm = VAR.sub("{}", out.template)
        clash = next((prev.where for prev in outputs[:i] if _same_path(action, prev, out)), None)
        other = c.files.get(norm)
        if clash is None and other and not other.startswith(f"resources.{rname}."):
            clash = other
        if clash:
            c.add(f"{out.where}: output path {out.template!r} also used by {clash}")
        c.files.setdefault(norm, out.where)
