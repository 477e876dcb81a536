"""Request slots: at most ``--concurrency`` requests on the wire per worker pool.

A worker pool runs a few more threads than ``--concurrency`` and gives them one
gate of ``--concurrency`` slots (``use_slots``).  A request holds a slot only
while it is on the wire, so a thread that is decoding or writing its last
answer never keeps the next request waiting, and a nested pool counts as one
request of its caller's pool (``current_slots``).
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from typing import Any

_slots = threading.local()
_NO_GATE: AbstractContextManager[Any] = nullcontext()  # stateless: one instance serves every thread


def use_slots(gate: threading.Semaphore | None) -> None:
    """Make the calling thread's requests hold a slot of ``gate`` while on the wire."""
    _slots.gate = gate


def current_slots() -> threading.Semaphore | None:
    """The gate of the pool the calling thread works for, if any."""
    return getattr(_slots, "gate", None)


def slot() -> AbstractContextManager[Any]:
    """One slot of the calling thread's gate, as a context manager (nothing without a gate)."""
    gate = getattr(_slots, "gate", None)
    return gate if gate is not None else _NO_GATE
