"""The small process that starts every measured command (:func:`benchmarks.measure.run`).

Why a process of its own: Linux keeps a process's peak RSS (``ru_maxrss``) across
``execve``, and the memory image a child had before ``exec`` counts in it.  A command
started by the harness itself (``subprocess`` forks or vforks it) therefore reports at
least the harness's own peak, which grows as scenarios build their inputs: in one run a
``python -c pass`` read 26 MB and every command after the view-page scenario 201 MB.
This spawner runs with ``-S -I`` (no site, nothing of the harness imported), keeps
nothing, and starts each command with ``posix_spawn``, so a child's peak RSS is its own
(the spawner's few MB are below any Python program's).

Protocol: the harness writes one ``marshal``-ed dict per command on stdin (``argv``
with ``argv[0]`` a path, ``env``, ``cwd``, ``stdin``, ``stdout``, ``stderr`` paths,
``timeout`` seconds or None) and reads one ``marshal``-ed dict back: ``status`` (as
``os.wait4`` gives it), ``wall``, ``user``, ``sys``, ``maxrss_kb``, ``timed_out``.
Wall time spans the spawn to the reap.
"""

import marshal
import os
import signal
import sys
import time


def run(req: dict) -> dict:
    flags_out = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [(os.POSIX_SPAWN_OPEN, 0, req["stdin"], os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, req["stdout"], flags_out, 0o644),
               (os.POSIX_SPAWN_OPEN, 2, req["stderr"], flags_out, 0o600)]
    here = os.getcwd()
    os.chdir(req["cwd"] or here)  # posix_spawn has no chdir action before Python 3.13
    try:
        started = time.perf_counter()
        pid = os.posix_spawn(req["argv"][0], req["argv"], req["env"], file_actions=actions)
    finally:
        os.chdir(here)
    killed = []

    def kill(_signum, _frame):
        killed.append(True)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    if req["timeout"]:
        signal.signal(signal.SIGALRM, kill)
        signal.setitimer(signal.ITIMER_REAL, req["timeout"])
    try:
        _, status, usage = os.wait4(pid, 0)  # retried after the alarm's handler (PEP 475)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return {"status": status, "wall": time.perf_counter() - started, "user": usage.ru_utime,
            "sys": usage.ru_stime, "maxrss_kb": usage.ru_maxrss, "timed_out": bool(killed)}


def main() -> None:
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            req = marshal.load(source)
        except EOFError:
            return
        try:
            answer = run(req)
        except OSError as exc:  # no such program, a path that cannot be opened
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        marshal.dump(answer, sink)
        sink.flush()


if __name__ == "__main__":
    main()
