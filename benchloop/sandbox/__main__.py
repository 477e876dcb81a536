"""``python -m benchloop.sandbox``: run the sandbox backend in the foreground.

Only argument parsing lives here; the serving loop is :func:`serve.serve`,
shared with ``bl sandbox serve``.
"""

from __future__ import annotations

import argparse
import sys

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
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return serve(host=args.host, port=args.port, seed=args.seed, groups=args.groups,
                 jobs_per_group=args.jobs_per_group, tasks_per_group=args.tasks_per_group,
                 api_key=args.api_key, latency_ms=args.latency_ms)


if __name__ == "__main__":
    sys.exit(main())
