"""``benchloop.base.frozen.dataclass`` behaves as ``dataclasses.dataclass(frozen=True)``.

Each check declares the same class with both decorators and compares what they do:
construction (positional, keyword, defaults, factories, kw_only, inheritance), the
errors of a wrong call, equality, hash, repr and immutability.  The last test holds the
reason the decorator exists: declaring the model compiles no code.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any

import pytest

from benchloop.base import frozen


def _declare(decorator: Any) -> dict[str, type]:
    @decorator(frozen=True)
    class Point:
        """A point."""

        x: int
        y: int = 0
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
        note: str = dataclasses.field(default="", compare=False, repr=False)

        @property
        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

    @decorator(frozen=True, kw_only=True)
    class Base:
        name: str
        when: str | None = None

    @decorator(frozen=True, kw_only=True)
    class Child(Base):
        size: int
        items: list[int] = dataclasses.field(default_factory=list)

    @decorator(frozen=True)
    class Bare:
        a: int

    return {"Point": Point, "Base": Base, "Child": Child, "Bare": Bare}


OURS = _declare(frozen.dataclass)
STANDARD = _declare(dataclasses.dataclass)

CALLS = [
    ("Point", (1,), {}),
    ("Point", (1, 2), {}),
    ("Point", (1,), {"y": 5, "tags": ("a",)}),
    ("Point", (), {"x": 3, "note": "n"}),
    ("Point", (1, 2, ("t",), "n"), {}),
    ("Child", (), {"name": "n", "size": 3}),
    ("Child", (), {"name": "n", "size": 3, "when": "w", "items": [1]}),
    ("Base", (), {"name": "b"}),
    ("Bare", (7,), {}),
]

BAD_CALLS = [
    ("Point", (), {}),  # missing
    ("Point", (1, 2, (), "n", 5), {}),  # too many positional
    ("Point", (1,), {"x": 2}),  # twice
    ("Point", (1,), {"z": 2}),  # unknown
    ("Child", ("n",), {"size": 1}),  # kw_only given by position
    ("Child", (), {"name": "n"}),  # missing a kw_only field
]


def _fields(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


@pytest.mark.parametrize(("name", "args", "kwargs"), CALLS)
def test_construction_equality_hash_and_repr_match_the_standard_decorator(name, args, kwargs):
    ours, standard = OURS[name](*args, **kwargs), STANDARD[name](*args, **kwargs)
    assert _fields(ours) == _fields(standard)
    assert repr(ours) == repr(standard)
    assert ours == OURS[name](*args, **kwargs) and ours != standard  # another class: not equal
    if name != "Child":  # a list field: unhashable with both decorators
        assert hash(ours) == hash(standard)
    else:
        for value in (ours, standard):
            with pytest.raises(TypeError):
                hash(value)
    assert dataclasses.is_dataclass(ours) and dataclasses.asdict(ours) == dataclasses.asdict(standard)
    assert dataclasses.replace(ours) == ours


@pytest.mark.parametrize(("name", "args", "kwargs"), BAD_CALLS)
def test_a_wrong_call_raises_type_error_as_the_standard_one_does(name, args, kwargs):
    with pytest.raises(TypeError):
        STANDARD[name](*args, **kwargs)
    with pytest.raises(TypeError) as caught:
        OURS[name](*args, **kwargs)
    assert name in str(caught.value)


def test_instances_cannot_change():
    for classes in (OURS, STANDARD):
        point = classes["Point"](1, 2)
        with pytest.raises(dataclasses.FrozenInstanceError):
            point.x = 5
        with pytest.raises(dataclasses.FrozenInstanceError):
            point.other = 5  # type: ignore[attr-defined]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del point.y
        assert point.x == 1 and point.norm == 3


def test_a_default_factory_gives_each_instance_its_own_value():
    first, second = OURS["Child"](name="a", size=1), OURS["Child"](name="b", size=2)
    assert first.items == [] and first.items is not second.items


def test_the_docstring_of_an_undocumented_class_names_its_fields():
    assert OURS["Bare"].__doc__ == "Bare(a)"
    assert OURS["Point"].__doc__ == "A point."


def test_methods_the_class_defines_itself_are_kept():
    for decorator in (frozen.dataclass, dataclasses.dataclass):
        @decorator(frozen=True)
        class Shape:
            kind: str
            schema: dict = dataclasses.field(default_factory=dict)

            def __hash__(self) -> int:  # the dict is unhashable: hash the kind only
                return hash(self.kind)

            def __repr__(self) -> str:
                return f"<{self.kind}>"

        shape = Shape("json", {"a": 1})
        assert hash(shape) == hash("json") and repr(shape) == "<json>"
        assert shape == Shape("json", {"a": 1}) and shape != Shape("json", {})


def test_a_class_that_is_not_frozen_behaves_as_a_standard_dataclass():
    made = {}
    for decorator in (frozen.dataclass, dataclasses.dataclass):
        @decorator
        class Record:
            ident: str
            values: list[int] = dataclasses.field(default_factory=list)
            note: str | None = None

        made[decorator] = Record
    ours, standard = made[frozen.dataclass]("a", [1]), made[dataclasses.dataclass]("a", [1])
    assert repr(ours) == repr(standard) and ours == made[frozen.dataclass]("a", [1])
    ours.note = "changed"  # assignable, as any plain dataclass
    ours.values.append(2)
    assert (ours.note, ours.values) == ("changed", [1, 2])
    assert made[frozen.dataclass].__hash__ is None and made[dataclasses.dataclass].__hash__ is None


def test_options_it_does_not_implement_are_refused():
    with pytest.raises(TypeError):
        frozen.dataclass(frozen=True, order=True)
    with pytest.raises(TypeError):
        frozen.dataclass(slots=True)


_COMPILES = r"""
import json, sys
import benchloop.base.frozen, benchloop.table.optiontypes, benchloop.table.templates  # noqa: E401
compiled = []
# Source compiled at run time (exec of generated code); a module's own source (no bytecode yet) is not counted.
sys.addaudithook(lambda event, args: compiled.append(args[1]) if event == "compile" and not str(args[1]).endswith(".py") else None)
import benchloop.table.model  # noqa: E402
print(json.dumps(compiled))
"""


def test_declaring_the_model_compiles_no_code():
    # The standard decorator compiles six methods a class with exec (~200 compiles for the
    # model, most of its import time); every command imports the model.
    done = subprocess.run([sys.executable, "-c", _COMPILES], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == []
