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


def why(api, *groups: str, extra: tuple[str, ...] = (), flag: str = "--why-all") -> list[dict]:
    result = api("compare", *(a for g in groups for a in ("-g", g)), flag, "--output", "json", *extra)
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
    table = api("compare", "-g", "BASE", "-g", "CAND2", "--why-all", "--output", "table")
    markdown = api("compare", "-g", "BASE", "-g", "CAND2", "--why-all", "--output", "markdown")
    assert table.code == 0 and markdown.code == 0
    assert "Where CAND2 parts from BASE" in table.out and "Where CAND2 parts from BASE" in markdown.out
    for direction in result["divergences"]["directions"]:
        for line in direction["lines"]:
            assert f"  {line}\n" in table.out
    plain = api("compare", "-g", "BASE", "-g", "CAND2", "--output", "table")
    assert "parts from" not in plain.out
    assert "divergences" not in json.loads(api("compare", "-g", "BASE", "-g", "CAND2", "--output", "json").out)[0]


def test_why_looks_at_the_changes_beyond_noise_only(api):
    """--why alone: the changed instances the evidence marks beyond noise at --fdr, every one of
    them that has a passing and a failing trial; --why-all: every changed instance."""
    [result] = why(api, "BASE", "CAND2", extra=("--fdr", "0.7"), flag="--why")
    summary = result["divergences"]
    beyond = [e["instance"] for e in result["instances"] if e["beyond_noise"]]
    assert beyond, "at FDR 70% some changes of CAND2 are beyond noise"
    assert result["evidence"]["beyond_noise"] == len(beyond)
    assert summary["picked"] == "beyond-noise" and summary["fdr"] == 0.7 and summary["fallback"] is False
    assert (summary["changed"], summary["looked_at"]) == (len(result["instances"]), len(beyond))
    assert {d["instance"] for d in summary["divergences"]} == set(beyond)
    assert summary["note"] is None
    [every] = why(api, "BASE", "CAND2")
    assert every["divergences"]["picked"] == "all" and every["divergences"]["note"] is None
    assert every["divergences"]["looked_at"] == len(every["instances"]) > len(beyond)


def test_when_nothing_is_beyond_noise_why_looks_at_every_change_and_says_so(api):
    """With about 4 trials per instance no change of CAND2 is beyond noise at 10%: --why then
    looks at every changed instance, as --why-all does, and its summary says so first."""
    [result] = why(api, "BASE", "CAND2", flag="--why")
    [every] = why(api, "BASE", "CAND2", flag="--why-all")
    assert result["evidence"]["beyond_noise"] == 0, "the sandbox's CAND2 has no change beyond noise at 10%"
    summary, all_of_them = result["divergences"], every["divergences"]
    changed = len(result["instances"])
    assert (summary["picked"], summary["fallback"], summary["looked_at"]) == ("all", True, changed)
    assert summary["note"].startswith(f"no changed instance is beyond noise at FDR 10%, so all {changed} changed "
                                      "are looked at (as --why-all)")
    assert summary["divergences"] == all_of_them["divergences"] and summary["directions"] == all_of_them["directions"]
    assert all_of_them["fallback"] is False and all_of_them["note"] is None
    for output in ("table", "markdown"):
        shown = api("compare", "-g", "BASE", "-g", "CAND2", "--why", "--output", output)
        assert shown.code == 0, shown.err
        text = shown.out.replace("\\", "") if output == "markdown" else shown.out  # markdown escapes - and _
        assert summary["note"] in text and f"none is beyond noise at FDR 10%, so all {changed}" in text
    regressed = api("compare", "-g", "BASE", "-g", "CAND2", "--why", "--changes", "regressed", "--output", "table")
    count = sum(1 for e in result["instances"] if e["difference"] < 0)
    assert f"no regressed instance is beyond noise at FDR 10%, so all {count} regressed are looked at" in regressed.out
    assert f"--why: the first difference of {count} changed instance(s)" in regressed.err


def test_changes_regressed_fetches_the_regressions_only(api):
    [result] = why(api, "BASE", "CAND2", extra=("--changes", "regressed"))
    found = result["divergences"]["divergences"]
    assert found and {d["direction"] for d in found} == {"regressed"}
    assert len(found) == sum(1 for e in result["instances"] if e["difference"] < 0)


def test_the_python_client_returns_the_divergences(sandbox, api):
    [cli] = why(api, "BASE", "CAND2")
    with Client(host=sandbox.url, api_key=sandbox.api_key) as bl:
        [result] = bl.compare(group=["BASE", "CAND2"], why_all=True)
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


def test_the_report_dir_has_a_why_section_linking_each_instance_to_its_page(api, tmp_path):
    from html_tree import parse

    [result] = why(api, "BASE", "CAND2", extra=("--changes", "regressed"))
    folder = tmp_path / "report"
    ran = api("compare", "-g", "BASE", "-g", "CAND2", "--why-all", "--changes", "regressed",
              "--report-dir", str(folder))
    assert ran.code == 0, ran.err
    _, root = parse((folder / "index.html").read_text(encoding="utf-8"))
    [section] = root.find_all("div", "why")
    regressed = result["divergences"]["directions"][0]
    kinds = section.find_all("table", "why-kinds")[0].find_all("tbody")[0].find_all("tr")
    for tr, kind in zip(kinds, regressed["kinds"], strict=True):
        cells = tr.find_all("td")
        assert (cells[0].all_text(), int(cells[1].all_text())) == (kind["kind"], kind["count"])
        assert (cells[2].all_text() == "explains nothing") == kind["explains_nothing"]
        assert [a.all_text() for a in cells[6].find_all("a")] == kind["instances"]
        for a in cells[6].find_all("a"):
            assert (folder / a.attrs["href"]).is_file()
    assert "explains nothing" in section.all_text()  # the planted timeout's kind (README)
    rows = section.find_all("table", "why")[0].find_all("tbody")[0].find_all("tr")
    assert [tr.find_all("td")[0].all_text() for tr in rows] == [d["instance"] for d in result["divergences"]["divergences"]]
    report = tmp_path / "one.html"
    ran = api("compare", "-g", "BASE", "-g", "CAND2", "--why-all", "--changes", "regressed", "--report", str(report))
    assert ran.code == 0, ran.err
    _, root = parse(report.read_text(encoding="utf-8"))
    [section] = root.find_all("div", "why")
    assert not section.find_all("a")
    commands = [tr.find_all("td")[-1].all_text() for tr in section.find_all("table", "why")[0].find_all("tbody")[0].find_all("tr")]
    assert commands == [f"bl view -j {d['passing']['job_id']} -j {d['failing']['job_id']}"
                        for d in result["divergences"]["divergences"]]


def test_why_in_csv_and_jsonl_is_one_declared_row_per_divergence(api):
    import csv
    import io

    from benchloop.table.load import load_model

    params = load_model().action("compare", "compare").combine.params
    columns = [c.name for c in params.columns("why_columns")]
    [result] = why(api, "BASE", "CAND2", extra=("--changes", "regressed"))
    found = result["divergences"]["divergences"]
    kinds = {k["kind"]: k for k in result["divergences"]["directions"][0]["kinds"]}
    shown = api("compare", "-g", "BASE", "-g", "CAND2", "--why-all", "--changes", "regressed", "--output", "csv")
    assert shown.code == 0, shown.err
    rows = list(csv.DictReader(io.StringIO(shown.out)))
    assert list(rows[0]) == columns and len(rows) == len(found)
    for row, d in zip(rows, found, strict=True):
        change = next(c for c in d["changes"] if c["argument"] == d["argument"]) if d["argument"] else d["changes"][0]
        assert (row["candidate"], row["instance"], row["step"], row["tool"], row["kind"], row["shape"]) == (
            "CAND2", d["instance"], str(d["step"]), d["tool"], d["kind"], d["shape"])
        assert (row["argument"], row["passing_value"], row["failing_value"]) == (
            change["argument"], str(change["passing"]), str(change["failing"]))
        assert row["explains_nothing"] == str(kinds[d["kind"]]["explains_nothing"]).lower()
        assert (row["passing_job"], row["failing_job"]) == (d["passing"]["job_id"], d["failing"]["job_id"])
        assert row["fail_reason"] == (d["failing"]["sub_fail_reason"] or d["failing"]["fail_reason"] or "")
    lines = api("compare", "-g", "BASE", "-g", "CAND2", "--why-all", "--changes", "regressed", "--output", "jsonl")
    assert [json.loads(line)["instance"] for line in lines.out.splitlines()] == [d["instance"] for d in found]
    plain = api("compare", "-g", "BASE", "-g", "CAND2", "--output", "csv")
    assert plain.out.startswith("baseline,candidate,metric,")  # without --why: the comparisons
    fallen_back = api("compare", "-g", "BASE", "-g", "CAND2", "--why", "--changes", "regressed", "--output", "csv")
    assert fallen_back.code == 0 and fallen_back.out == shown.out  # none beyond noise: every regression, as --why-all
    assert "--why: no regressed instance is beyond noise at FDR 10%, so all" in fallen_back.err


def test_why_in_parquet_types_the_declared_columns(api, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    from benchloop.table.load import load_model

    [result] = why(api, "BASE", "CAND2", extra=("--changes", "regressed"))
    path = tmp_path / "why.parquet"
    shown = api("compare", "-g", "BASE", "-g", "CAND2", "--why-all", "--changes", "regressed", "--output", "parquet",
                "-o", str(path))
    assert shown.code == 0, shown.err
    columns = load_model().action("compare", "compare").combine.params.columns("why_columns")
    described = duckdb.sql(f"describe select * from '{path}'").fetchall()
    kinds = {"string": "VARCHAR", "number": "DOUBLE", "boolean": "BOOLEAN"}
    assert [(name, kind) for name, kind, *_ in described] == [(c.name, kinds[c.type]) for c in columns]
    got = duckdb.sql(f"select instance, step, failing_job from '{path}'").fetchall()
    assert got == [(d["instance"], d["step"], d["failing"]["job_id"]) for d in result["divergences"]["divergences"]]
