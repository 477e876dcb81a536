"""`bl jobs wait` against job lists whose statuses are null, missing or not strings.

docs/contract.md says any status the table does not list is not final: a job without a
status is still running as far as anyone can tell, so the wait goes on (and times out
with exit 124 when it never gets one), and the counts name those jobs ``<missing>``.
Each answer comes from a stand-in backend over loopback (``origins``).
"""

from __future__ import annotations

import json

import pytest
from support import js

from benchloop.base.errors import EXIT_WAIT_TIMEOUT
from benchloop.table.load import load_model

JOB_STATUSES = load_model().statuses["job"]


def _job(i: int, **fields) -> dict:
    return {"job_id": f"J{i}", "group_id": "X", "created_at": f"2026-01-01T00:00:0{i}", **fields}


def _backend(origins, pages):
    """A job list answering ``pages`` in turn (the last repeats), one look per first page."""
    looks: list[int] = []

    def answer(path, query):
        if path == "/openapi/jobs":
            if int(query.get("skip", 0)) == 0:
                looks.append(1)
            jobs = pages[min(len(looks), len(pages)) - 1]
            return js({"jobs": jobs, "total": len(jobs)})
        return js({"group_id": "X"})

    return origins(answer), looks


NO_STATUS = [
    pytest.param([_job(1, status=None)], id="null"),
    pytest.param([_job(1)], id="missing"),
    pytest.param([_job(1, status=JOB_STATUSES.final[0]), _job(2, status=None)], id="null-beside-a-final-one"),
]


@pytest.mark.parametrize("jobs", NO_STATUS)
def test_a_job_without_a_status_is_not_final(bl, origins, jobs):
    backend, looks = _backend(origins, [jobs])
    result = bl("--host", backend.url, "--api-key", "k", "jobs", "wait", "-g", "X",
                "--interval", "0.1", "--timeout", "0.5")
    assert result.code == EXIT_WAIT_TIMEOUT, result.err
    assert len(looks) >= 2  # it looked again
    missing = sum(1 for j in jobs if j.get("status") is None)
    assert "<missing>" in result.err
    assert f"{len(jobs)} jobs" in result.err  # every job is counted, none dropped
    assert f"{missing} <missing>" in result.err
    assert "no status" in result.err  # said once, in words


def test_a_status_that_arrives_ends_the_wait_with_every_job_counted(bl, origins):
    final = JOB_STATUSES.final
    backend, looks = _backend(origins, [
        [_job(1, status=final[0]), _job(2, status=None), _job(3)],
        [_job(1, status=final[0]), _job(2, status=final[1]), _job(3, status=final[0])],
    ])
    result = bl("--host", backend.url, "--api-key", "k", "jobs", "wait", "-g", "X", "--interval", "0.1")
    assert result.code == 0, result.err
    assert len(looks) == 2
    assert "[progress] group X: 3 jobs, 1 " + final[0] + ", 2 <missing>" in result.err
    assert json.loads(result.out) == [{"group_id": "X", "total": 3, "by_status": {final[0]: 2, final[1]: 1}}]


def test_a_status_that_is_no_string_is_counted_and_not_final(bl, origins):
    backend, _ = _backend(origins, [[_job(1, status=7), _job(2, status={"x": 1})]])
    result = bl("--host", backend.url, "--api-key", "k", "jobs", "wait", "-g", "X",
                "--interval", "0.1", "--timeout", "0.4")
    assert result.code == EXIT_WAIT_TIMEOUT, result.err
