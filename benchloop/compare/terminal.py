"""``bl compare --output table``: a comparison as a summary a person reads on a terminal.

It leads with the verdict as one sentence (``summary``); then the groups (over
all their instances and over the paired ones), the paired figures with their
95% t intervals, the costs, the slices of ``--by``, and the changed instances
(``--changes``: the ten largest by default).  A figure whose p-value, Holm-adjusted
over the candidates, is below 0.05 is marked ``*`` (the legend says so).  Every id
is escaped (control and bidi characters cannot drive the terminal) and cut to a
width.  The warnings are on stderr (``[warn]`` lines), not repeated here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import textwidth
from . import display as d
from . import sequential

INSTANCE_COLUMNS = 60  # longest instance name shown before it is cut with "…"


def _text(value: Any, columns: int = INSTANCE_COLUMNS) -> str:
    return textwidth.cut(d.terminal_text(value), columns, "…")


def table(rows: Sequence[Sequence[str]], right: Sequence[bool], indent: str = "  ") -> list[str]:
    """Rows aligned in columns (display width, so CJK text lines up); ``right`` per column."""
    if not rows:
        return []
    widths = [max(textwidth.width(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            gap = " " * (widths[i] - textwidth.width(cell))
            cells.append(gap + cell if right[i] else cell + gap)
        out.append((indent + "  ".join(cells)).rstrip())
    return out


def _names(label: str, names: Sequence[str], limit: int) -> list[str]:
    if not names:
        return []
    shown = ", ".join(_text(n, 40) for n in names[:limit])
    more = f", ... and {len(names) - limit} more" if len(names) > limit else ""
    return [f"  {label} ({len(names)}): {shown}{more}"]


def _paired_rows(p: dict[str, Any]) -> list[list[str]]:
    return [
        ["pass rate", d.points(p["pass_rate_difference"]) + d.mark(p.get("p_value_adjusted")),
         d.points_ci(p["ci95"]), f"se {d.points(p['se'], signed=False)}", f"p {d.p_text(p['p_value'])}",
         f"adjusted {d.p_text(p.get('p_value_adjusted'))}", f"sign test {d.p_text(p.get('sign_test_p'))}"],
        ["mean score", d.score(p["mean_difference"], signed=True) + d.mark(p.get("mean_difference_p_value_adjusted")),
         d.score_ci(p["mean_difference_ci95"], signed=True), f"se {d.score(p.get('mean_difference_se'))}",
         f"p {d.p_text(p.get('mean_difference_p_value'))}",
         f"adjusted {d.p_text(p.get('mean_difference_p_value_adjusted'))}", ""],
    ]


def _slices(result: dict[str, Any]) -> list[str]:
    slices = d.slice_rows(result)
    if not slices:
        return []
    rows = [[f"by {_text(result.get('by'), 40)}", *d.SLICE_HEADER]]
    for key, cells, p_adjusted in slices:
        cells[2] += d.mark(p_adjusted)
        rows.append([_text(key, 40), *cells])
    return ["", f"  slices (pass rate, candidate - baseline; jobs: baseline/candidate; {d.slices_adjustment(result)})",
            *table(rows, [False, True, True, True, False, True, False])]


def comparison(result: dict[str, Any], changes: str = "largest", names_limit: int = 10) -> list[str]:
    """The lines of one element of ``bl compare``'s answer."""
    base, cand = _text(result["baseline"], 40), _text(result["candidate"], 40)
    floor = d.floor_line(result)
    lines = [d.terminal_text(result.get("summary") or ""), *([d.terminal_text(floor)] if floor else []), "",
             f"compare {cand} with baseline {base}",
             f"  metric {_text(result['metric'], 200)} (pass: >= {result['pass_threshold']}; "
             f"unit {_text(result['unit'], 100)}{_text(d.clusters_note(result), 200)})", ""]
    rows = [["group", "jobs", "scored", "instances", "pass rate", "", "paired", "mean score", "", "paired"]]
    for g in result["groups"]:
        rows.append([_text(g["group_id"], 40), str(g["jobs"]), str(g["jobs_scored"]),
                     str(g["instances"]), d.rate(g["pass_rate"]), d.rate_ci(g["pass_rate_ci95"]),
                     d.rate(g.get("paired_pass_rate")), d.score(g["mean"]), d.score_ci(g["mean_ci95"]),
                     d.score(g.get("paired_mean"))])
    lines += table(rows, [False, True, True, True, True, False, True, True, False, True])

    p = result["paired"]
    if not p["instances"]:
        lines += ["", "  no instance is scored in both groups: nothing to pair"]
        return lines + _only(result, base, cand, names_limit)
    lines += ["", f"  paired over {p['instances']} instances{_text(d.clusters_note(result), 200)} "
              "(candidate - baseline; 'paired' above: each group over these instances only)"]
    lines += table(_paired_rows(p), [False, True, False, False, False, False, False], indent="    ")
    detectable = f"; {d.detectable(p)}" if d.detectable(p) else ""
    df = f"; t with {p['df']:.1f} df" if d.finite(p.get("df")) and result.get("cluster") is not None else ""
    lines.append(f"    instances: {p['improved']} improved, {p['regressed']} regressed, "
                 f"{p['unchanged']} unchanged{detectable}{df}")
    if d.equivalence_text(p):
        lines.append(f"    {d.equivalence_text(p)}")
    price = sequential.price_rows(result)  # with --sequential: both intervals
    if price:
        lines += ["", f"  {sequential.PRICE_TITLE}", *table([[d.terminal_text(c) for c in r] for r in price],
                                                           [False, True, False, True, False], indent="    ")]

    costs = result.get("costs") or {}
    if costs:
        rows = [["cost (per instance)", "baseline", "candidate", "difference", "95% CI", "instances"]]
        for name, c in costs.items():
            scale = d.cost_scale(c)
            rows.append([_text(name, 40), d.number(c["baseline_mean"], scale=scale),
                         d.number(c["candidate_mean"], scale=scale),
                         d.number(c["difference"], True, scale) + d.mark(c.get("p_value_adjusted")),
                         d.number_ci(c["ci95"], True, scale), str(c.get("instances", ""))])
        lines += ["", *table(rows, [False, True, True, True, False, True])]
    lines += _slices(result)

    shown, title = d.changed(result, changes, d.LIMITS["table"])
    evidence = d.evidence_line(result)
    if shown or evidence:
        lines += ["", *([f"  {title}"] if shown else []), *([f"  {d.terminal_text(evidence)}"] if evidence else [])]
    if shown:
        rows = [["change", "baseline", "candidate", "p (Fisher)", "q (BH)", "", "instance"]]
        for e in shown:
            rows.append([d.points(e["difference"]), d.rate(e["baseline"]["pass_rate"]),
                         d.rate(e["candidate"]["pass_rate"]), *d.evidence_cells(e), _text(e["instance"])])
        lines += table(rows, [True, True, True, True, True, False, False])
    return lines + _only(result, base, cand, names_limit)


def _only(result: dict[str, Any], base: str, cand: str, names_limit: int) -> list[str]:
    only = [*_names(f"only in {base}", result.get("only_baseline") or [], names_limit),
            *_names(f"only in {cand}", result.get("only_candidate") or [], names_limit)]
    return ["", *only] if only else []


def render(results: Sequence[dict[str, Any]], changes: str = "largest") -> str:
    """Every comparison of ``bl compare``'s answer, then the legend of the mark."""
    blocks = ["\n".join(comparison(r, changes)) for r in results]
    return "\n\n".join(blocks) + f"\n\n{d.legend(results)}\n"
