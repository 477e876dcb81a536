"""Frozen dataclasses that cost no ``exec`` to declare: ``@dataclass(frozen=True)``, cheaper.

Why: the typed model of the table (``table/model.py``) declares a few dozen frozen
dataclasses, and every command imports it.  The standard decorator writes the source
of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and
``__delattr__`` of each class and compiles it with ``exec``: six compiles a class,
about 1 ms a class on this project's machines, and more than all the other work of
reading the model put together (``bl metrics get`` paid ~30-60 ms for it at start).

This decorator keeps what the standard one gives and only changes how: the class is
still processed by :func:`dataclasses.dataclass` (so ``dataclasses.fields``,
``is_dataclass``, ``replace`` and ``asdict`` work, and the fields, their order, defaults,
``default_factory`` and ``kw_only`` are the standard ones), but with ``init``, ``repr``,
``eq`` and ``frozen`` off, which needs no ``exec``; the class then gets one shared,
generic implementation of each of those methods, driven by the fields:

- ``__init__`` takes the same positional and keyword arguments as the generated one and
  raises the same ``TypeError`` for a missing, unknown or repeated argument;
- ``__setattr__`` and ``__delattr__`` raise :class:`dataclasses.FrozenInstanceError`
  for every name, so an instance cannot change once built (``tests/test_model.py``);
- ``__eq__`` compares the fields of two instances of the same class, ``__hash__`` hashes
  them (as a frozen dataclass does), ``__repr__`` shows them.

The generic ``__init__`` costs a few microseconds more per instance than a compiled
one; the model builds well under a thousand instances, so that is a fraction of a
millisecond against the tens saved at import.

Type checkers see :func:`dataclasses.dataclass` itself (the ``TYPE_CHECKING`` branch):
they check constructor calls, fields and immutability exactly as for the standard
decorator, whose semantics these are.
"""

from __future__ import annotations

import dataclasses
from typing import Any

field = dataclasses.field
_MISSING = dataclasses.MISSING
_PLAN = "__frozen_plan__"  # the class attribute holding its _Plan


class _Plan:
    """How the generic ``__init__`` fills one class's fields (computed once per class)."""

    __slots__ = ("defaults", "factories", "name", "names", "positional", "post_init", "required")

    def __init__(self, cls: type) -> None:
        fields = [f for f in dataclasses.fields(cls) if f.init]
        self.name = cls.__qualname__
        self.positional = tuple(f.name for f in fields if not f.kw_only)
        self.names = frozenset(f.name for f in fields)
        self.defaults = {f.name: f.default for f in fields if f.default is not _MISSING}
        self.factories = tuple((f.name, f.default_factory) for f in fields if f.default_factory is not _MISSING)
        self.required = tuple(f.name for f in fields
                              if f.default is _MISSING and f.default_factory is _MISSING)
        self.post_init = hasattr(cls, "__post_init__")


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    plan: _Plan = getattr(type(self), _PLAN)
    values = dict(plan.defaults)
    if args:
        if len(args) > len(plan.positional):
            raise TypeError(f"{plan.name}.__init__() takes {len(plan.positional) + 1} positional arguments "
                            f"but {len(args) + 1} were given")
        given = dict(zip(plan.positional, args, strict=False))
        if kwargs and not given.keys().isdisjoint(kwargs):
            twice = next(name for name in plan.positional if name in kwargs and name in given)
            raise TypeError(f"{plan.name}.__init__() got multiple values for argument {twice!r}")
        values.update(given)
    if kwargs:
        if not plan.names.issuperset(kwargs):
            unknown = next(name for name in kwargs if name not in plan.names)
            raise TypeError(f"{plan.name}.__init__() got an unexpected keyword argument {unknown!r}")
        values.update(kwargs)
    for name, make in plan.factories:
        if name not in values:
            values[name] = make()
    if len(values) != len(plan.names):
        missing = [name for name in plan.required if name not in values]
        raise TypeError(f"{plan.name}.__init__() missing {len(missing)} required argument(s): "
                        + ", ".join(repr(name) for name in missing))
    self.__dict__.update(values)
    if plan.post_init:
        self.__post_init__()


def _setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _compared(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.compare)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _compared(self) == _compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_compared(self))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
    return f"{type(self).__qualname__}({shown})"


def frozen_dataclass(cls: type | None = None, /, *, frozen: bool = False, kw_only: bool = False,
                     **options: Any) -> Any:
    """``@dataclass(frozen=True)`` or ``@dataclass(frozen=True, kw_only=True)``, without ``exec``."""
    if not frozen or options:
        raise TypeError("benchloop.base.frozen makes frozen dataclasses only "
                        "(frozen=True, optionally kw_only=True)")

    def wrap(cls: type) -> type:
        undocumented = not cls.__doc__
        if undocumented:  # else dataclasses reads the signature of object.__init__, from text (slow)
            cls.__doc__ = cls.__name__
        cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)
        if undocumented:  # the standard decorator's default docstring: the class and its fields
            cls.__doc__ = f"{cls.__name__}({', '.join(f.name for f in dataclasses.fields(cls))})"
        setattr(cls, _PLAN, _Plan(cls))
        own = cls.__dict__
        if "__setattr__" in own or "__delattr__" in own:
            raise TypeError(f"cannot overwrite __setattr__ or __delattr__ of frozen class {cls.__name__}")
        # As the standard decorator: a method the class defines itself is kept (``Response``
        # hashes only what identifies it); a __hash__ of None that only comes from an __eq__
        # of the class body is not the class's own.
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        for name, method in (("__init__", _init), ("__repr__", _repr), ("__eq__", _eq),
                             ("__setattr__", _setattr), ("__delattr__", _delattr)):
            if name not in own:
                setattr(cls, name, method)
        if not explicit_hash:
            setattr(cls, "__hash__", _hash)  # noqa: B010 - a method of the class
        return cls

    return wrap if cls is None else wrap(cls)


# Type checkers see the standard decorator (its fields, constructor and immutability are what the
# classes have); at run time the classes are made by frozen_dataclass.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    dataclass = frozen_dataclass

__all__ = ["dataclass", "field", "frozen_dataclass"]
