"""Read-only mappings whose values are made on first use (the model's named entries).

Why: a command reads one resource of the model and the few endpoints its parts name, so
the builder (``table/build.py``) makes each resource, endpoint and response schema only
when it is first read (``bl --help`` makes none of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, TypeVar

    V = TypeVar("V")
else:
    Any = V = object  # at run time only LazyMap's base class is subscripted with them


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


__all__ = ["LazyMap", "model_lock"]
