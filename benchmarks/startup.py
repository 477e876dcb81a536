"""Start-up, default install: ``bl`` beside the official client 0.2.25 and the bare interpreter.

Rows: ``python -c pass`` (the interpreter of bl's venv, which also runs the
official client's venv), ``python -c "import httpx"``, then ``--version``,
``--help``, ``metrics --help`` and ``metrics get -j G1-J0001`` (one request to
a sandbox without injected latency) of ``bl``, of the official client and of
``$BENCH_PEER`` when given.

Targets:

- issue 32: ``bl metrics get -j`` no slower than the official client's;
- issue 36: ``bl --help`` and ``bl metrics --help`` at least 2x faster than the
  official client's, and ``bl --version`` within 1.5x of ``python -c pass``.

``bl`` imports httpx only when it makes a request (``tests/contract/test_perf_facts.py``
checks that ``--help`` and ``--version`` never import it), so its cost shows in
``metrics get -j``, reported beside ``python -c "import httpx"``.
"""

from __future__ import annotations

import sys

from .bench import Bench, mark, ok_if, peer_ratio
from .measure import Run, median_run
from .report import Table, mb, ms, ratio
from .sandbox_proc import SandboxProcess

VERSION_TARGET_X = 1.5  # issue 36: `bl --version` within 1.5x of `python -c pass`
HELP_TARGET_X = 2.0  # issue 36: `bl --help`, `bl metrics --help` at least 2x faster than the official client
GET_TARGET_X = 1.0  # issue 32: `bl metrics get -j` no slower than the official client
PASS = "python -c pass"
IMPORT_HTTPX = "import httpx"
SUFFIXES = ("--version", "--help", "metrics --help", "metrics get -j G1-J0001")


def startup(b: Bench) -> list[Table]:
    s = b.sizes
    with SandboxProcess(groups=1, jobs_per_group=40) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options], note="started once")
        # (label, suffix, argv): the label says whose row it is, the suffix which command
        commands: list[tuple[str, str, list[str]]] = [
            ("python", PASS, [sys.executable, "-c", "pass"]),
            ("python", f"python -c '{IMPORT_HTTPX}'", [sys.executable, "-c", IMPORT_HTTPX])]
        for c in b.with_official:
            commands += [
                (c.label, "--version", [c.path, "--version"]),
                (c.label, "--help", [c.path, "--help"]),
                (c.label, "metrics --help", [c.path, "metrics", "--help"]),
                (c.label, "metrics get -j G1-J0001", b.client_argv(c, sb, "metrics", "get", "-j", "G1-J0001")),
            ]
        for _, _, argv in commands:
            b.show(argv, url=sb.url)
        runs: dict[tuple[str, str], list[Run]] = {(label, suffix): [] for label, suffix, _ in commands}
        total = s.startup_warmups + s.startup_runs
        b.log(f"startup: {len(commands)} commands x ({s.startup_warmups} warmups + {s.startup_runs} runs)")
        for index in range(total):
            for label, suffix, argv in commands:
                result = b.run(argv, timeout=60)
                if index >= s.startup_warmups:
                    runs[(label, suffix)].append(result)
    return [_table(b, runs)]


def _table(b: Bench, runs: dict[tuple[str, str], list[Run]]) -> Table:
    s = b.sizes
    med = {key: median_run(rs) for key, rs in runs.items()}
    floor = med[("python", PASS)]["wall"]
    httpx_row = med[("python", f"python -c '{IMPORT_HTTPX}'")]
    clients = {c.label: c for c in b.with_official}
    table = Table(f"Start-up: median of {s.startup_runs} runs after {s.startup_warmups} warmups",
                  ["command", "wall ms", "CPU ms", "max RSS MB", "x `python -c pass`", "x `import httpx`",
                   "x official", "x bl", "target", "met"])
    # The interpreter's rows, then each command: bl, $BENCH_PEER and the official client side by side.
    order = [key for key in med if key[0] == "python"]
    order += [(c.label, suffix) for suffix in SUFFIXES for c in b.with_official if (c.label, suffix) in med]
    for label, suffix in order:
        m = med[(label, suffix)]
        wall = m["wall"]
        official = med.get(("official", suffix), {}).get("wall", float("nan"))
        bl_wall = med.get(("bl", suffix), {}).get("wall", float("nan"))
        target, ok = "", None
        if label == "bl":
            target, ok = _target(b, suffix, m, floor, official, httpx_row)
        shown = f"`{suffix}`" if label == "python" else f"`{clients[label].placeholder} {suffix}`"
        if m["failed"]:
            shown += f" ({m['failed']} failed)"
        x_official = ratio(wall / official) if label in ("bl", "peer") and official == official else ""
        x_httpx = ratio(wall / httpx_row["wall"]) if suffix.startswith("metrics get") else ""
        x_bl = peer_ratio({"bl": bl_wall, label: wall}, label) if label == "peer" else ""
        table.rows.append([shown, ms(wall), ms(m["cpu"]), mb(m["maxrss_mb"]), ratio(wall / floor), x_httpx,
                           x_official, x_bl, target,
                           _met(ok, official if suffix != "--version" else 0.0) if target else ""])
    table.notes.append("`python`: the interpreter of bl's venv; the official client's venv (`$OFFICIAL`: its "
                       "`bmcli`) was made from the same interpreter, so both start the same Python. Default "
                       "installs: bl without extras, the official client as `pip install benchloop_client==0.2.25` "
                       "makes it.")
    table.notes.append("bl imports httpx only when it makes a request: `--help` and `--version` never pay for it "
                       "(tests/contract/test_perf_facts.py checks it). `metrics get -j` makes one request to a local sandbox "
                       "(no injected latency); x `import httpx`: its wall over `python -c 'import httpx'`'s.")
    table.notes.append("bl's compiled-spec cache is warm (the warmups fill it); bl runs with "
                       "BENCHLOOP_NO_UPDATE_CHECK=1 and the official client with a fresh version-check cache of its "
                       "own, so neither asks the package index. x official: the row's wall over the official "
                       "client's for the same command (below 1: faster)."
                       + (" x bl: `$BENCH_PEER`'s over bl's." if "peer" in clients else ""))
    if b.official is None:
        table.notes.append(f"No official client in this run ({b.official_note}): its rows are missing and the "
                           "targets against it are n/a.")
    return table


def _met(ok: bool | None, official: float) -> str:
    """yes / **NO**; n/a when the official client's figure is missing; failed when bl's is."""
    return "n/a" if ok is None and official != official else mark(ok)


def _target(b: Bench, suffix: str, m: dict[str, float], floor: float, official: float,
            httpx_row: dict[str, float]) -> tuple[str, bool | None]:
    """The target of bl's row ``suffix`` and whether it is met; records the verdict."""
    wall = m["wall"]
    vs_official = (f"{ms(wall)} ms vs {ms(official)} ms for the official client ({ratio(wall / official)})"
                   if official == official else f"{ms(wall)} ms; no official client in this run")
    if suffix == "--version":
        target = f"<= {VERSION_TARGET_X:g}x `python -c pass`"
        ok = ok_if(wall, lambda w: w <= VERSION_TARGET_X * floor)
        measured = f"{ms(wall)} ms vs {ms(floor)} ms ({ratio(wall / floor)})"
    elif suffix in ("--help", "metrics --help"):
        target = f">= {HELP_TARGET_X:g}x faster than official"
        ok = ok_if(wall / official, lambda x: x <= 1 / HELP_TARGET_X)
        measured = vs_official + (f"; {ratio(official / wall)} faster" if official == official else "")
    elif suffix.startswith("metrics get"):
        target = "<= official"
        ok = ok_if(wall / official, lambda x: x <= GET_TARGET_X)
        measured = (f"{vs_official}; `python -c 'import httpx'` {ms(httpx_row['wall'])} ms "
                    f"(bl {ratio(wall / httpx_row['wall'])} of it); CPU {ms(m['cpu'])} ms")
    else:
        return "", None
    issue = "issue 32" if suffix.startswith("metrics get") else "issue 36"
    b.verdict(f"Start-up ({issue}): `bl {suffix}` {target}", measured, ok)
    return target, ok


__all__ = ["startup"]
