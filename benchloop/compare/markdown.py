"""``bl compare --output markdown``: a comparison to paste into a pull request or a chat.

It leads with the verdict (``summary``) in bold, then the warnings as a quote
(a pasted comparison travels without its stderr), then GitHub-flavoured tables:
the groups, the paired figures, the costs, the slices of ``--by`` and the
changed instances (``--changes``: the twenty largest by default).  A figure
whose Holm-adjusted p-value is below 0.05 is bold and marked ``*``.  Every id is
escaped so that it renders as itself (no links, no HTML, no table cell broken by
a ``|``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import display as d
from . import sequential, verdicts


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    rule = ["---:" if r else "---" for r in right]
    return [_row(header), _row(rule), *(_row(r) for r in rows)]


def _difference(text: str, p_adjusted: Any) -> str:
    return f"**{text}** \\*" if d.significant(p_adjusted) else text


def _code(value: Any) -> str:
    return d.markdown_text(value)


def _slices(result: dict[str, Any]) -> list[str]:
    slices = d.slice_rows(result)
    if not slices:
        return []
    rows = []
    for key, cells, p_adjusted in slices:
        cells[2] = _difference(cells[2], p_adjusted)
        rows.append([d.markdown_text(key), *cells])
    return ["", f"By {_code(result.get('by'))} (pass rate; jobs: baseline/candidate; {d.slices_adjustment(result)}):",
            "", *_table(["slice", *d.SLICE_HEADER], rows, [False, True, True, True, True, True, False])]


def _summary(result: dict[str, Any], candidates: int) -> str:
    """The verdict sentence with its ids escaped (the rest is ours: numbers and words)."""
    escaped = dict(result, baseline=d.markdown_text(result["baseline"]),
                   candidate=d.markdown_text(result["candidate"]))
    if "sequential" in result:  # --sequential: its verdict leads
        return d.terminal_text(sequential.sentence(escaped))
    return d.terminal_text(verdicts.sentence(escaped, candidates))


def comparison(result: dict[str, Any], changes: str = "largest", names_limit: int = 20,
               candidates: int = 1) -> list[str]:
    base, cand = d.markdown_text(result["baseline"]), d.markdown_text(result["candidate"])
    lines = [f"### {cand} vs baseline {base}", "", f"**{_summary(result, candidates)}**", ""]
    if d.floor_line(result):
        lines += [f"Noise floor: {d.markdown_text(d.floor_line(result))}.", ""]
    for warning in result.get("warnings") or []:
        lines.append(f"> warning: {d.markdown_text(warning)}")
    if result.get("warnings"):
        lines.append("")
    lines += [f"Metric {_code(result['metric'])}, pass at >= {result['pass_threshold']}, "
              f"instance key {_code(result['unit'])}{d.markdown_text(d.clusters_note(result))}.", ""]
    lines += _table(
        ["group", "jobs", "scored", "instances", "pass rate (95% CI)", "paired", "mean score (95% CI)", "paired"],
        [[d.markdown_text(g["group_id"]), str(g["jobs"]), str(g["jobs_scored"]), str(g["instances"]),
          f"{d.rate(g['pass_rate'])} {d.rate_ci(g['pass_rate_ci95'])}".strip(), d.rate(g.get("paired_pass_rate")),
          f"{d.score(g['mean'])} {d.score_ci(g['mean_ci95'])}".strip(), d.score(g.get("paired_mean"))]
         for g in result["groups"]],
        [False, True, True, True, True, True, True, True])
    p = result["paired"]
    if not p["instances"]:
        lines += ["", "No instance is scored in both groups: nothing to pair."]
        return lines + _only(result, base, cand, names_limit)
    lines += ["", f"Paired over {p['instances']} instances (candidate − baseline; \"paired\" above: "
              "each group over these instances only):", ""]
    lines += _table(
        ["figure", "difference", "95% CI", "p-value", "adjusted"],
        [["pass rate", _difference(d.points(p["pass_rate_difference"]), p.get("p_value_adjusted")),
          d.points_ci(p["ci95"]), d.p_text(p["p_value"]), d.p_text(p.get("p_value_adjusted"))],
         ["mean score", _difference(d.score(p["mean_difference"], signed=True),
                                    p.get("mean_difference_p_value_adjusted")),
          d.score_ci(p["mean_difference_ci95"], signed=True), d.p_text(p.get("mean_difference_p_value")),
          d.p_text(p.get("mean_difference_p_value_adjusted"))]],
        [False, True, True, True, True])
    detectable = (f" {d.detectable(p)[0].upper()}{d.detectable(p)[1:]}; sign test p "
                  f"{d.p_text(p.get('sign_test_p'))}." if d.detectable(p) else "")
    equivalence = f" {d.equivalence_text(p)[0].upper()}{d.equivalence_text(p)[1:]}." if d.equivalence_text(p) else ""
    lines += ["", f"{p['improved']} improved, {p['regressed']} regressed, {p['unchanged']} unchanged."
              f"{detectable}{equivalence}"]
    lines += sequential.markdown_lines(result)  # with --sequential: both intervals
    costs = result.get("costs") or {}
    if costs:
        lines += ["", *_table(
            ["cost (per instance)", "baseline", "candidate", "difference", "95% CI"],
            [[d.markdown_text(name), d.number(c["baseline_mean"], scale=d.cost_scale(c)),
              d.number(c["candidate_mean"], scale=d.cost_scale(c)),
              _difference(d.number(c["difference"], True, d.cost_scale(c)), c.get("p_value_adjusted")),
              d.number_ci(c["ci95"], True, d.cost_scale(c))] for name, c in costs.items()],
            [False, True, True, True, True])]
    lines += _slices(result)
    shown, title = d.changed(result, changes, d.LIMITS["markdown"])
    evidence = d.evidence_line(result)
    if shown:
        lines += ["", f"{title[0].upper()}{title[1:]}" + (f"; {d.markdown_text(evidence)}" if evidence else "")
                  + ":", ""]
    elif evidence:
        lines += ["", f"Changed instances: {d.markdown_text(evidence)}."]
    if shown:
        lines += _table(
            ["instance", "change", "baseline", "candidate", "p (Fisher)", "q (BH)", ""],
            [[d.markdown_text(e["instance"]), d.points(e["difference"]),
              d.rate(e["baseline"]["pass_rate"]), d.rate(e["candidate"]["pass_rate"]), *d.evidence_cells(e)]
             for e in shown],
            [False, True, True, True, True, True, False])
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


def render(results: Sequence[dict[str, Any]], changes: str = "largest") -> str:
    blocks = ["\n".join(comparison(r, changes, candidates=len(results))) for r in results]
    return "\n\n".join(blocks) + f"\n\n\\{d.legend(results)}.\n"
