"""Expansion and cross-reference lints of the endpoint table.

The JSON Schema checks the shape of each entry; these checks cover what a
schema cannot: references between entries (requests, enumerations, shapes,
pagination modes), that every path-template variable is bound where the
endpoint is used, and that no two download outputs share a path template.
They run when the table is compiled and again as tests.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .globals import GLOBAL_OPTIONS, SHADOWABLE_FLAGS
from .pagination import MODES
from .shapes import SHAPES

VAR = re.compile(r"\{([^{}]+)\}")
DIMENSION_OPTIONS = ("group", "job", "task")
DIMENSION_OPTION_NAMES = {"group": "group", "job": "job", "task": "task_id"}
PAGE_VARS = {"skip", "limit"}
RESERVED = {"ctx"} | set(__import__("keyword").kwlist)


def template_vars(text: str) -> list[str]:
    return VAR.findall(text)


def expand(spec: dict[str, Any]) -> dict[str, Any]:
    """Resolve option references into full, named option definitions."""
    spec = copy.deepcopy(spec)
    shared = spec["options"]
    for resource in spec["resources"].values():
        for action in resource["actions"].values():
            if action.get("compose"):
                dims = action["compose"]["dimensions"]
                action["dimensions"] = {d: {"parts": {}, "composite": True} for d in DIMENSION_OPTIONS if d in dims}
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
            for dim in DIMENSION_OPTIONS:
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


def _all_option_names(spec: dict[str, Any]) -> set[str]:
    names = set(spec["options"]) | {opt["name"] for opt in GLOBAL_OPTIONS}
    for resource in spec["resources"].values():
        for action in resource["actions"].values():
            names |= {opt["name"] for opt in action["options"]}
    return names


def _check_pagination(where: str, pagination: dict[str, Any] | None, problems: list[str]) -> None:
    if pagination and pagination["mode"] not in MODES:
        problems.append(f"{where}: unknown pagination mode {pagination['mode']!r}")


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
    values = list((endpoint.get("query") or {}).values()) + list((endpoint.get("body") or {}).values())
    for value in values:
        for var in template_vars(str(value)):
            root = var.split(".")[0]
            if var.startswith("parts."):
                part = var.split(".")[1]
                if f"parts.{part}" not in bound:
                    problems.append(f"{where}: {{{var}}} of endpoint {name!r} names no earlier part")
            elif root not in known and root not in PAGE_VARS and root not in DIMENSION_OPTIONS:
                problems.append(f"{where}: {{{var}}} of endpoint {name!r} names no option")


def _check_step(spec: dict[str, Any], where: str, part: dict[str, Any], problems: list[str]) -> None:
    from .steps import ENDPOINT_PARAMS, STEPS

    name = part["step"]
    if name not in STEPS:
        problems.append(f"{where}: unknown step {name!r}")
        return
    params = part.get("with") or {}
    for key in ENDPOINT_PARAMS.get(name, ()):
        if params.get(key) not in spec["endpoints"]:
            problems.append(f"{where}: step {name!r} needs 'with.{key}' naming an endpoint")


def lint(spec: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    known = _all_option_names(spec)
    for name, enum in (spec.get("enumerations") or {}).items():
        where = f"enumerations.{name}"
        _check_pagination(where, enum["pagination"], problems)
        _check_endpoint_use(spec, where, enum["request"], {"group"}, known, problems)
        if enum.get("empty_probe"):
            _check_endpoint_use(spec, where, enum["empty_probe"], {"group"}, known, problems)
    files: dict[str, str] = {}
    global_flags = {flag for opt in GLOBAL_OPTIONS for flag in opt["flags"]}
    for rname, resource in spec["resources"].items():
        for aname, action in resource["actions"].items():
            where_a = f"resources.{rname}.actions.{aname}"
            flags: set[str] = set()
            options = {opt["name"]: opt for opt in action["options"]}
            for opt in action["options"]:
                if opt["name"] in RESERVED:
                    problems.append(f"{where_a}: option name {opt['name']!r} is reserved (Python keyword or ctx)")
                if "missing" in opt:
                    problems.append(f"{where_a}: option {opt['name']!r} refers to unknown option {opt['missing']!r}")
                    continue
                for flag in opt["flags"]:
                    if flag in flags:
                        problems.append(f"{where_a}: flag {flag} defined twice")
                    if flag in global_flags and flag not in SHADOWABLE_FLAGS:
                        problems.append(f"{where_a}: flag {flag} shadows a global option")
                    flags.add(flag)
                if opt["type"] == "choice" and opt.get("default") not in opt.get("choices", []):
                    problems.append(f"{where_a}: option {opt['name']!r} default is not one of its choices")
            compose = action.get("compose")
            if compose:
                if compose["option"] not in options:
                    problems.append(f"{where_a}: compose option {compose['option']!r} is not an option of the action")
                for sname, section in compose["sections"].items():
                    target = spec["resources"].get(section["resource"], {}).get("actions", {}).get(section["action"])
                    if target is None:
                        problems.append(f"{where_a}: section {sname!r} names unknown action "
                                        f"{section['resource']} {section['action']}")
                    elif target.get("compose"):
                        problems.append(f"{where_a}: section {sname!r} is itself composite")
                for dname in compose["dimensions"]:
                    if not any(dname in spec["resources"].get(sec["resource"], {}).get("actions", {})
                               .get(sec["action"], {}).get("dimensions", {}) for sec in compose["sections"].values()):
                        problems.append(f"{where_a}: no section supports dimension {dname!r}")
                for name in compose["default"]:
                    if name not in compose["sections"]:
                        problems.append(f"{where_a}: default names unknown section {name!r}")
            listing = action.get("stdout_when")
            if listing and options.get(listing, {}).get("type") != "flag":
                problems.append(f"{where_a}: stdout_when names no flag option {listing!r}")
            for dname, dim in action["dimensions"].items():
                where_d = f"{where_a}.dimensions.{dname}"
                bound = {dname}
                select = dim.get("select")
                if select:
                    opt = options.get(select["option"])
                    if opt is None or opt.get("type") != "choice":
                        problems.append(f"{where_d}: select option {select['option']!r} is not a choice option of the action")
                    elif sorted(select["choices"]) != sorted(opt["choices"]):
                        problems.append(f"{where_d}: select choices differ from the option's choices")
                    for parts in select["choices"].values():
                        for part in parts:
                            if part not in dim["parts"]:
                                problems.append(f"{where_d}: select names unknown part {part!r}")
                element = dim.get("element")
                if action["writer"] == "stdout":
                    unconditional = [p for p in dim["parts"].values() if "when" not in p]
                    if element in (None, "part") and not select and len(unconditional) > 1:
                        problems.append(f"{where_d}: element 'part' needs exactly one selected part")
                    if isinstance(element, str) and element not in ("part", *dim["parts"]):
                        problems.append(f"{where_d}: element names unknown part {element!r}")
                if dim.get("archive"):
                    bound.add("job")
                    archive = dim["archive"]
                    _check_endpoint_use(spec, where_d, archive["task_request"], {"task"}, known, problems)
                    for name in archive.get("order", []):
                        if name not in dim["parts"]:
                            problems.append(f"{where_d}: archive order names unknown part {name!r}")
                for pname, part in dim["parts"].items():
                    where_p = f"{where_d}.parts.{pname}"
                    part_bound = set(bound)
                    if part.get("each"):
                        enum = (spec.get("enumerations") or {}).get(part["each"])
                        if enum is None:
                            problems.append(f"{where_p}: unknown enumeration {part['each']!r}")
                        else:
                            part_bound.add(enum["binds"])
                        if action["writer"] != "files":
                            problems.append(f"{where_p}: 'each' parts need the files writer")
                    if part.get("when"):
                        flag = part["when"].removeprefix("not ")
                        if options.get(flag, {}).get("type") != "flag":
                            problems.append(f"{where_p}: when names no flag option {flag!r}")
                    _check_pagination(where_p, part.get("pagination"), problems)
                    if part.get("step"):
                        _check_step(spec, where_p, part, problems)
                    else:
                        _check_endpoint_use(spec, where_p, part["request"], part_bound, known, problems)
                    if part.get("empty_probe"):
                        _check_endpoint_use(spec, where_p, part["empty_probe"], part_bound, known, problems)
                    shape = part.get("shape")
                    shape_name = shape if isinstance(shape, str) else (shape or {}).get("name")
                    if shape_name and shape_name not in SHAPES:
                        problems.append(f"{where_p}: unknown shape {shape_name!r}")
                    if dim.get("archive"):
                        if not part.get("entry"):
                            problems.append(f"{where_p}: an archive part needs 'entry'")
                    elif action["writer"] == "files" and not part.get("step"):
                        if not part.get("file"):
                            problems.append(f"{where_p}: a files action needs 'file'")
                        else:
                            for var in template_vars(part["file"]):
                                if var not in part_bound:
                                    problems.append(f"{where_p}: file variable {{{var}}} is not bound")
                            norm = VAR.sub("{}", part["file"])
                            other = files.get(norm)
                            if other and not other.startswith(f"resources.{rname}."):
                                problems.append(f"{where_p}: output path {part['file']!r} also used by {other}")
                            files.setdefault(norm, where_p)
                    bound.add(f"parts.{pname}")
    return problems
