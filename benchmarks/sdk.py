"""The Python client: its start-up, and many calls in one process against as many CLI runs."""

from __future__ import annotations

import sys
from pathlib import Path

from .bench import Bench, ok_if
from .measure import Run, median_run
from .report import Table, mb, ms, ratio, secs
from .sandbox_proc import SandboxProcess

SDK_TARGET_X = 10.0  # 1,000 calls in one process vs 1,000 CLI invocations
_SDK_CALLS = r"""
import sys, time
t0 = time.perf_counter()
import benchloop
t1 = time.perf_counter()
bl = benchloop.Client(host=sys.argv[1], api_key=sys.argv[2], retry=0)
t2 = time.perf_counter()
n = int(sys.argv[3])
for i in range(n):
    assert bl.metrics.get(job=f"G1-J{i % 1000 + 1:04d}")
t3 = time.perf_counter()
bl.close()
print(f"{t1 - t0:.6f} {t2 - t1:.6f} {t3 - t2:.6f}")
"""
_IMPORT = "import benchloop"
_CLIENT = "import sys, benchloop; benchloop.Client(host=sys.argv[1], api_key=sys.argv[2])"


def sdk(b: Bench) -> list[Table]:
    """The Python client: its import and construction, and many calls in one process vs the CLI."""
    s = b.sizes
    n, samples = s.sdk_calls, s.sdk_cli_samples
    bl = b.clients[0]
    with SandboxProcess(groups=1, jobs_per_group=min(n, 1000)) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        starts = {"python -c pass": [sys.executable, "-c", "pass"],
                  "python -c 'import benchloop'": [sys.executable, "-c", _IMPORT],
                  "python -c 'import benchloop; benchloop.Client(...)'": [sys.executable, "-c", _CLIENT, sb.url,
                                                                          sb.api_key]}
        for argv in starts.values():
            b.show(argv, url=sb.url)
        runs: dict[str, list[Run]] = {name: [] for name in starts}
        b.log(f"sdk: start-up x {s.startup_runs}, {n} calls in one process, {samples} CLI runs")
        for index in range(s.startup_warmups + s.startup_runs):
            for name, argv in starts.items():
                result = b.run(argv, timeout=60)
                if index >= s.startup_warmups:
                    runs[name].append(result)
        calls_argv = [sys.executable, "-c", _SDK_CALLS, sb.url, sb.api_key, str(n)]
        b.show(calls_argv, url=sb.url, note=f"{n} metrics.get calls in one process")
        out = str(b.work / "sdk-calls.txt")
        calls = [b.run(calls_argv, stdout=out, timeout=900) for _ in range(max(1, s.cpu_runs))]
        phases = [float(x) for x in Path(out).read_text().split()] if calls[-1].ok else [float("nan")] * 3
        cli_argv = b.client_argv(bl, sb, "--retry", "0", "-q", "metrics", "get", "-j", "G1-J0001")
        b.show(cli_argv, url=sb.url, note=f"run {samples} times, scaled to {n}")
        cli = [b.run(cli_argv, timeout=60) for _ in range(samples)]

    med = {name: median_run(rs) for name, rs in runs.items()}
    floor = med["python -c pass"]["wall"]
    start = Table(f"Python client start-up: median of {s.startup_runs} runs after {s.startup_warmups} warmups",
                  ["command", "wall ms", "CPU ms", "max RSS MB", "over `python -c pass` ms"])
    for name, m in med.items():
        start.rows.append([f"`{name}`", ms(m["wall"]), ms(m["cpu"]), mb(m["maxrss_mb"]),
                           "" if name == "python -c pass" else ms(m["wall"] - floor)])
    start.notes.append("Whole processes; the compiled-spec cache is warm. `Client(...)` resolves the "
                       "settings and loads the table; it makes no request (the HTTP client is built at the first "
                       "call). Neither imports Cyclopts (tests/unit/sdk/test_sdk.py checks it).")

    sdk_run = median_run(calls)
    cli_run = median_run(cli)
    cli_total = cli_run["wall"] * n  # a sample of `samples` invocations, scaled
    cli_cpu = cli_run["cpu"] * n
    x = cli_total / sdk_run["wall"] if sdk_run["wall"] else float("nan")
    ok = ok_if(x, lambda v: v >= SDK_TARGET_X)
    table = Table(f"{n:,} `metrics.get` calls in one process vs {n:,} `bl metrics get -j` invocations",
                  ["client", "wall s", "CPU s", "ms per call", "max RSS MB", "target", "met"])
    table.rows.append([f"Python client, one process ({n:,} sequential calls)", secs(sdk_run["wall"]),
                       secs(sdk_run["cpu"]), f"{phases[2] * 1000 / n:.2f}", mb(sdk_run["maxrss_mb"]),
                       f">= {SDK_TARGET_X:g}x faster than the CLI", {True: "yes", False: "**NO**", None: "failed"}[ok]])
    table.rows.append([f"CLI, {n:,} processes (median of {samples} runs x {n:,})", secs(cli_total), secs(cli_cpu),
                       f"{cli_run['wall'] * 1000:.2f}", mb(cli_run["maxrss_mb"]), "", ""])
    table.notes.append(f"Python client: median of {len(calls)} process(es); inside the last one, `import benchloop` "
                       f"took {ms(phases[0])} ms, `Client()` {ms(phases[1])} ms and the {n:,} calls "
                       f"{secs(phases[2])} s over one keep-alive connection. No injected latency.")
    table.notes.append(f"CLI: {samples} sequential `bl metrics get -j G1-J0001` processes, their median wall and CPU "
                       f"multiplied by {n:,} (running all {n:,} takes minutes and says nothing more).")
    b.verdict(f"{n:,} `metrics.get` calls in one process >= {SDK_TARGET_X:g}x faster than {n:,} CLI invocations",
              f"{secs(sdk_run['wall'])} s vs {secs(cli_total)} s ({ratio(x)})", ok)
    return [start, table]
