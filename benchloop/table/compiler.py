"""Parse the YAML table, validate it against its JSON Schema, and compile it.

Validation errors name the file, the line and the key path, because the table
is edited by hand.  Compiling resolves YAML anchors into plain JSON data and
expands option references (a string naming an entry of the top-level
``options`` table) into full option definitions, so the runtime never needs to
look anything up twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .locate import SCHEMA_NAME, SpecError, spec_dir


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that remembers the line of every mapping key."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode, deep: bool = False):
    mapping = {}
    lines = {}
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise SpecError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
        mapping[key] = loader.construct_object(value_node, deep=deep)
        lines[key] = key_node.start_mark.line + 1
    return _Located(mapping, lines, node.start_mark.line + 1)


class _Located(dict):
    """A dict that knows the source line of itself and of each key."""

    def __init__(self, data: dict, lines: dict, line: int):
        super().__init__(data)
        self.lines = lines
        self.line = line


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _line_of(doc: Any, path: list) -> int | None:
    node, line = doc, getattr(doc, "line", None)
    for key in path:
        if isinstance(node, _Located) and key in node:
            line = node.lines.get(key, line)
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            break
    return line


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def parse(raw: bytes, path: Path) -> Any:
    try:
        return yaml.load(raw, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: invalid YAML: {exc}") from None


def validate(doc: Any, path: Path) -> None:
    import jsonschema

    schema = json.loads((spec_dir() / SCHEMA_NAME).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(_plain(doc)), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return
    err = min(errors, key=lambda e: len(e.absolute_path))
    # Prefer the most specific error of the first failing branch.
    err = jsonschema.exceptions.best_match(errors) or err
    while err.validator in ("oneOf", "anyOf") and err.context:
        # Of the branches, the one for the value's own type says what is wrong ("not one of ..."),
        # if one is of its type at all.
        inner = next((e for e in err.context if e.validator != "type"), None)
        if inner is None:
            break
        err = inner
    keys = list(err.absolute_path)
    message = err.message
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {}))
        unknown = [k for k in err.instance if k not in allowed]
        if unknown:
            keys.append(unknown[0])
            message = f"unknown key {unknown[0]!r}" + (f" (allowed: {', '.join(sorted(allowed))})" if allowed else "")
    line = _line_of(doc, keys)
    where = ".".join(str(k) for k in keys) or "(top level)"
    raise SpecError(f"{path}:{line}: {where}: {message}")


def compile_spec(raw: bytes, path: Path) -> dict[str, Any]:
    doc = parse(raw, path)
    validate(doc, path)
    spec = _plain(doc)
    from .lint import expand, lint

    spec = expand(spec)
    problems = lint(spec)
    if problems:
        raise SpecError(f"{path}: " + "; ".join(problems))
    return spec
