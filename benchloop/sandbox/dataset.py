"""Deterministic synthetic dataset of the sandbox, stored in SQLite.

Why SQLite: the backend must answer `skip`/`limit` pages with exact filtered
totals over groups of up to ~100,000 jobs, in a stable newest-first order.  An
indexed table does that in milliseconds and keeps the server free of ad-hoc
list juggling.  Only the small per-row facts are stored (ids, timestamps,
template, status, instance and a handful of numbers); every bulky payload
(metrics, reports, trajectories, artifacts) is derived on request from these
facts by :mod:`benchloop.sandbox.payloads`, so generating a 20,000-job group
costs a fraction of a second.

Why seeded per group: every random draw comes from ``random.Random`` seeded
with a string built from the dataset seed and the group id (string seeds are
hashed with SHA-512, independent of ``PYTHONHASHSEED``), so the same seed gives
byte-identical data in every process and a group's content does not depend on
how many other groups exist.

Data rules (also what test writers rely on):

* groups ``G1``..``Gn`` plus ``GEMPTY`` (exists, no jobs, no tasks);
* jobs ``<group>-J0001``.. (``%04d``: at least 4 digits), job number ``n``;
  jobs ``n = 3k+1, 3k+2, 3k+3`` share one ``created_at``; later numbers are
  newer; the list order is ``created_at DESC`` then ``seq`` (which is assigned
  so that within a tie the higher job number comes first) - i.e. plain
  descending job number;
* tasks ``<group>-T0001``.., job ``n`` runs the instance of task
  ``((n - 1) % tasks) + 1`` (its ``instance_id`` is that task's name);
* special jobs without a group: ``JORPHAN`` and ``../JODD x`` (an id that
  needs percent-encoding);
* download tasks ``T1`` (G1 jobs 1, 2, 1: a duplicate), ``T2`` (G1 jobs 5, 6,
  7, ``JORPHAN``, ``../JODD x``), ``T3`` (G1 job 1 and the unknown
  ``JMISSING``), ``TMEDIA`` (G1 jobs 10 and 25: every kind of trace media) and
  ``TEMPTY`` (no job ids); G1 job ids beyond the group's size are left out;
* only with ``compare_jobs=N`` (N > 0; ``bl sandbox serve`` has 160): the
  groups ``BASE``, ``CAND``, ``CAND2``, ``REPO-BASE`` and ``REPO-CAND``, runs of
  one SWE-bench-like benchmark for ``bl compare`` (see ``COMPARE_GROUPS``): N
  jobs each, jobs ``n`` running instance ``offset + ((n - 1) % M)`` of a shared
  instance list (``M = ceil(N / COMPARE_TRIALS)``, so about four trials per
  instance; ids ``repo__repo-NNNN`` over the 8 ``COMPARE_REPOS`` in turn, a
  category per instance as its jobs' ``template``), each instance with a latent
  pass probability that a run may raise (fixed), lower (broken) or keep, by
  repository; the offsets (slot 0, 1 or 2 times ``k = max(1, M // 20)`` when
  ``M >= 4``) leave instances in one group only; ~3% of the jobs are running and
  ~2% cancelled (no score); one task per instance; created after every other
  job, so no other answer changes;
* only with ``live_jobs=N`` (N > 0; ``bl sandbox serve`` has 12): the live group
  ``GLIVE`` of N jobs, every one ``running`` at first; they finish over time
  (``live.py``: one more every ``live_pace`` seconds, oldest first, to the final
  status of ``LIVE_FINALS``) and carry ``updated_at``, which no other job has;
  created after every other job, one task per job, so no other answer changes;
* only with ``live_compare=N`` (N > 0): the live comparison groups of ``LIVE_PAIR``
  (``GLIVE-BASE``, ``GLIVE-CAND``, ``GLIVE-SAME``), N running jobs each, one per shared
  instance, finishing with GLIVE's clock (job n of each together, for ``bl compare --watch``);
  no tasks; created last, so no other answer changes;
* only with ``scale_jobs=N`` (N > 0): the scale groups ``GSCALE`` and ``GSCALE2`` of N jobs
  each, generated page by page from the seed and never stored (``scale.py``: a page is
  O(page) at any ``skip``, so 10^6 jobs cost nothing at start); created after every other
  job, so no other answer changes;
* only with ``hostile=True``: the group ``GHOSTILE`` whose jobs have the ids
  of ``HOSTILE_JOBS`` (``../``, absolute paths, NUL, backslashes, control
  characters, 1,000 characters) and whose artifact listings carry the names of
  ``HOSTILE_ARTIFACT_NAMES`` (see ``payloads.artifact_listing``), the
  download task ``THOSTILE`` over those jobs, ``THOSTILE-SHORT`` over all but
  the 1,000-character one, and tasks whose ids are hostile themselves
  (``HOSTILE_TASK_IDS``: control characters, 1,000 characters).  Off by default, so the normal
  dataset's totals do not change.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from .scale import ScaleGroups

TEMPLATES = ("swe-bench-verified", "terminal-bench", "webarena-lite")
JOB_STATUSES = ("succeeded", "failed", "running", "cancelled")
TASK_STATUSES = ("passed", "failed", "error", "pending")
REPOS = ("django", "sympy", "flask", "requests", "astropy", "sphinx", "pytest")
CLUSTERS = ("eval-hk-prod-1", "hk-prod-2", "sg-prod-2", "wlcb-prod-1")
DATASETS = ("swe-verified/test", "tb-core/test", "webarena/lite")

EMPTY_GROUP = "GEMPTY"
ORPHAN_JOB = "JORPHAN"
ODD_JOB = "../JODD x"
TIE_RUN = 3  # consecutive jobs sharing one created_at

LIVE_GROUP = "GLIVE"
# The final status of live job n: cycled by n (mostly succeeded, some failed, one cancelled in 12).
LIVE_FINALS = ("succeeded", "succeeded", "failed", "succeeded", "succeeded", "succeeded",
               "failed", "succeeded", "succeeded", "cancelled", "succeeded", "failed")
LIVE_START = datetime(2026, 9, 1, 0, 0, 0)  # after every other group (the comparison runs: 30-32 days in)

# The live comparison groups (live_compare=N > 0): N jobs each, one per instance of one shared
# list, all running until they finish with GLIVE's clock (job n of each together); each job passes
# with its group's chance.  GLIVE-CAND is much better than GLIVE-BASE (a watch decides before the
# end), GLIVE-SAME is another run of the baseline's system (a watch ends undecided).
LIVE_PAIR = {"GLIVE-BASE": 0.3, "GLIVE-CAND": 0.9, "GLIVE-SAME": 0.3}

HOSTILE_GROUP = "GHOSTILE"
HOSTILE_TASK = "THOSTILE"  # every hostile job
HOSTILE_TASK_SHORT = "THOSTILE-SHORT"  # every hostile job but the 1,000-character one
# Download-task ids that are themselves hostile (each over the short hostile jobs).
HOSTILE_TASK_IDS = ("T\x1b[31mCTL\x07\r\n", "T" * 1000)
# Job numbers chosen so that every hostile job has a downloadable artifact.
HOSTILE_JOBS = (
    ("../../../escape-job", 1),
    ("/abs/root-job", 2),
    ("back\\slash\\..\\..\\job", 3),
    ("nul\x00job", 4),
    ("ctl\x1b[31m\x07\r\njob", 7),
    ("L" * 1000, 8),
    ("%2e%2e%2Fpct-job", 9),
    ("dots/../../mid-job", 10),
)

_BASE_TIME = datetime(2026, 7, 1, 0, 0, 0)

# The comparison groups (compare_jobs > 0): runs of one SWE-bench-like benchmark whose instances
# (``repo__repo-NNNN``) come from COMPARE_REPOS in turn.  Each run is a ``CompareRun``: which slot
# of the instance list it ran (0: the shared ones; 1 and 2 leave a few instances in one run only),
# and per repository the share of its instances the run fixes and the share it breaks (relative
# to the latent pass probability every run shares), then factors on duration and on turns.
#   BASE       the baseline;
#   CAND       fixes django and sympy, breaks sphinx and pytest, a little of both elsewhere: a
#              difference within the noise; slower;
#   CAND2      fixes many instances in most repositories (not astropy or matplotlib): a clear
#              improvement; more turns, hence more tokens;
#   REPO-BASE, REPO-CAND  the same instances as BASE, each passing with probability 0.2 in
#              REPO-BASE; REPO-CAND raises that to 0.8 in django, requests and sympy and lowers it
#              to 0 in sphinx, nothing else: significant when instances are taken as independent,
#              not once they are clustered by repository (--cluster '^(.+?)__').
COMPARE_REPOS = ("astropy", "django", "matplotlib", "pytest", "requests", "scikit-learn", "sphinx", "sympy")
# The instances' categories, one per instance (the job's ``template``: ``bl compare --by template``).
COMPARE_TEMPLATES = ("swe-bench-verified", "swe-bench-lite", "swe-bench-full")


class CompareRun(NamedTuple):
    slot: int  # 0, 1 or 2: which window of the instance list the run covers
    effects: dict[str, tuple[float, float]]  # repository -> (share fixed, share broken); "*": the others
    slower: float = 1.0  # factor on duration
    longer: float = 1.0  # factor on turns
    level: float | None = None  # every instance's latent pass probability (None: the shared ones)
    shifts: dict[str, float] | None = None  # repository -> a change of every instance's probability

    def effect(self, repo: str) -> tuple[float, float]:
        return self.effects.get(repo, self.effects.get("*", (0.0, 0.0)))

    def chance(self, level: float, repo: str, roll: float) -> float:
        """An instance's pass probability in this run, from the shared level and a random roll."""
        if self.level is not None:
            return min(1.0, max(0.0, self.level + (self.shifts or {}).get(repo, 0.0)))
        fixed, broken = self.effect(repo)
        return (min(1.0, level + 0.6) if roll < fixed
                else max(0.0, level - 0.6) if roll < fixed + broken else level)


COMPARE_GROUPS = {
    "BASE": CompareRun(0, {}),
    "CAND": CompareRun(1, {"django": (0.6, 0.0), "sympy": (0.6, 0.0), "sphinx": (0.0, 0.6),
                           "pytest": (0.0, 0.6), "*": (0.15, 0.15)}, slower=1.25),
    "CAND2": CompareRun(2, {"astropy": (0.25, 0.05), "matplotlib": (0.25, 0.05), "*": (0.55, 0.02)},
                        slower=0.9, longer=1.5),
    "REPO-BASE": CompareRun(0, {}, level=0.2),
    "REPO-CAND": CompareRun(0, {}, level=0.2, shifts={"django": 0.6, "requests": 0.6, "sympy": 0.6,
                                                      "sphinx": -0.2}),
}
COMPARE_TRIALS = 4  # jobs per instance (about: M = ceil(N / 4) instances share N jobs)
COMPARE_TEMPLATE = TEMPLATES[0]
COMPARE_LEVELS = (0.0, 0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.0)  # latent pass probabilities

JOB_COLUMNS = (
    "seq", "job_id", "group_id", "n", "created_at", "template", "status", "instance_id",
    "score", "duration_s", "num_turns", "output_total", "context_peak", "salt",
)
# Rows give JOB_COLUMNS; ``updated_at`` (the live group's jobs only) is set when one finishes.
_INSERT_JOB = f"INSERT INTO jobs ({','.join(JOB_COLUMNS)}) VALUES ({','.join('?' * len(JOB_COLUMNS))})"
TASK_COLUMNS = ("seq", "task_id", "group_id", "n", "name", "status", "score")

_SCHEMA = """
CREATE TABLE groups (
    idx INTEGER PRIMARY KEY, group_id TEXT NOT NULL UNIQUE, name TEXT, template TEXT,
    dataset TEXT, cluster TEXT, created_at TEXT, job_count INTEGER, task_count INTEGER
);
CREATE TABLE jobs (
    seq INTEGER PRIMARY KEY, job_id TEXT NOT NULL UNIQUE, group_id TEXT, n INTEGER,
    created_at TEXT NOT NULL, template TEXT, status TEXT, instance_id TEXT,
    score REAL, duration_s REAL, num_turns INTEGER, output_total INTEGER,
    context_peak INTEGER, salt INTEGER, updated_at TEXT
);
CREATE TABLE tasks (
    seq INTEGER PRIMARY KEY, task_id TEXT NOT NULL UNIQUE, group_id TEXT NOT NULL,
    n INTEGER, name TEXT, status TEXT, score REAL
);
CREATE TABLE download_tasks (
    task_id TEXT PRIMARY KEY, group_id TEXT, job_ids TEXT NOT NULL, created_at TEXT
);
"""

_INDEXES = """
CREATE INDEX jobs_by_group ON jobs (group_id, created_at DESC, seq);
CREATE INDEX jobs_by_time ON jobs (created_at DESC, seq);
CREATE INDEX tasks_by_group ON tasks (group_id, seq);
"""


def job_id_for(group_id: str, n: int) -> str:
    return f"{group_id}-J{n:04d}"


def task_id_for(group_id: str, n: int) -> str:
    return f"{group_id}-T{n:04d}"


def _per_group(value: int | Sequence[int], count: int, what: str) -> list[int]:
    if isinstance(value, int):
        sizes = [value] * count
    else:
        sizes = [int(v) for v in value]
        if len(sizes) != count:
            raise ValueError(f"{what}: expected {count} sizes, got {len(sizes)}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"{what} must be >= 0")
    return sizes


class Dataset:
    """The generated data plus the read queries the handlers need.

    One SQLite connection shared by the server threads, serialised by a lock:
    every query is a short indexed read, so the lock is never held for long.
    """

    def __init__(
        self,
        seed: int = 7,
        groups: int = 3,
        jobs_per_group: int | Sequence[int] = 40,
        tasks_per_group: int | Sequence[int] = 25,
        db_path: str = ":memory:",
        hostile: bool = False,
        compare_jobs: int = 0,
        live_jobs: int = 0,
        live_compare: int = 0,
        scale_jobs: int = 0,
    ) -> None:
        if groups < 0:
            raise ValueError("groups must be >= 0")
        if compare_jobs < 0:
            raise ValueError("compare_jobs must be >= 0")
        if live_jobs < 0:
            raise ValueError("live_jobs must be >= 0")
        self.compare_jobs = compare_jobs
        self.live_jobs = live_jobs
        if live_compare < 0:
            raise ValueError("live_compare must be >= 0")
        self.live_compare = live_compare
        self._live_outcomes: dict[str, list[bool]] = {}
        self.seed = seed
        self.group_count = groups
        self.job_sizes = _per_group(jobs_per_group, groups, "jobs_per_group")
        self.task_sizes = _per_group(tasks_per_group, groups, "tasks_per_group")
        self.hostile = hostile
        self._lock = threading.Lock()
        self._db = sqlite3.connect(db_path, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._generate()
        self.scale = ScaleGroups(seed, scale_jobs, self.group_count + 4 + len(COMPARE_GROUPS))

    # ------------------------------------------------------------------ build
    def _rng(self, scope: str) -> random.Random:
        return random.Random(f"benchloop-sandbox:{self.seed}:{scope}")

    def _generate(self) -> None:
        db = self._db
        db.executescript(_SCHEMA)
        seq = 0
        group_rows = []
        for idx in range(1, self.group_count + 1):
            gid = f"G{idx}"
            njobs, ntasks = self.job_sizes[idx - 1], self.task_sizes[idx - 1]
            rng = self._rng(f"group:{gid}")
            start = _BASE_TIME + timedelta(seconds=rng.randrange(0, 20 * 86400))
            template = TEMPLATES[(idx - 1) % len(TEMPLATES)]
            group_rows.append((
                idx, gid, f"suite-{idx}-{REPOS[rng.randrange(len(REPOS))]}", template,
                DATASETS[(idx - 1) % len(DATASETS)], CLUSTERS[(idx - 1) % len(CLUSTERS)],
                start.isoformat(), njobs, ntasks,
            ))
            # Separate streams, so job n's facts do not depend on the group's size.
            names = self._instance_names(self._rng(f"names:{gid}"), max(1, ntasks))
            db.executemany(
                f"INSERT INTO tasks VALUES ({','.join('?' * len(TASK_COLUMNS))})",
                self._task_rows(self._rng(f"tasks:{gid}"), gid, names, ntasks, idx),
            )
            rows = self._job_rows(self._rng(f"times:{gid}"), self._rng(f"jobs:{gid}"),
                                  gid, names, njobs, start)
            # Insert newest first so that seq ascending == list order inside a tie.
            rows.reverse()
            db.executemany(
                _INSERT_JOB,
                [(seq + i + 1, *row) for i, row in enumerate(rows)],
            )
            seq += len(rows)
        group_rows.append((
            self.group_count + 1, EMPTY_GROUP, "empty suite", TEMPLATES[0], DATASETS[0],
            CLUSTERS[0], _BASE_TIME.isoformat(), 0, 0,
        ))
        if self.hostile:
            group_rows.append((
                self.group_count + 2, HOSTILE_GROUP, "hostile names", TEMPLATES[0], DATASETS[0],
                CLUSTERS[0], _BASE_TIME.isoformat(), len(HOSTILE_JOBS), 0,
            ))
        db.executemany("INSERT INTO groups VALUES (?,?,?,?,?,?,?,?,?)", group_rows)
        seq = self._special_jobs(seq)
        if self.compare_jobs:
            seq = self._compare_groups(seq, self.group_count + 3)
        if self.live_jobs:
            self._live_group(seq, self.group_count + 3 + len(COMPARE_GROUPS))
            seq += self.live_jobs
        if self.live_compare:
            self._live_pair(seq, self.group_count + 4 + len(COMPARE_GROUPS))
        db.executemany("INSERT INTO download_tasks VALUES (?,?,?,?)", self._download_tasks())
        db.executescript(_INDEXES)
        db.commit()

    def _special_jobs(self, seq: int) -> int:
        """The hostile group's jobs (when asked for) and the jobs without a group; the last seq."""
        db = self._db
        if self.hostile:
            hrng = self._rng(f"group:{HOSTILE_GROUP}")
            for k, (job_id, n) in enumerate(HOSTILE_JOBS):
                seq += 1
                created = (_BASE_TIME - timedelta(hours=k + 1)).isoformat()
                db.execute(
                    _INSERT_JOB,
                    (seq, job_id, HOSTILE_GROUP, n, created, TEMPLATES[0], "failed",
                     "orphan__orphan-1001", 0.25, 42.5, 7, 1234, 8192, hrng.getrandbits(31)),
                )
        special = self._rng("special")
        specials = [
            (ORPHAN_JOB, 1, "2026-06-30T12:00:00", "failed", "orphan__orphan-1001"),
            (ODD_JOB, 6, "2026-06-30T11:00:00", "succeeded", "orphan__orphan-1002"),
        ]
        for job_id, n, created, status, instance in specials:
            seq += 1
            db.execute(
                _INSERT_JOB,
                (seq, job_id, None, n, created, TEMPLATES[0], status, instance,
                 0.25 if status == "failed" else 0.9, 42.5, 7, 1234, 8192,
                 special.getrandbits(31)),
            )
        return seq

    # ------------------------------------------------------ comparison groups
    def _compare_groups(self, seq: int, first_idx: int) -> int:
        """The runs of ``COMPARE_GROUPS``: one benchmark run several times (see the module docstring).

        Everything is drawn from streams seeded by the dataset seed and the group
        id, so an instance's latent pass probability and a run's effect on it
        are the same whatever the group size, and the figures of ``bl compare`` on
        these groups are reproducible.
        """
        db = self._db
        njobs = self.compare_jobs
        m = -(-njobs // COMPARE_TRIALS)
        k_only = max(1, m // 20) if m >= 4 else 0
        universe = m + 2 * k_only
        names_rng = self._rng("compare:names")
        levels_rng = self._rng("compare:levels")
        names, levels, repos, templates = [], [], [], []
        for k in range(1, universe + 1):
            repo = COMPARE_REPOS[(k - 1) % len(COMPARE_REPOS)]
            names.append(f"{repo}__{repo}-{1000 + 100 * k + names_rng.randrange(100)}")
            levels.append(COMPARE_LEVELS[levels_rng.randrange(len(COMPARE_LEVELS))])
            repos.append(repo)
            templates.append(COMPARE_TEMPLATES[names_rng.randrange(len(COMPARE_TEMPLATES))])
        group_rows = []
        for i, (gid, run) in enumerate(COMPARE_GROUPS.items()):
            idx, offset = first_idx + i, run.slot * k_only
            start = _BASE_TIME + timedelta(days=30 + i)
            group_rows.append((idx, gid, f"compare-{gid.lower()}", COMPARE_TEMPLATE, DATASETS[0],
                               CLUSTERS[0], start.isoformat(), njobs, m))
            effects = self._rng(f"compare:effects:{gid}")
            chance = []
            for level, repo in zip(levels, repos, strict=True):
                chance.append(run.chance(level, repo, effects.random()))
            mine = range(offset, offset + m)
            tasks = []
            for k, inst in enumerate(mine, start=1):
                status = "passed" if chance[inst] >= 0.5 else "failed"
                tasks.append((idx * 10_000_000 + k, task_id_for(gid, k), gid, k, names[inst], status,
                              round(chance[inst], 4)))
            db.executemany(f"INSERT INTO tasks VALUES ({','.join('?' * len(TASK_COLUMNS))})", tasks)
            rows = self._compare_job_rows(gid, njobs, [names[j] for j in mine], [chance[j] for j in mine],
                                          [templates[j] for j in mine], start, run.slower, run.longer)
            rows.reverse()  # newest first: seq ascending == list order inside a tie
            db.executemany(_INSERT_JOB,
                           [(seq + j + 1, *row) for j, row in enumerate(rows)])
            seq += len(rows)
        db.executemany("INSERT INTO groups VALUES (?,?,?,?,?,?,?,?,?)", group_rows)
        return seq

    # -------------------------------------------------------------- live group
    def _live_group(self, seq: int, idx: int) -> None:
        """GLIVE: ``live_jobs`` jobs, all running; ``finish_live`` moves them to their final status."""
        db, count = self._db, self.live_jobs
        rng = self._rng(f"group:{LIVE_GROUP}")
        names = self._instance_names(self._rng(f"names:{LIVE_GROUP}"), count)
        db.execute("INSERT INTO groups VALUES (?,?,?,?,?,?,?,?,?)",
                   (idx, LIVE_GROUP, "live suite", TEMPLATES[0], DATASETS[0], CLUSTERS[0],
                    LIVE_START.isoformat(), count, count))
        db.executemany(f"INSERT INTO tasks VALUES ({','.join('?' * len(TASK_COLUMNS))})",
                       [(idx * 10_000_000 + k, task_id_for(LIVE_GROUP, k), LIVE_GROUP, k, names[k - 1], "pending",
                         None) for k in range(1, count + 1)])
        rows = []
        for n in range(1, count + 1):
            created = (LIVE_START + timedelta(seconds=10 * n)).isoformat()
            rows.append((job_id_for(LIVE_GROUP, n), LIVE_GROUP, n, created, TEMPLATES[0], "running",
                         names[n - 1], None, round(5 + 600 * rng.random(), 2), rng.randint(1, 60),
                         rng.randint(100, 50_000), rng.randint(1_000, 128_000), rng.getrandbits(31)))
        rows.reverse()  # newest first: seq ascending == list order
        db.executemany(_INSERT_JOB, [(seq + i + 1, *row) for i, row in enumerate(rows)])
        db.execute("UPDATE jobs SET updated_at = created_at WHERE group_id = ?", (LIVE_GROUP,))

    def _live_pair(self, seq: int, idx: int) -> None:
        """The live comparison groups (``LIVE_PAIR``): ``live_compare`` jobs each, one per shared
        instance, all running; ``finish_live`` finishes job n of every one of them together."""
        db, count = self._db, self.live_compare
        names = self._instance_names(self._rng("names:GLIVE-PAIR"), count)
        for k, (gid, chance) in enumerate(LIVE_PAIR.items()):
            rng = self._rng(f"group:{gid}")
            self._live_outcomes[gid] = [rng.random() < chance for _ in range(count)]
            db.execute("INSERT INTO groups VALUES (?,?,?,?,?,?,?,?,?)",
                       (idx + k, gid, "live comparison", TEMPLATES[0], DATASETS[0], CLUSTERS[0],
                        LIVE_START.isoformat(), count, 0))
            rows = []
            for n in range(1, count + 1):
                created = (LIVE_START + timedelta(seconds=10 * n)).isoformat()
                rows.append((job_id_for(gid, n), gid, n, created, TEMPLATES[0], "running", names[n - 1], None,
                             round(5 + 600 * rng.random(), 2), rng.randint(1, 60), rng.randint(100, 50_000),
                             rng.randint(1_000, 128_000), rng.getrandbits(31)))
            rows.reverse()  # newest first: seq ascending == list order
            db.executemany(_INSERT_JOB, [(seq + i + 1, *row) for i, row in enumerate(rows)])
            db.execute("UPDATE jobs SET updated_at = created_at WHERE group_id = ?", (gid,))
            seq += count

    def finish_live(self, finished: int) -> None:
        """Live jobs 1..``finished`` in their final status (the others running again): the status,
        a score, and ``updated_at`` (creation + 5 minutes per job number, as if they ran in turn)."""
        with self._lock:
            for n in range(1, self.live_jobs + 1):
                done = n <= finished
                status = LIVE_FINALS[(n - 1) % len(LIVE_FINALS)] if done else "running"
                score = (0.9 if status == "succeeded" else 0.2 if status == "failed" else None) if done else None
                created = LIVE_START + timedelta(seconds=10 * n)
                updated = (created + timedelta(minutes=5 * n)) if done else created
                self._db.execute("UPDATE jobs SET status = ?, score = ?, updated_at = ? WHERE job_id = ?",
                                 (status, score, updated.isoformat(), job_id_for(LIVE_GROUP, n)))
                self._db.execute("UPDATE tasks SET status = ?, score = ? WHERE task_id = ?",
                                 ("pending" if not done else "passed" if status == "succeeded" else "failed",
                                  score, task_id_for(LIVE_GROUP, n)))
            for gid, outcomes in self._live_outcomes.items():
                for n, passed in enumerate(outcomes, 1):
                    done = n <= finished
                    status = ("succeeded" if passed else "failed") if done else "running"
                    score = (0.9 if passed else 0.2) if done else None
                    created = LIVE_START + timedelta(seconds=10 * n)
                    updated = (created + timedelta(minutes=5 * n)) if done else created
                    self._db.execute("UPDATE jobs SET status = ?, score = ?, updated_at = ? WHERE job_id = ?",
                                     (status, score, updated.isoformat(), job_id_for(gid, n)))
            self._db.commit()

    def _compare_job_rows(self, gid: str, count: int, names: list[str], chance: list[float],
                          templates: list[str], start: datetime, slower: float, longer: float) -> list[tuple]:
        time_rng, rng = self._rng(f"compare:times:{gid}"), self._rng(f"compare:jobs:{gid}")
        stamps, t = [], start
        for _ in range((count + TIE_RUN - 1) // TIE_RUN):
            t += timedelta(seconds=time_rng.randint(5, 120))
            stamps.append(t.isoformat())
        rnd, randint, getrandbits = rng.random, rng.randint, rng.getrandbits
        m, rows = len(names), []
        for n in range(1, count + 1):
            inst = (n - 1) % m
            r = rnd()
            if r < 0.03:
                status = "running"
            elif r < 0.05:
                status = "cancelled"
            else:
                status = "succeeded" if rnd() < chance[inst] else "failed"
            x = rnd()
            score = (round(0.5 + 0.5 * x, 4) if status == "succeeded"
                     else round(0.5 * x, 4) if status == "failed" else None)
            rows.append((
                job_id_for(gid, n), gid, n, stamps[(n - 1) // TIE_RUN], templates[inst], status,
                names[inst], score, round((5 + 600 * rnd()) * slower, 2),
                min(120, max(1, round(randint(1, 60) * longer))), randint(100, 50_000),
                randint(1_000, 128_000), getrandbits(31),
            ))
        return rows

    @staticmethod
    def _instance_names(rng: random.Random, count: int) -> list[str]:
        names = []
        for k in range(1, count + 1):
            repo = REPOS[rng.randrange(len(REPOS))]
            names.append(f"{repo}__{repo}-{1000 * k + rng.randrange(1000)}")
        return names

    @staticmethod
    def _task_rows(rng: random.Random, gid: str, names: list[str], count: int, idx: int):
        rows = []
        base_seq = idx * 10_000_000
        for k in range(1, count + 1):
            r = rng.random()
            status = "passed" if r < 0.55 else "failed" if r < 0.8 else "error" if r < 0.9 else "pending"
            x = rng.random()
            score = (round(0.5 + 0.5 * x, 4) if status == "passed"
                     else round(0.5 * x, 4) if status == "failed"
                     else 0.0 if status == "error" else None)
            rows.append((base_seq + k, task_id_for(gid, k), gid, k, names[k - 1], status, score))
        return rows

    @staticmethod
    def _job_rows(time_rng: random.Random, rng: random.Random, gid: str, names: list[str],
                  count: int, start: datetime):
        stamps = []
        t = start
        for _ in range((count + TIE_RUN - 1) // TIE_RUN):
            t += timedelta(seconds=time_rng.randint(30, 900))
            stamps.append(t.isoformat())
        npool = len(names)
        rnd, randint, getrandbits = rng.random, rng.randint, rng.getrandbits
        rows = []
        for n in range(1, count + 1):
            r = rnd()
            status = ("succeeded" if r < 0.6 else "failed" if r < 0.85
                      else "running" if r < 0.95 else "cancelled")
            x = rnd()
            score = (round(0.5 + 0.5 * x, 4) if status == "succeeded"
                     else round(0.5 * x, 4) if status == "failed" else None)
            rows.append((
                job_id_for(gid, n), gid, n, stamps[(n - 1) // TIE_RUN],
                TEMPLATES[int(rnd() * len(TEMPLATES))], status, names[(n - 1) % npool],
                score, round(5 + 600 * rnd(), 2), randint(1, 60), randint(100, 50_000),
                randint(1_000, 128_000), getrandbits(31),
            ))
        return rows

    def _download_tasks(self) -> list[tuple]:
        g1 = self.job_sizes[0] if self.group_count else 0

        def pick(*numbers: int) -> list[str]:
            return [job_id_for("G1", n) for n in numbers if n <= g1]

        t1 = pick(1, 2)
        if t1:
            t1.append(t1[0])  # the duplicate id the client must de-duplicate
        t2 = pick(5, 6, 7) + [ORPHAN_JOB, ODD_JOB]
        t3 = pick(1) + ["JMISSING"]
        tmedia = pick(10, 25)
        hostile = []
        if self.hostile:
            every = [j for j, _ in HOSTILE_JOBS]
            short = json.dumps([j for j in every if len(j) < 200])
            hostile.append((HOSTILE_TASK, HOSTILE_GROUP, json.dumps(every), "2026-07-14T15:00:00"))
            for task in (HOSTILE_TASK_SHORT, *HOSTILE_TASK_IDS):
                hostile.append((task, HOSTILE_GROUP, short, "2026-07-14T15:00:00"))
        return hostile + [
            ("T1", "G1", json.dumps(t1), "2026-07-14T10:00:00"),
            ("T2", "G1", json.dumps(t2), "2026-07-14T11:00:00"),
            ("T3", "G1", json.dumps(t3), "2026-07-14T12:00:00"),
            ("TEMPTY", "G1", json.dumps([]), "2026-07-14T13:00:00"),
            ("TMEDIA", "G1", json.dumps(tmedia), "2026-07-14T14:00:00"),
        ]

    # ---------------------------------------------------------------- queries
    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def _one(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Row | None:
        with self._lock:
            return self._db.execute(sql, args).fetchone()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def group_ids(self) -> list[str]:
        return [r[0] for r in self._all("SELECT group_id FROM groups ORDER BY idx")] + self.scale.group_ids()

    def group(self, group_id: str) -> dict[str, Any] | None:
        if group_id in self.scale:
            return self.scale.group(group_id)
        row = self._one("SELECT * FROM groups WHERE group_id = ?", (group_id,))
        return dict(row) if row else None

    def job(self, job_id: str) -> dict[str, Any] | None:
        if self.scale.jobs and (found := self.scale.find(job_id)) is not None:
            return found
        row = self._one("SELECT * FROM jobs WHERE job_id = ?", (job_id,))
        return dict(row) if row else None

    def is_scale(self, group_id: str) -> bool:
        """A group generated page by page (``scale.py``)."""
        return group_id in self.scale

    def aggregate_jobs(self, group_id: str) -> Iterator[dict[str, Any]]:
        """The jobs a group's aggregates are computed over: all, or a scale group's sample."""
        return self.scale.sample(group_id) if group_id in self.scale else self.iter_group_jobs(group_id)

    @staticmethod
    def _job_filter(group_id: str | None, filters: dict[str, str | None]) -> tuple[str, list]:
        clauses, args = [], []
        if group_id is not None:
            clauses.append("group_id = ?")
            args.append(group_id)
        for column in ("template", "status", "instance_id"):
            value = filters.get(column)
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", args

    def list_jobs(
        self, group_id: str | None, skip: int, limit: int, **filters: str | None
    ) -> tuple[list[dict[str, Any]], int]:
        """One page of jobs, newest first, and the exact total for the filters."""
        if group_id is not None and group_id in self.scale:
            return self.scale.page(group_id, skip, limit, filters), self.scale.count(group_id, filters)
        head: list[dict[str, Any]] = []
        ahead = 0  # the scale groups' jobs come first in the list of every job (they are the newest)
        if group_id is None:
            for gid in reversed(self.scale.group_ids()):
                count = self.scale.count(gid, filters)
                if skip < ahead + count and len(head) < limit:
                    head += self.scale.page(gid, max(0, skip - ahead), limit - len(head), filters)
                ahead += count
            skip, limit = max(0, skip - ahead), limit - len(head)
        where, args = self._job_filter(group_id, filters)
        with self._lock:
            total = self._db.execute(f"SELECT COUNT(*) FROM jobs{where}", args).fetchone()[0]
            rows = self._db.execute(
                f"SELECT * FROM jobs{where} ORDER BY created_at DESC, seq LIMIT ? OFFSET ?",
                [*args, limit, skip],
            ).fetchall() if limit > 0 else []
        return head + [dict(r) for r in rows], total + ahead

    def iter_group_jobs(self, group_id: str) -> Iterator[dict[str, Any]]:
        """Every job of a group in list order (materialised under the lock; a scale group's
        generated as it is read)."""
        if group_id in self.scale:
            return self.scale.listing(group_id)
        rows = self._all(
            "SELECT * FROM jobs WHERE group_id = ? ORDER BY created_at DESC, seq", (group_id,)
        )
        return (dict(r) for r in rows)

    def job_ids(self, group_id: str) -> list[str]:
        if group_id in self.scale:
            return self.scale.job_ids(group_id)
        rows = self._all(
            "SELECT job_id FROM jobs WHERE group_id = ? ORDER BY created_at DESC, seq",
            (group_id,),
        )
        return [r[0] for r in rows]

    def status_counts(self, group_id: str | None) -> dict[str, int]:
        if group_id is not None and group_id in self.scale:
            return self.scale.status_counts(group_id, JOB_STATUSES)
        where, args = self._job_filter(group_id, {})
        rows = self._all(f"SELECT status, COUNT(*) FROM jobs{where} GROUP BY status", args)
        counts = dict.fromkeys(JOB_STATUSES, 0)
        for status, count in rows:
            counts[status] = count
        if group_id is None:
            for gid in self.scale.group_ids():
                for status, count in self.scale.status_counts(gid, JOB_STATUSES).items():
                    counts[status] += count
        return counts

    def list_tasks(
        self, group_id: str, skip: int, limit: int, search: str | None, status: str | None
    ) -> tuple[list[dict[str, Any]], int]:
        clauses, args = ["group_id = ?"], [group_id]
        if search:
            clauses.append("instr(lower(name), lower(?)) > 0")
            args.append(search)
        if status is not None:
            clauses.append("status = ?")
            args.append(status)
        where = " WHERE " + " AND ".join(clauses)
        with self._lock:
            total = self._db.execute(f"SELECT COUNT(*) FROM tasks{where}", args).fetchone()[0]
            rows = self._db.execute(
                f"SELECT * FROM tasks{where} ORDER BY seq LIMIT ? OFFSET ?", [*args, limit, skip]
            ).fetchall()
        return [dict(r) for r in rows], total

    def all_tasks(self, group_id: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self._all(
            "SELECT * FROM tasks WHERE group_id = ? ORDER BY seq", (group_id,))]

    def download_task(self, task_id: str) -> dict[str, Any] | None:
        row = self._one("SELECT * FROM download_tasks WHERE task_id = ?", (task_id,))
        if row is None:
            return None
        out = dict(row)
        out["job_ids"] = json.loads(out["job_ids"])
        return out
