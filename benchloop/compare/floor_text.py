"""``bl noise``, ``bl plan`` and ``bl trend`` as text for a terminal (``--output table``) or a pull request
(``--output markdown``): the sentence first, then the figures in rows.  Ids are escaped as in
every rendering of a comparison (:mod:`.display`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import display as d

ALLOCATION_ROWS = 20  # instances of an allocation listed in text (the JSON has them all)


def _pp(value: Any) -> str:
    return d.points(value, signed=False)


def _var(value: Any) -> str:
    return f"{value:.4f}" if d.finite(value) else "n/a"


def _noise_rows(element: dict[str, Any], esc: Callable[[Any], str]) -> list[list[str]]:
    rows = [["run", "instances", "trials", "pass rate", "within var", "split share", "(exact)",
             "split sd", "(exact)", "A/A ±95%", "A/A share"]]
    for g in element["per_group"]:
        s, aa = g["splits"], g["aa"]
        rows.append([esc(g["group_id"]), str(g["instances"]), f"{g['trials']:.2f}" if d.finite(g["trials"]) else "n/a",
                     d.rate(g["pass_rate"]), _var(g["within_variance"]), d.rate(s["share_changed"]),
                     d.rate(s["share_changed_expected"]), _pp(s["difference_sd"]), _pp(s["difference_sd_expected"]),
                     _pp(aa["half_width"]), d.rate(aa["share_changed"])])
    return rows


def _between(element: dict[str, Any], esc: Callable[[Any], str]) -> list[str]:
    b = element.get("between_runs")
    if not b:
        return []
    lines = [f"{b['runs']} runs on {b['instances']} common instances ({b['clusters']} cluster(s)): between-run "
             f"variance {_var(b['between_variance'])} (raw {_var(b['between_variance_raw'])}); pairs list "
             f"{d.rate(b['share_changed'])} of instances as changed"]
    lines += [f"{esc(p['baseline'])} vs {esc(p['candidate'])}: {d.points(p['difference'])}, "
              f"{d.rate(p['share_changed'])} changed" for p in b["pairs"]]
    return lines


def noise_table(element: dict[str, Any]) -> str:
    from .terminal import table

    esc = d.terminal_text
    lines = [esc(element["summary"]), "",
             f"within-instance trial variance {_var(element['within_variance'])} "
             f"(over {element['within_instances']} instance-runs with two trials or more)", ""]
    lines += table(_noise_rows(element, esc), [False, *([True] * 10)])
    lines += ["", *("  " + x for x in _between(element, esc))] if element.get("between_runs") else []
    lines += ["", "split: each run's trials dealt at random into two halves (--splits, --seed); A/A: another run "
              "like it, at its trials (docs/compare.md, The noise floor)"]
    return "\n".join(lines) + "\n"


def _md_table(rows: Sequence[Sequence[str]]) -> list[str]:
    head, *body = rows
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in body)]


def noise_markdown(element: dict[str, Any]) -> str:
    esc = d.markdown_text
    lines = [f"**{esc(element['summary'])}**", "",
             f"Within-instance trial variance {_var(element['within_variance'])}.", ""]
    lines += _md_table(_noise_rows(element, esc))
    between = _between(element, esc)
    if between:
        lines += ["", *(f"- {x}" for x in between)]
    return "\n".join(lines) + "\n"


def _plan_rows(element: dict[str, Any]) -> list[list[str]]:
    rows = [["trials per instance", "instances", "jobs (both runs)", "design effect"]]
    for r in element["table"]:
        rows.append([str(r["trials"]), f"{r['instances']:,}" if r["instances"] else "unreachable",
                     f"{r['total_trials']:,}" if r["total_trials"] else "", f"{r['design_effect']:.2f}"
                     if d.finite(r["design_effect"]) else ""])
    return rows


def _allocation(element: dict[str, Any], esc: Callable[[Any], str]) -> list[list[str]]:
    rows = [["instance", "pass rate", "trials run", "trials", "run again"]]
    for a in element["allocation"][:ALLOCATION_ROWS]:
        rows.append([esc(a["instance"]), d.rate(a["pass_rate"]), str(a["trials_run"]), str(a["trials"]),
                     str(a["run_again"])])
    return rows


def _fixed(element: dict[str, Any]) -> list[str]:
    f = element.get("fixed")
    if not f or not f.get("trials"):
        return []
    text = (f"{f['instances']:,} instances: {f['trials']} trials per instance in each run "
            f"(power {d.rate(f['power'])})")
    if f.get("allocated_trials"):
        text += (f"; by Neyman allocation: {f['allocated_trials']:,} trials per run in "
                 f"total (power {d.rate(f['allocated_power'])})")
    return [text]


def _basis(element: dict[str, Any]) -> str:
    return (f"within-instance variance {_var(element['within_variance'])}, effect variance "
            f"{_var(element['effect_variance'])}, between-run variance {_var(element['between_variance'])}"
            + (f", {element['clusters']} clusters" if element.get("clusters") else "")
            + f"; two-sided alpha {element['alpha']:g}, noncentral t")


def plan_table(element: dict[str, Any]) -> str:
    from .terminal import table

    esc = d.terminal_text
    lines = [esc(element["summary"]), "", "  " + _basis(element), ""]
    lines += table(_plan_rows(element), [True, True, True, True])
    lines += ["", *("  " + x for x in _fixed(element))]
    if element["allocation"]:
        more = len(element["allocation"]) - ALLOCATION_ROWS
        lines += ["", "  Neyman allocation (trials proportional to sqrt(p(1-p))): the instances to run again"
                  + (f" (first {ALLOCATION_ROWS}; {more} more in --output json)" if more > 0 else "")]
        lines += table(_allocation(element, esc), [False, True, True, True, True])
    return "\n".join(lines) + "\n"


def plan_markdown(element: dict[str, Any]) -> str:
    esc = d.markdown_text
    lines = [f"**{esc(element['summary'])}**", "", _basis(element) + ".", "", *_md_table(_plan_rows(element))]
    lines += ["", *_fixed(element)] if _fixed(element) else []
    if element["allocation"]:
        lines += ["", "Neyman allocation (trials proportional to sqrt(p(1-p))):", "",
                  *_md_table(_allocation(element, esc))]
    return "\n".join(lines) + "\n"


def trend_rows(element: dict[str, Any], esc: Callable[[Any], str]) -> list[list[str]]:
    rows = [["run", "pass rate", "95% CI", "own", "vs previous", "vs first", "limit", ""]]
    for r in element["runs"]:
        prev, ref = r.get("previous") or {}, r.get("reference") or {}
        rows.append([esc(r["group_id"]), d.rate(r["pass_rate"]), d.rate_ci(r["pass_rate_ci95"]),
                     d.rate(r["own_pass_rate"]), d.points(prev.get("difference")) if prev else "",
                     d.points(ref.get("difference")) if ref else "",
                     f"±{_pp(r['limit'])}" if d.finite(r.get("limit")) else "", "outside noise" if r["flagged"] else ""])
    return rows


def trend_notes(element: dict[str, Any]) -> list[str]:
    s, st = element["slope"], element["steps"]
    lines = []
    if d.finite(s.get("slope")):
        lines.append(f"drift {d.points(s['slope'])} per run {d.points_ci(s['ci95'])}, p {d.p_text(s['p_value'])} "
                     "(per-instance slopes)")
    if d.finite(st.get("mean")):
        lines.append(f"mean step {d.points(st['mean'])} {d.points_ci(st['ci95'])}, p {d.p_text(st['p_value'])}, "
                     f"tau^2 {_var(st['tau2'])} (DerSimonian-Laird)")
    lines.append(f"limits: z {element['z']:.2f} times the se of an A/A of the first run (family-wise "
                 f"{100 * element['alpha']:g}% over the runs after it)")
    return lines


def trend_table(element: dict[str, Any]) -> str:
    from .terminal import table

    esc = d.terminal_text
    lines = [esc(element["summary"]), "", *table(trend_rows(element, esc), [False, True, False, True, True, True,
                                                                              True, False])]
    return "\n".join([*lines, "", *("  " + x for x in trend_notes(element))]) + "\n"


def trend_markdown(element: dict[str, Any]) -> str:
    esc = d.markdown_text
    lines = [f"**{esc(element['summary'])}**", "", *_md_table(trend_rows(element, esc)), ""]
    return "\n".join([*lines, *(f"- {x}" for x in trend_notes(element))]) + "\n"
