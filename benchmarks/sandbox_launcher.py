"""``python -m benchmarks.sandbox_launcher``: the sandbox in its own process.

Why a launcher instead of ``python -m benchloop.sandbox``: the benchmarks need
keyword arguments that the sandbox's command line does not expose
(``trajectory_steps``, ``export_waiting``/``export_running``), the sandbox's
request and connection counters (read over stdin/stdout, see below), and a
trace export of more than 1 GB that does not take the server process ~6 GB of
memory and a minute to build on every run.

The sandbox builds its export in memory (every row of every job as a dict,
then the whole text, then the gzip).  :func:`build_export` writes the same
bytes in constant memory instead: the rows come from the sandbox's own
``payloads.export_lines`` called one job at a time, spooled into one file per
step (the export is step-major), then concatenated into a gzip file that is
cached across runs (keyed by the sandbox's source and the dataset sizes).
Before serving, the builder is checked against the sandbox's own export of a
small group; if they ever differ, the launcher falls back to the sandbox's
builder and says so, so a benchmark never measures different data silently.

Protocol: one line ``sandbox serving URL (api key: KEY)`` on stdout when ready
(progress goes to stderr), then one JSON line per command read from stdin:
``stats`` -> ``{"stats": {...}, "exports": {...}}`` (the counters, and the
monotonic times of the first request read and the last answer sent since the
last reset), ``reset`` -> reset them; ``quit`` or end of input stops the server.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import platformdirs

from benchloop.sandbox import payloads, start_sandbox

_SANDBOX_DIR = Path(payloads.__file__).resolve().parent


def cache_dir() -> Path:
    override = os.environ.get("BENCH_CACHE_DIR")
    return Path(override) if override else Path(platformdirs.user_cache_dir("benchloop-bench", appauthor=False))


def _log(message: str) -> None:
    sys.stderr.write(f"[sandbox] {message}\n")
    sys.stderr.flush()


def build_export(app: Any, group_id: str, steps: int, dest: Path) -> dict[str, int]:
    """Write the group's trace export (gzip JSON lines) to ``dest`` in constant memory.

    Same rows, same order and same text per line as ``App.export_file``.
    Returns ``{"raw_bytes", "gzip_bytes", "rows", "jobs"}``.
    """
    jobs = list(app.dataset.iter_group_jobs(group_id))
    dest.parent.mkdir(parents=True, exist_ok=True)
    rows = raw = 0
    with tempfile.TemporaryDirectory(prefix=".export-spool-", dir=dest.parent) as spool:
        files = [open(os.path.join(spool, f"{i:06d}.jsonl"), "w", encoding="utf-8")
                 for i in range(steps)]
        try:
            # export_lines is step-major over the jobs it is given: with one job
            # its rows are that job's steps 0, 1, ... - row i belongs to step i.
            for job in reversed(jobs):
                for i, row in enumerate(payloads.export_lines(group_id, [job], steps)):
                    files[i].write(json.dumps(row, ensure_ascii=False) + "\n")
                    rows += 1
        finally:
            for handle in files:
                handle.close()
        tmp = dest.with_name(dest.name + ".part")
        with open(tmp, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", compresslevel=1, mtime=0) as gz:
            for i in range(steps):
                path = os.path.join(spool, f"{i:06d}.jsonl")
                raw += os.path.getsize(path)
                with open(path, "rb") as src:
                    shutil.copyfileobj(src, gz, 1 << 20)
                os.unlink(path)
        os.replace(tmp, dest)
    return {"raw_bytes": raw, "gzip_bytes": dest.stat().st_size, "rows": rows, "jobs": len(jobs)}


def builder_matches_sandbox() -> bool:
    """The streaming builder yields the sandbox's own export (checked on a small group)."""
    with start_sandbox(seed=11, groups=1, jobs_per_group=30, tasks_per_group=7,
                       trajectory_steps=7) as small, tempfile.TemporaryDirectory() as tmp:
        expected = gzip.decompress(small.app.export_file("G1"))
        dest = Path(tmp) / "G1.jsonl.gz"
        build_export(small.app, "G1", 7, dest)
        return gzip.decompress(dest.read_bytes()) == expected


KEEP_EXPORTS = 2  # ~85 MB each; the key changes whenever the sandbox's payload code does


def _prune_cache(keep: int) -> None:
    """Keep only the ``keep`` most recently used cached exports."""
    found = sorted(cache_dir().glob("export-*.jsonl.gz"), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in found[keep:]:
        for path in (stale, stale.with_suffix(".json")):
            try:
                path.unlink()
            except OSError:
                pass


def _cache_key(args: argparse.Namespace, group_id: str) -> str:
    digest = hashlib.sha256()
    for name in ("payloads.py", "facts.py", "trajectories.py", "dataset.py", "app.py"):
        digest.update((_SANDBOX_DIR / name).read_bytes())
    digest.update(Path(__file__).read_bytes())
    digest.update(json.dumps([args.seed, args.groups, args.jobs_per_group, args.tasks_per_group,
                              args.trajectory_steps, group_id]).encode())
    return digest.hexdigest()[:24]


def prebuild_exports(sandbox: Any, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Build (or reuse) the exports named by ``--prebuild-export`` and serve them."""
    info: dict[str, dict[str, Any]] = {}
    if not args.prebuild_export:
        return info
    app = sandbox.app
    streaming = builder_matches_sandbox()
    if not streaming:
        _log("WARNING: the streaming export builder no longer matches the sandbox's export; "
             "falling back to the sandbox's in-memory builder")
    built: dict[str, bytes] = {}
    for group_id in args.prebuild_export:
        started = time.monotonic()
        if streaming:
            key = _cache_key(args, group_id)
            path = cache_dir() / f"export-{key}.jsonl.gz"
            meta_path = path.with_suffix(".json")
            if path.is_file() and meta_path.is_file():
                meta = json.loads(meta_path.read_text())
                os.utime(path)
                _log(f"export {group_id}: reusing {path}")
            else:
                _log(f"export {group_id}: building {args.trajectory_steps} steps x "
                     f"{args.jobs_per_group} jobs into {path} (cached for later runs)")
                meta = build_export(app, group_id, args.trajectory_steps, path)
                meta_path.write_text(json.dumps(meta))
            built[group_id] = path.read_bytes()
            _prune_cache(keep=KEEP_EXPORTS)
        else:
            built[group_id] = app.export_file(group_id)
            meta = {"raw_bytes": len(gzip.decompress(built[group_id])),
                    "gzip_bytes": len(built[group_id])}
        info[group_id] = {**meta, "builder": "streaming" if streaming else "sandbox",
                          "seconds": round(time.monotonic() - started, 1)}
        _log(f"export {group_id}: {meta['raw_bytes']:,} bytes uncompressed, "
             f"{meta['gzip_bytes']:,} bytes gzip")
    if streaming:
        original = app.export_file
        app.export_file = lambda gid: built[gid] if gid in built else original(gid)
    return info


def _sizes(text: str) -> int | list[int]:
    parts = [int(p) for p in text.split(",") if p.strip()]
    return parts[0] if len(parts) == 1 else parts


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.sandbox_launcher",
                                description="Serve a benchmark sandbox; commands on stdin.")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--groups", type=int, default=1)
    p.add_argument("--jobs-per-group", type=_sizes, default=40, help="one size, or one per group (a,b,c)")
    p.add_argument("--tasks-per-group", type=_sizes, default=25)
    p.add_argument("--api-key", default="bench-key")
    p.add_argument("--latency-ms", type=float, default=0, help="delay of every answer (one round trip)")
    p.add_argument("--connect-latency-ms", type=float, default=0,
                   help="delay of a new connection before its first request is read (a TCP handshake)")
    p.add_argument("--trajectory-steps", type=int, default=3)
    p.add_argument("--artifact-bytes", type=int, default=4096)
    p.add_argument("--export-waiting", type=int, default=1)
    p.add_argument("--export-running", type=int, default=1)
    p.add_argument("--compare-jobs", type=int, default=0, help="jobs in each of the comparison runs (BASE, CAND, CAND2, REPO-BASE, REPO-CAND)")
    p.add_argument("--scale-jobs", type=int, default=0, help="jobs in each of the scale groups GSCALE, GSCALE2 (generated per page)")
    p.add_argument("--prebuild-export", action="append", default=[], metavar="GROUP",
                   help="build this group's trace export before serving (repeatable)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    sandbox = start_sandbox(
        seed=args.seed, groups=args.groups, jobs_per_group=args.jobs_per_group,
        tasks_per_group=args.tasks_per_group, api_key=args.api_key, latency_ms=args.latency_ms,
        connect_latency_ms=args.connect_latency_ms,
        host=args.host, port=args.port, trajectory_steps=args.trajectory_steps,
        artifact_bytes=args.artifact_bytes, export_waiting=args.export_waiting,
        export_running=args.export_running, compare_jobs=args.compare_jobs, scale_jobs=args.scale_jobs,
    )
    try:
        exports = prebuild_exports(sandbox, args)
        print(f"sandbox serving {sandbox.url} (api key: {sandbox.api_key})", flush=True)
        for line in sys.stdin:
            command = line.strip()
            if command == "stats":
                reply: dict[str, Any] = {"stats": sandbox.stats, "exports": exports}
            elif command == "reset":
                sandbox.reset_stats()
                reply = {"ok": True}
            elif command == "quit":
                break
            else:
                reply = {"error": f"unknown command {command!r}"}
            print(json.dumps(reply, default=str), flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        sandbox.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
