"""What a person sees on a terminal (newcomer issue, items 1-3).

The progress tests run ``bl`` in a real pseudo-terminal (the ``pty`` module):
stderr is a terminal, as it is for a person, so counters draw their live bar.
The final state must be the final count followed by a newline, never an
older bar drawn after it; the live line fits the terminal's width.  Off a
terminal every line keeps the contract's bytes (the other test modules pin
them); on a terminal info lines carry ``[info]`` and per-file lines need -v.
"""

from __future__ import annotations

import re
import sys
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import API_KEY, run_on_terminal

from benchloop.base import textwidth
from benchloop.base.log import Counter, Log
from benchloop.engine.formats.table import render_table

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

IDS = [f"G1-J{n:04d}" for n in range(1, 41)]
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def run_in_pty(args: list[str], stdin: str = "", columns: int = 80) -> tuple[int, str]:
    """``bl ARGS`` with stderr on a pseudo-terminal ``columns`` wide; (exit code, what the terminal got)."""
    code, seen, _out = run_on_terminal(args, "stderr", stdin, columns)
    return code, seen.decode("utf-8", "replace").replace("\r\n", "\n")


def screen_lines(raw: str) -> list[str]:
    """What stays on the screen: each line as its last redraw left it."""
    lines = []
    for line in raw.split("\n"):
        lines.append(ANSI.sub("", line.split("\r")[-1]))
    return lines


@pytest.mark.parametrize("concurrency", ["5", "8"])
def test_final_state_is_the_final_count_and_a_newline(sandbox, tmp_path, concurrency):
    for attempt in range(3):  # the race showed in about half the runs; three runs must all be right
        out = tmp_path / f"out{attempt}"
        code, raw = run_in_pty(["--host", sandbox.url, "--api-key", API_KEY, "--concurrency", concurrency,
                                "trajectory", "download", "-j", "-", "-o", str(out)], stdin="\n".join(IDS))
        assert code == 0, raw
        assert raw.endswith("\n"), repr(raw[-120:])
        final = "[progress] job trajectory downloads: 40/40 jobs, downloaded"
        assert final in raw, repr(raw[-300:])
        # Nothing is drawn after the final count: no older bar, no bar at all.
        after = raw[raw.index(final):]
        assert "━" not in after and "─" not in after, repr(after)
        counts = [int(n) for n in re.findall(r" (\d+)/40 jobs", raw)]
        assert counts == sorted(counts), counts  # the count never jumps backwards
        assert len(list(out.iterdir())) == 40


def test_live_line_fits_the_terminal_width(sandbox, tmp_path):
    code, raw = run_in_pty(["--host", sandbox.url, "--api-key", API_KEY, "--concurrency", "2",
                            "trajectory", "download", "-j", "-", "-o", str(tmp_path)],
                           stdin="\n".join(IDS), columns=40)
    assert code == 0
    drawn = [ANSI.sub("", part) for part in raw.split("\r") if "━" in part or "─" in part]
    assert drawn, raw
    for line in drawn:
        assert textwidth.width(line.split("\n")[0]) < 40, line


def test_per_file_lines_need_verbose_on_a_terminal(sandbox, tmp_path):
    args = ["--host", sandbox.url, "--api-key", API_KEY, "metrics", "download", "-j", "G1-J0001,G1-J0002",
            "-o", str(tmp_path)]
    code, raw = run_in_pty(args)
    assert code == 0
    assert "wrote " not in raw
    assert screen_lines(raw)[-2] == "[info] 2 file(s) written (-v lists each file)"
    code, raw = run_in_pty(["-v", *args, "--skip-existing"])
    assert code == 0
    assert f"[info] skip existing {tmp_path / 'G1-J0001_run_metrics.json'}" in screen_lines(raw)
    # Every line a person sees on a terminal has a prefix.
    assert all(line.startswith("[") for line in screen_lines(raw) if line), raw


def test_info_lines_keep_the_contract_bytes_off_a_terminal(api, tmp_path):
    result = api("metrics", "download", "-j", "G1-J0001", "-o", str(tmp_path))
    assert result.err == f"wrote {tmp_path / 'G1-J0001_run_metrics.json'}\n"


class SlowTerminal:
    """A terminal stream whose writes take a while, so that threads overlap in them."""

    def __init__(self):
        self.text = []
        self.lock = threading.Lock()

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        raise OSError("not a real terminal")

    def write(self, data: str) -> int:
        time.sleep(0.0005)
        with self.lock:
            self.text.append(data)
        return len(data)

    def flush(self) -> None:
        pass


def test_counter_never_draws_an_older_count_after_a_newer_one():
    stream = SlowTerminal()
    log = Log(stream=stream)
    counter = Counter(log, "jobs", 64, "jobs", "downloaded")
    threads = [threading.Thread(target=lambda: [counter.step("x") for _ in range(8)]) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    raw = "".join(stream.text)
    counts = [int(n) for n in re.findall(r" (\d+)/64 jobs", raw)]
    assert counts == sorted(counts)
    assert raw.endswith("[progress] jobs: 64/64 jobs, downloaded x\n")


# ------------------------------------------------------------------ tables
def test_table_flattens_the_jobs_of_a_page(api):
    result = api("jobs", "get", "-g", "G1,G2", "--page-size", "2", "--output", "table")
    assert result.code == 0
    header, rule, *rows = result.out.splitlines()
    # the declared rows (the jobs), the element's id first, then the job's declared fields
    assert header.split()[:3] == ["group_id", "job_id", "created_at"]
    assert [row.split()[:2] for row in rows] == [["G1", "G1-J0040"], ["G1", "G1-J0039"],
                                                 ["G2", "G2-J0040"], ["G2", "G2-J0039"]]
    assert "{" not in result.out and result.err == ""


def test_table_flattens_the_tasks_with_the_group_in_front(api):
    result = api("tasks", "get", "-g", "G1", "--page-size", "3", "--output", "table")
    header, _, *rows = result.out.splitlines()
    assert header.split()[:2] == ["group_id", "task_id"]
    assert [row.split()[:2] for row in rows] == [["G1", "G1-T0001"], ["G1", "G1-T0002"], ["G1", "G1-T0003"]]


def test_table_of_nested_answers_names_a_query(api):
    result = api("metrics", "get", "-g", "G1", "--output", "table")
    assert result.code == 0
    # the list of per-job metrics stays JSON: a hint names the query that makes it a table
    assert "[info] lists of objects are shown as JSON; for a table of them select them, e.g. " \
           "--query '[].detail.metrics[]'" in result.err
    flat = api("metrics", "get", "-g", "G1", "--output", "csv", "--query", "[].detail.metrics[]")
    header = flat.out.splitlines()[0].split(",")
    assert flat.code == 0 and header[0] == "job_id" and "run_metrics.duration_s" in header


def test_nested_objects_are_dotted_columns(api):
    header = api("metrics", "get", "-g", "G1", "--output", "csv").out.splitlines()[0].split(",")
    assert header[:2] == ["group_id", "overall.group_id"]
    assert "overall.run_metrics.job_count" in header and "detail.total" in header


def test_table_fits_the_width_and_counts_wide_characters():
    rows = [{"id": "a", "name": "评测任务" * 20, "note": "x" * 80}, {"id": "b", "name": "ok", "note": "y"}]
    text = render_table(rows, width=60)
    for line in text.splitlines():
        assert textwidth.width(line) <= 60, line
    # columns line up in display columns, CJK counted twice
    header, _, first, second = text.splitlines()
    assert textwidth.width(first[:first.index("x")]) == textwidth.width(second[:second.index("y")])


def test_table_cells_escape_control_characters():
    text = render_table([{"name": "evil\x1b[2Jname\x07", "x": "line\nbreak"}], width=100)
    assert "\x1b" not in text and "\x07" not in text
    assert "evil\\x1b[2Jname\\x07" in text and "line break" in text


@given(st.text(st.characters(max_codepoint=0x7F)), st.integers(0, 12), st.sampled_from(["", "…", "..."]))
def test_cutting_ascii_text_is_cutting_it_character_by_character(text, columns, ellipsis):
    """``cut`` takes a shortcut for ASCII text (a big table cuts a million cells): the same result."""
    if textwidth.width(text) <= columns:
        expected = text
    else:
        room, out = max(columns - textwidth.width(ellipsis), 0), ""
        for char in text:
            if textwidth.width(out + char) > room:
                break
            out += char
        expected = out + (ellipsis if columns >= textwidth.width(ellipsis) else "")
    assert textwidth.cut(text, columns, ellipsis) == expected
