"""``bl compare --why``: where the changed instances of a comparison part, grouped by kind.

Checked against what the sandbox's stories say independently (``sandbox.trajectories``:
a ``wrong_patch`` failure edits the instance's other file where a pass edits its own; the
fail reason of every job comes from ``sandbox.facts``), not against the module's own code.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchloop import Client
from benchloop.sandbox.dataset import Dataset
from benchloop.sandbox.facts import fail_reason
from benchloop.sandbox.trajectories import Instance

JOBS = 160


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=JOBS)


@pytest.fixture(scope="module")
def jobs():
    data = Dataset(seed=7, groups=3, compare_jobs=JOBS)
    return {j["job_id"]: j for gid in ("BASE", "CAND2", "CAND") for j in data.iter_group_jobs(gid)}


def reported(job: dict) -> str | None:
    """The fail reason a job's report gives (the sandbox sends no report section for every 7th job)."""
    return fail_reason(job)[1] if job["n"] % 7 else None


def why(api, *groups: str, extra: tuple[str, ...] = ()) -> list[dict]:
    result = api("compare", *(a for g in groups for a in ("-g", g)), "--why", "--output", "json", *extra)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_every_changed_instance_gets_a_passing_and_a_failing_trial_of_the_right_sides(api, jobs):
    [result] = why(api, "BASE", "CAND2")
    found = result["divergences"]["divergences"]
    changed = {e["instance"]: e for e in result["instances"]}
    assert found and {d["instance"] for d in found} <= set(changed)
    for d in found:
        entry = changed[d["instance"]]
        better, worse = ("CAND2", "BASE") if entry["difference"] > 0 else ("BASE", "CAND2")
        assert d["direction"] == ("improved" if entry["difference"] > 0 else "regressed")
        assert (d["passing"]["group"], d["failing"]["group"]) == (better, worse)
        assert d["passing"]["pass"] is True and d["failing"]["pass"] is False
        side = {"BASE": "baseline", "CAND2": "candidate"}
        assert d["passing"]["job_id"] in entry[side[better]]["jobs"]
        assert d["failing"]["job_id"] in entry[side[worse]]["jobs"]
        assert jobs[d["failing"]["job_id"]]["instance_id"] == d["instance"]


def test_a_wrong_patch_is_found_as_another_path_with_both_files(api, jobs):
    [result] = why(api, "BASE", "CAND2")
    wrong = [d for d in result["divergences"]["divergences"]
             if fail_reason(jobs[d["failing"]["job_id"]]) == ("model", "wrong_patch")]
    assert wrong, "the sandbox plants wrong_patch failures among the changed instances"
    for d in wrong:
        inst = Instance(d["instance"])
        assert d["shape"] == "a different file path" and d["argument"] == "path"
        assert d["kind"] == "editor str_replace with another path"
        path = next(c for c in d["changes"] if c["argument"] == "path")
        assert (path["passing"], path["failing"]) == (inst.path, inst.wrong_path)
        assert isinstance(d["step"], int)


def test_the_summary_counts_each_kind_and_the_fail_reasons_of_the_failing_trials(api, jobs):
    [result] = why(api, "BASE", "CAND2")
    summary = result["divergences"]
    found = summary["divergences"]
    for direction in summary["directions"]:
        mine = [d for d in found if d["direction"] == direction["direction"]]
        assert direction["instances"] == len(mine)
        kinds = Counter(d["kind"] for d in mine)
        assert {k["kind"]: k["count"] for k in direction["kinds"]} == dict(kinds)
        assert [k["count"] for k in direction["kinds"]] == sorted(kinds.values(), reverse=True)
        for kind in direction["kinds"]:
            assert kind["instances"] == [d["instance"] for d in mine if d["kind"] == kind["kind"]]
            taken = kind["in_failing"]
            assert 1 <= taken["taking_it"] <= taken["trials"] or kind["shape"] == "the same actions"
        reasons = Counter(reported(jobs[d["failing"]["job_id"]]) or "(no fail reason)" for d in mine)
        assert direction["fail_reasons"] == dict(reasons)
        words = "regressions" if direction["direction"] == "regressed" else "improvements"
        top = direction["kinds"][0]
        assert direction["lines"][0].startswith(f"in {top['count']} of {len(mine)} {words} ")
        assert direction["lines"][-1].startswith(f"{words} by fail reason: ")


def test_a_kind_as_common_in_passing_trials_is_marked_as_explaining_nothing(api):
    [result] = why(api, "BASE", "CAND2")
    for direction in result["divergences"]["directions"]:
        for kind in direction["kinds"]:
            p, f = kind["in_passing"], kind["in_failing"]
            if p["share"] is None or not f["share"]:
                assert not kind["explains_nothing"]
                continue
            assert p["share"] == p["taking_it"] / p["trials"] and f["share"] == f["taking_it"] / f["trials"]
            assert kind["explains_nothing"] == (p["share"] >= 0.8 * f["share"])
            line = next(x for x in direction["lines"] if x.startswith(f"in {kind['count']} of ")
                        and x.endswith(", ".join(kind["instances"])))
            assert ("explains nothing" in line) == kind["explains_nothing"]


def test_the_terminal_and_markdown_summaries_say_the_same_lines(api):
    [result] = why(api, "BASE", "CAND2")
    table = api("compare", "-g", "BASE", "-g", "CAND2", "--why", "--output", "table")
    markdown = api("compare", "-g", "BASE", "-g", "CAND2", "--why", "--output", "markdown")
    assert table.code == 0 and markdown.code == 0
    assert "Where CAND2 parts from BASE" in table.out and "Where CAND2 parts from BASE" in markdown.out
    for direction in result["divergences"]["directions"]:
        for line in direction["lines"]:
            assert f"  {line}\n" in table.out
    plain = api("compare", "-g", "BASE", "-g", "CAND2", "--output", "table")
    assert "parts from" not in plain.out
    assert "divergences" not in json.loads(api("compare", "-g", "BASE", "-g", "CAND2", "--output", "json").out)[0]


def test_changes_regressed_fetches_the_regressions_only(api):
    [result] = why(api, "BASE", "CAND2", extra=("--changes", "regressed"))
    found = result["divergences"]["divergences"]
    assert found and {d["direction"] for d in found} == {"regressed"}
    assert len(found) == sum(1 for e in result["instances"] if e["difference"] < 0)


def test_the_python_client_returns_the_divergences(sandbox, api):
    [cli] = why(api, "BASE", "CAND2")
    with Client(host=sandbox.url, api_key=sandbox.api_key) as bl:
        [result] = bl.compare(group=["BASE", "CAND2"], why=True)
    assert result["divergences"] == cli["divergences"]


def test_a_hostile_or_huge_trajectory_gives_a_bounded_divergence():
    from benchloop.sandbox.trajectories import hostile_steps
    from benchloop.viewer import divergences as dv

    job = {"job_id": "GHOSTILE-J0001", "group_id": "GHOSTILE"}
    huge = [{"step": 0, "role": "assistant", "tool_calls": [{"name": "editor", "arguments": {
        "command": "create", "path": "a.py", "file_text": "x" * 100_000}}]}]
    entry = {"instance": "i", "difference": -1.0}
    for passing, failing in ((huge, hostile_steps(job)), (hostile_steps(job), huge), (huge, []), ([], huge)):
        d = dv.divergence(entry, {"job_id": "A", "trajectory": passing, "pass": True},
                          {"job_id": "B", "trajectory": failing, "pass": False})
        assert len(json.dumps(d, default=str)) < 4000
        for change in d["changes"]:
            for side in ("passing", "failing"):
                value = change[side]
                assert not isinstance(value, str) or len(value) <= dv.VALUE_CHARS
    stopped = dv.divergence(entry, {"job_id": "A", "trajectory": huge * 1 + [{"step": 1, "role": "assistant"}]},
                            {"job_id": "B", "trajectory": huge})
    assert stopped["shape"] == "gave up earlier" and stopped["step"] == 1
