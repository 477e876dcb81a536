"""The floor: the leanest client that does the same per-job work as ``bl``.

A thread pool of ``--concurrency`` workers, each with its own keep-alive
``http.client`` connection (no pool hand-off, no retries, no limits, no
redirects, no proxy, no TLS), GETs ``--path`` for every id with the same
headers as ``bl``, parses each answer and either writes it as ``bl`` does
(``-o DIR``: 2-space JSON into ``{id}{--suffix}``, through a temp file and a
rename, as every ``bl`` file is written) or prints one JSON array (as
``bl ... get`` does).  Whatever ``bl`` spends beyond this is what its own code
adds: the ``cpu`` scenario holds ``bl``'s marginal CPU per request against
this loop's (issue 32: within 2.5x), and the fan-out shows it as a reference
row (what the leanest keep-alive client gets from the same sandbox).

    python benchmarks/floor_client.py --host URL --api-key KEY --concurrency 5 -o DIR -j - < ids
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

TRAJECTORY = "/openapi/jobs/{job}/trajectory?source=trace"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/floor_client.py")
    p.add_argument("--host", required=True)
    p.add_argument("--api-key", required=True)
    p.add_argument("--concurrency", type=int, default=5)
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--path", default=TRAJECTORY, help="per-job path and query; {job} is replaced")
    p.add_argument("-o", "--output", default=None, help="write one file per id here (default: print an array)")
    p.add_argument("--suffix", default="_trajectory.json", help="file name after the id")
    p.add_argument("-j", "--job", action="append", required=True, help="ids, comma-separated; '-' reads stdin")
    args = p.parse_args(argv)
    ids: list[str] = []
    for value in args.job:
        ids += sys.stdin.read().split() if value == "-" else [t.strip() for t in value.split(",") if t.strip()]
    ids = list(dict.fromkeys(ids))
    where = urlsplit(args.host)
    base = where.path.rstrip("/")
    headers = {"Accept": "application/json", "Accept-Encoding": "gzip, deflate",
               "User-Agent": "benchloop-floor/1", "X-API-Key": args.api_key}
    local = threading.local()

    def fetch(job: str) -> object:
        connection = getattr(local, "connection", None)
        if connection is None:
            connection = local.connection = http.client.HTTPConnection(where.hostname, where.port or 80,
                                                                       timeout=args.timeout)
        connection.request("GET", base + args.path.replace("{job}", job), headers=headers)
        response = connection.getresponse()
        body = response.read()
        if response.status >= 400:
            raise RuntimeError(f"API error {response.status}: {body[:200]!r}")
        value = json.loads(body)
        if args.output is None:
            return value
        final = os.path.join(args.output, job + args.suffix)
        tmp = os.path.join(args.output, f".{job}{args.suffix}.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
        os.replace(tmp, final)
        return None

    if args.output is not None:
        os.makedirs(args.output, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, min(args.concurrency, len(ids) or 1))) as pool:
        results = list(pool.map(fetch, ids))
    if args.output is None:
        sys.stdout.write(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
