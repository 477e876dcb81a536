"""A plain aiohttp client doing ``bl trajectory get -j -``'s work, for the CPU comparison.

One ``aiohttp.ClientSession`` (its connector limited to ``--concurrency``
connections, kept alive), one task per id under a semaphore of
``--concurrency``, every answer parsed, one indented JSON array printed: what a
user who reaches for asyncio would write.  aiohttp is not a dependency of bl:
the ``per-request`` scenario runs this script only when aiohttp is importable
by the Python given in ``BENCH_AIOHTTP_PYTHON`` (or the bench's own), and says
it skipped it otherwise.

    python benchmarks/aiohttp_client.py --host URL --api-key KEY --concurrency 16 -j - < ids
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import aiohttp

TRAJECTORY = "/openapi/jobs/{job}/trajectory?source=trace"


async def fetch_all(host: str, api_key: str, ids: list[str], concurrency: int, path: str) -> list[object]:
    headers = {"Accept": "application/json", "Accept-Encoding": "gzip, deflate", "X-API-Key": api_key}
    gate = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(job: str) -> object:
            async with gate, session.get(host + path.replace("{job}", job)) as response:
                body = await response.read()
                if response.status >= 400:
                    raise RuntimeError(f"API error {response.status}: {body[:200]!r}")
                return json.loads(body)

        return list(await asyncio.gather(*(one(job) for job in ids)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/aiohttp_client.py")
    p.add_argument("--host", required=True)
    p.add_argument("--api-key", required=True)
    p.add_argument("--concurrency", type=int, default=5)
    p.add_argument("--path", default=TRAJECTORY, help="per-job path and query; {job} is replaced")
    p.add_argument("-j", "--job", action="append", required=True, help="ids, comma-separated; '-' reads stdin")
    args = p.parse_args(argv)
    ids: list[str] = []
    for value in args.job:
        ids += sys.stdin.read().split() if value == "-" else [t.strip() for t in value.split(",") if t.strip()]
    ids = list(dict.fromkeys(ids))
    results = asyncio.run(fetch_all(args.host.rstrip("/"), args.api_key, ids, max(1, args.concurrency), args.path))
    sys.stdout.write(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
