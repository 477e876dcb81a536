"""README's per-repository sentences of the sandbox's comparison runs say what ``bl compare`` finds.

The "runs to compare" row names, for each candidate run, every repository whose pass rate
moves by 10 pp or more (``--cluster '^(.+?)__'``, ``cluster_differences``), in its direction,
and no other; and the failure mix planted in CAND2 is the one ``bl compare --why-all`` finds.
The README's words are parsed, the figures come from the command against ``bl sandbox
serve``'s data (seed 7, 160 comparison jobs per run).
"""

from __future__ import annotations

import json
import re

import pytest
from support import ROOT

from benchloop.sandbox.facts import planted

README = ROOT / "README.md"
MOVE = 0.10  # the README names a repository whose pass rate moves by this much or more
RUN = re.compile(r"`(?P<run>[\w-]+)` (?:\(against `(?P<base>[\w-]+)`\) )?is up in (?P<up>[\w, -]+?), "
                 r"down in (?P<down>[\w, -]+?)(?= \(|:|;)")


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160)


def row() -> str:
    return next(line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| runs to compare |"))


def names(text: str) -> list[str]:
    return [] if text.strip() == "none" else [n.strip() for n in re.split(r", | and ", text) if n.strip()]


def sentences() -> list[tuple[str, str, list[str], list[str]]]:
    found = [(m["run"], m["base"] or "BASE", names(m["up"]), names(m["down"])) for m in RUN.finditer(row())]
    assert found, "the README's runs-to-compare row has no per-repository sentence"
    return found


def test_every_candidate_run_has_its_sentence():
    from benchloop.sandbox.dataset import COMPARE_GROUPS

    described = {run for run, _, _, _ in sentences()}
    candidates = {g for g in COMPARE_GROUPS if g not in ("BASE", "REPO-BASE")}
    assert described == candidates


@pytest.mark.parametrize(("run", "base", "up", "down"), sentences(), ids=[s[0] for s in sentences()])
def test_the_readme_names_every_repository_that_moves_and_no_other(api, run, base, up, down):
    result = api("compare", "-g", base, "-g", run, "--cluster", "^(.+?)__", "--query", "[0].cluster_differences",
                 "--output", "json")
    assert result.code == 0, result.err
    clusters = json.loads(result.out)
    moved_up = sorted(c["cluster"] for c in clusters if c["pass_rate_difference"] >= MOVE)
    moved_down = sorted(c["cluster"] for c in clusters if c["pass_rate_difference"] <= -MOVE)
    assert (sorted(up), sorted(down)) == (moved_up, moved_down)


def test_the_planted_mix_of_cand2_is_what_why_finds(api):
    text = row()
    plan = re.search(r"of its (\d+) regressions (\d+) edit another file, (\d+) give up and (\d+) times? out", text)
    assert plan, "the README states CAND2's planted mix"
    total, edits, gave_up, timeouts = map(int, plan.groups())
    result = api("compare", "-g", "BASE", "-g", "CAND2", "--why-all", "--changes", "regressed",
                 "--output", "json")
    assert result.code == 0, result.err
    [element] = json.loads(result.out)
    [regressed] = element["divergences"]["directions"]
    assert regressed["instances"] == total
    kinds = [planted("CAND2", d["instance"]) for d in element["divergences"]["divergences"]]
    assert (kinds.count(("model", "wrong_patch")), kinds.count(("model", "gave_up_early")),
            kinds.count(("timeout", "step_timeout"))) == (edits, gave_up, timeouts)
    by_kind = {k["kind"]: k for k in regressed["kinds"]}
    another_path = by_kind["editor str_replace with another path"]
    wrong = [d["instance"] for d in element["divergences"]["divergences"]
             if planted("CAND2", d["instance"]) == ("model", "wrong_patch")]
    assert another_path["count"] == edits and sorted(another_path["instances"]) == sorted(wrong)
    assert regressed["lines"][0].startswith(f"in {edits} of {total} regressions the first differing action is "
                                            "`editor str_replace` with another `path`")
    [timeout] = [d for d in element["divergences"]["divergences"]
                 if planted("CAND2", d["instance"]) == ("timeout", "step_timeout")]
    assert timeout["shape"] == "kept working" and by_kind[timeout["kind"]]["explains_nothing"]
