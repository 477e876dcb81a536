"""Fan-out against a remote-like backend (issue 32): ``trajectory download -j -``.

The latency model: the sandbox answers each request after ``RTT_MS`` (one
round trip) and makes a new connection wait ``RTT_MS`` once before its first
request is read (the TCP handshake's round trip); there is no TLS.  A client
that keeps its connections alive pays the handshake once per connection; one
that opens a connection per request (the official client 0.2.x builds a new
HTTP client for every request) pays it every time.

``bl``, the official client 0.2.25 (and ``$BENCH_PEER`` when given) download
the trajectories of ``fanout_ids`` jobs at ``--concurrency`` 16 and at bl's
default, in the same run, interleaved, median of ``fanout_runs``.  Reported
per client and concurrency:

- wall: the whole process, interpreter start to exit;
- span: the sandbox's first request read to its last answer sent (its stats,
  on its own monotonic clock): the fan-out itself, without start-up and exit;
- the latency bound ``n x RTT / concurrency`` and span / bound, wall / bound;
- client CPU (user+sys of the whole process), requests and connections the
  sandbox counted, files written.

Target (bl): span within ``SPAN_TARGET_X`` of the bound at 16 and at the
default.  The http.client floor (:mod:`benchmarks.floor_client`) runs beside
them as a reference, without targets: what the leanest keep-alive client
gets from the same sandbox.
"""

from __future__ import annotations

import math
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from .bench import FLOOR, FLOOR_LABEL, Bench, count_files, mark, ok_if
from .measure import Run, median, median_run
from .report import Table, ratio, secs
from .sandbox_proc import SandboxProcess

RTT_MS = 50  # one round trip: every answer waits this long, and every new connection once
HIGH_CONCURRENCY = 16
SPAN_TARGET_X = 1.05  # issue 32: the fan-out within 1.05x of n x RTT / concurrency
SUFFIX = "_trajectory.json"
FLOOR_PATH = "/openapi/jobs/{job}/trajectory?source=trace"

Runner = Callable[[int, Path], list[str]]


def latency_model() -> str:
    return (f"Latency model (fan-out): the sandbox answers each request after {RTT_MS} ms (one round trip, "
            f"`--latency-ms {RTT_MS}`) and makes each new connection wait {RTT_MS} ms once before its first "
            f"request is read (the TCP handshake's round trip, `--connect-latency-ms {RTT_MS}`); plain HTTP, no "
            "TLS. The other scenarios run without injected latency.")


def fanout_trajectory(b: Bench) -> list[Table]:
    s = b.sizes
    n = s.fanout_ids
    levels = sorted({HIGH_CONCURRENCY, b.default_concurrency})
    ids = b.ids_file(n)
    b.describe(latency_model())
    with SandboxProcess(groups=1, jobs_per_group=n, latency_ms=RTT_MS, connect_latency_ms=RTT_MS) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])

        def client(path: str) -> Runner:
            return lambda level, out: [path, "--host", sb.url, "--api-key", sb.api_key, "--concurrency", str(level),
                                       "-q", "-o", str(out), "trajectory", "download", "-j", "-"]

        def floor(level: int, out: Path) -> list[str]:
            return [sys.executable, FLOOR, "--host", sb.url, "--api-key", sb.api_key, "--concurrency", str(level),
                    "--path", FLOOR_PATH, "-o", str(out), "--suffix", SUFFIX, "-j", "-"]

        runners: list[tuple[str, Runner]] = [(c.label, client(c.path)) for c in b.with_official]
        runners.append(("floor", floor))
        b.log(f"fanout-trajectory: {n} ids, concurrency {levels}, {s.fanout_runs} run(s) each, "
              f"{RTT_MS} ms per answer and per new connection")
        results: dict[tuple[str, int], list[Run]] = {}
        stats: dict[tuple[str, int], list[dict]] = {}
        files: dict[tuple[str, int], list[int]] = {}
        for _ in range(s.fanout_runs):
            for level in levels:
                for label, make in runners:
                    out = b.fresh_dir("fanout")
                    argv = make(level, out)
                    b.show(argv, stdin=ids, url=sb.url)
                    sb.reset()
                    key = (label, level)
                    results.setdefault(key, []).append(b.run(argv, stdin=ids, timeout=1800))
                    stats.setdefault(key, []).append(sb.stats())
                    files.setdefault(key, []).append(count_files(out, SUFFIX))
                    shutil.rmtree(out, ignore_errors=True)
    return [_table(b, n, levels, [label for label, _ in runners], results, stats, files)]


def _span(stat: dict) -> float:
    first, last = stat.get("first_request_monotonic"), stat.get("last_answer_monotonic")
    return float("nan") if first is None or last is None else last - first


def _table(b: Bench, n: int, levels: list[int], labels: list[str], results: dict[tuple[str, int], list[Run]],
           stats: dict[tuple[str, int], list[dict]], files: dict[tuple[str, int], list[int]]) -> Table:
    s = b.sizes
    title = (f"Fan-out: `trajectory download -j -` over {n:,} job ids, {RTT_MS} ms a round trip "
             f"(each answer, each new connection)")
    table = Table(title, ["client", "concurrency", "wall s", "span s", "bound s", "span / bound", "wall / bound",
                          "client CPU s", "requests", "connections", "files", "span x bl", "wall x bl", "target",
                          "met"])
    names = {c.label: c.shown for c in b.with_official} | {"floor": FLOOR_LABEL}
    for level in levels:
        bound = n * RTT_MS / 1000 / level
        figures: dict[str, tuple[float, float]] = {}
        for label in labels:
            key = (label, level)
            m = median_run(results[key])
            good = [st for st, r in zip(stats[key], results[key], strict=True) if r.ok]
            span = median([_span(st) for st in good])
            figures[label] = (span, m["wall"])
        for label in labels:
            key = (label, level)
            m = median_run(results[key])
            span, wall = figures[label]
            requests = sorted({st.get("requests", 0) for st in stats[key]})
            conns = sorted({st.get("connections", 0) for st in stats[key]})
            target, ok = "", None
            if label == "bl":
                target = f"span <= {SPAN_TARGET_X:g}x bound"
                ok = ok_if(span / bound, lambda x: x <= SPAN_TARGET_X)
                _verdict(b, level, n, span, wall, bound, figures.get("official"), ok)
            shown = names[label] + (f" ({m['failed']} failed)" if m["failed"] else "")
            if min(files[key]) < n:
                shown += " (files missing)"
            bl_span, bl_wall = figures["bl"]
            versus = label not in ("bl", "floor")
            table.rows.append([
                shown, f"{level}{' (default)' if level == b.default_concurrency else ''}", secs(wall), secs(span),
                secs(bound), ratio(span / bound), ratio(wall / bound), secs(m["cpu"]),
                "/".join(map(str, requests)), "/".join(map(str, conns)), "/".join(map(str, sorted(set(files[key])))),
                ratio(span / bl_span) if versus else "", ratio(wall / bl_wall) if versus else "",
                target, mark(ok) if target else ""])
    table.notes.append(f"bound = {n:,} requests x {RTT_MS} ms / concurrency. span: from the sandbox's first "
                       "request read to its last answer sent (the fan-out without process start-up and exit); "
                       "wall: the whole process. Median of "
                       f"{s.fanout_runs} run(s), the clients interleaved.")
    partial = [f"{ratio(math.ceil(n / level) * level / n)} the bound at {level}" for level in levels if n % level]
    if partial:
        table.notes.append("Requests go in rounds of `concurrency` and the last round is partial, so the least span "
                           f"possible is ceil(n / concurrency) x {RTT_MS} ms: {', '.join(partial)}.")
    table.notes.append("client CPU: user+sys of the whole process (start, imports, requests, files). requests and "
                       "connections: what the sandbox counted per run (each distinct count seen); files: files "
                       "written per run. span x bl, wall x bl: the row's figure over bl's at the same concurrency.")
    table.notes.append(f"{FLOOR_LABEL} (reference, no target): `benchmarks/floor_client.py`, one keep-alive "
                       "`http.client` connection per worker thread doing the same GETs, parsing each answer and "
                       "writing it as 2-space JSON through a temp file and a rename.")
    if b.official is None:
        table.notes.append(f"No official client in this run ({b.official_note}).")
    return table


def _verdict(b: Bench, level: int, n: int, span: float, wall: float, bound: float,
             official: tuple[float, float] | None, ok: bool | None) -> None:
    which = f"--concurrency {level}" + (" (the default)" if level == b.default_concurrency else "")
    measured = (f"span {secs(span)} s vs {secs(bound)} s ({ratio(span / bound)}); wall {secs(wall)} s "
                f"({ratio(wall / bound)})")
    if official is not None:
        measured += (f"; official client: span {secs(official[0])} s ({ratio(official[0] / span)} bl's), "
                     f"wall {secs(official[1])} s ({ratio(official[1] / wall)} bl's)")
    b.verdict(f"Fan-out (issue 32): `trajectory download -j -` of {n:,} trajectories at {RTT_MS} ms, {which}: "
              f"span <= {SPAN_TARGET_X:g}x the latency bound", measured, ok)
