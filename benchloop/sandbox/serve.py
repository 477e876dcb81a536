"""Blocking entry point: serve a sandbox until SIGTERM or SIGINT.

``bl sandbox serve`` and ``python -m benchloop.sandbox`` are one command: both
parse the options defined once in the table (``commands: sandbox: serve``; Cyclopts for
the first, argparse for the second) and hand the values to
:func:`serve_options`, which checks them and runs :func:`serve` ("start,
announce one line, wait for a signal, stop cleanly").
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Mapping
from typing import Any

from .faults import RATE_KINDS
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
    try:
        sandbox = start_sandbox(seed=seed, groups=groups, jobs_per_group=jobs_per_group,
                                tasks_per_group=tasks_per_group, api_key=api_key,
                                latency_ms=latency_ms, host=host, port=port, **options)
    except OSError as exc:
        message = cannot_listen(host, port, exc)
        if message is None:
            raise
        raise ValueError(message) from None
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    try:
        sys.stdout.write(f"sandbox serving {sandbox.url} (api key: {sandbox.api_key})\n")
        sys.stdout.flush()
        while not stop.wait(0.05):  # a signal ends the wait within 50 ms
            pass
    except KeyboardInterrupt:
        pass
    finally:
        sandbox.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


def cannot_listen(host: str, port: int, exc: OSError) -> str | None:
    """Why the sandbox cannot listen on ``host:port``, as an error in the options (``--port``,
    ``--listen``), or None when ``exc`` is not about the address.  (It used to end as "cannot
    write a local file: Address already in use".)"""
    import errno
    import socket

    where = f"{host}:{port}" if port else host
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} is in use on {host}; choose another --port (--port 0 picks a free one)"
    if exc.errno == errno.EACCES:
        return f"cannot listen on {where}: permission denied (ports below 1024 need privileges); choose another --port"
    if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        return f"cannot listen on {where}: --listen {host} is not an address of this machine"
    return None


def serve_options(values: Mapping[str, Any]) -> int:
    """Run the sandbox with the parsed options of ``sandbox serve`` (keyed by their ``name``).

    Raises ValueError with a one-line message for a value out of range, or an address it
    cannot listen on (a port in use); each entry point turns it into its usage error (exit 2).
    """
    kinds = tuple(kind.strip() for kind in values["fault_kinds"].split(",") if kind.strip())
    if not 0 <= values["port"] <= 65535:
        raise ValueError("--port must be between 0 and 65535")
    if not 0.0 <= values["fault_rate"] <= 1.0:
        raise ValueError("--fault-rate must be between 0 and 1")
    if not kinds or any(kind not in RATE_KINDS for kind in kinds):
        raise ValueError(f"--fault-kinds must name some of: {', '.join(RATE_KINDS)}")
    for name in ("groups", "jobs_per_group", "tasks_per_group", "compare_jobs", "artifact_bytes",
                 "trajectory_steps", "export_waiting", "export_running", "latency_ms",
                 "connect_latency_ms", "live_jobs", "live_compare", "live_pace", "live_unsigned", "scale_jobs"):
        if values[name] < 0:
            raise ValueError(f"--{name.replace('_', '-')} must not be negative")
    return serve(host=values["listen"], port=values["port"], seed=values["seed"], groups=values["groups"],
                 jobs_per_group=values["jobs_per_group"], tasks_per_group=values["tasks_per_group"],
                 api_key=values["api_key"], latency_ms=values["latency_ms"],
                 connect_latency_ms=values["connect_latency_ms"],
                 fault_rate=values["fault_rate"], fault_seed=values["fault_seed"], fault_kinds=kinds,
                 range_support=not values["no_range"], artifact_bytes=values["artifact_bytes"],
                 trajectory_steps=values["trajectory_steps"], export_waiting=values["export_waiting"],
                 export_running=values["export_running"], hostile=values["hostile"],
                 compare_jobs=values["compare_jobs"], live_jobs=values["live_jobs"],
                 live_compare=values["live_compare"], live_pace=values["live_pace"],
                 live_unsigned=values["live_unsigned"], scale_jobs=values["scale_jobs"])
