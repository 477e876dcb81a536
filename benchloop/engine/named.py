"""Registries of named implementations (steps, combines) whose modules load on first use.

The table names a step or a combine; a module of ``engine/steps/`` or ``engine/combines/``
implements it and registers it with a decorator.  Importing every such module at start
made every command pay for all of them (``ap_rebuild``, SQLite for the trace export,
``mimetypes`` for media, the statistics of ``bl compare``): ``bl metrics get`` uses none.

A :class:`Registry` is the name -> implementation mapping of one package.  Looking a
name up imports the module of that name first (``steps/trace_export.py`` implements the
step ``trace_export``); if that module does not register the name, every module of the
package is imported and the name looked up again, so the convention is a shortcut, not
a rule.  Iterating (what the test comparing the registries with the table does) imports
every module, so it sees exactly what they register.  Registration by decorator is
unchanged, and tests may replace an entry (``monkeypatch.setitem``).
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs every start ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    T = TypeVar("T")
else:
    T = object  # at run time only Registry's base class is subscripted with it


class Registry(MutableMapping[str, T]):
    """Name -> implementation of one package's modules, which are imported on first use."""

    def __init__(self, package: str) -> None:
        self.package = package
        self._entries: dict[str, T] = {}
        self._loaded_all = False

    def register(self, name: str) -> Callable[[T], T]:
        """The decorator that registers a function as the implementation of ``name``."""

        def register(function: T) -> T:
            self._entries[name] = function
            return function

        return register

    def _load(self, name: str) -> None:
        import importlib

        try:
            importlib.import_module(f"{self.package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{self.package}.{name}":
                raise  # the module exists but imports something missing: say so
        if name not in self._entries:
            self._load_all()

    def _load_all(self) -> None:
        if self._loaded_all:
            return
        import importlib
        import pkgutil

        package = importlib.import_module(self.package)
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{self.package}.{module.name}")
        self._loaded_all = True

    def __getitem__(self, name: str) -> T:
        if name not in self._entries:
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
