"""The first-difference note of ``bl view`` names what differs first, with both values, and the
two cards of that step mark each differing argument without relying on colour.

Against a stand-in backend on loopback whose two trials agree but for one argument of one
call (``path``, with markup in it), against the same call sent the other way (arguments as
JSON text), and against the sandbox's comparison runs: a ``wrong_patch`` failure of BASE and
a pass of CAND2 on the same instance part at the edit, on ``path`` (the wrong file and the
right one, as the sandbox's story plants them), and ``requests__requests-2334`` parts on the
tool, then its command.
"""

from __future__ import annotations

import json

import pytest
from html_tree import parse
from support import API_KEY, NOT_FOUND, js

from benchloop.sandbox import payloads
from benchloop.sandbox.dataset import Dataset
from benchloop.sandbox.facts import fail_reason
from benchloop.sandbox.trajectories import Instance
from benchloop.viewer import trajectory as tr

PATHS = ("requests/utils.py", "requests/<b>models</b>.py")


def steps(path: str, as_text: bool = False) -> list[dict]:
    args = {"command": "str_replace", "path": path, "old_str": "return _legacy(x)", "new_str": "return fixed(x)"}
    call = ({"id": "c", "type": "function", "function": {"name": "editor", "arguments": json.dumps(args)}}
            if as_text else {"id": f"c-{path}", "name": "editor", "arguments": args})
    return [{"step": 1, "role": "user", "content": "fix it"},
            {"step": 2, "role": "assistant", "tool_calls": [{"id": "x", "name": "bash", "arguments": {"command": "ls"}}]},
            {"step": 3, "role": "assistant", "content": "editing", "tool_calls": [call]},
            {"step": 4, "role": "tool", "tool": "editor", "content": "done"}]


def backend(as_text: bool = False):
    trajectories = {"A": steps(PATHS[0], as_text), "B": steps(PATHS[1], as_text)}

    def answer(path: str, query: dict[str, str]):
        job = path.split("/")[3] if path.startswith("/openapi/jobs/") else ""
        if path == f"/openapi/jobs/{job}/trajectory" and job in trajectories:
            return js({"job_id": job, "trajectory": trajectories[job]})
        return NOT_FOUND

    return answer


def view(bl, origin, *args: str):
    return bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "view", "-j", "A", "-j", "B", *args)


@pytest.mark.parametrize("as_text", [False, True], ids=["arguments", "arguments as JSON text"])
def test_the_text_note_names_the_differing_argument_first_with_both_values(bl, origins, as_text):
    result = view(bl, origins(backend(as_text)), "--output", "text")
    assert result.code == 0, result.err
    first = result.out.splitlines()[0]
    assert first.startswith(f"First difference at step 3: path: {PATHS[0]} -> {PATHS[1]} (alike: "), first
    assert "command str_replace" in first and "tool editor" in first


@pytest.mark.parametrize("as_text", [False, True], ids=["arguments", "arguments as JSON text"])
def test_the_page_note_and_both_cards_mark_the_differing_argument(bl, origins, tmp_path, as_text):
    target = tmp_path / "pair.html"
    result = view(bl, origins(backend(as_text)), "-o", str(target))
    assert result.code == 0, result.err
    document = target.read_text(encoding="utf-8")
    _, root = parse(document)
    assert not root.find_all("script") and "models" not in [b.all_text() for b in root.find_all("b")]  # text, not markup
    [note] = root.find_all("p", "firstdiff")
    [change] = note.find_all("span", "change")  # one argument differs: it is named first
    assert change.all_text().startswith("≠ path: ") and [c.all_text() for c in change.find_all("code")] == list(PATHS)
    assert note.all_text().index("path") < note.all_text().index("Alike on both sides")
    [row] = [r for r in root.find_all("div", "row") if "diff" in r.classes()]
    cards = row.find_all("article", "step")
    assert len(cards) == 2
    for card, value in zip(cards, PATHS, strict=True):
        [box] = card.find_all("div", "differs")
        assert box.all_text() == f"≠ differs from the other trial: path {value}"  # words, not a colour
        if not as_text:  # the call's own line of the argument is outlined too
            [mark] = card.find_all("mark", "argdiff")
            assert mark.all_text().strip().rstrip(",") == json.dumps({"path": value})[1:-1]
    assert len(root.find_all("mark")) == (0 if as_text else 2)  # nothing marked outside that row
    assert len(root.find_all("div", "differs")) == 2
    style = root.find_all("style")[0].all_text()
    assert "mark.argdiff{" in style and "dashed" in style.split("mark.argdiff{", 1)[1].split("}", 1)[0]
    assert "\\2260" in style  # the "≠" before a marked line: a sign, not only a colour


def test_a_value_that_differs_late_is_shown_where_it_differs():
    left, right = "x" * 300 + "LEFT" + "y" * 50, "x" * 300 + "RIGHT" + "y" * 50
    text = tr.change_text("new_str", left, right)
    assert "LEFT" in text and "RIGHT" in text and len(text) < 200
    assert tr.value_text("short") == "short" and tr.value_text("a\nb") == "a b"


def test_the_tool_comes_first_then_arguments_given_on_both_sides():
    a = tr.read([{"step": 0, "role": "assistant", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}])
    b = tr.read([{"step": 0, "role": "assistant",
                  "tool_calls": [{"name": "editor", "arguments": {"path": "p.py", "command": "view"}}]}])
    diff = tr.difference(0, a.steps, b.steps)
    assert diff.kind == "another tool"
    assert [n for n, _, _ in diff.changed] == ["tool", "command", "path"]
    assert diff.changed[2] == ("path", tr.NONE, "p.py") and diff.same == [("role", "assistant")]
    stopped = tr.difference(5, a.steps, [])
    assert stopped.kind == "one side only" and tr.note(stopped) == f"only one trial has this step: {stopped.left} | no step"


# ------------------------------------------------------------------ the sandbox
@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160, hostile=True)


def wrong_patch_pair() -> tuple[dict, dict]:
    """A BASE trial that failed with ``wrong_patch`` and a CAND2 trial that passed, of one instance."""
    data = Dataset(seed=7, groups=3, compare_jobs=160, hostile=True)
    passing = {}
    for job in data.iter_group_jobs("CAND2"):
        if job["status"] == "succeeded":
            passing.setdefault(job["instance_id"], job)
    for job in data.iter_group_jobs("BASE"):
        if fail_reason(job) == ("model", "wrong_patch") and job["instance_id"] in passing:
            first = tr.first_difference(tr.align(*(tr.read(payloads.job_trajectory(j))
                                                   for j in (job, passing[job["instance_id"]]))))
            if first is not None:
                return job, passing[job["instance_id"]]
    raise AssertionError("the sandbox plants no wrong_patch failure of BASE beside a pass of CAND2")


def test_a_wrong_patch_parts_on_the_path_with_both_files(api):
    failing, passing = wrong_patch_pair()
    instance = Instance(failing["instance_id"])
    result = api("view", "-j", failing["job_id"], "-j", passing["job_id"], "--output", "text")
    assert result.code == 0, result.err
    first = result.out.splitlines()[0]
    assert first.split(": ", 1)[1].startswith(f"path: {instance.wrong_path} -> {instance.path}"), first


def test_the_changed_instance_of_the_guide_names_the_tool_then_the_command(api, tmp_path):
    """``bl view --instance requests__requests-2334 -g BASE -g CAND2`` (docs/investigating-failures.md)."""
    result = api("view", "--instance", "requests__requests-2334", "-g", "BASE", "-g", "CAND2", "--output", "text")
    assert result.code == 0, result.err
    first = result.out.splitlines()[0]
    assert first.startswith("First difference at step 8: tool: bash -> editor; command: python -m pytest "), first
    assert " -> str_replace; " in first
    target = tmp_path / "page.html"
    result = api("view", "--instance", "requests__requests-2334", "-g", "BASE", "-g", "CAND2", "-o", str(target))
    _, root = parse(target.read_text(encoding="utf-8"))
    changes = root.find_all("p", "firstdiff")[0].find_all("span", "change")
    assert [c.find_all("b")[0].all_text() for c in changes[:2]] == ["tool", "command"]
    assert len(root.find_all("div", "differs")) == 2
