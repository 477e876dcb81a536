"""The scenarios, in the order a full run measures them, and the sections they fill.

Each lives in a module of its own: :mod:`.startup`, :mod:`.fanout`,
:mod:`.cpu`, :mod:`.per_request`, :mod:`.sdk`, :mod:`.groups` (big groups, ``bl compare``) and
:mod:`.memory` (the big scenarios, skipped by ``--quick``).  A scenario that
compares with the official client says so (``official``): the run installs
or finds it only when one of those is chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .bench import Bench, Client, Sizes, default_concurrency
from .cpu import cpu
from .fanout import fanout_trajectory
from .groups import compare, scale
from .memory import mem_export, mem_jobs
from .per_request import per_request
from .report import Table
from .sdk import sdk
from .startup import startup
from .streaming import streaming
from .view_page import view_page


@dataclass
class Scenario:
    name: str
    section: str
    func: Callable[[Bench], list[Table]]
    big: bool = False
    official: bool = False  # measures the official client beside bl


SCENARIOS = [
    Scenario("startup", "1. Start-up", startup, official=True),
    Scenario("fanout-trajectory", "2. Fan-out against a remote-like backend", fanout_trajectory, official=True),
    Scenario("cpu", "3. Client CPU per request", cpu),
    Scenario("per-request", "3. Client CPU per request", per_request),
    Scenario("sdk", "4. Python client", sdk),
    Scenario("scale", "5. Big groups", scale),
    Scenario("compare", "6. bl compare on big groups", compare),
    Scenario("view-page", "7. bl view of a big trajectory", view_page),
    Scenario("mem-export", "8. Peak memory (big)", mem_export, big=True),
    Scenario("mem-jobs", "8. Peak memory (big)", mem_jobs, big=True),
    Scenario("streaming", "9. Rows as their pages arrive (big)", streaming, big=True),
]

__all__ = ["SCENARIOS", "Bench", "Client", "Scenario", "Sizes", "default_concurrency"]
