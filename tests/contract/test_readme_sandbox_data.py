"""README's table of the sandbox's data says what the sandbox serves.

The download tasks row names every task and, for each, every job it lists: the ids that
belong to no group literally (``JORPHAN``, the hostile ``../JODD x``, the unknown one), the
group's jobs by number.  The hostile id's archive entry and the empty task's error are run.
"""

from __future__ import annotations

import re
import zipfile

from support import ROOT


def _row(name: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return next(line for line in readme.splitlines() if line.startswith(f"| {name} |"))


def _tasks(row: str) -> dict[str, str]:
    """Each task the row names (a backticked ``T...`` at the start of an entry) and its words."""
    parts = re.split(r"(?:^\| download tasks \| |, )`(T[A-Z0-9]*)` ", row)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _numbers(words: str) -> set[int]:
    """The job numbers a task's words name: ``1, 2``, ``5-7`` (a range), ``10 and 25``."""
    head = words.split("`")[0]  # before any backticked id or path
    numbers = {int(n) for n in re.findall(r"\b(\d+)\b", head)}
    for first, last in re.findall(r"\b(\d+)-(\d+)\b", head):
        numbers.update(range(int(first), int(last) + 1))
    return numbers


def test_the_download_tasks_row_names_every_job_of_each_task(backend):
    tasks = _tasks(_row("download tasks"))
    assert {"T1", "T2", "T3", "TMEDIA", "TEMPTY"} <= set(tasks)
    for task, words in tasks.items():
        listed = backend(f"/openapi/trajectory-download-tasks/{task}")["job_ids"]
        for job in listed:
            match = re.fullmatch(r"(G\d+)-J0*(\d+)", job)
            if match:
                assert match.group(1) in words and int(match.group(2)) in _numbers(words), (task, job)
            else:
                assert f"`{job}`" in words, (task, job)
        if not listed:
            assert "no jobs" in words, task


def test_the_jobs_row_names_the_jobs_without_a_group(backend):
    row = _row("jobs")
    for task in _tasks(_row("download tasks")):
        for job in backend(f"/openapi/trajectory-download-tasks/{task}")["job_ids"]:
            if not re.fullmatch(r"G\d+-J\d+", job) and job != "JMISSING":  # the unknown one is no job
                assert f"`{job}`" in row, job


def test_what_the_row_says_of_the_hostile_id_and_the_empty_task(api, tmp_path):
    row = _row("download tasks")
    entry = re.search(r"`(trajectories/[^`]+)`", row).group(1)
    result = api("trajectory", "download", "--task-id", "T2", "-o", str(tmp_path))
    assert result.code == 0, result.err
    with zipfile.ZipFile(tmp_path / "T2_trajectories.zip") as archive:
        assert entry in archive.namelist()
    said = re.search(r"`TEMPTY` \(no jobs: `([^`]+)`, exit (\d)\)", row)
    empty = api("trajectory", "download", "--task-id", "TEMPTY", "-o", str(tmp_path / "empty"))
    assert empty.code == int(said.group(2)) and said.group(1) in empty.err
