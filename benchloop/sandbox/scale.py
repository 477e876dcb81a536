"""Scale groups: ``GSCALE`` and ``GSCALE2`` of N jobs each, generated per page, never stored.

Why not SQLite: a page at ``skip`` of ``LIMIT/OFFSET`` costs O(skip), so walking a group of
N jobs costs O(N^2) - a 10^6-job group took hours.  And inserting 10^6 rows costs time
and memory at start for groups that exist to be walked once.  Here job ``n`` of a scale
group is a pure function of the seed, the group and ``n`` (one BLAKE2b digest gives its
random draws), so a page is O(page) at any ``skip``, starting the sandbox costs nothing
whatever N is, and the same seed gives byte-identical jobs in every process.

The rules (as the other groups' in ``dataset.py``):

* ``GSCALE`` then ``GSCALE2`` (newer: every job of GSCALE2 after every job of GSCALE),
  both created after every other group's jobs, so no other answer changes;
* jobs ``<group>-J0001`` ..; jobs ``3k+1..3k+3`` share one ``created_at`` (7 s apart);
  the list order is descending job number, as for every group;
* job ``n`` runs instance ``(n - 1) % M`` of ``M = ceil(N / 4)`` instances
  (``repo__repo-NNNNN`` over ``COMPARE_REPOS``), about four trials each, both groups the
  same instances; each instance has a latent pass probability, GSCALE2 raises it in django
  and sympy (runs of one benchmark for ``bl compare`` at scale);
* ~3% running, ~2% cancelled (no score); no evaluation tasks, no download task.

A filtered page (``status``, ``template``, ``instance_id``) and the status counts need every
job once: the numbers of the matching jobs are computed at the first such question and
kept (4 bytes a job).  The group aggregates (``metrics group``'s overall answer, the
detail pages' ``tokenized_metrics``) are computed over the newest ``SAMPLE`` jobs, with
the group's real job count: a scale group is for load, not for those figures.
"""

from __future__ import annotations

import hashlib
import threading
from array import array
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

SCALE_GROUPS = ("GSCALE", "GSCALE2")
SCALE_START = datetime(2026, 10, 1, 0, 0, 0)  # after every other group (the live group: September)
STEP_SECONDS = 7  # between two created_at values
TIE_RUN = 3  # = dataset.TIE_RUN
TRIALS = 4  # jobs per instance, about
SAMPLE = 20_000  # jobs the group aggregates are computed over
REPOS = ("astropy", "django", "matplotlib", "pytest", "requests", "scikit-learn", "sphinx", "sympy")
TEMPLATES = ("swe-bench-verified", "swe-bench-lite", "swe-bench-full")
LEVELS = (0.0, 0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.0)
RAISED = {"django": 0.3, "sympy": 0.3}  # GSCALE2's change of the latent pass probability
_SEQ_BASE = 10**12  # above every stored job's seq
_UNIT = float(1 << 64)


def _draws(key: str) -> tuple[float, float, float, float]:
    """Four uniform draws in [0, 1) from one digest of ``key``."""
    d = hashlib.blake2b(key.encode(), digest_size=32).digest()
    return (int.from_bytes(d[0:8], "little") / _UNIT, int.from_bytes(d[8:16], "little") / _UNIT,
            int.from_bytes(d[16:24], "little") / _UNIT, int.from_bytes(d[24:32], "little") / _UNIT)


class ScaleGroups:
    """The scale groups of one dataset: their group rows, pages, counts and single jobs."""

    def __init__(self, seed: int, jobs: int, first_idx: int):
        if jobs < 0:
            raise ValueError("scale_jobs must be >= 0")
        self.seed = seed
        self.jobs = jobs
        self.instances = max(1, -(-jobs // TRIALS))
        self.first_idx = first_idx
        self._span = ((jobs + TIE_RUN - 1) // TIE_RUN) * STEP_SECONDS  # seconds one group covers
        self._levels: dict[int, float] = {}
        self._matches: dict[tuple[Any, ...], array] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------- groups
    def __contains__(self, group_id: object) -> bool:
        return self.jobs > 0 and group_id in SCALE_GROUPS

    def group_ids(self) -> list[str]:
        return list(SCALE_GROUPS) if self.jobs else []

    def _start(self, group_id: str) -> datetime:
        return SCALE_START + timedelta(seconds=SCALE_GROUPS.index(group_id) * (self._span + 3600))

    def group(self, group_id: str) -> dict[str, Any]:
        i = SCALE_GROUPS.index(group_id)
        return {"idx": self.first_idx + i, "group_id": group_id, "name": f"scale-{group_id.lower()}",
                "template": TEMPLATES[0], "dataset": "swe-verified/test", "cluster": "eval-hk-prod-1",
                "created_at": self._start(group_id).isoformat(), "job_count": self.jobs, "task_count": 0}

    # --------------------------------------------------------------- jobs
    def _level(self, k: int) -> float:
        level = self._levels.get(k)
        if level is None:
            level = LEVELS[int(_draws(f"{self.seed}:scale:level:{k}")[0] * len(LEVELS))]
            if len(self._levels) < 1_000_000:
                self._levels[k] = level
        return level

    def job(self, group_id: str, n: int) -> dict[str, Any]:
        """Job ``n`` (1-based) of a scale group, as a stored job's row."""
        k = (n - 1) % self.instances
        repo = REPOS[k % len(REPOS)]
        chance = self._level(k)
        if group_id == SCALE_GROUPS[1]:
            chance = min(1.0, chance + RAISED.get(repo, 0.0))
        u0, u1, u2, u3 = _draws(f"{self.seed}:{group_id}:{n}")
        if u0 < 0.03:
            status = "running"
        elif u0 < 0.05:
            status = "cancelled"
        else:
            status = "succeeded" if u1 < chance else "failed"
        x = (u1 * 7919) % 1.0
        score = (round(0.5 + 0.5 * x, 4) if status == "succeeded"
                 else round(0.5 * x, 4) if status == "failed" else None)
        created = self._start(group_id) + timedelta(seconds=((n - 1) // TIE_RUN + 1) * STEP_SECONDS)
        bits = int(u3 * _UNIT)
        return {
            "seq": _SEQ_BASE + SCALE_GROUPS.index(group_id) * 10**9 + (self.jobs - n),
            "job_id": f"{group_id}-J{n:04d}", "group_id": group_id, "n": n,
            "created_at": created.isoformat(), "template": TEMPLATES[k % len(TEMPLATES)],
            "status": status, "instance_id": f"{repo}__{repo}-{10000 + k}", "score": score,
            "duration_s": round(5 + 600 * u2, 2), "num_turns": 1 + bits % 60,
            "output_total": 100 + (bits >> 8) % 49_901, "context_peak": 1_000 + (bits >> 24) % 127_001,
            "salt": (bits >> 32) & 0x7FFFFFFF, "updated_at": None,
        }

    def number(self, job_id: str) -> tuple[str, int] | None:
        """``(group, n)`` of a scale job's id, or None."""
        group_id, sep, rest = job_id.rpartition("-J")
        if not sep or group_id not in self or not rest.isdigit() or len(rest) < 4:
            return None
        n = int(rest)
        if not 1 <= n <= self.jobs or f"{n:04d}" != rest:
            return None
        return group_id, n

    def find(self, job_id: str) -> dict[str, Any] | None:
        found = self.number(job_id)
        return self.job(*found) if found else None

    # -------------------------------------------------------------- pages
    @staticmethod
    def _active(filters: dict[str, str | None]) -> tuple[tuple[str, str], ...]:
        return tuple((k, v) for k in ("template", "status", "instance_id") if (v := filters.get(k)) is not None)

    def _matching(self, group_id: str, active: tuple[tuple[str, str], ...]) -> array:
        """The numbers of the group's jobs that match, in list order (computed once)."""
        key = (group_id, *active)
        with self._lock:
            found = self._matches.get(key)
        if found is not None:
            return found
        if len(active) == 1 and active[0][0] == "status":  # one pass sorts every status
            by_status: dict[str, array] = {}
            for n in range(self.jobs, 0, -1):
                by_status.setdefault(self.job(group_id, n)["status"], array("I")).append(n)
            with self._lock:
                for status, numbers in by_status.items():
                    self._matches[(group_id, ("status", status))] = numbers
                return self._matches.setdefault(key, array("I"))
        out = array("I")
        for n in range(self.jobs, 0, -1):
            job = self.job(group_id, n)
            if all(job[k] == v for k, v in active):
                out.append(n)
        with self._lock:
            self._matches[key] = out
        return out

    def count(self, group_id: str, filters: dict[str, str | None]) -> int:
        active = self._active(filters)
        return len(self._matching(group_id, active)) if active else self.jobs

    def page(self, group_id: str, skip: int, limit: int, filters: dict[str, str | None]) -> list[dict[str, Any]]:
        """The jobs at ``skip`` .. ``skip + limit`` of the group's list (newest first)."""
        active = self._active(filters)
        if active:
            numbers = self._matching(group_id, active)
            return [self.job(group_id, n) for n in numbers[skip:skip + limit]]
        first = self.jobs - skip
        return [self.job(group_id, n) for n in range(first, max(0, first - limit), -1)]

    def listing(self, group_id: str) -> Iterator[dict[str, Any]]:
        """Every job of the group in list order, generated as it is read."""
        return (self.job(group_id, n) for n in range(self.jobs, 0, -1))

    def job_ids(self, group_id: str) -> list[str]:
        return [f"{group_id}-J{n:04d}" for n in range(self.jobs, 0, -1)]

    def sample(self, group_id: str) -> Iterator[dict[str, Any]]:
        """The newest ``SAMPLE`` jobs (what the group aggregates are computed over)."""
        return (self.job(group_id, n) for n in range(self.jobs, max(0, self.jobs - SAMPLE), -1))

    def status_counts(self, group_id: str, statuses: tuple[str, ...]) -> dict[str, int]:
        return {status: self.count(group_id, {"status": status}) for status in statuses}
