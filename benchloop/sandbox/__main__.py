"""``python -m benchloop.sandbox``: run the sandbox backend in the foreground.

Only argument parsing lives here; the serving loop is :func:`serve.serve`,
shared with ``bl sandbox serve``.
"""

from __future__ import annotations

import argparse
import sys

from .faults import RATE_KINDS
from .serve import serve


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchloop.sandbox",
        description="Serve the benchloop endpoint table on loopback from a synthetic dataset.",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default)")
    p.add_argument("--seed", type=int, default=7, help="dataset seed (default 7)")
    p.add_argument("--groups", type=int, default=3, help="number of groups G1..Gn (default 3)")
    p.add_argument("--jobs-per-group", type=int, default=40, help="jobs per group (default 40)")
    p.add_argument("--tasks-per-group", type=int, default=25, help="tasks per group (default 25)")
    p.add_argument("--api-key", default="sandbox-key", help="accepted X-API-Key (default sandbox-key)")
    p.add_argument("--latency-ms", type=float, default=0, help="delay before every answer (default 0)")
    p.add_argument("--fault-rate", type=float, default=0.0,
                   help="probability that a request is faulted, 0..1 (default 0)")
    p.add_argument("--fault-seed", type=int, default=0, help="seed of the fault decisions (default 0)")
    p.add_argument("--fault-kinds", default=",".join(RATE_KINDS),
                   help=f"comma-separated fault kinds (default {','.join(RATE_KINDS)})")
    p.add_argument("--no-range", action="store_true",
                   help="ignore Range headers on binary endpoints (no resume support)")
    p.add_argument("--artifact-bytes", type=int, default=4096, help="artifact size (default 4096)")
    p.add_argument("--trajectory-steps", type=int, default=3, help="steps per trajectory (default 3)")
    p.add_argument("--export-waiting", type=int, default=1,
                   help="waiting_for_data answers before an export runs (default 1)")
    p.add_argument("--export-running", type=int, default=1,
                   help="running polls before an export succeeds (default 1)")
    p.add_argument("--hostile", action="store_true",
                   help="add the GHOSTILE group and THOSTILE task (hostile ids and names)")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    kinds = tuple(k.strip() for k in args.fault_kinds.split(",") if k.strip())
    if not 0.0 <= args.fault_rate <= 1.0:
        parser.error("--fault-rate must be between 0 and 1")
    if not kinds or any(k not in RATE_KINDS for k in kinds):
        parser.error(f"--fault-kinds must name some of: {', '.join(RATE_KINDS)}")
    return serve(host=args.host, port=args.port, seed=args.seed, groups=args.groups,
                 jobs_per_group=args.jobs_per_group, tasks_per_group=args.tasks_per_group,
                 api_key=args.api_key, latency_ms=args.latency_ms,
                 fault_rate=args.fault_rate, fault_seed=args.fault_seed, fault_kinds=kinds,
                 range_support=not args.no_range, artifact_bytes=args.artifact_bytes,
                 trajectory_steps=args.trajectory_steps, export_waiting=args.export_waiting,
                 export_running=args.export_running, hostile=args.hostile)


if __name__ == "__main__":
    sys.exit(main())
