"""The sandbox's trajectories: SWE-style runs that tell the same story as the job's report.

Why a story: ``bl view`` exists to find the step where an agent went wrong, and a
trajectory of random steps has no such step; one that contradicts its own job report
(3 steps for a 40-turn job that timed out) misleads whoever reads both.  So every
trajectory is a pure function of the job's stored facts, as its metrics and report are
(:mod:`.payloads`):

* **as many turns** as the metrics and the report say (``num_turns``): one assistant step
  per turn, each but the last followed by its tool's answer (``tool_call_count`` is
  ``num_turns - 1``), ``2 * num_turns - 1`` steps;
* **the first turns depend on the instance only**: every trial of an instance greps for
  the same symbol, opens the same file and runs the same failing test (whose output it
  shows), so two trials of one instance agree until one of them goes another way;
* **the rest follows how the job ended** (the report's fail reason): a passing run edits
  the right file, sees the test pass and submits its diff; a ``model`` failure edits the
  wrong file (``wrong_patch``), calls a function that does not exist
  (``hallucinated_api``) or gives up (``gave_up_early``), and its next test run shows the
  failing test's output again; an ``environment`` or ``tool`` failure shows the error in
  a tool's answer; a ``timeout`` keeps working and is stopped in its last turn.  The last
  step's ``finish`` says how the run ended, in the report's words; a running job has no
  last step yet, a cancelled one ends with the cancellation;
* assistant steps carry their call in ``tool_calls`` (``name``, ``arguments``), tool steps
  the ``tool``, its ``exit_code`` and its output as ``content``.

So a trial of ``BASE`` that failed and a trial of ``CAND2`` that passed the same
instance agree on the first turns and differ at the turn where the failing one edits
the wrong file (or hits its error): the step ``bl view`` marks.

``steps`` (``--trajectory-steps N``, for load tests) cuts or extends the story to N steps
instead.  The jobs of the hostile group (``GHOSTILE``) carry :func:`hostile_steps`:
markup, control characters, odd keys and shapes, a script disguised as an image.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from .facts import fail_reason, media_of, run_facts

HOSTILE_GROUP = "GHOSTILE"  # = dataset.HOSTILE_GROUP


def _h(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def _tools_of(template: str) -> tuple[str, str]:
    """(shell tool, edit tool) of a template's agent."""
    if template.startswith("terminal"):
        return "bash", "bash"
    if template.startswith("webarena"):
        return "browser", "browser"
    return "bash", "editor"


class Instance:
    """What every trial of one instance sees: its repository, file, symbol and failing test."""

    def __init__(self, name: str):
        self.name = name
        repo = name.split("__", 1)[0] if "__" in name else "repo"
        self.repo = "".join(c for c in repo if c.isalnum() or c in "-_") or "repo"
        h = _h("instance", name)
        modules = ("core", "models", "utils", "parser", "fields", "printing", "io", "config")
        symbols = ("normalize", "resolve", "to_python", "parse_header", "simplify", "render",
                   "validate", "merge", "as_dict", "decode")
        self.module = modules[h % len(modules)]
        self.other = modules[(h // 7 + 1 + h % (len(modules) - 1)) % len(modules)]
        if self.other == self.module:
            self.other = "helpers"
        self.symbol = symbols[(h // 97) % len(symbols)]
        self.line = 40 + h % 400
        self.extra_views = h % 3  # instances differ in how much reading comes before the edit
        self.path = f"{self.repo}/{self.module}.py"
        self.wrong_path = f"{self.repo}/{self.other}.py"
        self.test = f"tests/test_{self.module}.py::test_{self.symbol}_{h % 90 + 10}"
        self.expected, self.got = f"'{self.symbol}-ok'", f"'{self.symbol}-{h % 9}'"

    def failing_output(self) -> str:
        return (f"============================= test session starts ==============================\n"
                f"collected 1 item\n\n{self.test.split('::')[0]} F{' ' * 40}[100%]\n\n"
                f"=================================== FAILURES ===================================\n"
                f"_____________________ test_{self.test.rsplit('_', 1)[0].split('test_', 2)[-1]} _____________________\n\n"
                f"    def test_case():\n>       assert {self.symbol}(value) == {self.expected}\n"
                f"E       AssertionError: assert {self.got} == {self.expected}\n\n"
                f"{self.test.split('::')[0]}:{self.line % 90 + 12}: AssertionError\n"
                f"=========================== short test summary info ============================\n"
                f"FAILED {self.test} - AssertionError: assert {self.got} == {self.expected}\n"
                f"============================== 1 failed in 0.41s ===============================")

    def passing_output(self) -> str:
        return (f"collected 1 item\n\n{self.test.split('::')[0]} .{' ' * 40}[100%]\n\n"
                "============================== 1 passed in 0.38s ===============================")

    def diff(self, path: str, new: str) -> str:
        return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
                f"@@ -{self.line},7 +{self.line},7 @@ def {self.symbol}(value):\n"
                f"     if value is None:\n         return None\n-    return _legacy_{self.symbol}(value)\n"
                f"+    {new}\n \n \n def _legacy_{self.symbol}(value):")


# One turn of a plan: (tool, arguments, output, exit code).
Turn = tuple[str, dict[str, Any], str, int]


def _prefix(inst: Instance, shell: str, edit: str) -> list[Turn]:
    """The turns every trial of the instance takes first."""
    turns: list[Turn] = [
        (shell, {"command": f"grep -rn \"def {inst.symbol}\" {inst.repo}/"},
         f"{inst.path}:{inst.line}:def {inst.symbol}(value):\n"
         f"{inst.wrong_path}:{inst.line // 2}:    # see {inst.symbol}() in {inst.module}", 0),
        (edit, {"command": "view", "path": inst.path, "view_range": [inst.line, inst.line + 12]},
         f"{inst.line} def {inst.symbol}(value):\n{inst.line + 1}     if value is None:\n"
         f"{inst.line + 2}         return None\n{inst.line + 3}     return _legacy_{inst.symbol}(value)", 0),
    ]
    for k in range(inst.extra_views):
        turns.append((edit, {"command": "view", "path": inst.wrong_path, "view_range": [1 + 30 * k, 30 + 30 * k]},
                      f"{1 + 30 * k} import re\n{2 + 30 * k} from .{inst.module} import {inst.symbol}", 0))
    turns.append((shell, {"command": f"python -m pytest {inst.test} -x -q"}, inst.failing_output(), 1))
    return turns


def _path(inst: Instance, shell: str, edit: str, reason: str | None, sub: str | None) -> list[Turn]:
    """The turns after the prefix, by how the job ends (``reason`` None: it passed)."""
    test = (shell, {"command": f"python -m pytest {inst.test} -x -q"})
    if reason is None or reason == "timeout":
        fix = f"return {inst.symbol}_impl(value).strip() or {inst.expected}"
        return [(edit, {"command": "str_replace", "path": inst.path,
                        "old_str": f"return _legacy_{inst.symbol}(value)", "new_str": fix}, "The file was edited.", 0),
                (*test, inst.passing_output(), 0),
                (shell, {"command": "python -m pytest tests/ -q"},
                 f"{120 + len(inst.name)} passed, 3 skipped in 41.2s", 0)]
    if reason == "model" and sub == "wrong_patch":
        return [(edit, {"command": "str_replace", "path": inst.wrong_path,
                        "old_str": f"# see {inst.symbol}() in {inst.module}",
                        "new_str": f"{inst.symbol} = lambda value: {inst.expected}"}, "The file was edited.", 0),
                (*test, inst.failing_output(), 1)]
    if reason == "model" and sub == "hallucinated_api":
        return [(edit, {"command": "str_replace", "path": inst.path, "old_str": f"return _legacy_{inst.symbol}(value)",
                        "new_str": f"return {inst.repo}.compat.{inst.symbol}_v2(value)"}, "The file was edited.", 0),
                (*test, f"E   AttributeError: module '{inst.repo}.compat' has no attribute '{inst.symbol}_v2'\n"
                        f"FAILED {inst.test} - AttributeError\n1 failed in 0.22s", 1)]
    if reason == "model":  # gave_up_early
        return [(shell, {"command": f"git log --oneline -5 -- {inst.path}"},
                 "a1b2c3d Refactor legacy helpers\n9f8e7d6 Initial import", 0)]
    if reason == "environment":
        errors = {"docker_pull_failed": "Error response from daemon: pull access denied for "
                                        f"swebench/sweb.eval.{inst.repo}, repository does not exist",
                  "dependency_missing": f"ModuleNotFoundError: No module named '{inst.repo}_speedups'",
                  "oom_killed": "Killed (exit code 137: out of memory)"}
        return [(shell, {"command": f"pip install -e . && python -m pytest {inst.test}"},
                 errors.get(sub or "", f"environment error: {sub}"), 137 if sub == "oom_killed" else 1)]
    if reason == "tool":
        failures: dict[str, tuple[str, int]] = {"bad_tool_args": ("error: str_replace needs old_str and new_str; got only path", 2),
                  "tool_crash": ("Traceback (most recent call last):\n  File \"tools/editor.py\", line 88\n"
                                 "IndexError: list index out of range\n[the tool crashed]", 1),
                  "sandbox_denied": (f"PermissionError: [Errno 13] Permission denied: '{inst.path}'", 126)}
        message, code = failures.get(sub or "", (f"tool error: {sub}", 1))
        return [(edit, {"command": "str_replace", "path": inst.path}, message, code)]
    return []


def _filler(inst: Instance, shell: str, edit: str, passed: bool, k: int) -> Turn:
    """A turn that repeats work: more reading and test runs (a run needs more turns than its plan)."""
    if passed:
        return (shell, {"command": "git diff --stat"}, f" {inst.path} | 2 +-\n 1 file changed", 0)
    if k % 2:
        return (shell, {"command": f"python -m pytest {inst.test} -x -q"}, inst.failing_output(), 1)
    return (edit, {"command": "view", "path": inst.path, "view_range": [inst.line + 10 * k, inst.line + 10 * k + 9]},
            f"{inst.line + 10 * k} # ...", 0)


def _finish(job: dict[str, Any], inst: Instance, reason: str | None, sub: str | None,
            facts: dict[str, Any]) -> dict[str, Any]:
    """The last assistant step: how the run ended, as the report says it."""
    status = job["status"]
    if status == "cancelled":
        return {"content": "The job was cancelled before it finished.", "finish": {"reason": "cancelled"}}
    if reason is None:
        return {"content": f"The failing test passes now; submitting the fix of {inst.symbol}() in {inst.path}.",
                "patch": inst.diff(inst.path, f"return {inst.symbol}_impl(value).strip() or {inst.expected}"),
                "finish": {"reason": "submitted"}}
    finish = {"reason": reason, "detail": sub}
    if reason == "timeout":
        return {"content": f"(the run was stopped: {sub} after {facts['duration_s']} s)", "finish": finish}
    if reason == "model" and sub == "wrong_patch":
        return {"content": f"The behaviour comes from {inst.wrong_path}; submitting.",
                "patch": inst.diff(inst.wrong_path, f"{inst.symbol} = lambda value: {inst.expected}"),
                "finish": finish}
    if reason == "model" and sub == "hallucinated_api":
        return {"content": f"Using {inst.repo}.compat.{inst.symbol}_v2; submitting.",
                "patch": inst.diff(inst.path, f"return {inst.repo}.compat.{inst.symbol}_v2(value)"), "finish": finish}
    if reason == "model":
        return {"content": "I could not find the cause of the failing test; giving up.", "finish": finish}
    return {"content": f"Stopping: the {reason} failed ({sub}).", "finish": finish}


def story_steps(job: dict[str, Any], turns: int) -> list[dict[str, Any]]:
    """The job's trajectory with ``turns`` turns (``2 * turns - 1`` steps; a running job's last
    turn is still waiting for its tool)."""
    inst = Instance(str(job["instance_id"] or job["job_id"]))
    shell, edit = _tools_of(str(job["template"] or ""))
    reason, sub = fail_reason(job)
    passed = job["status"] == "succeeded"
    plan = _prefix(inst, shell, edit) + _path(inst, shell, edit, reason, sub)
    rng = random.Random(f"traj:{job['salt']}:{job['job_id']}")
    running = job["status"] == "running"
    calls = turns if running else turns - 1
    while len(plan) < calls:
        plan.insert(len(plan) if passed or reason == "timeout" else max(len(plan) - 1, 0),
                    _filler(inst, shell, edit, passed or reason == "timeout", len(plan)))
    plan = plan[:max(calls, 0)]
    steps: list[dict[str, Any]] = []
    for turn, (tool, arguments, output, code) in enumerate(plan):
        call_id = f"call_{turn + 1}"
        thought = (f"Turn {turn + 1}: {'look at' if code == 0 else 'check'} {inst.name} with {tool} "
                   f"({arguments.get('command', '')!s:.40})")
        steps.append({"step": len(steps), "role": "assistant", "content": thought, "tokens": rng.randint(40, 900),
                      "tool_calls": [{"id": call_id, "name": tool, "arguments": arguments}]})
        if running and turn == len(plan) - 1:
            break  # its tool has not answered yet
        steps.append({"step": len(steps), "role": "tool", "tool": tool, "tool_call_id": call_id,
                      "content": output, "exit_code": code, "tokens": rng.randint(20, 2000)})
    if not running and turns > 0:
        steps.append({"step": len(steps), "role": "assistant", "tokens": rng.randint(40, 900),
                      **_finish(job, inst, reason, sub, run_facts(job))})
    media = media_of(job)
    if media and steps:
        steps[0]["messages"] = [{"role": "tool", "parts": [{"response": [
            {"type": "input_image", "trace_media": m} for m in media]}]}]
    return steps


def hostile_steps(job: dict[str, Any]) -> list[Any]:
    """A trajectory a hostile (or broken) backend could send: markup and scripts in every text,
    control and bidi characters, keys that are markup, steps that are no objects, repeated and
    missing step numbers, content that is no text, tokens that are no number, media that claims
    to be an image and is a script (an SVG, and one that says it is a PNG), and one very long answer."""
    jid = job["job_id"]
    script = "<script>alert(document.cookie)</script>"
    return [
        {"step": 0, "role": "assistant<b>", "content": f"{script} </details></pre><img src=x onerror=alert(1)>",
         "tokens": "12<i>", "tool_calls": [{"name": "bash\x1b[31m", "arguments": {"command": "rm -rf / \u202etxt.exe"}}]},
        {"step": 1, "role": "tool", "tool": "<svg onload=alert(2)>", "content": "ctl\x1b]0;title\x07\r\nnul\x00end",
         "exit_code": 1, "<b onmouseover=alert(3)>key</b>": "value\u202e", "javascript:alert(4)": [1, {"a": None}]},
        "a step that is a string <script>alert(5)</script>",
        None,
        {"role": "assistant", "content": {"parts": ["<iframe src=javascript:alert(6)>"], "n": 1}},
        {"step": 3, "role": "tool", "content": "A" * 120_000 + "<script>alert(7)</script>",
         "messages": [{"role": "tool", "parts": [{"response": [
             {"type": "input_image", "trace_media": {"oss_uri": f"oss://sandbox-media/{HOSTILE_GROUP}/svg/evil.svg",
                                                     "mime_type": "image/svg+xml"}},
             {"type": "input_image", "trace_media": {"oss_uri": f"oss://sandbox-media/{HOSTILE_GROUP}/disguised/a.png",
                                                     "mime_type": "image/png"}},
             {"type": "input_image", "trace_media": {"oss_uri": f"oss://sandbox-media/{HOSTILE_GROUP}/{len(jid)}.png",
                                                     "mime_type": "text/html"}},
             {"type": "link", "url": "javascript:alert(8)"},
         ]}]}]},
        {"step": 3, "role": "assistant", "content": "a second step 3", "tokens": {"in": 1, "out": 2}},
        {"step": "four\u202e", "role": None, "tool": 42, "content": ["list", "content"], "finish": {"reason": "model"}},
        42,
    ]


def trajectory_steps(job: dict[str, Any], steps: int = 0) -> list[Any]:
    """The steps of a job's trajectory: its story (``steps`` 0), or ``steps`` steps of it."""
    if job["group_id"] == HOSTILE_GROUP:
        return hostile_steps(job)
    if job["n"] % 13 == 0:
        return []
    if steps > 0:
        return story_steps(job, (steps + 2) // 2)[:steps]
    return story_steps(job, int(run_facts(job)["num_turns"]))
