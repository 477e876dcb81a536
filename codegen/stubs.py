"""Generate the Python client's type stubs and reference from the endpoint table.

``benchloop/sdk/client.pyi`` gives type checkers and IDEs one class per
resource with one typed, keyword-only method per action (``Literal`` for
choices, ``str | Sequence[str]`` for ids, ``DownloadResult`` for downloads,
overloads where a flag turns a download into a listing) and ``iter`` where
the runtime has it; ``docs/python-reference.md`` lists the same methods for
people.  Both are read from the typed model with the helpers the runtime
client uses (``benchloop.sdk.client``), so stubs and runtime agree.

``python -m codegen.docs`` writes them with the reference pages and
``--check`` fails when they are stale (``make docs`` / ``make docs-check``);
``python -m codegen.stubs [--check]`` does the same for these two files only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchloop.sdk.client import library_resources
from benchloop.sdk.methods import (
    attribute,
    iter_options,
    iter_target,
    keyword_annotation,
    keyword_default,
    returns,
    sdk_options,
)
from benchloop.table.load import load_model
from benchloop.table.model import Action, Option, PagedPart, Resource

from .typeddicts import TypedDicts, camel, join

ROOT = Path(__file__).resolve().parent.parent
STUB = ROOT / "benchloop" / "sdk" / "client.pyi"
REFERENCE = ROOT / "docs" / "python-reference.md"

HEADER = '''"""Type stubs of the Python client, generated from spec/benchloop.yaml by codegen/stubs.py.

Do not edit: run `make docs`.  `make docs-check` fails when this file is stale.
"""

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, TypedDict, overload

from ..table.model import Resource
from .dataset import Dataset
from .results import DownloadResult
'''


# ---------------------------------------------------------------- types
def type_of(opt: Option, *, literal_true: bool = False) -> tuple[str, str | None]:
    """``(annotation, default)`` of an option's keyword; default None means required."""
    if literal_true:
        return "Literal[True]", None
    return keyword_annotation(opt), repr(keyword_default(opt))


def params(options: list[Option], literal_flag: str | None = None, false_flag: str | None = None) -> str:
    words = ["self", "*"]
    for opt in options:
        annotation, default = type_of(opt, literal_true=opt.name == literal_flag)
        if opt.name == false_flag:
            annotation = "Literal[False]"
        words.append(f"{opt.name}: {annotation}" + (f" = {default}" if default is not None else ""))
    return ", ".join(words)


def _doc(text: str, indent: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return f'{indent}"""{text}"""\n'


def element_type(types: TypedDicts, action: Action) -> str:
    """The annotation of one element a printing method returns: the union over its dimensions
    of their outputs' types (``Any`` where the table says nothing)."""
    words = []
    for dname, dim in action.dimensions.items():
        if dim.output is None:
            words.append("Any")
            continue
        base = camel(attribute(action.resource)) + ("" if action.command else camel(action.name)) + camel(dname)
        words.append(types.annotation(dim.output.schema, base))
    return join(words) or "Any"


def item_type(types: TypedDicts, parts: dict[str, PagedPart]) -> str:
    """The annotation of one item ``iter`` yields: an entry of the walked collection."""
    words = []
    for part in parts.values():
        response = part.request.response
        schema = response.schema if response.is_json else None
        collection = part.pagination.collection
        items = types.schemas.field(schema, (collection,)) if schema is not None and collection else None
        words.append(types.annotation(items.get("items"), camel(collection or "item")) if items else "Any")
    found = join(words)
    return "dict[str, Any]" if found == "Any" else found


def method_stubs(action: Action, name: str | None = None, types: TypedDicts | None = None) -> str:
    name = name or attribute(action.name)
    options = sdk_options(action)
    element = element_type(types, action) if types is not None and action.prints else "Any"
    out = ""
    if action.stdout_when:
        flag = action.stdout_when
        out += "    @overload\n"
        out += f"    def {name}({params(options, literal_flag=flag)}) -> list[{element}]: ...\n"
        out += "    @overload\n"
        out += f"    def {name}({params(options, false_flag=flag)}) -> DownloadResult: ...\n"
        out += "    @overload\n"
        out += f"    def {name}({params(options)}) -> list[{element}] | DownloadResult:\n"
        out += _doc(action.help, "        ") + "        ...\n"
        return out
    returns = f"list[{element}]" if action.writer == "stdout" else "str" if action.combine else "DownloadResult"
    out += f"    def {name}({params(options)}) -> {returns}:\n"
    out += _doc(action.help, "        ") + "        ...\n"
    return out


def _returns_word(action: Action) -> str:
    if action.writer == "stdout":
        return "list"
    return "str (the page's path)" if action.combine else "DownloadResult"


def walks(action: Action, parts: dict) -> str:
    collections = sorted({p.pagination.collection or "items" for p in parts.values()})
    return f"Every item ({', '.join(collections)}) of every page that `{action.command_line()}` walks"


def class_name(resource: Resource) -> str:
    return "".join(w.capitalize() for w in attribute(resource.name).split("_")) + "Resource"


def resource_stub(resource: Resource, types: TypedDicts) -> str:
    out = f"class {class_name(resource)}(ResourceClient):\n" + _doc(resource.help, "    ")
    for action in resource.actions.values():
        out += method_stubs(action, types=types)
    if resource.command:
        out += method_stubs(next(iter(resource.actions.values())), "__call__", types)
    target = iter_target(resource)
    if target is not None:
        action, parts = target
        out += f"    def iter({params(iter_options(action, parts))}) -> Iterator[{item_type(types, parts)}]:\n"
        out += _doc(walks(action, parts) + ", one page at a time.", "        ") + "        ...\n"
    return out


CLIENT = '''class ResourceClient:
    resource: Resource
    def __init__(self, client: Client) -> None: ...

def attribute(name: str) -> str: ...

class Client:
    """A client of the benchmark-analysis backend, generated from the endpoint table."""

{attributes}
    dataset: Dataset
    host: str
    api_key: str | None
    profile: str | None
    output_dir: str
    concurrency: int
    def __init__(self, host: str | None = None, api_key: str | None = None, profile: str | None = None,
                 config: str | os.PathLike[str] | None = None, concurrency: int = 5, retry: int = 4,
                 timeout: float = 300.0, *, output_dir: str | os.PathLike[str] | None = None,
                 ca_bundle: str | os.PathLike[str] | None = None, pretty: bool = True,
                 progress: Callable[[str], Any] | None = None) -> None: ...
    def close(self) -> None: ...
    def cancel(self) -> None: ...
    def resume(self) -> None: ...
    def __enter__(self) -> Client: ...
    def __exit__(self, *exc_info: Any) -> None: ...
    @property
    def resources(self) -> list[str]: ...
'''


def stub() -> str:
    spec = load_model()
    types = TypedDicts(spec.schemas)
    classes = "\n\n".join(resource_stub(r, types) for r in library_resources(spec))
    attributes = "\n".join(f"    {attribute(r.name)}: {class_name(r)}" for r in library_resources(spec))
    return (HEADER + "\n# What the methods return (the table's output schemas; every key may be missing).\n"
            + types.source() + "\n\n" + CLIENT.format(attributes=attributes) + "\n\n" + classes)


# ------------------------------------------------------------ reference
def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _rows(options: list[Option], literal_flag: str | None = None) -> list[str]:
    rows = ["| keyword | type | default | CLI flag | meaning |", "| --- | --- | --- | --- | --- |"]
    for opt in options:
        annotation, default = type_of(opt)
        rows.append(f"| `{opt.name}` | `{_cell(annotation)}` | `{_cell(default)}` | `{opt.flag}` | {_cell(opt.help)} |")
    return rows


def reference() -> str:
    spec = load_model()
    types = TypedDicts(spec.schemas)
    for resource in library_resources(spec):  # the same names, in the same order, as the stubs
        for action in resource.actions.values():
            if action.prints:
                element_type(types, action)
        if iter_target(resource):
            item_type(types, iter_target(resource)[1])
    lines = [
        "# Python client reference",
        "",
        "Generated from [`spec/benchloop.yaml`](../spec/benchloop.yaml) by `codegen/stubs.py` "
        "(`make docs`); the guide is [`python.md`](python.md). Every method takes keyword arguments "
        "only; ids (`group`, `job`, `task_id`) take one string (commas allowed) or a list. Every "
        "method raises `UsageError` before any request for an invalid argument, `AuthError` on a "
        "401, `NetworkError` when no id succeeded and every failure was a transport error, and "
        "`PartialFailure` when some ids failed.",
        "",
        "| method | CLI command | returns |",
        "| --- | --- | --- |",
    ]
    for resource in library_resources(spec):
        for action in resource.actions.values():
            call = f"bl.{attribute(resource.name)}.{attribute(action.name)}()"
            lines.append(f"| [`{call}`](#{attribute(resource.name)}-{attribute(action.name)}) | "
                         f"`{action.command_line()}` | {_returns_word(action)} |")
        if iter_target(resource):
            lines.append(f"| [`bl.{attribute(resource.name)}.iter()`](#{attribute(resource.name)}-iter) | "
                         f"`{iter_target(resource)[0].command_line()}`, every page | iterator |")
    for resource in library_resources(spec):
        lines += ["", f"## `bl.{attribute(resource.name)}`", "", resource.help]
        if resource.command:
            lines += ["", f"The resource is callable: `bl.{attribute(resource.name)}(...)` is "
                          f"`bl.{attribute(resource.name)}.{attribute(next(iter(resource.actions)))}(...)`."]
        for action in resource.actions.values():
            lines += ["", f'<a id="{attribute(resource.name)}-{attribute(action.name)}"></a>',
                      f"### `bl.{attribute(resource.name)}.{attribute(action.name)}(...)`", "",
                      f"{action.help} Same as `{action.command_line()}`.", "", *_rows(sdk_options(action)),
                      "", f"Returns: {returns(action)}"]
            if action.prints:
                lines += ["", f"Each element: `{_cell(element_type(types, action))}` (see [Types](#types))."]
        target = iter_target(resource)
        if target is not None:
            action, parts = target
            lines += ["", f'<a id="{attribute(resource.name)}-iter"></a>',
                      f"### `bl.{attribute(resource.name)}.iter(...)`", "",
                      f"{walks(action, parts)}, in the order and with the de-duplication of the CLI's "
                      "walk (duplicates across pages, ties at page boundaries, re-scans when the total is "
                      "not reached), yielded one page at a time; only the ids seen are kept.", "",
                      *_rows(iter_options(action, parts)), "",
                      f"Returns: an iterator of `{_cell(item_type(types, parts))}`."]
    lines += ["", '<a id="types"></a>', "## Types", "",
              "The elements are JSON objects as the CLI prints them, typed for type checkers as these "
              "`TypedDict`s (in `benchloop/sdk/client.pyi`; import them under `if TYPE_CHECKING:` from "
              "`benchloop.sdk.client`, or annotate with `Mapping[str, Any]`). Every key may be missing "
              "(`total=False`: the answers are open) and the backend may add others. They come from the "
              "table's schemas (`bl describe` shows them whole)."]
    for name in types.order:
        lines += ["", f"### `{name}`", "", "| field | type | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{field}` | `{_cell(annotation)}` | {_cell(meaning)} |"
                  for field, annotation, meaning in types.fields(name)]
    return "\n".join(lines) + "\n"


def render() -> dict[Path, str]:
    return {STUB: stub(), REFERENCE: reference()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when the stubs or the reference are stale")
    args = parser.parse_args(argv)
    files = render()
    stale = [p for p, text in files.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"stale: {path.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(files[path], encoding="utf-8")
    print(f"wrote {len(stale)} of {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
