"""Packaging: the declared dependencies and the wheel's contents match the code.

* ``[project] dependencies`` are exactly the distributions that the shipped
  modules of benchloop/ import (found by a static scan of their imports, the
  sandbox included: ``bl sandbox serve`` runs it), and the ``docs`` extra is
  what the docs generator (codegen/) adds to them.
* The wheel, built in-process with the project's build backend, holds every
  module of benchloop/ except the test-only ones, the endpoint table, and
  nothing of the tests; every benchloop module that a shipped module imports
  ships too.
* Test modules share helpers through tests/support.py, not through conftest
  or one another.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import zipfile
from pathlib import Path

import pytest
from support import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# Modules that are in the standard library of some supported Python, not of every one:
# tomllib is there from 3.11 on (3.10 imports the tomli fallback, a declared dependency).
STDLIB = set(sys.stdlib_module_names) | {"tomllib"}
# Test-only modules kept beside the code they test, left out of the wheel.
TEST_ONLY = {"benchloop/sandbox/scripted.py"}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normalize(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1))


def modules(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def shipped_modules() -> list[Path]:
    return [p for p in modules("benchloop") if rel(p) not in TEST_ONLY]


def imports(path: Path) -> set[str]:
    """Absolute module names imported by a file (``from . import x`` resolved against its package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = rel(path)[:-3].split("/")[:-1]  # the package a relative import starts from
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names)  # maybe a submodule
    return found


def third_party(paths: list[Path]) -> dict[str, set[str]]:
    """{distribution: [files importing it]} for the imports that are neither stdlib nor ours."""
    to_dist = importlib.metadata.packages_distributions()
    found: dict[str, set[str]] = {}
    for path in paths:
        for name in imports(path):
            top = name.split(".")[0]
            if top in STDLIB or top in ("benchloop", "codegen", "__future__"):
                continue
            for dist in to_dist.get(top, [top]):  # not installed here (tomli on 3.11+): same name
                found.setdefault(normalize(dist), set()).add(rel(path))
    return found


# Packages (or modules) of benchloop/ that run only with an optional extra installed (and are
# imported lazily: only the command that needs one imports it): package -> extra.
OPTIONAL = {"benchloop/mcp_server": "mcp", "benchloop/settings/keyring_store.py": "keyring",
            "benchloop/engine/formats/parquet.py": "data",
            "benchloop/dataset": "data"}


def optional_package(path: Path) -> str | None:
    return next((package for package in OPTIONAL if rel(path) == package or rel(path).startswith(package + "/")),
                None)


def test_runtime_dependencies_are_exactly_what_benchloop_imports():
    declared = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    imported = third_party([p for p in shipped_modules() if optional_package(p) is None])
    assert sorted(imported) == sorted(declared), imported


@pytest.mark.parametrize("package", sorted(OPTIONAL))
def test_an_optional_extra_is_exactly_what_its_package_adds(package):
    runtime = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    extra = {requirement_name(r) for r in PYPROJECT["project"]["optional-dependencies"][OPTIONAL[package]]}
    imported = third_party([p for p in shipped_modules() if optional_package(p) == package])
    assert sorted(set(imported) - runtime) == sorted(extra), imported
    # The rest of benchloop never imports the package at module level (nor the extra at all).
    for path in shipped_modules():
        if optional_package(path) is not None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        here = rel(path)[:-3].split("/")[:-1]  # resolved as imports() does: sandbox/dataset.py is not ours
        names = {alias.name for node in top if isinstance(node, ast.Import) for alias in node.names}
        for node in top:
            if isinstance(node, ast.ImportFrom):
                stem = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else [])) \
                    if node.level else node.module or ""
                names |= {stem} | {f"{stem}.{alias.name}" for alias in node.names}
        module = package.removesuffix(".py").replace("/", ".")
        assert not any(name == module or name.startswith(module + ".") for name in names), rel(path)


def test_tomli_is_only_for_python_before_3_11():
    (tomli,) = [r for r in PYPROJECT["project"]["dependencies"] if requirement_name(r) == "tomli"]
    assert tomli.split(";")[1].strip() == "python_version < '3.11'"


def test_docs_extra_is_what_the_docs_generator_adds():
    runtime = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    docs = {requirement_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["docs"]}
    assert sorted(set(third_party(modules("codegen"))) - runtime) == sorted(docs)


def test_the_import_scan_sees_every_kind_of_import():
    imported = imports(ROOT / "benchloop" / "sandbox" / "server.py")
    assert "http.server" in imported  # absolute
    assert "benchloop.sandbox.app" in imported  # relative, resolved
    assert set(third_party([ROOT / "benchloop" / "settings" / "config.py"])) >= {"tomlkit", "tomli"}  # lazy, fallback


def test_test_only_modules_exist():
    # A renamed or moved test-only module must not leave a stale exclusion behind.
    for name in TEST_ONLY:
        assert (ROOT / name).is_file(), name
    assert PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["exclude"] == sorted(TEST_ONLY)


# --------------------------------------------------------------------- wheel
@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    from hatchling.builders.wheel import WheelBuilder

    (built,) = WheelBuilder(str(ROOT)).build(directory=str(tmp_path_factory.mktemp("wheel")),
                                             versions=["standard"])
    with zipfile.ZipFile(built) as archive:
        yield archive


def test_wheel_holds_the_package_without_test_helpers(wheel):
    names = wheel.namelist()
    code = sorted(n for n in names if n.endswith(".py"))
    assert code == sorted(rel(p) for p in shipped_modules())
    assert not any(n.startswith(("tests/", "codegen/", "benchmarks/")) for n in names)
    assert not any(n.endswith(".pyc") or "__pycache__" in n for n in names)
    assert "benchloop/sandbox/scripted.py" not in names
    assert "benchloop/sandbox/testing.py" not in names
    spec = sorted(n for n in names if n.startswith("benchloop/_spec/"))
    assert spec == sorted(f"benchloop/_spec/{p.name}" for p in (ROOT / "spec").iterdir() if p.is_file())


def test_every_benchloop_module_a_shipped_module_imports_ships(wheel):
    shipped = {n[:-3].replace("/", ".").removesuffix(".__init__") for n in wheel.namelist() if n.endswith(".py")}
    missing = {}
    for path in shipped_modules():
        for name in imports(path):
            if name.split(".")[0] != "benchloop":
                continue
            source = ROOT / name.replace(".", "/")
            if source.with_suffix(".py").is_file() or (source / "__init__.py").is_file():
                ok = name in shipped  # a module or package
            else:
                ok = name.rsplit(".", 1)[0] in shipped  # a name imported from a module
            if not ok:
                missing.setdefault(name, []).append(rel(path))
    assert missing == {}


def test_wheel_metadata_requires_the_declared_dependencies(wheel):
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    lines = wheel.read(metadata).decode("utf-8").splitlines()
    requires = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Requires-Dist:")]
    runtime = sorted(requirement_name(r) for r in requires if "extra ==" not in r)
    assert runtime == sorted(requirement_name(r) for r in PYPROJECT["project"]["dependencies"])
    assert "jinja2>=3.1" in requires  # the pages' templates: a runtime dependency


def test_the_page_templates_ship_in_the_wheel(wheel):
    names = set(wheel.namelist())
    templates = sorted(rel(p) for p in (ROOT / "benchloop").rglob("templates/*.html"))
    assert templates and set(templates) <= names, sorted(set(templates) - names)


def test_test_modules_share_helpers_through_support_only():
    # Fixtures come from conftest by name, plain helpers from tests/support.py: one place per
    # helper, and no test module depends on another one.
    offenders = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for name in imports(path):
            top = name.split(".")[0]
            if top in ("conftest", "tests") or top.startswith("test_"):
                offenders.setdefault(rel(path), set()).add(name)
    assert offenders == {}
