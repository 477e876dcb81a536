"""The scenarios: what is run, how often, against which sandbox, and the targets.

Every scenario is a function ``(Bench) -> list[Table]`` that starts its own
sandbox process, runs the clients as child processes (:func:`measure.run`)
and records the targets it checks as :class:`report.Verdict`.  Sizes come
from :class:`Sizes`: the full sizes of issues 3 and 6, or ``--quick`` ones
that exercise the same code paths in seconds.

Repetitions are interleaved (run 1 of every command, then run 2, ...) so a
slow drift of the machine (thermal, page cache, another process) spreads over
all commands instead of penalising whichever ran last.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .measure import Run, median_run, run
from .report import Table, Verdict, mb, ms, ratio, secs, size
from .sandbox_proc import REPO, SandboxProcess
from .view_page import view_page

LATENCY_MS = 20
HELP_TARGET_S = 0.120
VERSION_TARGET_X = 3.0
FANOUT_TARGET_X = 1.2  # at the default concurrency
FANOUT_TARGET_HIGH_X = 1.3  # at FANOUT_HIGH_CONCURRENCY
FANOUT_HIGH_CONCURRENCY = 16
FLOOR_WALL_TARGET_X = 1.1  # issue 25: fan-out wall within 1.1x of the http.client floor at 5 and 16
FLOOR_CPU_TARGET_X = 2.0  # issue 25: CPU per 1,000 requests within 2x of the floor's
CPU_TARGET_X = 20.0
RSS_TARGET_MB = 150  # issue 6 (issue 3 asks < 200 MB for the export)
RSS_TARGET_EXPORT_ISSUE3_MB = 200


@dataclass
class Sizes:
    startup_runs: int
    startup_warmups: int
    fanout_ids: int
    fanout_concurrency: list[int]
    fanout_runs: int
    cpu_ids: int
    cpu_runs: int
    sdk_calls: int = 1000  # Python client: metrics.get calls in one process
    sdk_cli_samples: int = 100  # CLI invocations actually run (scaled to sdk_calls)
    compare_jobs: int = 20_000  # bl compare: jobs in each group
    export_jobs: int = 16_000
    export_steps: int = 500  # 16,000 x 500 steps: ~7.4 M rows, ~1.07 GB uncompressed
    jobs_group: int = 100_000
    scale_jobs: tuple[int, int] = (2_000, 20_000)
    scale_runs: int = 3
    export_rounds: int = 2  # each client's export run, in turns (the first round fills the page cache)

    @classmethod
    def full(cls) -> Sizes:
        return cls(startup_runs=15, startup_warmups=2, fanout_ids=2000, fanout_concurrency=[5, 16],
                   fanout_runs=3, cpu_ids=1000, cpu_runs=5)

    @classmethod
    def quick(cls) -> Sizes:
        return cls(startup_runs=5, startup_warmups=1, fanout_ids=200, fanout_concurrency=[5, 16],
                   fanout_runs=1, cpu_ids=200, cpu_runs=2, sdk_calls=200, sdk_cli_samples=20,
                   scale_jobs=(200, 2_000), scale_runs=1, compare_jobs=2000, export_rounds=1)


@dataclass
class Client:
    label: str  # "bl" or "peer"
    path: str


@dataclass
class Bench:
    """Shared state of one benchmark run."""

    sizes: Sizes
    clients: list[Client]
    work: Path
    env: dict[str, str]
    default_concurrency: int = 5
    verdicts: list[Verdict] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr, flush=True)

    # -- helpers ------------------------------------------------------------
    def fresh_dir(self, name: str) -> Path:
        path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.work))
        return path

    def ids_file(self, n: int, group: str = "G1") -> str:
        path = self.work / f"ids-{group}-{n}.txt"
        if not path.exists():
            path.write_text("".join(f"{group}-J{i:04d}\n" for i in range(1, n + 1)))
        return str(path)

    def show(self, argv: list[str], *, stdin: str | None = None, url: str = "", note: str = "") -> None:
        """Record ``argv`` for the Commands section, with stable placeholders."""
        words = []
        for word in argv:
            if word == sys.executable:
                word = "python"
            elif word in (str(REPO / "benchmarks" / "baseline_client.py"), str(REPO / "benchmarks" / "floor_client.py")):
                word = "benchmarks/" + Path(word).name
            else:
                for client in self.clients:
                    if word == client.path:
                        word = client.label if client.label == "bl" else "$BENCH_PEER"
            if url and word == url:
                word = "$URL"
            elif str(self.work) in word:
                word = "$OUT"
            elif word not in ("bl", "python", "$BENCH_PEER", "$REF"):
                word = shlex.quote(word)
            words.append(word)
        line = " ".join(words)
        if stdin:
            match = re.search(r"ids-G1-(\d+)\.txt$", stdin)
            line += f" < $IDS_{match.group(1)}" if match else " < FILE"
        if note:
            line += f"  # {note}"
        if line not in self.commands:
            self.commands.append(line)

    def run(self, argv: list[str], *, stdin: str | None = None, cwd: Path | None = None,
            stdout: str | None = None, timeout: float = 900) -> Run:
        result = run(argv, stdin_path=stdin, env=self.env, cwd=str(cwd or self.work),
                     stdout_path=stdout, timeout=timeout)
        if not result.ok:
            self.log(f"  ! {' '.join(argv[:12])}{' ...' if len(argv) > 12 else ''}: {result.describe_failure()}")
        return result

    def client_argv(self, client: Client, sb: SandboxProcess, *args: str) -> list[str]:
        return [client.path, "--host", sb.url, "--api-key", sb.api_key, *args]

    def verdict(self, target: str, measured: str, ok: bool | None) -> None:
        self.verdicts.append(Verdict(target, measured, ok))


def _ok(value: float, good: Callable[[float], bool]) -> bool | None:
    return None if value != value else good(value)


def _peer_ratio(values: dict[str, float], label: str) -> str:
    if label == "bl" or "bl" not in values:
        return ""
    return ratio(values[label] / values["bl"]) if values["bl"] else "-"


# =========================================================================
# 1. startup
# =========================================================================
IMPORT_FLOOR = "import cyclopts, httpx"  # the libraries a command of bl needs, imported and nothing else
IMPORT_FLOOR_TARGET_X = 1.25  # issue 25: `metrics get -j` within 1.25x of the import floor
REFERENCE_COMMIT = "093c5df"  # issue 25: help pages at least as fast as before the regression
REFERENCE_LABEL = f"{REFERENCE_COMMIT} (before the start-up regression of issue 25)"


def reference_bl(b: Bench) -> str | None:
    """``bl`` as it was at ``REFERENCE_COMMIT``, run by this interpreter: the commit's tree from
    ``git archive`` in the work directory, compiled as a pip install would, and a launcher that
    puts it first on ``sys.path`` (the BENCH_PEER way of measuring another build side by side).
    None when the checkout has no git history (a source archive)."""
    import compileall
    import io
    import tarfile

    dest = b.work / f"ref-{REFERENCE_COMMIT}"
    try:
        tar = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", REFERENCE_COMMIT, "benchloop", "spec"],
                             capture_output=True, timeout=120, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 (and the 3.10/3.9 security releases)
                archive.extractall(dest, filter="data")
            else:  # our own repository's tree
                archive.extractall(dest)  # noqa: S202
    except (OSError, subprocess.SubprocessError, tarfile.TarError) as exc:
        b.log(f"startup: no {REFERENCE_COMMIT} reference ({exc})")
        return None
    compileall.compile_dir(str(dest / "benchloop"), quiet=1)
    launcher = dest / "bl"
    launcher.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(dest)!r})\n"
                        "from benchloop.entry import main\nsys.argv[0] = 'bl'\nsys.exit(main())\n")
    launcher.chmod(0o755)
    return str(launcher)


def _forget_root_page(b: Bench) -> None:
    """Forget the page of ``bl --help`` that bl keeps (``cli/helpcache``), and only that one: the
    next ``bl --help`` writes it afresh."""
    for path in (b.work / "spec-cache").glob("help-*.json"):
        try:
            pages = json.loads(path.read_text(encoding="utf-8"))
            kept = {entry: page for entry, page in pages.items() if json.loads(entry)[-1] != ["--help"]}
            path.write_text(json.dumps(kept), encoding="utf-8")
        except (OSError, ValueError, IndexError, AttributeError):
            path.unlink(missing_ok=True)


def startup(b: Bench) -> list[Table]:
    s = b.sizes
    reference = reference_bl(b)
    with SandboxProcess(groups=1, jobs_per_group=40) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options], note="started once")
        # (label, name, argv, before each run)
        commands: list[tuple[str, str, list[str], Callable[[], None] | None]] = [
            ("floor", "python -c pass", [sys.executable, "-c", "pass"], None),
            ("import", f"python -c '{IMPORT_FLOOR}'", [sys.executable, "-c", IMPORT_FLOOR], None)]
        for c in b.clients:
            commands += [
                (c.label, f"{c.label} --version", [c.path, "--version"], None),
                (c.label, f"{c.label} --help", [c.path, "--help"], None),
                (c.label, f"{c.label} metrics --help", [c.path, "metrics", "--help"], None),
                (c.label, f"{c.label} metrics get --help", [c.path, "metrics", "get", "--help"], None),
                (c.label, f"{c.label} metrics get -j G1-J0001",
                 b.client_argv(c, sb, "metrics", "get", "-j", "G1-J0001"), None),
            ]
            if c.label == "bl":
                commands.append((c.label, "bl --help (first time: the page is written, not read back)",
                                 [c.path, "--help"], lambda: _forget_root_page(b)))
        if reference:
            commands += [
                ("ref", f"{REFERENCE_COMMIT} --help", [reference, "--help"], None),
                ("ref", f"{REFERENCE_COMMIT} metrics --help", [reference, "metrics", "--help"], None),
                ("ref", f"{REFERENCE_COMMIT} metrics get -j G1-J0001",
                 [reference, "--host", sb.url, "--api-key", sb.api_key, "metrics", "get", "-j", "G1-J0001"], None),
            ]
        for _, _, argv, _ in commands:
            b.show([("$REF" if reference and word == reference else word) for word in argv], url=sb.url)
        runs: dict[str, list[Run]] = {name: [] for _, name, _, _ in commands}
        total = s.startup_warmups + s.startup_runs
        b.log(f"startup: {len(commands)} commands x ({s.startup_warmups} warmups + {s.startup_runs} runs)")
        for index in range(total):
            for _, name, argv, before in commands:
                if before is not None:
                    before()
                result = b.run(argv, timeout=60)
                if index >= s.startup_warmups:
                    runs[name].append(result)
    return [_startup_table(b, commands, runs, reference)]


def _startup_table(b: Bench, commands: list, runs: dict[str, list[Run]], reference: str | None) -> Table:
    s = b.sizes
    med = {name: median_run(rs) for name, rs in runs.items()}
    floor = med["python -c pass"]["wall"]
    imports = med[f"python -c '{IMPORT_FLOOR}'"]
    table = Table(
        f"Startup: median of {s.startup_runs} runs after {s.startup_warmups} warmups",
        ["command", "wall ms", "CPU ms", "max RSS MB", "x floor", "x import floor", "target", "met", "x bl"],
    )
    by_suffix: dict[str, dict[str, float]] = {}
    for label, name, _, _ in commands:
        m = med[name]
        suffix = name.split(" ", 1)[1] if label not in ("floor", "import") else name
        by_suffix.setdefault(suffix, {})[label] = m["wall"]
    for label, name, _, _ in commands:
        m = med[name]
        suffix = name.split(" ", 1)[1] if label not in ("floor", "import") else name
        ref = by_suffix.get(suffix, {}).get("ref")
        target, ok, against = "", None, ""
        if label == "bl":
            if suffix == "--version":
                target = f"<= {VERSION_TARGET_X:g}x floor"
                ok = _ok(m["wall"], lambda w: w <= VERSION_TARGET_X * floor)
                against = f" ({ratio(m['wall'] / floor)} `python -c pass`)"
            elif suffix in ("--help", "metrics --help"):
                if ref is not None:
                    target = f"<= {REFERENCE_COMMIT}, < {HELP_TARGET_S * 1000:.0f} ms"
                    ok = _ok(m["wall"], lambda w, ref=ref: w <= ref and w < HELP_TARGET_S)
                    against = f" vs {ms(ref)} ms at {REFERENCE_COMMIT} ({ratio(m['wall'] / ref)})"
                else:
                    target = f"< {HELP_TARGET_S * 1000:.0f} ms"
                    ok = _ok(m["wall"], lambda w: w < HELP_TARGET_S)
            elif suffix == "metrics get -j G1-J0001":
                target = f"<= {IMPORT_FLOOR_TARGET_X:g}x import floor"
                ok = _ok(m["wall"], lambda w: w <= IMPORT_FLOOR_TARGET_X * imports["wall"])
                against = (f" vs {ms(imports['wall'])} ms for `python -c '{IMPORT_FLOOR}'` "
                           f"({ratio(m['wall'] / imports['wall'])}; CPU {ratio(m['cpu'] / imports['cpu'])})")
        met = "" if not target else _verdict_mark(ok)
        shown = {"peer": name.replace("peer ", "$BENCH_PEER ", 1), "ref": name}.get(label, name)
        if m["failed"]:
            shown += f" ({m['failed']} failed)"
        x_bl = _peer_ratio(by_suffix[suffix], label) if label in ("peer", "ref") else ""
        table.rows.append([f"`{shown}`", ms(m["wall"]), ms(m["cpu"]), mb(m["maxrss_mb"]),
                           ratio(m["wall"] / floor), ratio(m["wall"] / imports["wall"]), target, met, x_bl])
        if target:
            b.verdict(f"`bl {suffix}` {target}", f"{ms(m['wall'])} ms{against}", ok)
    table.notes.append("floor: the venv's own interpreter (`python -c pass`), which also runs `bl`; import floor: "
                       f"the same interpreter importing the libraries a command needs (`{IMPORT_FLOOR}`; httpx "
                       "imports its command line, click and rich, when they are installed, as in this venv). "
                       "The compiled-spec cache is warm (the warmups fill it), and so are the help pages bl "
                       "keeps (`cli/helpcache`): the row marked 'first time' forgets the page of `bl --help` "
                       "before each run.")
    if reference:
        table.notes.append(f"`{REFERENCE_COMMIT}`: {REFERENCE_LABEL}, from `git archive {REFERENCE_COMMIT}` run by "
                           "the same interpreter ($REF in the commands), with its own compiled-spec cache; "
                           "x bl: its time over bl's.")
    else:
        table.notes.append(f"No {REFERENCE_COMMIT} reference (no git history here): the help targets are "
                           f"< {HELP_TARGET_S * 1000:.0f} ms only.")
    table.notes.append("`metrics get -j` makes one request to a local sandbox (no injected latency).")
    return table


# =========================================================================
# 2. fan-out
# =========================================================================
def default_concurrency(bl: str, env: dict[str, str]) -> int:
    """The CLI's default ``--concurrency``, read from its own help text."""
    try:
        text = subprocess.run([bl, "--help"], capture_output=True, text=True, env={**env, "COLUMNS": "200"},
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 5
    flat = re.sub(r"[\s│|]+", " ", text)
    match = re.search(r"--concurrency \S+ .{0,160}?\[default: (\d+)\]", flat)
    return int(match.group(1)) if match else 5


def _count_files(root: Path, suffix: str) -> int:
    return sum(1 for _, _, files in os.walk(root) for f in files if f.endswith(suffix))


BASELINE = str(REPO / "benchmarks" / "baseline_client.py")
FLOOR = str(REPO / "benchmarks" / "floor_client.py")
FLOOR_LABEL = "floor: keep-alive http.client thread pool"


def _verdict_mark(ok: bool | None) -> str:
    return {True: "yes", False: "**NO**", None: "failed"}[ok]


def _fanout_runs(b: Bench, sb: SandboxProcess, name: str, runners: list[tuple[str, Callable]], levels: list[int],
                 suffixes: dict[str, str]) -> tuple[dict, dict, dict]:
    """Every runner at every level, interleaved, ``fanout_runs`` times: runs, sandbox stats, files."""
    results: dict[tuple[str, int], list[Run]] = {}
    stats: dict[tuple[str, int], list[dict]] = {}
    files: dict[tuple[str, int], set[int]] = {}
    for _ in range(b.sizes.fanout_runs):
        for label, make in runners:
            for level in levels:
                out = b.fresh_dir(name)
                argv, feed = make(level, out)
                b.show(argv, stdin=feed, url=sb.url)
                sb.reset()
                key = (label, level)
                results.setdefault(key, []).append(b.run(argv, stdin=feed, timeout=900))
                stats.setdefault(key, []).append(sb.stats())
                files.setdefault(key, set()).add(_count_files(out, suffixes[label]))
                shutil.rmtree(out, ignore_errors=True)
    return results, stats, files


def _fanout(b: Bench, *, name: str, title: str, argv_tail: list[str], stdin: str | None,
            suffix: str, expected_files: int | None, floor_path: str, floor_suffix: str,
            targets: bool = True) -> list[Table]:
    s = b.sizes
    n = s.fanout_ids
    levels = sorted({*s.fanout_concurrency, b.default_concurrency})
    ids = b.ids_file(n)
    with SandboxProcess(groups=1, jobs_per_group=n, latency_ms=LATENCY_MS) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])

        def client(c: Client) -> Callable[[int, Path], tuple[list[str], str | None]]:
            return lambda level, out: (b.client_argv(c, sb, "--concurrency", str(level), "-q", "-o", str(out),
                                                     *argv_tail), stdin)

        def floor(level: int, out: Path) -> tuple[list[str], str | None]:
            return ([sys.executable, FLOOR, "--host", sb.url, "--api-key", sb.api_key, "--concurrency", str(level),
                     "--path", floor_path, "-o", str(out), "--suffix", floor_suffix, "-j", "-"], ids)

        runners = [(c.label, client(c)) for c in b.clients] + [("floor", floor)]
        suffixes = {label: (floor_suffix if label == "floor" else suffix) for label, _ in runners}
        b.log(f"{name}: {n} ids, concurrency {levels}, {s.fanout_runs} run(s) each, {LATENCY_MS} ms latency")
        results, stats, files = _fanout_runs(b, sb, name, runners, levels, suffixes)

    table = Table(title, ["client", "concurrency", "wall s", "bound s", "x bound", "wall x floor", "client CPU s",
                          "CPU ms per 1,000 req", "CPU x floor", "requests", "connections", "files", "target",
                          "met", "x bl"])
    medians = {key: median_run(runs) for key, runs in results.items()}
    for label, _ in runners:
        for level in levels:
            key = (label, level)
            m, fl = medians[key], medians[("floor", level)]
            requests = stats[key][-1].get("requests", 0) or n
            bound = n * LATENCY_MS / 1000 / level
            per1000 = m["cpu"] * 1000 / requests
            floor_per1000 = fl["cpu"] * 1000 / (stats[("floor", level)][-1].get("requests", 0) or n)
            target, ok = "", None
            if targets and label != "floor" and level in (b.default_concurrency, FANOUT_HIGH_CONCURRENCY):
                target = f"<= {FLOOR_WALL_TARGET_X:g}x floor" + (" (default)" if level == b.default_concurrency else "")
                ok = _ok(m["wall"] / fl["wall"], lambda x: x <= FLOOR_WALL_TARGET_X)
                if label == "bl":
                    goal = FANOUT_TARGET_X if level == b.default_concurrency else FANOUT_TARGET_HIGH_X
                    b.verdict(f"{title.split(' over ')[0]}: <= {goal:g}x the latency bound at --concurrency {level}",
                              f"{secs(m['wall'])} s vs {secs(bound)} s ({ratio(m['wall'] / bound)})",
                              _ok(m["wall"] / bound, lambda x, goal=goal: x <= goal))
                    b.verdict(f"{title.split(' over ')[0]}: wall <= {FLOOR_WALL_TARGET_X:g}x the floor at "
                              f"--concurrency {level}",
                              f"{secs(m['wall'])} s vs {secs(fl['wall'])} s ({ratio(m['wall'] / fl['wall'])}; "
                              f"{ratio(m['wall'] / bound)} the latency bound)", ok)
            conns = sorted({st.get("connections", 0) for st in stats[key]})
            shown = {"bl": "bl", "peer": "$BENCH_PEER", "floor": FLOOR_LABEL}[label]
            if m["failed"]:
                shown += f" ({m['failed']} failed)"
            if label != "floor" and expected_files is not None and min(files[key]) < expected_files:
                shown += " (files missing)"
            table.rows.append([
                shown, str(level), secs(m["wall"]), secs(bound), ratio(m["wall"] / bound),
                ratio(m["wall"] / fl["wall"]), secs(m["cpu"]), ms(per1000), ratio(per1000 / floor_per1000),
                str(requests), "/".join(str(x) for x in conns), "/".join(str(x) for x in sorted(files[key])),
                target, _verdict_mark(ok) if target else "",
                _peer_ratio({"bl": medians[("bl", level)]["wall"], label: m["wall"]}, label) if label == "peer" else "",
            ])
    table.notes.append(f"bound = {n:,} requests x {LATENCY_MS} ms / concurrency; wall includes the "
                       "process start and any requests made before the fan-out. "
                       f"Median of {s.fanout_runs} run(s), interleaved.")
    table.notes.append(f"{FLOOR_LABEL}: `benchmarks/floor_client.py`, one keep-alive `http.client` connection "
                       f"per worker thread doing the same per-job GETs ({floor_path}), parsing each answer and "
                       f"writing it as 2-space JSON through a temp file and a rename (`*{floor_suffix}`): the "
                       "leanest client doing the same work, against the same sandbox in the same run. "
                       "x floor: bl's figure over the floor's at the same concurrency.")
    table.notes.append("CPU: user+sys of the whole process (start, imports, requests, files); per 1,000 req = "
                       "CPU x 1,000 / requests. connections: TCP connections accepted by the sandbox per run "
                       "(each distinct count seen). files: files written per run.")
    return [table]


def fanout_trajectory(b: Bench) -> list[Table]:
    n = b.sizes.fanout_ids
    return _fanout(b, name="fanout-trajectory",
                   title=f"Fan-out: `trajectory download -j -` over {n:,} job ids, {LATENCY_MS} ms latency",
                   argv_tail=["trajectory", "download", "-j", "-"], stdin=b.ids_file(n),
                   suffix="_trajectory.json", expected_files=n,
                   floor_path="/openapi/jobs/{job}/trajectory?source=trace", floor_suffix="_trajectory.json")


def fanout_report(b: Bench) -> list[Table]:
    n = b.sizes.fanout_ids
    tables = _fanout(b, name="fanout-report",
                     title=f"Fan-out: `report download -g` over a {n:,}-job group, {LATENCY_MS} ms latency",
                     argv_tail=["report", "download", "-g", "G1"], stdin=None,
                     suffix="_report.md", expected_files=None, floor_path="/openapi/jobs/{job}/report",
                     floor_suffix="_report.json", targets=False)
    tables[0].notes.append("requests: bl asks for the group report, the job list pages and one report per job; "
                           "jobs whose report has no content write no file (contract 3.3). The floor asks for "
                           "the per-job reports only (it is given the ids) and writes every one as JSON (more bytes than bl's "
                           "markdown). bl lists the group's 2,000 jobs first, in 40 pages of 50 one after the other "
                           "(about 0.8 s at 20 ms a request): the targets are on the trajectory fan-out, where both "
                           "clients make the same requests.")
    return tables


# =========================================================================
# 3. client CPU per 1,000 requests
# =========================================================================
def _json_len(path: str) -> int:
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return -1
    return len(value) if isinstance(value, list) else -1


def cpu(b: Bench) -> list[Table]:
    s = b.sizes
    n = s.cpu_ids
    level = b.default_concurrency
    many, one = b.ids_file(n), b.ids_file(1)
    with SandboxProcess(groups=1, jobs_per_group=n) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        argvs: dict[str, list[str]] = {}
        for c in b.clients:
            argvs[c.label] = b.client_argv(c, sb, "--concurrency", str(level), "-q", "trajectory", "get", "-j", "-")
        argvs["floor"] = [sys.executable, FLOOR, "--host", sb.url, "--api-key", sb.api_key, "--concurrency",
                          str(level), "-j", "-"]
        argvs["baseline"] = [sys.executable, BASELINE, "--host", sb.url, "--api-key", sb.api_key, "--concurrency",
                             str(level), "-j", "-"]
        for argv in argvs.values():
            b.show(argv, stdin=many, url=sb.url)
        runs: dict[tuple[str, int], list[Run]] = {}
        counts: dict[str, int] = {}
        b.log(f"cpu: {n} requests, concurrency {level}, {s.cpu_runs} run(s) per client")
        for index in range(s.cpu_runs):
            for label, argv in argvs.items():
                for count, ids in ((n, many), (1, one)):
                    out = str(b.work / f"cpu-{label}.json")
                    runs.setdefault((label, count), []).append(b.run(argv, stdin=ids, stdout=out, timeout=900))
                    if index == 0 and count == n:
                        counts[label] = _json_len(out)
                    os.unlink(out)
    return [_cpu_table(b, n, level, argvs, runs, counts)]


def _cpu_table(b: Bench, n: int, level: int, argvs: dict[str, list[str]], runs: dict[tuple[str, int], list[Run]],
               counts: dict[str, int]) -> Table:
    table = Table(f"Client CPU (user+sys) for `trajectory get -j -` over {n:,} ids, concurrency {level}, "
                  "zero latency",
                  ["client", "CPU s", "CPU ms per 1,000 req", "1-request run CPU ms", "marginal ms per 1,000",
                   "marginal x floor", "whole x floor", "wall s", "max RSS MB", "baseline / client", "target", "met"])
    per1000: dict[str, float] = {}
    marginal: dict[str, float] = {}
    for label in argvs:
        m, m1 = median_run(runs[(label, n)]), median_run(runs[(label, 1)])
        per1000[label] = m["cpu"] * 1000 / n
        marginal[label] = (m["cpu"] - m1["cpu"]) * 1000 / max(1, n - 1)
    for label in argvs:
        m, m1 = median_run(runs[(label, n)]), median_run(runs[(label, 1)])
        name = {"bl": "bl", "peer": "$BENCH_PEER", "baseline": "baseline: fresh httpx.Client per request",
                "floor": FLOOR_LABEL}[label]
        if counts.get(label, n) != n:
            name += f" (printed {counts.get(label)} of {n})"
        if m["failed"]:
            name += f" ({m['failed']} failed)"
        table.rows.append([name, secs(m["cpu"]), ms(per1000[label]), ms(m1["cpu"]), ms(marginal[label]),
                           ratio(marginal[label] / marginal["floor"]), ratio(per1000[label] / per1000["floor"]),
                           secs(m["wall"]), mb(m["maxrss_mb"]), "", "", ""])
    for row, label in zip(table.rows, argvs, strict=True):
        if label in ("baseline", "floor"):
            continue
        x = per1000["baseline"] / per1000[label] if per1000[label] else float("nan")
        row[9] = ratio(x)
        xf = marginal[label] / marginal["floor"] if marginal["floor"] else float("nan")
        ok = _ok(xf, lambda v: v <= FLOOR_CPU_TARGET_X)
        row[10] = f"marginal <= {FLOOR_CPU_TARGET_X:g}x floor"
        row[11] = _verdict_mark(ok)
        if label == "bl":
            b.verdict(f"CPU per 1,000 requests (marginal) <= {FLOOR_CPU_TARGET_X:g}x the floor's",
                      f"{ms(marginal['bl'])} ms vs {ms(marginal['floor'])} ms ({ratio(xf)}; whole process "
                      f"{ratio(per1000['bl'] / per1000['floor'])})", ok)
            b.verdict(f"CPU per 1,000 requests >= {CPU_TARGET_X:g}x lower than a fresh client per request",
                      f"{ms(per1000['bl'])} ms vs {ms(per1000['baseline'])} ms ({ratio(x)})",
                      _ok(x, lambda v: v >= CPU_TARGET_X))
    table.notes.append(f"Median of {b.sizes.cpu_runs} run(s). CPU is the whole process (start, imports, "
                       f"requests, JSON output) from os.wait4; per 1,000 = CPU x 1000 / {n}.")
    table.notes.append("marginal: (CPU of the N-id run - CPU of a 1-id run) per 1,000 extra requests, "
                       "i.e. without the fixed start-up cost (bl's start-up is measured in section 1).")
    table.notes.append(f"{FLOOR_LABEL}: `benchmarks/floor_client.py` printing one JSON array, as `bl ... get` "
                       f"does. baseline: `benchmarks/baseline_client.py`, the official client's approach (a new "
                       f"httpx.Client per request, same headers, a pool of {level} threads, one JSON array printed).")
    return table


# =========================================================================
# 4. peak memory (big)
# =========================================================================
def mem_export(b: Bench) -> list[Table]:
    s = b.sizes
    with SandboxProcess(groups=1, jobs_per_group=s.export_jobs, trajectory_steps=s.export_steps,
                        prebuild_export=("G1",), ready_timeout=7200) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        info = sb.exports().get("G1", {})
        raw, gz, rows = info.get("raw_bytes", 0), info.get("gzip_bytes", 0), info.get("rows", 0)
        b.log(f"mem-export: export of {size(raw)} uncompressed ({size(gz)} gzip, {rows:,} rows)")
        results = []
        for round_ in range(1, s.export_rounds + 1):
            for c in b.clients:  # in turns: neither client always runs on a cold page cache
                out = b.fresh_dir("mem-export")
                argv = b.client_argv(c, sb, "-q", "-o", str(out), "trajectory", "download", "-g", "G1")
                if round_ == 1:
                    b.show(argv, url=sb.url)
                result = b.run(argv, timeout=7200)
                target = out / "G1" / "trajectory.json"
                written = target.stat().st_size if target.is_file() else 0
                results.append((c, round_, result, written))
                shutil.rmtree(out, ignore_errors=True)
    table = Table(f"Peak memory: `trajectory download -g` of a {size(raw)} export "
                  f"({s.export_jobs:,} jobs x {s.export_steps} steps)",
                  ["client", "round", "export uncompressed", "gzip", "rows", "trajectory.json", "wall s", "CPU s",
                   "peak RSS MB", "target", "met"])
    for c, round_, result, written in results:
        rss = result.maxrss_kb / 1024 if result.ok else float("nan")
        ok = _ok(rss, lambda v: v < RSS_TARGET_MB)
        name = c.label if c.label == "bl" else "$BENCH_PEER"
        if not result.ok:
            name += f" ({result.describe_failure()[:80]})"
        table.rows.append([name, str(round_), size(raw), size(gz), f"{rows:,}", size(written),
                           secs(result.wall), secs(result.cpu), mb(rss),
                           f"< {RSS_TARGET_MB} MB (< {RSS_TARGET_EXPORT_ISSUE3_MB} issue 3)",
                           {True: "yes", False: "**NO**", None: "failed"}[ok]])
        if c.label == "bl" and round_ == s.export_rounds:
            b.verdict(f"Peak RSS of `trajectory download -g` on a >= 1 GB export < {RSS_TARGET_MB} MB "
                      f"(issue 3: < {RSS_TARGET_EXPORT_ISSUE3_MB} MB)",
                      f"{mb(rss)} MB on {size(raw)}", ok)
    table.notes.append(f"{s.export_rounds} round(s), the clients in turns (round 1 reads the export through a "
                       "cold page cache for whichever client runs first). The export (gzip JSON lines, step-major "
                       "like the sandbox's) is built once by the launcher in constant memory and cached across runs.")
    if raw < 1e9:
        table.notes.append(f"WARNING: the export is only {size(raw)} uncompressed (< 1 GB).")
    return [table]


def mem_jobs(b: Bench) -> list[Table]:
    s = b.sizes
    with SandboxProcess(groups=1, jobs_per_group=s.jobs_group) as sb:
        b.show([sys.executable, "-m", "benchmarks.sandbox_launcher", *sb.options])
        results = []
        for c in b.clients:
            out = b.fresh_dir("mem-jobs")
            argv = b.client_argv(c, sb, "-q", "-o", str(out), "jobs", "download", "-g", "G1")
            b.show(argv, url=sb.url)
            sb.reset()
            result = b.run(argv, timeout=3600)
            requests = sb.stats().get("requests", 0)
            target = out / "G1" / "job_list.json"
            written = target.stat().st_size if target.is_file() else 0
            results.append((c, result, written, requests))
            shutil.rmtree(out, ignore_errors=True)
    table = Table(f"Peak memory: `jobs download -g` on a {s.jobs_group:,}-job group",
                  ["client", "requests", "job_list.json", "wall s", "CPU s", "peak RSS MB", "target", "met"])
    for c, result, written, requests in results:
        rss = result.maxrss_kb / 1024 if result.ok else float("nan")
        ok = _ok(rss, lambda v: v < RSS_TARGET_MB)
        name = c.label if c.label == "bl" else "$BENCH_PEER"
        if not result.ok:
            name += f" ({result.describe_failure()[:80]})"
        table.rows.append([name, str(requests), size(written), secs(result.wall), secs(result.cpu),
                           mb(rss), f"< {RSS_TARGET_MB} MB", {True: "yes", False: "**NO**", None: "failed"}[ok]])
        if c.label == "bl":
            b.verdict(f"Peak RSS of `jobs download -g` on a {s.jobs_group:,}-job group < {RSS_TARGET_MB} MB",
                      f"{mb(rss)} MB", ok)
    table.notes.append("One run, no injected latency.")
    return [table]


# =========================================================================
# 6. big groups stay flat
# =========================================================================
SCALE_LINEAR_X = 1.25  # time per 1,000 jobs at the big size over that at the small one
# Peak RSS may grow this much from the small group to the big one: flat, with room for what
# loads once past a size (SQLite for the ids seen, a full page cache, a full batch of rows).
# The 18,000 more jobs' items alone would take ~11 MB if they were kept.
SCALE_RSS_GROWTH_MB = 4


def _scale_commands(b: Bench, c: Client, sb: SandboxProcess, out: Path) -> list[tuple[str, list[str]]]:
    return [("jobs get -g G1 --all", b.client_argv(c, sb, "-q", "jobs", "get", "-g", "G1", "--all")),
            ("trajectory download -g G1", b.client_argv(c, sb, "-q", "-o", str(out), "trajectory", "download",
                                                        "-g", "G1"))]


def scale(b: Bench) -> list[Table]:
    """``jobs get --all`` and ``trajectory download -g`` on a small and a ten times bigger group."""
    s = b.sizes
    measured: dict[tuple[str, str, int], dict[str, float]] = {}
    requests: dict[tuple[str, str, int], int] = {}
    for jobs in s.scale_jobs:
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
                        requests[(c.label, name, jobs)] = sb.stats().get("requests", 0)
                    shutil.rmtree(out, ignore_errors=True)
            for (label, name), rs in runs.items():
                measured[(label, name, jobs)] = median_run(rs)
    return [_scale_table(b, measured, requests)]


def _scale_table(b: Bench, measured: dict[tuple[str, str, int], dict[str, float]],
                 requests: dict[tuple[str, str, int], int]) -> Table:
    small, big = b.sizes.scale_jobs
    table = Table(f"Big groups: {small:,} and {big:,} jobs, no injected latency",
                  ["command", "client", "jobs", "requests", "wall s", "wall s per 1,000 jobs", "CPU s",
                   "CPU s per 1,000 jobs", "peak RSS MB", "target", "met"])
    for (label, name, jobs), m in sorted(measured.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        target, ok = "", None
        if jobs == big:
            few = measured[(label, name, small)]
            x = (m["wall"] / big) / (few["wall"] / small)
            growth = m["maxrss_mb"] - few["maxrss_mb"]
            target = f"per 1,000 <= {SCALE_LINEAR_X:g}x at {small:,}; RSS +{SCALE_RSS_GROWTH_MB} MB at most"
            ok = None if x != x else (x <= SCALE_LINEAR_X and growth <= SCALE_RSS_GROWTH_MB)
            if label == "bl":
                b.verdict(f"`{name}` on {big:,} jobs: time per 1,000 jobs <= {SCALE_LINEAR_X:g}x that at "
                          f"{small:,}, peak RSS within +{SCALE_RSS_GROWTH_MB} MB",
                          f"{secs(m['wall'] * 1000 / big)} s vs {secs(few['wall'] * 1000 / small)} s per 1,000 "
                          f"({ratio(x)}); {mb(few['maxrss_mb'])} -> {mb(m['maxrss_mb'])} MB", ok)
        table.rows.append([f"`{name}`", "bl" if label == "bl" else "$BENCH_PEER", f"{jobs:,}",
                           str(requests.get((label, name, jobs), "?")), secs(m["wall"]),
                           secs(m["wall"] * 1000 / jobs), secs(m["cpu"]), secs(m["cpu"] * 1000 / jobs),
                           mb(m["maxrss_mb"]), target, _verdict_mark(ok) if target else ""])
    table.notes.append(f"Median of {b.sizes.scale_runs} run(s). `jobs get --all` pages through the group "
                       "(50 jobs a page) and prints one JSON array; `trajectory download -g` fetches the "
                       "group's trace export and writes trajectory.json. Per 1,000 jobs includes the fixed "
                       "start-up, so a linear command shows a lower figure at the big size.")
    table.notes.append("Memory: past 1,000 items a listing that is only printed or written as JSON waits on "
                       "disk (base/spool.py) and the ids seen past 2,000 go to a temporary SQLite table; the "
                       "trace export keeps the group's job order in its SQLite index. The small group runs "
                       "below those thresholds, so the growth shown includes what loads once past them.")
    return table


# =========================================================================
# 5. the Python client
# =========================================================================
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
                       "call). Neither imports Cyclopts (tests/test_sdk.py checks it).")

    sdk_run = median_run(calls)
    cli_run = median_run(cli)
    cli_total = cli_run["wall"] * n  # a sample of `samples` invocations, scaled
    cli_cpu = cli_run["cpu"] * n
    x = cli_total / sdk_run["wall"] if sdk_run["wall"] else float("nan")
    ok = _ok(x, lambda v: v >= SDK_TARGET_X)
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


# =========================================================================
# 7. bl compare on big groups
# =========================================================================
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


@dataclass
class Scenario:
    name: str
    section: str
    func: Callable[[Bench], list[Table]]
    big: bool = False


SCENARIOS = [
    Scenario("startup", "1. Startup", startup),
    Scenario("fanout-trajectory", "2. Fan-out", fanout_trajectory),
    Scenario("fanout-report", "2. Fan-out", fanout_report),
    Scenario("cpu", "3. Client CPU per 1,000 requests", cpu),
    Scenario("sdk", "5. Python client", sdk),
    Scenario("scale", "6. Big groups", scale),
    Scenario("compare", "7. bl compare on big groups", compare),
    Scenario("view-page", "8. bl view of a big trajectory", view_page),
    Scenario("mem-export", "4. Peak memory (big)", mem_export, big=True),
    Scenario("mem-jobs", "4. Peak memory (big)", mem_jobs, big=True),
]

__all__ = ["SCENARIOS", "Bench", "Client", "Scenario", "Sizes", "default_concurrency"]
