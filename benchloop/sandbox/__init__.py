"""Local sandbox backend: the endpoint table served over loopback HTTP.

The demo, the test suite and the benchmarks run the real ``bl`` client
against this server instead of mocks, so it follows the backend's wire
contract (docs/contract.md sections 2 and 9) over a deterministic synthetic dataset.

    from benchloop.sandbox import start_sandbox

    with start_sandbox(seed=7, groups=3, jobs_per_group=40) as sb:
        ...  # talk to sb.url with header X-API-Key: sb.api_key

Command line: ``python -m benchloop.sandbox --port 8765``.
"""

from __future__ import annotations

from .server import Sandbox, start_sandbox

__all__ = ["Sandbox", "start_sandbox"]
