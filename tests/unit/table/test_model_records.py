"""The records of the model (``msgspec.Struct(frozen=True)``): immutable, compared by value, and
declared without compiling code (every command imports the model)."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest

from benchloop.table.load import load_model
from benchloop.table.model import Endpoint, Param, Progress


def test_a_record_of_the_model_cannot_be_assigned_or_deleted():
    endpoint = next(iter(load_model().endpoints.values()))
    with pytest.raises(AttributeError):
        endpoint.path = "/elsewhere"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del endpoint.path  # type: ignore[misc]
    assert endpoint.path.startswith("/")


def test_records_are_equal_and_hashed_by_value():
    one = Progress("Fetching", "ids", "fetched")
    assert one == Progress("Fetching", "ids", "fetched") and hash(one) == hash(Progress("Fetching", "ids", "fetched"))
    assert one != Progress("Fetching", "ids", "fetched", eta=True)
    endpoint = next(iter(load_model().endpoints.values()))
    assert {endpoint: 1}[msgspec.structs.replace(endpoint)] == 1  # a model endpoint keys a dict


def test_a_wrong_call_is_refused_as_by_a_dataclass():
    with pytest.raises(TypeError):
        Param("name")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Endpoint(name="x", method="GET", path="/", help="h", unknown=1)  # type: ignore[call-arg]


_COMPILES = r"""
import json, sys
import msgspec, benchloop.table.optiontypes, benchloop.table.templates  # noqa: E401
compiled = []
# Source compiled at run time (exec of generated code); a module's own source (no bytecode yet) is not counted.
sys.addaudithook(lambda event, args: compiled.append(args[1]) if event == "compile" and not str(args[1]).endswith(".py") else None)
import benchloop.table.model  # noqa: E402
print(json.dumps(compiled))
"""


def test_declaring_the_model_compiles_no_code():
    # A standard dataclass compiles six methods a class with exec (~200 compiles for the model,
    # most of its import time); every command imports the model.
    done = subprocess.run([sys.executable, "-c", _COMPILES], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == []
