"""The official client's way of fetching job trajectories, as a CPU baseline.

``benchloop_client`` 0.2.x builds a fresh ``httpx.Client`` for every request
(docs/contract.md 2.4 and 8.1: new connection, new SSL context, every
time), runs ids on a thread pool of ``--concurrency`` workers, parses every
body, and prints the results as one indented JSON array.  This script does
exactly that for ``GET /openapi/jobs/{job}/trajectory?source=trace`` with the
official client's headers, and nothing else: no CLI framework, no config, no
update check - so whatever it costs is the per-request approach itself, and
the comparison with ``bl trajectory get -j`` is, if anything, kind to it.

With ``--shared-client`` it is instead the leanest sensible httpx client: one
``httpx.Client`` (a pool of ``--concurrency`` connections) shared by the
threads, for comparisons by hand (no scenario runs it).  ``--path`` picks
another per-job endpoint (``{job}`` is replaced).

    python benchmarks/baseline_client.py --host URL --api-key KEY --concurrency 5 -j - < ids
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor

import httpx

TRAJECTORY = "/openapi/jobs/{job}/trajectory?source=trace"


def fetch(client: httpx.Client | None, url: str, api_key: str, timeout: float) -> object:
    headers = {"Accept": "application/json", "X-API-Key": api_key}
    if client is None:
        with httpx.Client(timeout=timeout) as fresh:  # one client per request, like 0.2.x
            response = fresh.request("GET", url, headers=headers)
    else:
        response = client.request("GET", url, headers=headers)
    if response.status_code >= 400:
        raise RuntimeError(f"API error {response.status_code}: {response.text}")
    return response.json()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/baseline_client.py")
    p.add_argument("--host", required=True)
    p.add_argument("--api-key", required=True)
    p.add_argument("--concurrency", type=int, default=5)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--path", default=TRAJECTORY, help="per-job path and query; {job} is replaced")
    p.add_argument("--shared-client", action="store_true", help="one pooled client for every request")
    p.add_argument("-j", "--job", action="append", required=True, help="ids, comma-separated; '-' reads stdin")
    args = p.parse_args(argv)
    ids: list[str] = []
    for value in args.job:
        ids += sys.stdin.read().split() if value == "-" else [t.strip() for t in value.split(",") if t.strip()]
    ids = list(dict.fromkeys(ids))
    host = args.host.rstrip("/")
    workers = max(1, min(args.concurrency, len(ids) or 1))
    shared = None
    if args.shared_client:
        limits = httpx.Limits(max_connections=workers, max_keepalive_connections=workers)
        shared = httpx.Client(timeout=args.timeout, limits=limits)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(
                lambda job: fetch(shared, host + args.path.replace("{job}", job), args.api_key, args.timeout),
                ids))
    finally:
        if shared is not None:
            shared.close()
    sys.stdout.write(json.dumps([r for r in results if r is not None], indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
