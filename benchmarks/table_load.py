"""Start-up cost of two trees of the package, compared: CPU time (user+sys, steadier than wall
time on a busy machine) of loading the table cold (no compile cache) and warm (compiled table
cached), and of `bl --version` and `bl --help` processes; the two trees alternate run by run.

Usage (each tree an export, e.g. `git archive REV | tar -x -C DIR`):
    N=11 .venv/bin/python benchmarks/table_load.py BEFORE_DIR AFTER_DIR
POSIX only (resource.getrusage).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

LOAD = ("import time; t=time.process_time(); from benchloop.table.load import load_model; m=load_model(); "
        "t1=time.process_time(); n=sum(len(d.parts) for a in m.actions for d in a.dimensions.values()); "
        "print((t1-t)*1000, (time.process_time()-t)*1000)")
ROWS = (("cold", "load_model, no compile cache"), ("cold_all", "  + every action's parts"),
        ("warm", "load_model, compile cached"), ("warm_all", "  + every action's parts"),
        ("version", "bl --version (process)"), ("help", "bl --help (process)"))


def cpu(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    """CPU milliseconds of one child process, and what it printed."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000, done.stdout


def main(before: str, after: str, runs: int) -> None:
    py = sys.executable
    res: dict[str, dict[str, list[float]]] = {k: {m: [] for m, _ in ROWS} for k in ("before", "after")}
    for _ in range(runs):
        for label, tree in (("before", before), ("after", after)):
            env = {**os.environ, "PYTHONPATH": tree}
            with tempfile.TemporaryDirectory() as cache:
                env["BENCHLOOP_CACHE_DIR"] = cache
                for kind in ("cold", "warm"):
                    load, whole = map(float, cpu([py, "-c", LOAD], env)[1].split())
                    res[label][kind].append(load)
                    res[label][kind + "_all"].append(whole)
                res[label]["version"].append(cpu([py, "-m", "benchloop", "--version"], env)[0])
                res[label]["help"].append(cpu([py, "-m", "benchloop", "--help"], env)[0])
    print(f"median CPU ms over {runs} runs      before    after")
    for key, text in ROWS:
        print(f"{text:32s} {statistics.median(res['before'][key]):8.1f} {statistics.median(res['after'][key]):8.1f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(os.environ.get("N", "11")))
