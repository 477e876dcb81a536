"""One registry type for every extension point: name -> implementation.

bl's extension points are named in data and implemented in Python: the table's steps
(``step:``), combines (``combine:``) and response transforms (``shape:``), the output
formats (``--output``), and the sandbox's request handlers (one per endpoint of the
table).  Each is a :class:`Registry`, filled the one way: ``@REGISTRY.register("name")``
on the implementation, in the module that holds it.  Tests replace an entry as in a dict
(``monkeypatch.setitem``).

A registry may load its modules on first use (``package``): the table names a step or a
combine, and importing every such module at start made every command pay for all of them
(``ap_rebuild``, SQLite for the trace export, ``mimetypes`` for media, the statistics of
``bl compare``) while ``bl metrics get`` uses none.  Looking a name up then imports the
module of that name first (``steps/trace_export.py`` implements the step
``trace_export``); if that module does not register the name, every module of the package
is imported and the name looked up again, so the convention is a shortcut, not a rule.
Iterating imports every module, so it sees exactly what they register (what the tests
comparing the registries with the table do).  Without a package, the entries are those
the imported modules registered (the formats, the transforms, the handlers: each imported
with the module that needs it).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    T = TypeVar("T")
    V = TypeVar("V")
else:
    T = object  # at run time only Registry's base class is subscripted with it


class Registry(MutableMapping[str, T]):
    """Name -> implementation of one extension point (its modules imported on first use
    when ``package`` is given)."""

    def __init__(self, package: str | None = None) -> None:
        self.package = package
        self._entries: dict[str, T] = {}
        self._loaded_all = package is None

    def register(self, name: str) -> Callable[[V], V]:
        """The decorator that registers a function or a class as the implementation of ``name``."""

        def register(implementation: V) -> V:
            if name in self._entries:
                raise ValueError(f"{name!r} is registered twice in {self!r}")
            self._entries[name] = implementation  # type: ignore[assignment]
            return implementation

        return register

    def _load(self, name: str) -> None:
        if self.package is None:
            return
        import importlib

        try:
            importlib.import_module(f"{self.package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{self.package}.{name}":
                raise  # the module exists but imports something missing: say so
        if name not in self._entries:
            self._load_all()

    def _load_all(self) -> None:
        if self._loaded_all or self.package is None:
            return
        import importlib
        import pkgutil

        package = importlib.import_module(self.package)
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{self.package}.{module.name}")
        self._loaded_all = True

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            self._load(name)
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        try:
            self[name]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def __setitem__(self, name: str, value: T) -> None:
        self._entries[name] = value

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self._load_all()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._load_all()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.package!r}, loaded={sorted(self._entries)})"
