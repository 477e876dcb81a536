"""``bl compare --output markdown``: a comparison to paste into a pull request or a chat.

GitHub-flavoured tables; a difference whose 95% CI excludes 0 is bold and
marked ``*``.  Every id is escaped so that it renders as itself (no links,
no HTML, no table cell broken by a ``|``); the changed instances are the
largest few, the rest counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import display as d


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    rule = ["---:" if r else "---" for r in right]
    return [_row(header), _row(rule), *(_row(r) for r in rows)]


def _difference(text: str, ci: Any) -> str:
    return f"**{text}** \\*" if d.excludes_zero(ci) else text


def _code(value: Any) -> str:
    return d.markdown_text(value)


def comparison(result: dict[str, Any], changed_limit: int = 20, names_limit: int = 20) -> list[str]:
    base, cand = d.markdown_text(result["baseline"]), d.markdown_text(result["candidate"])
    lines = [f"### {cand} vs baseline {base}", "",
             f"Metric {_code(result['metric'])}, pass at >= {result['pass_threshold']}, "
             f"instance key {_code(result['unit'])}.", ""]
    lines += _table(
        ["group", "jobs", "scored", "instances", "pass rate (95% CI)", "mean score (95% CI)"],
        [[d.markdown_text(g["group_id"]), str(g["jobs"]), str(g["jobs_scored"]), str(g["instances"]),
          f"{d.rate(g['pass_rate'])} {d.rate_ci(g['pass_rate_ci95'])}".strip(),
          f"{d.score(g['mean'])} {d.score_ci(g['mean_ci95'])}".strip()] for g in result["groups"]],
        [False, True, True, True, True, True])
    p = result["paired"]
    if not p["instances"]:
        lines += ["", "No instance is scored in both groups: nothing to pair."]
        return lines + _only(result, base, cand, names_limit)
    lines += ["", f"Paired over {p['instances']} instances (candidate − baseline):", ""]
    lines += _table(
        ["figure", "difference", "95% CI", "p-value"],
        [["pass rate", _difference(d.points(p["pass_rate_difference"]), p["ci95"]),
          d.points_ci(p["ci95"]), d.p_text(p["p_value"])],
         ["mean score", _difference(d.score(p["mean_difference"], signed=True), p["mean_difference_ci95"]),
          d.score_ci(p["mean_difference_ci95"], signed=True), d.p_text(p.get("mean_difference_p_value"))]],
        [False, True, True, True])
    lines += ["", f"{p['improved']} improved, {p['regressed']} regressed, {p['unchanged']} unchanged."]
    costs = result.get("costs") or {}
    if costs:
        lines += ["", *_table(
            ["cost (per instance)", "baseline", "candidate", "difference", "95% CI"],
            [[d.markdown_text(name), d.number(c["baseline_mean"], scale=d.cost_scale(c)), d.number(c["candidate_mean"], scale=d.cost_scale(c)),
              _difference(d.number(c["difference"], True, d.cost_scale(c)), c["ci95"]),
              d.number_ci(c["ci95"], True, d.cost_scale(c))] for name, c in costs.items()],
            [False, True, True, True, True])]
    changed = result.get("instances") or []
    if changed:
        shown = changed[:changed_limit]
        more = f" ({len(shown)} of {len(changed)})" if len(changed) > len(shown) else ""
        lines += ["", f"Changed instances{more}, largest change first:", ""]
        lines += _table(
            ["instance", "change", "baseline", "candidate"],
            [[d.markdown_text(e["instance"]), d.points(e["difference"]),
              d.rate(e["baseline"]["pass_rate"]), d.rate(e["candidate"]["pass_rate"])] for e in shown],
            [False, True, True, True])
    return lines + _only(result, base, cand, names_limit)


def _only(result: dict[str, Any], base: str, cand: str, names_limit: int) -> list[str]:
    lines: list[str] = []
    for label, names in ((f"Only in {base}", result.get("only_baseline") or []),
                         (f"Only in {cand}", result.get("only_candidate") or [])):
        if names:
            listed = ", ".join(d.markdown_text(n) for n in names[:names_limit])
            more = f", and {len(names) - names_limit} more" if len(names) > names_limit else ""
            lines += ["", f"{label} ({len(names)}): {listed}{more}."]
    return lines


def render(results: Sequence[dict[str, Any]], changed_limit: int = 20) -> str:
    blocks = ["\n".join(comparison(r, changed_limit)) for r in results]
    return "\n\n".join(blocks) + "\n\n\\* the 95% CI excludes 0.\n"
