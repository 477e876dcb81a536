"""CPU and wall per request 50 ms away (issue 45): bl beside the floor, plain httpx and aiohttp.

``trajectory get -j -`` over ``cpu_ids`` ids, the sandbox 50 ms away (each
answer and each new connection), at ``--concurrency`` 16 and 64, with
trajectories of ~1 KB (4 steps) and ~90 KB (500 steps).  Beside bl, each doing
the same work (GET, parse, one indented JSON array printed):

- the floor (:mod:`benchmarks.floor_client`): a keep-alive ``http.client``
  connection per worker thread;
- plain httpx (:mod:`benchmarks.baseline_client` ``--shared-client``): one
  ``httpx.Client`` shared by a thread pool, what a user would write;
- plain aiohttp (:mod:`benchmarks.aiohttp_client`), only when aiohttp is
  importable by ``BENCH_AIOHTTP_PYTHON`` (default: this Python); else the row
  says it was skipped (aiohttp is no dependency of bl).

CPU is user+sys of the whole process; *marginal* CPU per request is (CPU of the
N-id run - CPU of a 1-id run) / (N - 1): the request loop without start-up.
Targets (issue 45, at c16): 1 KB marginal CPU <= 1.0x plain httpx's and
<= 1.5x the floor's, wall <= 1.08x the floor's; 90 KB marginal CPU <= 1.5x the
floor's.  Median of ``cpu_runs`` runs, the clients interleaved.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .bench import BASELINE, FLOOR, FLOOR_LABEL, Bench, mark, ok_if
from .measure import Run, median_run
from .report import Table, ratio, secs
from .sandbox_proc import SandboxProcess

AIOHTTP = str(Path(__file__).resolve().parent / "aiohttp_client.py")
LATENCY_MS = 50
SIZES = ((4, "~1 KB"), (500, "~90 KB"))
LEVELS = (16, 64)


def aiohttp_python() -> str | None:
    python = os.environ.get("BENCH_AIOHTTP_PYTHON") or sys.executable
    try:
        done = subprocess.run([python, "-c", "import aiohttp"], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return python if done.returncode == 0 else None


def per_request(b: Bench) -> list[Table]:
    aio = aiohttp_python()
    return [*(_at(b, steps, size, aio) for steps, size in SIZES), *pull_cpu(b), jobs_all(b)]


JOBS_ALL = 10_000
JOBS_ALL_TARGET_S = 2.5


def jobs_all(b: Bench) -> Table:
    """``jobs get -g G1 --all`` of 10,000 jobs, 50 ms away (issue 45: <= 2.5 s)."""
    runs: list[Run] = []
    with SandboxProcess(groups=1, jobs_per_group=JOBS_ALL, latency_ms=LATENCY_MS, connect_latency_ms=LATENCY_MS) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        argv = b.client_argv(b.clients[0], sb, "-q", "jobs", "get", "-g", "G1", "--all")
        b.show(argv, url=sb.url)
        for _ in range(b.sizes.cpu_runs):
            out = str(b.work / "jobs-all.json")
            runs.append(b.run(argv, stdout=out, timeout=900))
            os.unlink(out)
    m = median_run(runs)
    ok = ok_if(m["wall"], lambda v: v <= JOBS_ALL_TARGET_S)
    b.verdict(f"`jobs get --all` of {JOBS_ALL:,} jobs, {LATENCY_MS} ms away (issue 45): <= {JOBS_ALL_TARGET_S:g} s",
              f"{m['wall']:.2f} s (CPU {m['cpu']:.2f} s)", ok)
    table = Table(f"`jobs get -g G1 --all` of {JOBS_ALL:,} jobs, {LATENCY_MS} ms away",
                  ["client", "wall s", "CPU s", "target", "met"],
                  [["bl", secs(m["wall"]), secs(m["cpu"]), f"<= {JOBS_ALL_TARGET_S:g} s", mark(ok)]])
    table.notes.append(f"Median of {b.sizes.cpu_runs} run(s). Without --page-size the scan asks 1,000 jobs a request "
                       "(10 requests; 50 a request, as before, made 200).")
    return table


def _at(b: Bench, steps: int, size: str, aio: str | None) -> Table:
    n = b.sizes.cpu_ids
    many, one = b.ids_file(n), b.ids_file(1)
    runs: dict[tuple[str, int, int], list[Run]] = {}
    labels: dict[str, str] = {"bl": "bl", "floor": FLOOR_LABEL, "httpx": "plain httpx: one Client, a thread pool"}
    if aio:
        labels["aiohttp"] = "plain aiohttp: one ClientSession"
    with SandboxProcess(groups=1, jobs_per_group=n, trajectory_steps=steps, latency_ms=LATENCY_MS,
                        connect_latency_ms=LATENCY_MS) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        for level in LEVELS:
            argvs = {
                "bl": b.client_argv(b.clients[0], sb, "--concurrency", str(level), "-q", "trajectory", "get", "-j", "-"),
                "floor": [sys.executable, FLOOR, "--host", sb.url, "--api-key", sb.api_key, "--concurrency",
                          str(level), "-j", "-"],
                "httpx": [sys.executable, BASELINE, "--shared-client", "--host", sb.url, "--api-key", sb.api_key,
                          "--concurrency", str(level), "-j", "-"],
            }
            if aio:
                argvs["aiohttp"] = [aio, AIOHTTP, "--host", sb.url, "--api-key", sb.api_key, "--concurrency",
                                    str(level), "-j", "-"]
            for argv in argvs.values():
                b.show(argv, stdin=many, url=sb.url)
            b.log(f"per-request: {n} requests of {size}, concurrency {level}, {b.sizes.cpu_runs} run(s)")
            for _ in range(b.sizes.cpu_runs):
                for label, argv in argvs.items():
                    for count, ids in ((n, many), (1, one)):
                        out = str(b.work / f"per-request-{label}.json")
                        runs.setdefault((label, level, count), []).append(
                            b.run(argv, stdin=ids, stdout=out, timeout=900))
                        os.unlink(out)
    table = Table(f"CPU per request, `trajectory get -j -` over {n:,} ids of {size} ({steps} steps), "
                  f"{LATENCY_MS} ms away", ["client", "concurrency", "marginal CPU µs per request", "x floor",
                                            "x plain httpx", "wall s", "wall x floor", "target", "met"])
    for level in LEVELS:
        marginal: dict[str, float] = {}
        wall: dict[str, float] = {}
        for label in labels:
            m, m1 = median_run(runs[(label, level, n)]), median_run(runs[(label, level, 1)])
            marginal[label] = (m["cpu"] - m1["cpu"]) * 1e6 / max(1, n - 1)
            wall[label] = m["wall"]
        for label, shown in labels.items():
            xf = marginal[label] / marginal["floor"] if marginal["floor"] else float("nan")
            xh = marginal[label] / marginal["httpx"] if marginal["httpx"] else float("nan")
            wf = wall[label] / wall["floor"] if wall["floor"] else float("nan")
            row = [shown, str(level), f"{marginal[label]:.0f}", ratio(xf), ratio(xh), secs(wall[label]), ratio(wf),
                   "", ""]
            if label == "bl" and level == 16:
                if steps == SIZES[0][0]:
                    ok = ok_if(xf, lambda v: v <= 1.5) and ok_if(xh, lambda v: v <= 1.0) and ok_if(wf, lambda v: v <= 1.08)
                    row[7:9] = ["CPU <= 1.0x httpx, <= 1.5x floor; wall <= 1.08x floor", mark(ok)]
                    b.verdict(f"CPU per request at c16, {LATENCY_MS} ms away, {size} (issue 45): <= 1.0x plain httpx, "
                              "<= 1.5x the floor; wall <= 1.08x the floor",
                              f"{marginal['bl']:.0f} µs vs httpx {marginal['httpx']:.0f} µs ({ratio(xh)}), floor "
                              f"{marginal['floor']:.0f} µs ({ratio(xf)}); wall {ratio(wf)} the floor's", ok)
                else:
                    ok = ok_if(xf, lambda v: v <= 1.5)
                    row[7:9] = ["CPU <= 1.5x floor", mark(ok)]
                    b.verdict(f"CPU per request at c16, {LATENCY_MS} ms away, {size} (issue 45): <= 1.5x the floor",
                              f"{marginal['bl']:.0f} µs vs {marginal['floor']:.0f} µs ({ratio(xf)})", ok)
            table.rows.append(row)
    table.notes.append(f"Median of {b.sizes.cpu_runs} run(s), the clients interleaved; the sandbox answers after "
                       f"{LATENCY_MS} ms and makes each new connection wait {LATENCY_MS} ms once. marginal: (CPU of the "
                       f"{n:,}-id run - CPU of a 1-id run) / {n - 1:,}; wall: the whole {n:,}-id process.")
    if not aio:
        table.notes.append("plain aiohttp: skipped, aiohttp is not importable here (it is no dependency of bl; "
                           "BENCH_AIOHTTP_PYTHON=/path/to/python with aiohttp installed adds the row).")
    return table


PULL_SMALL = 10


def pull_cpu(b: Bench) -> list[Table]:
    """``bl pull -g G`` (its default sections: metrics and trajectory) CPU per job: (CPU on a
    group of N jobs - CPU on one of ``PULL_SMALL``) / (N - ``PULL_SMALL``), no injected latency."""
    n = max(b.sizes.cpu_ids * 2, 100)
    runs: dict[str, list[Run]] = {"G1": [], "G2": []}
    with SandboxProcess(groups=2, jobs_per_group=f"{n},{PULL_SMALL}", trajectory_steps=40) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        for _ in range(b.sizes.cpu_runs):
            for group in runs:
                root = b.fresh_dir(f"pull-{group}")
                argv = b.client_argv(b.clients[0], sb, "-q", "-o", str(root), "pull", "-g", group)
                if _ == 0:
                    b.show(argv, url=sb.url)
                runs[group].append(b.run(argv, timeout=900))
    big, small = median_run(runs["G1"]), median_run(runs["G2"])
    per_job = (big["cpu"] - small["cpu"]) * 1e6 / (n - PULL_SMALL)
    table = Table(f"`pull -g` CPU per job (metrics and trajectory sections), {n:,} jobs, no injected latency",
                  ["jobs", "CPU s", "wall s", "CPU µs per job"])
    table.rows.append([f"{n:,}", secs(big["cpu"]), secs(big["wall"]), f"{per_job:.0f}"])
    table.rows.append([f"{PULL_SMALL}", secs(small["cpu"]), secs(small["wall"]), ""])
    table.notes.append(f"Median of {b.sizes.cpu_runs} run(s); CPU per job: (CPU of the {n:,}-job group - CPU of the "
                       f"{PULL_SMALL}-job group) / {n - PULL_SMALL:,}, i.e. without start-up.")
    return [table]
