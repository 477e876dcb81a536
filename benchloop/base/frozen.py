"""Frozen dataclasses that cost next to nothing to declare, and mappings built on first use.

Why: the typed model of the table (``table/model.py``) declares a few dozen frozen
dataclasses, and every command, ``--help`` included, imports it.  The standard decorator
writes the source of ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``
and ``__delattr__`` of each class and compiles it with ``exec`` (six compiles a class,
~50 ms for the model), and importing :mod:`dataclasses` imports :mod:`inspect` (``ast``,
``dis``, ``tokenize``...), which alone costs more than writing a help page.

:func:`frozen_dataclass` gives the classes the same behaviour with shared code and no
compile:

- the fields are the annotations of the class and of its decorated bases, in the same
  order, with the same defaults, ``field(default_factory=...)``, ``compare``, ``repr``
  and ``kw_only`` (and the same ``TypeError`` for a field without a default after one
  with a default); they are collected when the class is first instantiated, since a
  command uses only some of the classes;
- one generic ``__init__`` takes the same positional and keyword arguments as a
  generated one and raises the same ``TypeError`` for a missing, unknown or repeated
  argument;
- ``__setattr__`` and ``__delattr__`` raise :class:`dataclasses.FrozenInstanceError` for
  every name, so an instance cannot change once built (``tests/unit/table/test_model.py``);
- ``__eq__`` compares the fields of two instances of the same class, ``__hash__`` hashes
  them, as a frozen dataclass does, and ``__repr__`` shows them; a method the class body
  defines itself is kept, as the standard decorator keeps it;
- ``__dataclass_fields__`` is computed on first use, by :mod:`dataclasses` itself from the
  same fields, so ``dataclasses.fields``, ``is_dataclass``, ``replace`` and ``asdict``
  work as on any dataclass (tests and tools use them; running a command never does).
  There is no ``__match_args__`` (nothing matches model objects by position).

The generic ``__init__`` costs a microsecond or two more per instance than a compiled
one; a command builds a few hundred instances at most.  Type checkers see
:func:`dataclasses.dataclass` and :func:`dataclasses.field` themselves (the
``TYPE_CHECKING`` branch at the end): they check constructor calls, fields and
immutability exactly as for the standard decorator, whose semantics these are.

:class:`LazyMap` is the read-only mapping the model builder uses for what a command
reads one entry of (resources, actions, endpoints, response schemas).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, TypeVar

    V = TypeVar("V")
else:
    Any = V = object  # at run time only LazyMap's base class is subscripted with them



class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_KW_ONLY = "__frozen_kw_only__"  # per decorated class: the decorator's kw_only
_FIELDS = "__frozen_fields__"  # per class, once prepared: its fields (bases' first), a tuple of Field
_PLAN = "__frozen_plan__"  # per class, once prepared: how __init__ fills them


class Field:
    """One field of a frozen class: its name, its default or default factory, and whether it
    takes part in equality and hashing (``compare``), ``repr`` and the positional arguments."""

    __slots__ = ("compare", "default", "default_factory", "kw_only", "name", "repr", "type")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, compare: bool = True,
                 repr: bool = True, kw_only: Any = MISSING) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr
        self.kw_only = kw_only

    @property
    def required(self) -> bool:
        return self.default is MISSING and self.default_factory is MISSING


def frozen_field(*, default: Any = MISSING, default_factory: Any = MISSING, compare: bool = True,
                 repr: bool = True, kw_only: Any = MISSING) -> Any:
    """``dataclasses.field`` for frozen classes (the arguments the model uses)."""
    return Field(default, default_factory, compare, repr, kw_only)


def _is_class_var(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _collect(cls: type, kw_only: bool) -> tuple[Field, ...]:
    """The fields of ``cls``: its decorated bases' (in method resolution order), then its own."""
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in _fields(base) if _KW_ONLY in base.__dict__ else ():
            fields[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_class_var(annotation):
            continue
        if isinstance(annotation, str) and annotation.startswith(("InitVar", "dataclasses.InitVar")):
            raise TypeError(f"{cls.__name__}.{name}: InitVar is not supported by frozen_dataclass")
        value = _own_field(cls.__dict__.get(name, MISSING))
        f = value if isinstance(value, Field) else Field(default=value)
        f.name, f.type = name, annotation
        if f.kw_only is MISSING:
            f.kw_only = kw_only
        if isinstance(value, Field):  # as dataclasses: the class attribute is the default, if any
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        fields.pop(name, None)
        fields[name] = f
    seen_default = None
    for f in fields.values():
        if f.kw_only:
            continue
        if f.required and seen_default is not None:
            raise TypeError(f"non-default argument {f.name!r} follows default argument {seen_default!r}")
        if not f.required:
            seen_default = f.name
    return tuple(fields.values())


def _own_field(value: Any) -> Any:
    """A ``dataclasses.field(...)`` of a class body as a :class:`Field` (anything else as it is)."""
    kind = type(value)
    if kind.__name__ != "Field" or kind.__module__ != "dataclasses":
        return value
    import dataclasses

    def ours(v: Any) -> Any:
        return MISSING if v is dataclasses.MISSING else v

    return Field(ours(value.default), ours(value.default_factory), bool(value.compare), bool(value.repr),
                 ours(value.kw_only))


class _Plan:
    """How the generic ``__init__`` fills one class's fields (computed once per class)."""

    __slots__ = ("defaults", "factories", "name", "names", "positional", "post_init", "required")

    def __init__(self, cls: type, fields: tuple[Field, ...]) -> None:
        self.name = cls.__qualname__
        self.positional = tuple(f.name for f in fields if not f.kw_only)
        self.names = frozenset(f.name for f in fields)
        self.defaults = {f.name: f.default for f in fields if f.default is not MISSING}
        self.factories = tuple((f.name, f.default_factory) for f in fields if f.default_factory is not MISSING)
        self.required = tuple(f.name for f in fields if f.required)
        self.post_init = hasattr(cls, "__post_init__")


_PREPARING = None  # the lock under which classes are prepared (made on first use)


def _fields(cls: type) -> tuple[Field, ...]:
    """The fields of a decorated class, collected on first use of the class.

    Why not at declaration: most of the model's classes are never instantiated by a given
    command (a help page builds a handful), so collecting them all at import was wasted.
    A lock makes sure a class is prepared once: preparing moves the defaults given with
    ``field()`` out of the class body, which must not happen twice."""
    fields = cls.__dict__.get(_FIELDS)
    if fields is not None:
        return fields
    global _PREPARING
    if _PREPARING is None:
        import _thread

        _PREPARING = _thread.RLock()
    with _PREPARING:
        fields = cls.__dict__.get(_FIELDS)
        if fields is None:
            fields = _collect(cls, cls.__dict__[_KW_ONLY])
            setattr(cls, _PLAN, _Plan(cls, fields))
            setattr(cls, _FIELDS, fields)
    return fields


def _plan(cls: type) -> _Plan:
    plan = cls.__dict__.get(_PLAN)
    if plan is None:
        _fields(cls)
        plan = cls.__dict__[_PLAN]
    return plan


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    plan = _plan(type(self))
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
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    from dataclasses import FrozenInstanceError

    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _compared(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f.name) for f in _fields(type(self)) if f.compare)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return _compared(self) == _compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_compared(self))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in _fields(type(self)) if f.repr)
    return f"{type(self).__qualname__}({shown})"


class _DataclassFields:
    """``__dataclass_fields__``, made on first use by :mod:`dataclasses` from the same fields (a
    throwaway class declared with them), then stored on the class."""

    def __get__(self, obj: Any, cls: type) -> Any:
        import dataclasses

        namespace: dict[str, Any] = {"__annotations__": {}}
        for f in _fields(cls):
            namespace["__annotations__"][f.name] = f.type
            namespace[f.name] = dataclasses.field(default=f.default if f.default is not MISSING else dataclasses.MISSING,
                                                  default_factory=(f.default_factory if f.default_factory is not MISSING
                                                                   else dataclasses.MISSING),
                                                  compare=f.compare, repr=f.repr, kw_only=bool(f.kw_only))
        shadow: Any = dataclasses.dataclass(type(cls.__name__, (), namespace), init=False, repr=False, eq=False)
        fields = shadow.__dict__["__dataclass_fields__"]
        type.__setattr__(cls, "__dataclass_fields__", fields)
        return fields


_METHODS = {"__init__": _init, "__repr__": _repr, "__eq__": _eq, "__setattr__": _setattr, "__delattr__": _delattr}


def frozen_dataclass(cls: type | None = None, /, *, frozen: bool = False, kw_only: bool = False,
                     **options: Any) -> Any:
    """``@dataclass``, ``@dataclass(frozen=True)``, with ``kw_only=True`` or not, made cheaply.

    A class that is not frozen gets the same ``__init__``, ``__eq__`` and ``__repr__`` and,
    as from the standard decorator, no hash (``__hash__`` is None) and no guard on
    assignment; the engine's few mutable records (``Outcome``, ``Runtime``) use it."""
    if options:
        raise TypeError(f"benchloop.base.frozen does not support {', '.join(options)}")

    def wrap(cls: type) -> type:
        own = cls.__dict__
        if frozen and ("__setattr__" in own or "__delattr__" in own):
            raise TypeError(f"cannot overwrite __setattr__ or __delattr__ of frozen class {cls.__name__}")
        setattr(cls, _KW_ONLY, kw_only)  # the fields are collected on first use (_fields)
        setattr(cls, "__dataclass_fields__", _DataclassFields())  # noqa: B010 - made on first use
        if not cls.__doc__:
            names = [name for c in reversed(cls.__mro__) if _KW_ONLY in c.__dict__
                     for name in c.__dict__.get("__annotations__", {})]
            cls.__doc__ = f"{cls.__name__}({', '.join(dict.fromkeys(names))})"
        # As the standard decorator: a method the class defines itself is kept (``Response``
        # hashes only what identifies it); a __hash__ of None that only comes from an __eq__
        # of the class body is not the class's own.
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        methods: dict[str, Any] = dict(_METHODS)
        if not frozen:
            del methods["__setattr__"], methods["__delattr__"]
        if not explicit_hash:
            methods["__hash__"] = _hash if frozen else None
        for name, method in methods.items():
            if name not in own or name == "__hash__":
                setattr(cls, name, method)
        return cls

    return wrap if cls is None else wrap(cls)


class LazyMap(Mapping[str, V]):
    """A read-only mapping whose values are made on first access, once each.

    Why: a command reads one resource of the model and the few endpoints its parts name, but
    building every resource, endpoint and response schema was most of the cost of reading the
    model (``bl --help`` builds none of them).  The keys are known up front; ``make(key)``
    builds a value from data that is never written once compiled (the compiled table).
    Values are made under one lock shared by the mappings of a model (reentrant: making a
    resource makes the endpoints it names), so threads reading the model concurrently all
    get the same object; a value already made is read without the lock.  Nothing can be
    added, replaced or removed: there is no ``__setitem__``, as on a ``MappingProxyType``.
    """

    __slots__ = ("_keys", "_lock", "_made", "_make")

    def __init__(self, keys: Iterable[str], make: Callable[[str], V], lock: Any) -> None:
        self._keys = dict.fromkeys(keys)
        self._make = make
        self._made: dict[str, V] = {}
        self._lock = lock

    def __getitem__(self, key: str) -> V:
        try:
            return self._made[key]
        except KeyError:
            if key not in self._keys:
                raise
        with self._lock:
            if key not in self._made:
                self._made[key] = self._make(key)
            return self._made[key]

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"LazyMap({dict(self.items())!r})"

    @property
    def made(self) -> tuple[str, ...]:
        """The keys whose values were made so far (what a command has read)."""
        return tuple(self._made)


def model_lock() -> Any:
    """The reentrant lock the lazy mappings of one model share (``_thread``: no ``threading``
    import on the way to a help page)."""
    import _thread

    return _thread.RLock()


# Type checkers see the standard decorator and field (the classes have their fields, constructor
# and immutability); at run time the classes are made by frozen_dataclass.
if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field
else:
    dataclass, field = frozen_dataclass, frozen_field

__all__ = ["MISSING", "Field", "LazyMap", "dataclass", "field", "frozen_dataclass", "frozen_field", "model_lock"]
