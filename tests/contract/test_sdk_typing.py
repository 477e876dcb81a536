"""The Python client's type stubs: generated from the table, fresh, complete, and useful to mypy.

* ``benchloop/sdk/client.pyi`` and ``docs/python-reference.md`` are what
  ``codegen/stubs.py`` generates from the table now (``make docs-check`` checks
  it too);
* the stubs declare exactly the resources, methods and keywords that the
  runtime client generates;
* mypy accepts ``tests/sdk_examples/good.py`` (the guide's calls) and reports
  exactly the misuses marked ``# E`` in ``tests/sdk_examples/bad.py``.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

from benchloop.sdk.client import Client, attribute, resource_classes
from benchloop.table.load import load_model
from codegen import stubs

EXAMPLES = ROOT / "tests" / "sdk_examples"


def test_stubs_and_reference_are_fresh():
    assert stubs.main(["--check"]) == 0, "run `make docs` and commit"


def _stub_classes() -> dict[str, dict[str, list[str]]]:
    """class -> method -> keyword names, from the checked-in stub."""
    tree = ast.parse(stubs.STUB.read_text(encoding="utf-8"))
    out: dict[str, dict[str, list[str]]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = out.setdefault(node.name, {})
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    methods[item.name] = [a.arg for a in item.args.kwonlyargs]
    return out


def test_stubs_declare_what_the_runtime_generates():
    declared = _stub_classes()
    spec = load_model()
    annotations = ast.parse(stubs.STUB.read_text(encoding="utf-8"))
    client_attrs = {n.target.id for c in annotations.body if isinstance(c, ast.ClassDef) and c.name == "Client"
                    for n in c.body if isinstance(n, ast.AnnAssign)}
    for name, cls in resource_classes(spec).items():
        assert attribute(name) in client_attrs
        methods = declared[cls.__name__]
        runtime = {m: [p for p in inspect.signature(getattr(cls, m)).parameters if p != "self"]
                   for m in vars(cls) if callable(getattr(cls, m)) and not m.startswith("_") or m == "__call__"}
        runtime = {m: v for m, v in runtime.items() if m not in ("resource",)}
        assert {m: sorted(v) for m, v in runtime.items()} == {m: sorted(v) for m, v in methods.items()
                                                              if m != "__init__"}
    assert "__init__" in declared["Client"]
    client_params = [p for p in inspect.signature(Client.__init__).parameters if p != "self"]
    stub_init = next(n for c in annotations.body if isinstance(c, ast.ClassDef) and c.name == "Client"
                     for n in c.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert client_params == [a.arg for a in stub_init.args.args[1:] + stub_init.args.kwonlyargs]


def _mypy(path: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy")
    return subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental",
                           "--cache-dir", "/dev/null", "--python-version", "3.10", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_mypy_accepts_the_example():
    done = _mypy(EXAMPLES / "good.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_rejects_the_misuses():
    done = _mypy(EXAMPLES / "bad.py")
    assert done.returncode == 1, done.stdout + done.stderr
    reported = {int(n) for n in re.findall(r"bad\.py:(\d+): error:", done.stdout)}
    marked = {n for n, line in enumerate((EXAMPLES / "bad.py").read_text().splitlines(), 1) if "# E:" in line}
    assert reported == marked, done.stdout
