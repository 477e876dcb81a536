"""The records of the model (``msgspec.Struct(frozen=True)``): immutable, compared by value, and
declared without compiling code (every command imports the model)."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest

from benchloop.table.load import load_model, load_spec
from benchloop.table.model import Endpoint, Name, Param, Progress, Waiter


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


def _name_type(kind: object) -> Name | None:
    """The ``model.Name`` a field's type is (``Annotated`` and ``| None`` taken off), else None."""
    import typing

    while typing.get_origin(kind) is typing.Annotated:
        kind = typing.get_args(kind)[0]
    found = [k for k in typing.get_args(kind) or (kind,) if isinstance(k, Name)]
    return found[0] if found else None


def test_a_name_in_the_table_is_the_entry_it_names_in_the_model():
    """A field of a record typed by a ``model.Name`` holds the entry the table names, the same object
    the model's mapping of those entries holds (built once), for every such field of every waiter
    and of its acceptors."""
    spec, table = load_model(), load_spec()
    names = {f.encode_name: (f.name, _name_type(f.type)) for f in msgspec.structs.fields(Waiter)}
    assert {key for key, (_, kind) in names.items() if kind is not None} == {"request", "enumeration"}
    checked = 0
    for key, body in table["waiters"].items():
        waiter = spec.waiters[key]
        assert waiter.name == key
        for written, (field, kind) in names.items():
            if kind is not None and body.get(written):
                assert getattr(waiter, field) is getattr(spec, kind.table)[body[written]]
                checked += 1
        for acceptor, raw in zip(waiter.acceptors, body["acceptors"], strict=True):
            assert acceptor.follow == raw.get("waiter")
            if raw.get("waiter"):
                assert acceptor.waiter is spec.waiters[raw["waiter"]] is waiter.followed[raw["waiter"]]
                checked += 1
    assert checked > len([b for b in table["waiters"].values() if b.get("request") or b.get("enumeration")])
