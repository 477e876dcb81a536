"""Blocking entry point: serve a sandbox until SIGTERM or SIGINT.

Why a separate module: both ``python -m benchloop.sandbox`` and the CLI's
``bl sandbox serve`` need the same "start, announce one line, wait for a
signal, stop cleanly" behaviour; keeping it apart from argument parsing lets
the CLI call :func:`serve` with its own options.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

from .server import start_sandbox


def serve(
    host: str = "127.0.0.1",
    port: int = 0,
    seed: int = 7,
    groups: int = 3,
    jobs_per_group: int = 40,
    tasks_per_group: int = 25,
    api_key: str = "sandbox-key",
    latency_ms: float = 0,
    **options: Any,
) -> int:
    """Serve until SIGTERM/SIGINT; print the one announce line first; return 0.

    ``options`` go to :func:`start_sandbox` as they are (``fault_rate``,
    ``fault_seed``, ``fault_kinds``, ``range_support``, ``artifact_bytes``, ...).
    """
    stop = threading.Event()
    sandbox = start_sandbox(seed=seed, groups=groups, jobs_per_group=jobs_per_group,
                            tasks_per_group=tasks_per_group, api_key=api_key,
                            latency_ms=latency_ms, host=host, port=port, **options)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    try:
        sys.stdout.write(f"sandbox serving {sandbox.url} (api key: {sandbox.api_key})\n")
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        sandbox.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0
