"""`--timeout` of a wait bounds the whole wait, inside one look too.

A hostile job list that never ends (every page full of new jobs, no total) or one that
answers each page slowly makes a single look longer than any timeout; the wait's one
clock is checked before each page, so `bl jobs wait --timeout` still ends with exit 124.
The stand-in backends run over loopback; `bl` runs in a subprocess bounded by
``subprocess.run``'s own timeout, so a wait that never ends fails the test instead of
hanging it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from itertools import count

from support import js

from benchloop.base.errors import EXIT_WAIT_TIMEOUT
from benchloop.table.load import load_model

WAITER = load_model().waiters["group_jobs_done"]
PAGE = WAITER.enumeration.pagination.page_size  # the scan asks for full pages of this size
RUNNING = WAITER.counts.statuses.in_progress[0]


def _bl(url: str, *args: str, limit: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "BENCHLOOP_HOST": url, "BENCHLOOP_API_KEY": "k"}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "benchloop", *args], capture_output=True, text=True,
                          env=env, timeout=limit)
    return done, time.monotonic() - start


def test_a_job_list_with_no_end_is_bounded_by_the_timeout(origins):
    ids = count()

    def answer(path, query):
        if path == "/openapi/jobs":  # always a full page of jobs never seen, no total
            limit = int(query.get("limit", PAGE))
            jobs = [{"job_id": f"J{n}", "group_id": "X", "status": RUNNING,
                     "created_at": f"2026-01-01 {n:08d}"} for n in (next(ids) for _ in range(limit))]
            return js({"jobs": jobs})
        return js({"group_id": "X"})

    backend = origins(answer)
    done, took = _bl(backend.url, "jobs", "wait", "-g", "X", "--timeout", "2", "--interval", "0.1")
    assert done.returncode == EXIT_WAIT_TIMEOUT, done.stderr
    assert "X: jobs wait total timeout exceeded" in done.stderr
    assert took < 30
    assert len(backend.seen) >= 2  # it was stopped inside a look, between two pages


def test_slow_pages_are_bounded_by_the_timeout(origins):
    def answer(path, query):
        if path == "/openapi/jobs":
            time.sleep(0.4)
            skip, limit = int(query.get("skip", 0)), int(query.get("limit", PAGE))
            jobs = [{"job_id": f"J{n}", "group_id": "X", "status": RUNNING,
                     "created_at": f"2026-01-01 {10 * PAGE - n:08d}"} for n in range(skip, skip + limit)]
            return js({"jobs": jobs, "total": 10 * PAGE})  # ten pages of 0.4 s: one look takes 4 s
        return js({"group_id": "X"})

    backend = origins(answer)
    done, took = _bl(backend.url, "jobs", "wait", "-g", "X", "--timeout", "1", "--interval", "0.1")
    assert done.returncode == EXIT_WAIT_TIMEOUT, done.stderr
    assert took < 3.5  # not the 4 s of one whole look
