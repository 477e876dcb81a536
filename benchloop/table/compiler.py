"""Parse the YAML table, decode it with its declaration (``schema.py``), and compile it.

Validation errors name the file, the line and the key path, because the table
is edited by hand.  Compiling resolves YAML anchors into plain JSON data and
expands option references (a string naming an entry of the top-level
``options`` table) into full option definitions, so the runtime never needs to
look anything up twice.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import yaml

from .locate import SpecError


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
    """Decode the table with its declaration (``schema.py``); a refusal names file, line and key."""
    import msgspec

    from .schema import Table

    hidden = _hidden(doc, [])
    if hidden:  # a field of the model's own (an entry's name...) is no key of the table
        raise SpecError(f"{path}:{_line_of(doc, hidden)}: {'.'.join(map(str, hidden))}: unknown key {hidden[-1]!r}")
    try:
        msgspec.convert(_plain(doc), Table, dec_hook=_name)
    except msgspec.ValidationError as exc:
        keys, message = _explain(doc, Table, str(exc))
        where = ".".join(str(k) for k in keys) or "(top level)"
        raise SpecError(f"{path}:{_line_of(doc, keys)}: {where}: {message}") from None


def _name(kind: Any, value: Any) -> Any:
    """A field naming another entry (``model.Name``) keeps the name here (the lints check it)."""
    from .model import Name

    if isinstance(kind, Name):
        if isinstance(value, str):
            return value
        raise TypeError(f"Expected `str`, got `{type(value).__name__}`")
    raise NotImplementedError


def _hidden(node: Any, keys: list[Any]) -> list[Any] | None:
    """The key path of the first key that is the model's own (``model.HIDDEN``), None without one."""
    from .model import HIDDEN

    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if isinstance(key, str) and key.startswith(HIDDEN):
            return [*keys, key]
        found = _hidden(value, [*keys, key])
        if found:
            return found
    return None


_TOKENS = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|(\[\.\.\.\])")


def _explain(doc: Any, top: Any, error: str) -> tuple[list[Any], str]:
    """The key path and the message of a refusal of msgspec (``MESSAGE - at `$.a[...].b```: a
    ``[...]`` is a key of a mapping, found again here by decoding each value of it)."""
    import msgspec

    message, _, at = error.rpartition(" - at ")
    if not message:
        return [], error
    at = at.strip("`")
    in_key = at.startswith("key` in `")
    tokens = _TOKENS.findall(at.removeprefix("key` in `"))
    keys: list[Any] = []
    node, kind = doc, top
    for name, index, any_key in tokens:
        kind = _member(kind, node)
        if name:
            fields = {f.encode_name: f.type for f in msgspec.structs.fields(kind)} if _is_record(kind) else {}
            keys.append(name)
            node, kind = (node.get(name) if isinstance(node, dict) else None), fields.get(name, Any)
        elif index:
            keys.append(int(index))
            node = node[int(index)] if isinstance(node, list) and int(index) < len(node) else None
            kind = (typing.get_args(kind) or (Any,))[0]
        elif any_key:
            value_kind = (typing.get_args(kind) or (Any, Any))[-1]
            bad = next((k for k, v in (node.items() if isinstance(node, dict) else ())
                        if not _decodes(v, value_kind)), None)
            keys.append(bad)
            node, kind = (node.get(bad) if isinstance(node, dict) else None), value_kind
    kind = _member(kind, node)
    if in_key and isinstance(node, dict):
        key_kind = (typing.get_args(kind) or (Any,))[0]
        bad = next((k for k in node if not _decodes(k, key_kind)), None)
        keys.append(bad)
        return keys, f"key {bad!r}: {message}"
    unknown = re.match(r"Object contains unknown field `(.*)`$", message)
    if unknown and _is_record(kind):
        from .model import HIDDEN

        allowed = sorted(f.encode_name for f in msgspec.structs.fields(kind) if not f.encode_name.startswith(HIDDEN))
        keys.append(unknown.group(1))
        return keys, f"unknown key {unknown.group(1)!r} (allowed: {', '.join(allowed)})"
    missing = re.match(r"Object missing required field `(.*)`$", message)
    if missing:
        return keys, f"{missing.group(1)!r} is a required property"
    if message.startswith("Invalid enum value"):
        choices = _choices(kind)
        if choices:
            return keys, f"{node!r} is not one of {choices!r}"
    return keys, message


def _is_record(kind: Any) -> bool:
    import msgspec

    return isinstance(kind, type) and issubclass(kind, msgspec.Struct)


def _member(kind: Any, node: Any) -> Any:
    """The type a value of the table is decoded as: ``Annotated`` and ``| None`` taken off, and of
    a union the member of the value's own kind (a record or a mapping for a mapping...)."""
    while typing.get_origin(kind) is typing.Annotated:
        kind = typing.get_args(kind)[0]
    members = [m for m in typing.get_args(kind) if m is not type(None)] if _is_union(kind) else [kind]
    members = [typing.get_args(m)[0] if typing.get_origin(m) is typing.Annotated else m for m in members]
    if len(members) == 1:
        return members[0]
    for member in members:
        origin = typing.get_origin(member) or member
        if isinstance(node, dict) and (_is_record(member) or origin is dict):
            return member
        if isinstance(node, list) and origin is list:
            return member
        if not isinstance(node, (dict, list)) and origin is typing.Literal:
            return member
    return members[0]


def _is_union(kind: Any) -> bool:
    import types

    return typing.get_origin(kind) is typing.Union or isinstance(kind, types.UnionType)


def _choices(kind: Any) -> list[Any]:
    kind = _member(kind, "")
    return list(typing.get_args(kind)) if typing.get_origin(kind) is typing.Literal else []


def _decodes(value: Any, kind: Any) -> bool:
    import msgspec

    try:
        msgspec.convert(value, kind, dec_hook=_name)
    except msgspec.ValidationError:
        return False
    return True


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
