"""``python -m benchmarks [--quick] [--only NAME[,NAME]] [--out PATH]``.

Runs the scenarios of :mod:`benchmarks.scenarios`, prints one markdown
document (machine, targets met or not, one table per scenario, the exact
commands) and writes it to ``--out`` (default ``docs/benchmarks.md`` for a
full run; a ``--quick`` run writes only when ``--out`` is given, so a smoke
run never replaces the published figures).

Exit status: 0 when every scenario ran (targets missed are reported, not
failures - this is a measurement, not a test), 1 when a scenario crashed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import official
from .measure import start_spawner
from .report import Table, document, load, machine
from .sandbox_proc import REPO
from .scenarios import SCENARIOS, Bench, Client, Sizes, default_concurrency

_DROPPED_ENV = ("BENCHLOOP_API_KEY", "BENCHMARK_API_KEY", "BENCHLOOP_HOST", "BENCHLOOP_OUTPUT_DIR",
                "BENCHLOOP_CONFIG", "BENCHLOOP_PROFILE", "BENCHLOOP_CACHE_DIR", "BENCHLOOP_SPEC_DIR",
                "BENCHLOOP_TRUSTSTORE", "XDG_CACHE_HOME")


def _parser() -> argparse.ArgumentParser:
    names = ", ".join(s.name + (" (big)" if s.big else "") for s in SCENARIOS)
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=f"scenarios: {names}. The official client {official.PACKAGE} "
                                f"{official.VERSION} is installed into a cached venv (BENCH_OFFICIAL=/path/to/bmcli "
                                "uses another); BENCH_PEER=/path/to/bl adds another build of bl.")
    p.add_argument("--quick", action="store_true",
                   help="small sizes and few repetitions; skips the big scenarios unless named by --only")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run only these scenarios (repeatable or comma-separated)")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="markdown output file (default: docs/benchmarks.md, none with --quick); '-' for none")
    p.add_argument("--runs", type=int, default=None, help="startup repetitions (default 15, quick 5)")
    p.add_argument("--bl", default=None, help="the bl executable (default: the one beside this Python)")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    return p


def _version(path: str, env: dict[str, str]) -> str:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, env=env, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unavailable ({exc})"
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else "?"


def _compile_bytecode() -> str:
    """Compile ``benchloop/`` as ``pip install`` does for a wheel.

    An editable install has no bytecode until Python writes it at first import,
    and never when PYTHONDONTWRITEBYTECODE is set (as on the CI machines): each
    start would then compile every module again (~40 ms), which no user of a
    pip-installed ``bl`` pays.
    """
    import compileall

    ok = compileall.compile_dir(str(REPO / "benchloop"), quiet=1)
    flag = os.environ.get("PYTHONDONTWRITEBYTECODE") or "unset"
    return (f"- bytecode: `benchloop/` compiled before measuring, as a pip install does "
            f"({'ok' if ok else 'FAILED'}; PYTHONDONTWRITEBYTECODE={flag})")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    start_spawner()  # now, while this process is small (see benchmarks.spawner)
    if args.list:
        for s in SCENARIOS:
            print(f"{s.name:20} {s.section}{' (big: skipped by --quick)' if s.big else ''}")
        return 0
    wanted = {n.strip() for value in args.only for n in value.split(",") if n.strip()}
    unknown = wanted - {s.name for s in SCENARIOS}
    if unknown:
        print(f"unknown scenario(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if wanted:
        chosen = [s for s in SCENARIOS if s.name in wanted]
    else:
        chosen = [s for s in SCENARIOS if not (args.quick and s.big)]

    bl = args.bl or str(Path(sys.executable).parent / "bl")
    if not os.access(bl, os.X_OK):
        print(f"bl not found at {bl} (run `make install`, or pass --bl)", file=sys.stderr)
        return 2
    peer = os.environ.get("BENCH_PEER") or None
    if peer and not os.access(peer, os.X_OK):
        print(f"BENCH_PEER={peer} is not executable", file=sys.stderr)
        return 2

    sizes = Sizes.quick() if args.quick else Sizes.full()
    if args.runs:
        sizes.startup_runs = args.runs
    work = Path(tempfile.mkdtemp(prefix="benchloop-bench-"))
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(BENCHLOOP_CACHE_DIR=str(work / "spec-cache"), BENCHLOOP_CONFIG=str(work / "no-config.toml"),
               BENCHLOOP_NO_UPDATE_CHECK="1", XDG_CACHE_HOME=str(work / "xdg-cache"))
    official.quiet_update_check(work / "xdg-cache")
    clients = [Client("bl", bl)] + ([Client("peer", peer)] if peer else [])
    bench = Bench(sizes=sizes, clients=clients, work=work, env=env,
                  default_concurrency=default_concurrency(bl, env))
    machine_lines = machine(REPO, _version(bl, env), peer, _version(peer, env) if peer else None)
    machine_lines.append(_compile_bytecode())
    if any(s.official for s in chosen):
        found = official.locate(bench.log)
        bench.official_note = found.note
        if found.path:
            bench.official = Client("official", found.path)
            bench.describe(f"Peer: the official client, `{_version(found.path, env)}` (`$OFFICIAL` in the "
                           f"tables and commands), {found.note}. Both clients as their default install.")
        else:
            bench.log(f"official client not available: {found.note}; measuring bl alone")
            bench.describe(f"Peer: **the official client {official.PACKAGE} {official.VERSION} is not available "
                           f"in this run** ({found.note}): bl is measured alone and the targets against the "
                           "official client are n/a.")

    sections: dict[str, list[Table]] = {}
    crashed = []
    started = time.monotonic()
    try:
        for scenario in chosen:
            t0 = time.monotonic()
            bench.log(f"== {scenario.name}")
            try:
                tables = scenario.func(bench)
            except Exception:  # report it and go on with the other scenarios
                traceback.print_exc()
                crashed.append(scenario.name)
                tables = [Table(f"{scenario.name}: crashed", ["error"], [["see the run's stderr"]])]
            sections.setdefault(scenario.section, []).extend(tables)
            bench.log(f"   {scenario.name} took {time.monotonic() - t0:.0f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bench.log(f"== done in {time.monotonic() - started:.0f} s")
    machine_lines.append(f"- load average at the end: {load()}; the run took {time.monotonic() - started:.0f} s")

    text = document(quick=args.quick, machine_lines=machine_lines, model_lines=bench.model,
                    verdicts=bench.verdicts, sections=list(sections.items()), commands=bench.commands, argv=argv)
    print(text)
    out = args.out if args.out is not None else (None if args.quick else str(REPO / "docs" / "benchmarks.md"))
    if out and out != "-":
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text, encoding="utf-8")
        bench.log(f"wrote {out}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
