"""Rows as their pages arrive (the *big* scenario ``streaming``): the scale issue's targets.

On the sandbox's scale group ``GSCALE`` (``--scale-jobs N``, 10^6 by default: generated per
page, so the sandbox answers every page in the same time), for ``jobs get --all`` and
``jobs table`` in each row format:

* peak RSS of the whole bl process (``os.wait4``), target at most ``RSS_TARGET_MB``;
* the first row on stdout, timed from the start of the process and from the first page's
  answer (the first page of a plain httpx client, asked just before): target within
  ``FIRST_ROW_TARGET_S`` of that answer;
* the total time beside a plain httpx loop over the same pages (the job list; for
  ``jobs table`` the job list and the detail metrics, one after the other): target at most
  ``RATIO_TARGET`` times the loop's.

And ``bl compare -g GSCALE -g GSCALE2`` (both scale groups, 2 x N jobs: per-instance aggregates
in memory, not the rows): peak RSS at most ``COMPARE_TARGET_MB``, its time beside the plain loop
over both groups' two listings.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from .bench import Bench, mark, ok_if
from .report import Table, mb, secs
from .sandbox_proc import SandboxProcess

RSS_TARGET_MB = 100
FIRST_ROW_TARGET_S = 1.0
RATIO_TARGET = 1.3
COMPARE_TARGET_MB = 600
GROUP = "GSCALE"
COMPARED = ["GSCALE", "GSCALE2"]  # the sandbox's scale groups (benchloop.sandbox.scale.SCALE_GROUPS)
CASES = [  # (command words, formats)
    (["jobs", "get", "-g", GROUP, "--all", "--page-size", "1000"], ["jsonl", "csv", "json"]),
    (["jobs", "table", "-g", GROUP], ["jsonl", "csv", "parquet"]),
]
PLAIN_LOOP = """
import sys, time, httpx
url, key, groups, paths = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4].split(",")
start = time.perf_counter()
with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=120) as client:
    for group, path in [(g, p) for g in groups for p in paths]:
        skip = 0
        while True:
            body = client.get(path, params={"group_id": group, "skip": skip, "limit": 1000, "source": "trace"}).json()
            page = body.get("jobs") if "jobs" in body else body.get("metrics")
            skip += len(page)
            if not page or skip >= body["total"]:
                break
print(time.perf_counter() - start)
"""


def _plain(url: str, key: str, paths: list[str], groups: tuple[str, ...] = (GROUP,)) -> float:
    done = subprocess.run([sys.executable, "-c", PLAIN_LOOP, url, key, ",".join(groups), ",".join(paths)],
                          capture_output=True, text=True, timeout=7200, check=True)
    return float(done.stdout.strip())


def _first_page(url: str, key: str, path: str) -> float:
    import httpx

    start = time.perf_counter()
    with httpx.Client(base_url=url, headers={"X-API-Key": key}, timeout=120) as client:
        client.get(path, params={"group_id": GROUP, "skip": 0, "limit": 1000, "source": "trace"}).raise_for_status()
    return time.perf_counter() - start


def _first_row(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from the start of ``argv`` to its first line on stdout (then it is stopped)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.kill()
    proc.wait()
    return elapsed


def streaming(b: Bench) -> list[Table]:
    n = b.sizes.stream_jobs
    table = Table(f"Rows as their pages arrive: {n:,} jobs in one group",
                  ["command", "output", "wall s", "plain httpx loop s", "ratio", "peak RSS MB",
                   "first page s", "first row s (from start)", "rows", "met"])
    bl = next(c for c in b.clients if c.label == "bl")
    with SandboxProcess(groups=1, jobs_per_group=5, scale_jobs=n, ready_timeout=600) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        plain = {"get": _plain(sb.url, sb.api_key, ["/openapi/jobs"]),
                 "table": _plain(sb.url, sb.api_key, ["/openapi/jobs", "/openapi/metrics"])}
        for words, outputs in CASES:
            kind = words[1]
            for output in outputs:
                out = b.fresh_dir("streaming") / f"out.{output}"
                extra = ["-o", str(out)] if output == "parquet" else []
                argv = b.client_argv(bl, sb, "-q", *words, "--output", output, *extra)
                b.show(argv, url=sb.url)
                result = b.run(argv, stdout=None if output == "parquet" else str(out), timeout=7200)
                rows = _rows(out, output)
                first_page = _first_page(sb.url, sb.api_key, "/openapi/jobs")
                first_row = _first_row(argv[:-2] if extra else argv, b.env) if output != "parquet" else float("nan")
                ratio = result.wall / plain[kind] if result.ok else float("nan")
                rss = result.maxrss_kb / 1024 if result.ok else float("nan")
                ok_rss, ok_ratio = ok_if(rss, lambda v: v <= RSS_TARGET_MB), ok_if(ratio, lambda v: v <= RATIO_TARGET)
                ok_first = ok_if(first_row, lambda v, page=first_page: v <= FIRST_ROW_TARGET_S + page + 0.5)
                met = all(x is not False for x in (ok_rss, ok_ratio, ok_first))
                table.rows.append([" ".join(words[:2]), output, secs(result.wall), secs(plain[kind]),
                                   f"{ratio:.2f}", mb(rss), f"{first_page:.2f}",
                                   "-" if first_row != first_row else f"{first_row:.2f}", f"{rows:,}", mark(met)])
                b.verdict(f"`bl {' '.join(words[:2])} --output {output}` at {n:,} jobs: peak RSS <= {RSS_TARGET_MB} MB, "
                          f"total <= {RATIO_TARGET}x a plain httpx loop, first row within {FIRST_ROW_TARGET_S:g} s "
                          "of the first page",
                          f"{mb(rss)} MB, {ratio:.2f}x, first row {first_row:.2f} s", met)
                if out.exists():
                    os.remove(out)
        _compare(b, bl, sb, table, n)
    table.notes.append("The first row is timed from the process start (interpreter and imports included, ~0.3 s); "
                       "the first page is a plain client's answer for page 1. 'met' counts the first row as in time "
                       "within 1 s of that answer plus 0.5 s of start-up. jobs table walks two listings (the job list "
                       "and the detail metrics), so its loop asks for both. compare walks both listings of "
                       f"both groups (its loop asks for all four); its target is peak RSS <= {COMPARE_TARGET_MB} MB "
                       "(rows: the paired instances compared). --output parquet cannot meet the row formats' target "
                       "with DuckDB in the process: its floor is --output jsonl's peak plus ~51 MB that DuckDB costs "
                       "before a row is written (import, connect, its first COPY), 110 MB at 10^6 jobs, and its "
                       "buffer pool (16 MB for narrow rows) comes on top (benchloop/engine/formats/parquet.py).")
    return [table]


def _compare(b: Bench, bl: Any, sb: SandboxProcess, table: Table, n: int) -> None:
    """``bl compare -g GSCALE -g GSCALE2``: 2 x n jobs, peak RSS against ``COMPARE_TARGET_MB``."""
    import json

    plain = _plain(sb.url, sb.api_key, ["/openapi/jobs", "/openapi/metrics"], tuple(COMPARED))
    out = b.fresh_dir("streaming") / "compare.json"
    argv = b.client_argv(bl, sb, "-q", "compare", *[w for g in COMPARED for w in ("-g", g)], "--output", "json")
    b.show(argv, url=sb.url)
    result = b.run(argv, stdout=str(out), timeout=7200)
    paired = 0
    if result.ok and out.exists():
        with open(out, encoding="utf-8") as f:
            paired = json.load(f)[0]["paired"]["instances"]
        os.remove(out)
    ratio = result.wall / plain if result.ok else float("nan")
    rss = result.maxrss_kb / 1024 if result.ok else float("nan")
    met = ok_if(rss, lambda v: v <= COMPARE_TARGET_MB) is True
    table.rows.append([f"compare ({len(COMPARED)} groups)", "json", secs(result.wall), secs(plain), f"{ratio:.2f}",
                       mb(rss), "-", "-", f"{paired:,}", mark(met)])
    b.verdict(f"`bl compare -g {' -g '.join(COMPARED)}` ({len(COMPARED)} x {n:,} jobs): peak RSS <= "
              f"{COMPARE_TARGET_MB} MB", f"{mb(rss)} MB, {ratio:.2f}x a plain httpx loop", met)


def _rows(path: os.PathLike[str] | str, output: str) -> int:
    if not os.path.exists(path):
        return 0
    if output == "parquet":
        try:
            import duckdb
        except ImportError:
            return 0
        return int(duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}')").fetchall()[0][0])
    if output == "json":
        return 0  # one document: its rows are the jobs inside it
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")) - (output == "csv")
