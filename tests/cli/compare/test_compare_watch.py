"""``bl compare --watch`` and ``--sequential`` on the sandbox's live comparison groups.

GLIVE-BASE, GLIVE-CAND (much better) and GLIVE-SAME (the baseline's system again) have one
running job per shared instance, job n of each finishing together with GLIVE's clock
(``live_compare``; the tests set its pace or advance it).  A watch waits for them as
``bl jobs wait`` does (the table's waiter), says each change of verdict on stderr and ends
with its documented codes: 0 decided, 5 finished undecided, 124 timed out.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml

from benchloop.compare import sequential
from benchloop.engine.watching import EXIT_UNSETTLED
from benchloop.mcp_server.tools import READ, action_tool
from benchloop.sandbox.dataset import LIVE_PAIR
from benchloop.sdk.methods import sdk_options
from benchloop.table.load import load_model

BASE, CAND, SAME = LIVE_PAIR
SIZE = 40


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    # Its own sandbox: the tests move the live groups along (restart() puts them back).
    return make_sandbox(seed=7, groups=1, jobs_per_group=4, tasks_per_group=2, live_jobs=2, live_compare=SIZE,
                        live_pace=0)


@pytest.fixture(autouse=True)
def restarted(sandbox):
    sandbox.live.restart()
    sandbox.live.pace = 0
    yield
    sandbox.live.restart()


def test_the_watch_ends_exit_0_when_the_candidate_is_decided_before_the_runs_end(sandbox, api):
    sandbox.live.pace = 0.05  # one more instance of every group every 0.05 s once a look names them
    result = api("compare", "-g", BASE, "-g", CAND, "--watch", "--interval", "0.1")
    assert result.code == 0, result.err
    [element] = json.loads(result.out)
    seq = element["sequential"]
    assert seq["verdict"] == "better" and seq["interval"][0] > 0
    assert 2 <= seq["instances"] < SIZE and seq["running_jobs"] > 0  # decided while the runs go on
    assert element["summary"].startswith(f"{CAND} is better than {BASE} (sequential)")
    lines = [line for line in result.err.splitlines() if line.startswith("[info] ")]
    changes = [line for line in lines if line.startswith(("[info] watching:", "[info] changed:"))]
    assert changes[-1].startswith(f"[info] changed: {CAND}: better (")
    assert all("better" not in line for line in changes[:-1])  # each change of verdict said once
    assert "[progress] compare GLIVE-BASE, GLIVE-CAND: 80 jobs, 80 running" in result.err
    assert "exit 5" not in result.err


def test_the_watch_ends_exit_5_when_the_runs_finish_undecided(sandbox, api):
    sandbox.live.pace = 0.02
    result = api("compare", "-g", BASE, "-g", SAME, "--watch", "--interval", "0.1", "--output", "table")
    assert result.code == EXIT_UNSETTLED == 5, result.err
    assert result.out.startswith(f"{SAME} is not distinguishable from {BASE} yet (sequential)")
    assert f"over {SIZE} instances finished in both runs (anytime-valid p" in result.out
    assert "finished without a decision (exit 5)" in result.err
    assert "still running" not in result.err  # the last look's warnings only: nothing runs any more


def test_the_watch_ends_exit_124_at_its_timeout_and_prints_the_last_look(sandbox, api):
    sandbox.live.advance(10)  # the clock stands still: 30 jobs of each group run for ever
    result = api("compare", "-g", BASE, "-g", SAME, "--watch", "--interval", "0.1", "--timeout", "0.4")
    assert result.code == 124, result.err
    [element] = json.loads(result.out)
    assert element["sequential"]["instances"] == 10 and element["sequential"]["instances_waiting"] == SIZE - 10
    assert "compare --watch total timeout exceeded" in result.err and "the last look follows" in result.err
    # warnings once, the last look's, not at every look
    assert result.err.count(f"[warn] {BASE}: 30 of 40 jobs have no score") == 1


def test_a_timeout_before_anything_is_scored_exits_124_and_prints_nothing(api):
    result = api("compare", "-g", BASE, "-g", CAND, "--watch", "--interval", "0.1", "--timeout", "0.3")
    assert result.code == 124 and result.out == ""
    assert "[info] nothing to compare yet, waiting for jobs to finish" in result.err
    assert "[error] compare --watch total timeout exceeded" in result.err and "nothing compared yet" in result.err


def test_a_group_that_fails_ends_the_watch_with_its_failure(api):
    result = api("compare", "-g", BASE, "-g", "G404", "--watch", "--interval", "0.1", "--timeout", "5")
    assert result.code == 1
    assert result.out == ""
    assert "G404" in result.err and "1 id(s) failed" in result.err


def test_the_fixed_sample_compare_warns_about_running_jobs_naming_the_sequential_mode(sandbox, api):
    sandbox.live.advance(12)
    result = api("compare", "-g", BASE, "-g", CAND)
    assert result.code == 0, result.err
    [element] = json.loads(result.out)
    warning = sequential.running_warning({BASE: SIZE - 12, CAND: SIZE - 12})
    assert f"[warn] {warning}" in result.err.splitlines() and warning in element["warnings"]
    assert "--sequential" in warning and "sequential" not in element
    # with --sequential: no such warning, the sequential verdict leads
    result = api("compare", "-g", BASE, "-g", CAND, "--sequential")
    [element] = json.loads(result.out)
    assert "still running" not in result.err
    assert element["summary"].endswith(f"{SIZE - 12} still running (anytime-valid p "
                                       f"{sequential._p(element['sequential']['p_value_adjusted'])})")
    # finished groups: no warning
    sandbox.live.advance(SIZE)
    assert "still running" not in api("compare", "-g", BASE, "-g", CAND).err


def _intervals(element: dict) -> list[str]:
    """Both intervals' texts, as the renderings print them."""
    p, s = element["paired"], element["sequential"]
    return [f"[{100 * p['ci95'][0]:+.1f}, {100 * p['ci95'][1]:+.1f}]",
            f"[{100 * s['interval'][0]:+.1f}, {100 * s['interval'][1]:+.1f}]"]


def test_every_output_format_shows_both_intervals(sandbox, api, tmp_path):
    sandbox.live.advance(25)
    args = ("compare", "-g", BASE, "-g", SAME, "--sequential")
    [element] = json.loads(api(*args).out)
    fixed, seq = element["paired"]["ci95"], element["sequential"]["interval"]
    assert seq[0] < fixed[0] and fixed[1] < seq[1]  # the price of validity: a wider interval
    for output in ("table", "markdown"):
        text = api(*args, "--output", output).out
        assert all(shown in text for shown in _intervals(element)), output
        assert "valid at one look" in text and "valid at every look" in text
    [row] = csv.DictReader(io.StringIO(api(*args, "--output", "csv").out))
    assert json.loads(row["paired.ci95"]) == fixed and json.loads(row["sequential.interval"]) == seq
    [parsed] = yaml.safe_load(api(*args, "--output", "yaml").out)
    assert parsed["sequential"]["interval"] == seq and parsed["paired"]["ci95"] == fixed
    report = tmp_path / "report.html"
    assert api(*args, "--report", str(report)).code == 0
    page = report.read_text(encoding="utf-8")
    assert all(shown in page for shown in _intervals(element)) and "valid at every look" in page


def test_the_watch_writes_its_report_once_from_the_last_look(sandbox, api, tmp_path):
    sandbox.live.pace = 0.03
    folder = tmp_path / "report"
    result = api("compare", "-g", BASE, "-g", CAND, "--watch", "--interval", "0.1", "--report-dir", str(folder))
    assert result.code == 0, result.err
    [element] = json.loads(result.out)
    pages = sorted(p.name for p in (folder / "instances" / CAND).iterdir())
    assert pages == sorted(f"{e['instance']}.html" for e in element["instances"])  # the last look's changes
    assert result.err.count("side-by-side page(s) of the changed instances") == 1
    assert "valid at every look" in (folder / "index.html").read_text(encoding="utf-8")


def test_the_watch_is_a_command_line_mode_only():
    """The Python client and the MCP tools take no option of a watch (it waits); --sequential they do."""
    model = load_model()
    watched = [a for r in model.resources.values() for a in r.actions.values() if a.watch is not None]
    assert watched
    for action in watched:
        names = {o.name for o in sdk_options(action)}
        properties = action_tool(model, action, READ, ()).input_schema["properties"]
        assert action.watch_options and not set(action.watch_options) & (names | set(properties))
        assert "sequential" in names and "sequential" in properties
