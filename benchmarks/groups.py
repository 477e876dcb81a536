"""Big groups, and ``bl compare`` on big groups.

``scale``: ``jobs get --all`` and ``trajectory download -g`` on a group of
``scale_jobs`` jobs: seconds and peak RSS, each under an absolute ceiling.
``compare``: ``bl compare`` and ``bl jobs table`` on two groups of
``compare_jobs`` jobs each: seconds, and far below one request per job.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from .bench import Bench, Client, mark
from .measure import Run, median_run
from .report import Table, mb, secs
from .sandbox_proc import SandboxProcess

SCALE_WALL_S = 10.0  # a big group's listing or export finishes in seconds
SCALE_RSS_MB = 100  # peak RSS: the ceiling of a listing printed as it is read (rows as they arrive)


def _scale_commands(b: Bench, c: Client, sb: SandboxProcess, out: Path) -> list[tuple[str, list[str]]]:
    return [("jobs get -g G1 --all", b.client_argv(c, sb, "-q", "jobs", "get", "-g", "G1", "--all")),
            ("trajectory download -g G1", b.client_argv(c, sb, "-q", "-o", str(out), "trajectory", "download",
                                                        "-g", "G1"))]


def scale(b: Bench) -> list[Table]:
    """``jobs get --all`` and ``trajectory download -g`` on a big group."""
    s = b.sizes
    jobs = s.scale_jobs
    measured: dict[tuple[str, str], dict[str, float]] = {}
    requests: dict[tuple[str, str], int] = {}
    with SandboxProcess(groups=1, jobs_per_group=jobs) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        b.log(f"scale: a group of {jobs:,} jobs, {s.scale_runs} run(s) per command")
        runs: dict[tuple[str, str], list[Run]] = {}
        for _ in range(s.scale_runs):
            for c in b.clients:
                out = b.fresh_dir("scale")
                for name, argv in _scale_commands(b, c, sb, out):
                    b.show(argv, url=sb.url)
                    sb.reset()
                    runs.setdefault((c.label, name), []).append(b.run(argv, timeout=3600))
                    requests[(c.label, name)] = sb.stats().get("requests", 0)
                shutil.rmtree(out, ignore_errors=True)
        for key, rs in runs.items():
            measured[key] = median_run(rs)
    return [_scale_table(b, measured, requests)]


def _scale_table(b: Bench, measured: dict[tuple[str, str], dict[str, float]],
                 requests: dict[tuple[str, str], int]) -> Table:
    jobs = b.sizes.scale_jobs
    table = Table(f"Big groups: {jobs:,} jobs, no injected latency",
                  ["command", "client", "jobs", "requests", "wall s", "CPU s", "peak RSS MB", "target", "met"])
    target = f"< {SCALE_WALL_S:g} s, < {SCALE_RSS_MB} MB"
    for (label, name), m in sorted(measured.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        ok = None if m["wall"] != m["wall"] else (m["wall"] < SCALE_WALL_S and m["maxrss_mb"] < SCALE_RSS_MB)
        if label == "bl":
            b.verdict(f"`{name}` on {jobs:,} jobs: < {SCALE_WALL_S:g} s, peak RSS < {SCALE_RSS_MB} MB",
                      f"{secs(m['wall'])} s, {mb(m['maxrss_mb'])} MB", ok)
        table.rows.append([f"`{name}`", "bl" if label == "bl" else "$BENCH_PEER", f"{jobs:,}",
                           str(requests.get((label, name), "?")), secs(m["wall"]), secs(m["cpu"]),
                           mb(m["maxrss_mb"]), target, mark(ok)])
    table.notes.append(f"Median of {b.sizes.scale_runs} run(s). `jobs get --all` pages through the group "
                       "and prints one JSON array as its pages arrive; `trajectory download "
                       "-g` fetches the group's trace export and writes trajectory.json.")
    table.notes.append("Memory: the ids a walk has seen past 2,000 go to a temporary SQLite table; the trace "
                       "export keeps the group's job order in its SQLite index.")
    return table


COMPARE_TARGET_S = 10.0  # "finishes in seconds"
COMPARE_REQUESTS_PER_JOB = 0.01  # "far below one request per job"


def compare(b: Bench) -> list[Table]:
    """``bl compare`` and ``bl jobs table`` on two groups of ``compare_jobs`` jobs each."""
    s = b.sizes
    n = s.compare_jobs
    bl = b.clients[0]  # another build may have no compare
    runs = max(1, s.cpu_runs)
    with SandboxProcess(groups=0, compare_jobs=n) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        commands = {
            "compare": ["-q", "compare", "-g", "BASE", "-g", "CAND"],
            "compare --output table": ["-q", "compare", "-g", "BASE", "-g", "CAND", "--output", "table"],
            "jobs table --output csv": ["-q", "jobs", "table", "-g", "BASE,CAND", "--output", "csv"],
        }
        results: dict[str, list[tuple[Run, int]]] = {name: [] for name in commands}
        b.log(f"compare: 2 groups x {n:,} jobs, {runs} runs of {len(commands)} commands")
        for _ in range(runs):
            for name, tail in commands.items():
                argv = b.client_argv(bl, sb, *tail)
                b.show(argv, url=sb.url)
                sb.reset()
                result = b.run(argv, stdout=str(b.work / "compare-out.txt"), timeout=900)
                results[name].append((result, sb.stats().get("requests", 0)))
    jobs = 2 * n
    table = Table(f"`bl compare` and `bl jobs table` on two groups of {n:,} jobs ({jobs:,} jobs)",
                  ["command", "requests", "requests per job", "wall s", "CPU s", "max RSS MB", "target", "met"])
    for name, rs in results.items():
        med = median_run([r for r, _ in rs])
        requests = max(req for _, req in rs)
        per_job = requests / jobs
        ok = None if not all(r.ok for r, _ in rs) else (
            med["wall"] < COMPARE_TARGET_S and per_job < COMPARE_REQUESTS_PER_JOB)
        table.rows.append([f"`{name}`", str(requests), f"{per_job:.4f}", secs(med["wall"]), secs(med["cpu"]),
                           mb(med["maxrss_mb"]), f"< {COMPARE_TARGET_S:g} s, < {COMPARE_REQUESTS_PER_JOB:g}/job",
                           {True: "yes", False: "**NO**", None: "failed"}[ok]])
        if name == "compare":
            b.verdict(f"`bl compare` of two {n:,}-job groups < {COMPARE_TARGET_S:g} s with < "
                      f"{COMPARE_REQUESTS_PER_JOB:g} requests per job",
                      f"{secs(med['wall'])} s, {requests} requests for {jobs:,} jobs", ok)
    table.notes.append(f"Median of {runs} runs, no injected latency. Each group's job list and detail metrics "
                       "are scanned concurrently, 1,000 items per request; requests = what the sandbox counted.")
    return [table]
