"""Round four (issue 31), the findings that live in ``bl compare``: each through a real ``bl``
process, as the attack saw it, against a stand-in backend on loopback (tests/support.Origin).

* **Big numbers**: a 400-digit integer score failed a whole group; the same integer in a cost
  column ended the command in "unexpected error: OverflowError" with nothing printed.  A number
  that does not fit a float is now no score (counted, not scored) and no cost, with a ``[warn]``.
* **--report never replaces a symlink or a special file** (``--report /dev/stdout`` as root
  replaced the ``/dev/stdout`` symlink with a regular file): it is refused before any request
  (exit 2), and the link or FIFO is left as it was; ``--report -`` prints the page on stdout; a
  missing directory is an error, not made.
* **The key in the report**: a backend that echoes the API key inside ids put it, unmasked, into
  the HTML report (a page made to be mailed); it is masked there as the MCP server masks it,
  and in the table and markdown renderings.

Each test fails on the code before its fix (09e63b2).  docs/reliability.md, "Round four", lists them.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from support import API_KEY, NOT_FOUND, ROOT, Origin, js

from benchloop import Client

BIG = 10 ** 400  # valid JSON; float() of it raises OverflowError


def bl(url: str, *args: str, key: str = API_KEY) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchloop", "--host", url, "--api-key", key, "--retry", "0",
                           *args], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def backend(groups: dict[str, list[tuple[str, str, object, object]]]) -> Origin:
    """A backend of ``groups``: group id -> jobs ``(job id, instance, score, duration_s)``,
    the job list and the detail metrics as the real one pages them."""

    def answer(path: str, query: dict[str, str]):
        jobs = groups.get(query.get("group_id", ""))
        if jobs is None:
            return NOT_FOUND
        skip, limit = int(query.get("skip", 0)), int(query.get("limit", 1000))
        page = jobs[skip:skip + limit]
        if path == "/openapi/jobs":
            return js({"total": len(jobs), "jobs": [
                {"job_id": j, "group_id": query["group_id"], "status": "succeeded", "instance_id": inst,
                 "template": "t", "created_at": "2026-07-01T00:00:00"} for j, inst, _, _ in page]})
        if path == "/openapi/metrics":
            return js({"total": len(jobs), "metrics": [
                {"job_id": j, "metrics": [{"type": "eval", "data": {"task_score": score}}],
                 "run_metrics": [{"duration_s": duration}], "tokenized_metrics": []}
                for j, _, score, duration in page]})
        return NOT_FOUND

    return Origin(answer)


def plain_groups(prefix: str = "") -> dict[str, list[tuple[str, str, object, object]]]:
    return {
        "BASE": [(f"{prefix}B{k}", f"{prefix}repo__repo-{k % 6}", [0.2, 0.9][k % 2], 10 + k) for k in range(24)],
        "CAND": [(f"{prefix}C{k}", f"{prefix}repo__repo-{k % 6}", [0.9, 0.9, 0.2][k % 3], 12 + k) for k in range(24)],
    }


@pytest.fixture
def origin():
    started: list[Origin] = []

    def start(groups) -> Origin:
        server = backend(groups)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# ------------------------------------------------------------ big numbers
def test_a_400_digit_score_is_counted_not_scored_and_the_group_is_compared(origin):
    groups = plain_groups()
    groups["CAND"][0] = ("C0", "repo__repo-0", BIG, 12)
    srv = origin(groups)
    done = bl(srv.url, "compare", "-g", "BASE,CAND")
    assert done.returncode == 0, done.stderr  # was: CAND failed ("cannot convert" / overflow), exit 1
    [result] = json.loads(done.stdout)
    assert result["groups"][1]["jobs"] == 24 and result["groups"][1]["jobs_scored"] == 23
    assert "[warn] CAND: 1 job(s) have a score that does not fit a float (beyond ±1.8e308): not scored" in done.stderr
    assert "unexpected" not in done.stderr


def test_a_400_digit_cost_is_left_out_not_an_unexpected_error(origin):
    groups = plain_groups()
    groups["BASE"][3] = ("B3", "repo__repo-3", 0.9, BIG)
    groups["CAND"][5] = ("C5", "repo__repo-5", 0.2, -BIG)
    srv = origin(groups)
    for output in ("json", "table", "markdown"):
        done = bl(srv.url, "compare", "-g", "BASE,CAND", "--output", output)
        assert done.returncode == 0, done.stderr  # was: "unexpected error: OverflowError", exit 1, no output
        assert "unexpected" not in done.stderr and done.stdout
        assert "[warn] BASE: 1 job(s) have a value of duration_s that does not fit a float" in done.stderr
    [result] = json.loads(bl(srv.url, "compare", "-g", "BASE,CAND").stdout)
    assert result["costs"]["duration_s"]["instances"] == 6  # each instance still has other trials' durations
    table = bl(srv.url, "jobs", "table", "-g", "BASE", "--fields", "job_id,duration_s")
    assert table.returncode == 0 and {"job_id": "B3", "duration_s": None} in json.loads(table.stdout)


# -------------------------------------------------------------- --report
def test_report_refuses_a_symlink_and_leaves_it(origin, tmp_path):
    srv = origin(plain_groups())
    target = tmp_path / "target.html"
    target.write_text("precious")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    to_stdout = tmp_path / "stdout"
    to_stdout.symlink_to("/proc/self/fd/1")  # what /dev/stdout is
    for path, points_to in ((link, str(target)), (to_stdout, "/proc/self/fd/1")):
        done = bl(srv.url, "compare", "-g", "BASE,CAND", "--report", str(path))
        assert done.returncode == 2, done.stderr  # was: exit 0, the link replaced by a regular file
        assert f"cannot write --report {path}: it is a symbolic link; refusing to replace it" in done.stderr
        assert path.is_symlink() and os.readlink(path) == points_to
    assert target.read_text() == "precious"
    assert not srv.seen  # refused before any request


def test_report_refuses_a_fifo_without_opening_it(origin, tmp_path):
    srv = origin(plain_groups())
    fifo = tmp_path / "report.html"
    os.mkfifo(fifo)
    done = bl(srv.url, "compare", "-g", "BASE,CAND", "--report", str(fifo))
    assert done.returncode == 2 and "it exists and is not a regular file (a FIFO, socket or device)" in done.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_report_dash_prints_the_page_on_stdout(origin, tmp_path):
    srv = origin(plain_groups())
    done = bl(srv.url, "compare", "-g", "BASE,CAND", "--report", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<!DOCTYPE html>") and done.stdout.rstrip().endswith("</html>")
    assert "wrote" not in done.stderr and not (ROOT / "-").exists()


def test_report_in_a_missing_directory_is_an_error(origin, tmp_path):
    srv = origin(plain_groups())
    path = tmp_path / "no" / "such" / "report.html"
    done = bl(srv.url, "compare", "-g", "BASE,CAND", "--report", str(path))
    assert done.returncode == 2  # was: exit 0, both directories made
    assert f"cannot write --report {path}: the directory {path.parent} does not exist" in done.stderr
    assert not (tmp_path / "no").exists()


def test_a_directory_that_vanishes_before_the_write_is_not_made_again(tmp_path):
    from benchloop.base import files

    path = tmp_path / "gone" / "report.html"
    with pytest.raises(files.LocalFileError, match="the directory .*gone does not exist"):
        files.atomic_write(str(path), "x", user_file=True)
    assert not (tmp_path / "gone").exists()
    link = tmp_path / "link.html"
    link.symlink_to(tmp_path / "elsewhere.html")
    with pytest.raises(files.LocalFileError, match="it is a symbolic link"):
        files.atomic_write(str(link), "x", user_file=True)
    assert link.is_symlink() and not (tmp_path / "elsewhere.html").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["link.html"]  # no temp file left


def test_the_python_client_refuses_the_same_report_paths(origin, tmp_path):
    from benchloop.sdk.errors import UsageError

    srv = origin(plain_groups())
    link = tmp_path / "r.html"
    link.symlink_to(tmp_path / "t.html")
    with Client(host=srv.url, api_key=API_KEY) as client:
        with pytest.raises(UsageError, match="it is a symbolic link"):
            client.compare(group=["BASE", "CAND"], report=link)
        with pytest.raises(UsageError, match="does not exist"):
            client.compare(group=["BASE", "CAND"], report=tmp_path / "none" / "r.html")


# ---------------------------------------------------------- the key masked
def test_a_key_echoed_in_ids_is_masked_in_the_report_and_the_renderings(origin, tmp_path):
    key = "sk-live-0123456789abcdef"
    srv = origin(plain_groups(prefix=f"echo-{key}-"))
    report = tmp_path / "report.html"
    done = bl(srv.url, "compare", "-g", "BASE,CAND", "--report", str(report), "--changes", "all", key=key)
    assert done.returncode == 0, done.stderr
    page = report.read_text(encoding="utf-8")
    assert key not in page  # was: in every instance and job id of the page
    assert "echo-***-repo__repo-" in page and "echo-***-B" in page and "echo-***-C" in page
    for output in ("table", "markdown"):
        shown = bl(srv.url, "compare", "-g", "BASE,CAND", "--output", output, "--changes", "all", key=key).stdout
        assert key not in shown and "echo-***-repo" in shown.replace("\\", "")
    # the JSON is the data as the backend sent it (a pipe, not a page to share)
    assert key in bl(srv.url, "compare", "-g", "BASE,CAND", key=key).stdout
