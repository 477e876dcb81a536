"""The package tree shows its layers, and the imports point one way.

Every import of every module of ``benchloop/`` (top-level and inside functions, relative
or absolute) is read with ``ast``; each package may import only the packages below it:

    base  <-  table, transport  <-  engine  <-  settings  <-  sdk  <-  mcp_server  <-  cli
    table <-  surface (views of the model), sandbox (a backend: the table only)
    surface <- sdk (``bl describe``'s document, for the MCP server's describe tool)

The MCP server is a layer above the Python client: it imports only sdk, table (the model,
for tool schemas) and base; its tools call the client, never the engine.
    base  <-  compare (the figures of ``bl compare``: pure, no engine; jmespath its only library)  <-  engine
    base, compare  <-  viewer (the pages and listings of ``bl view``: pure, no engine)  <-  engine
    base, table, compare, viewer  <-  dataset (the local Parquet dataset; no request of its own)  <-  engine, sdk

A module whose name starts with ``_`` is private to its package.  A ``__main__`` module is
an entry point and may import anything.  There are no import cycles, not even through the
imports made only for type checkers (``if TYPE_CHECKING:``), as an import-graph tool counts them.
"""

from __future__ import annotations

import ast
import builtins
import sys
from pathlib import Path

import pytest
from support import ROOT

PACKAGE = ROOT / "benchloop"

# package -> the packages its modules may import (besides itself and benchloop.version).
ALLOWED = {
    "base": set(),
    "table": {"base"},
    "transport": {"base"},
    "compare": {"base"},
    "viewer": {"base", "compare"},
    # dataset: the local Parquet dataset (its requests are the caller's: sdk hands it a client).
    "dataset": {"base", "table", "compare", "viewer"},
    "engine": {"base", "table", "transport", "compare", "viewer", "dataset"},
    "settings": {"base", "table", "transport", "engine"},
    "surface": {"base", "table"},
    "sandbox": {"base", "table"},
    "sdk": {"base", "table", "transport", "engine", "settings", "surface", "dataset"},
    # mcp_server imports only sdk, table (the model, for tool schemas) and base.
    "mcp_server": {"base", "table", "sdk"},
    "cli": {"base", "table", "transport", "engine", "settings", "surface", "sandbox", "sdk", "mcp_server", "dataset"},
}
TOP_LEVEL = {"__init__", "__main__", "entry", "version"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, type_checking: bool = False) -> list[str]:
    """Every benchloop module the file imports, as absolute names (``type_checking``: those under
    ``if TYPE_CHECKING:`` too)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rsplit(".", 1)[0]
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree) if type_checking else _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "benchloop"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "benchloop":
                continue
            # ``from . import x`` imports the module x when there is one.
            modules = [f"{target}.{a.name}" for a in node.names if _exists(f"{target}.{a.name}")]
            found += modules or [target]
    return found


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:`` (annotations only: never imported)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            todo += node.orelse
            continue
        out.append(node)
        todo += list(ast.iter_child_nodes(node))
    return out


def _exists(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


MODULES = sorted(PACKAGE.rglob("*.py"))


def layer(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] not in TOP_LEVEL else None


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_point_down(path):
    name = module_name(path)
    own = layer(name)
    if own is None or path.name == "__main__.py":
        return  # the package's own entry points may import anything
    allowed = ALLOWED[own] | {own}
    wrong = [target for target in imports(path) if layer(target) is not None and layer(target) not in allowed]
    assert not wrong, f"{name} ({own}) imports {wrong}; {own} may import {sorted(allowed)}"
    assert "benchloop" not in imports(path), f"{name} imports the top-level package (import benchloop.version)"


def test_mcp_server_imports_only_sdk_table_and_base():
    """The MCP server sits on the Python client: its tools call the SDK, not the engine."""
    used = {layer(t) for p in MODULES if module_name(p).startswith("benchloop.mcp_server.")
            for t in imports(p)} - {None, "mcp_server"}
    assert used == {"sdk", "table", "base"}, used


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_private_modules_stay_in_their_package(path):
    name = module_name(path)
    for target in imports(path):
        leaf = target.rsplit(".", 1)[-1]
        if leaf.startswith("_") and not leaf.startswith("__"):
            assert name.startswith(target.rsplit(".", 1)[0] + "."), f"{name} imports private {target}"


def test_no_import_cycles():
    graph = {module_name(p): {t for t in imports(p, type_checking=True) if t != module_name(p)} for p in MODULES}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            cycle = path[path.index(node):] + [node]
            # A package's __init__ importing its own modules is how it exposes them, not a cycle.
            if not all(c.startswith(node + ".") or c == node for c in cycle[1:-1]):
                pytest.fail("import cycle: " + " -> ".join(cycle))
            return
        if node in done:
            return
        for target in graph.get(node, ()):
            visit(target, [*path, node])
        done.add(node)

    for start in graph:
        visit(start, [])


def test_compare_needs_no_library_but_jmespath():
    """The statistics are plain Python: numpy and scipy are the tests' (an independent check)."""
    for path in sorted((PACKAGE / "compare").glob("*.py")):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.add((node.module or "").split(".")[0])
        third_party = {n for n in found if n not in sys.stdlib_module_names and n not in ("benchloop", "__future__")}
        assert third_party <= {"jmespath"}, (path.name, third_party)


def test_the_tree_shows_the_layers():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert len(top) <= 10, top
    assert set(packages) == set(ALLOWED), packages
    for path in MODULES:  # no module named after a standard-library module or a builtin
        stem = path.stem
        if stem.startswith("__"):
            continue
        assert stem.lstrip("_") not in sys.stdlib_module_names, path
        assert stem.lstrip("_") not in dir(builtins), path


def test_compiling_the_table_runs_the_table_package_only():
    """The compiled-table cache is keyed on the files of table/: compiling must need no other."""
    import subprocess

    code = ("import sys\n"
            "from benchloop.table.compiler import compile_spec\n"
            "from benchloop.table.locate import spec_dir\n"
            "path = spec_dir() / 'benchloop.yaml'\n"
            "compile_spec(path.read_bytes(), path)\n"
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('benchloop'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = done.stdout.split()
    assert "benchloop.table.lint" in loaded  # the lints ran
    assert [m for m in loaded if not m.startswith("benchloop.table")] == [
        "benchloop", "benchloop.version"]
