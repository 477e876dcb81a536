"""What every scenario shares: the sizes, the clients, the run's state and small helpers.

Every scenario is a function ``(Bench) -> list[Table]`` that starts its own
sandbox process, runs the clients as child processes (:func:`measure.run`)
and records the targets it checks as :class:`report.Verdict`.  Sizes come
from :class:`Sizes`: the full sizes, or ``--quick`` ones that exercise the
same code paths in seconds.

Repetitions are interleaved (run 1 of every command, then run 2, ...) so a
slow drift of the machine (thermal, page cache, another process) spreads over
all commands instead of penalising whichever ran last.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .measure import Run, run
from .report import Verdict, ratio
from .sandbox_proc import REPO, SandboxProcess

BASELINE = str(REPO / "benchmarks" / "baseline_client.py")
FLOOR = str(REPO / "benchmarks" / "floor_client.py")
FLOOR_LABEL = "floor: keep-alive http.client thread pool"


@dataclass
class Sizes:
    startup_runs: int
    startup_warmups: int
    fanout_ids: int
    fanout_runs: int
    cpu_ids: int
    cpu_runs: int
    sdk_calls: int = 1000  # Python client: metrics.get calls in one process
    sdk_cli_samples: int = 100  # CLI invocations actually run (scaled to sdk_calls)
    compare_jobs: int = 20_000  # bl compare: jobs in each group
    export_jobs: int = 16_000
    export_steps: int = 500  # 16,000 x 500 steps: ~7.4 M rows, ~1.07 GB uncompressed
    jobs_group: int = 100_000
    scale_jobs: int = 20_000
    scale_runs: int = 3
    export_rounds: int = 2  # each client's export run, in turns (the first round fills the page cache)
    stream_jobs: int = 1_000_000  # rows as they arrive: jobs of the scale group GSCALE

    @classmethod
    def full(cls) -> Sizes:
        return cls(startup_runs=15, startup_warmups=2, fanout_ids=1000, fanout_runs=3, cpu_ids=1000, cpu_runs=5)

    @classmethod
    def quick(cls) -> Sizes:
        return cls(startup_runs=5, startup_warmups=1, fanout_ids=200, fanout_runs=1, cpu_ids=200, cpu_runs=2,
                   sdk_calls=200, sdk_cli_samples=20, scale_jobs=2_000, scale_runs=1, compare_jobs=2000,
                   export_rounds=1, stream_jobs=20_000)


@dataclass
class Client:
    label: str  # "bl", "peer" (BENCH_PEER: another build of bl) or "official" (benchloop_client 0.2.25)
    path: str

    @property
    def shown(self) -> str:
        """How the tables name it."""
        return {"bl": "bl", "peer": "$BENCH_PEER", "official": "official 0.2.25"}.get(self.label, self.label)

    @property
    def placeholder(self) -> str:
        """How the Commands section names its executable."""
        return {"bl": "bl", "peer": "$BENCH_PEER", "official": "$OFFICIAL"}.get(self.label, self.label)


@dataclass
class Bench:
    """Shared state of one benchmark run."""

    sizes: Sizes
    clients: list[Client]  # bl, and BENCH_PEER when given: builds of bl
    work: Path
    env: dict[str, str]
    default_concurrency: int = 5
    official: Client | None = None  # the official client, when it could be installed (or BENCH_OFFICIAL)
    official_note: str = ""  # where it came from, or why it is missing
    verdicts: list[Verdict] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)  # the peer and the latency model, for the report
    log: Callable[[str], None] = lambda message: print(message, file=sys.stderr, flush=True)

    # -- helpers ------------------------------------------------------------
    @property
    def with_official(self) -> list[Client]:
        """bl (and the peer build), then the official client when there is one."""
        return self.clients + ([self.official] if self.official else [])

    def describe(self, line: str) -> None:
        """A line of the report's "Peer and latency model" section (once)."""
        if line not in self.model:
            self.model.append(line)

    def fresh_dir(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.work))

    def ids_file(self, n: int, group: str = "G1") -> str:
        path = self.work / f"ids-{group}-{n}.txt"
        if not path.exists():
            path.write_text("".join(f"{group}-J{i:04d}\n" for i in range(1, n + 1)))
        return str(path)

    def show(self, argv: list[str], *, stdin: str | None = None, url: str = "", note: str = "") -> None:
        """Record ``argv`` for the Commands section, with stable placeholders."""
        placeholders = {c.path: c.placeholder for c in self.with_official}
        words = []
        for word in argv:
            if word == sys.executable:
                word = "python"
            elif word in (BASELINE, FLOOR):
                word = "benchmarks/" + Path(word).name
            elif word in placeholders:
                word = placeholders[word]
            elif url and word == url:
                word = "$URL"
            elif str(self.work) in word:
                word = "$OUT"
            else:
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


def ok_if(value: float, good: Callable[[float], bool]) -> bool | None:
    """``good(value)``, or None (not measured) for NaN."""
    return None if value != value else good(value)


def mark(ok: bool | None) -> str:
    return {True: "yes", False: "**NO**", None: "failed"}[ok]


def peer_ratio(values: dict[str, float], label: str) -> str:
    """``label``'s figure over bl's ("" for bl itself)."""
    if label == "bl" or "bl" not in values or label not in values:
        return ""
    return ratio(values[label] / values["bl"]) if values["bl"] else "-"


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


def count_files(root: Path, suffix: str) -> int:
    return sum(1 for _, _, files in os.walk(root) for f in files if f.endswith(suffix))


def json_len(path: str) -> int:
    """Items of the JSON array in ``path`` (-1 when it is not one)."""
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except (OSError, ValueError):
        return -1
    return len(value) if isinstance(value, list) else -1
