"""``bl compare --report FILE.html``: one self-contained HTML page per comparison run.

Self-contained means it opens from a mail attachment or an artifact store:
no network (no external stylesheet, font, image or script; a
Content-Security-Policy of ``default-src 'none'`` says so to the browser
too), no JavaScript, the charts inline SVG (:mod:`.charts`).  Every string
that came from the server or the user is escaped (:func:`display.html_text`):
ids are hostile input, and a report is opened in a browser.

Per candidate: the group figures with their CIs, the paired figures (a
difference whose CI excludes 0 is marked), three charts (pass rates with
CIs, the per-instance paired changes, cost against pass rate), the costs,
every changed instance with its job ids, and the instances of one group only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import charts
from . import display as d

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#111827;margin:0 auto;
max-width:1100px;padding:16px 24px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px}th,td{padding:3px 10px;border-bottom:1px solid #e5e7eb;
text-align:left;vertical-align:top}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.sig{font-weight:700}.up{color:#15803d}.down{color:#b91c1c}
code,.id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;overflow-wrap:anywhere}
.jobs .id{display:inline-block;margin-right:6px}
figure{margin:8px 0 14px}figcaption{color:#4b5563;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:12px}svg{max-width:100%;height:auto}
.meta{color:#4b5563}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'"


def _cell(content: str, num: bool = False, css: str = "") -> str:
    classes = " ".join(c for c in ("num" if num else "", css) if c)
    return f'<td class="{classes}">{content}</td>' if classes else f"<td>{content}</td>"


def _table(css: str, header: Sequence[tuple[str, bool]], rows: Sequence[str]) -> str:
    head = "".join(f'<th class="num">{h}</th>' if num else f"<th>{h}</th>" for h, num in header)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _diff(text: str, ci: Any) -> str:
    if d.excludes_zero(ci):
        return f'<span class="sig">{d.html_text(text)}{d.MARK}</span>'
    return d.html_text(text)


def _ids(values: Sequence[Any]) -> str:
    return "".join(f'<span class="id">{d.html_text(v)}</span>' for v in values)


def _groups(result: dict[str, Any]) -> str:
    rows = []
    for g, role in zip(result["groups"], ("baseline", "candidate"), strict=True):
        rows.append("<tr>" + "".join([
            _cell(f'<span class="id">{d.html_text(g["group_id"])}</span>'), _cell(role),
            _cell(str(g["jobs"]), True), _cell(str(g["jobs_scored"]), True),
            _cell(str(g["instances"]), True),
            _cell(d.html_text(f"{d.rate(g['pass_rate'])} {d.rate_ci(g['pass_rate_ci95'])}"), True),
            _cell(d.html_text(f"{d.score(g['mean'])} {d.score_ci(g['mean_ci95'])}"), True),
        ]) + "</tr>")
    return _table("groups", [("group", False), ("role", False), ("jobs", True), ("scored", True),
                             ("instances", True), ("pass rate (95% CI)", True),
                             ("mean score (95% CI)", True)], rows)


def _paired(p: dict[str, Any]) -> str:
    rows = [
        "<tr>" + _cell("pass rate") + _cell(_diff(d.points(p["pass_rate_difference"]), p["ci95"]), True)
        + _cell(d.html_text(d.points_ci(p["ci95"])), True) + _cell(d.html_text(d.points(p["se"], False)), True)
        + _cell(d.html_text(d.p_text(p["p_value"])), True) + "</tr>",
        "<tr>" + _cell("mean score")
        + _cell(_diff(d.score(p["mean_difference"], True), p["mean_difference_ci95"]), True)
        + _cell(d.html_text(d.score_ci(p["mean_difference_ci95"], True)), True)
        + _cell(d.html_text(d.score(p.get("mean_difference_se"))), True)
        + _cell(d.html_text(d.p_text(p.get("mean_difference_p_value"))), True) + "</tr>",
    ]
    return _table("paired", [("figure", False), ("difference", True), ("95% CI", True), ("se", True),
                             ("p-value", True)], rows)


def _costs(costs: dict[str, Any]) -> str:
    rows = ["<tr>" + _cell(f"<code>{d.html_text(name)}</code>") + _cell(d.html_text(d.number(c["baseline_mean"], scale=d.cost_scale(c))), True)
            + _cell(d.html_text(d.number(c["candidate_mean"], scale=d.cost_scale(c))), True)
            + _cell(_diff(d.number(c["difference"], True, d.cost_scale(c)), c["ci95"]), True)
            + _cell(d.html_text(d.number_ci(c["ci95"], True, d.cost_scale(c))), True)
            + _cell(str(c.get("instances", "")), True) + "</tr>" for name, c in costs.items()]
    return _table("costs", [("cost (mean per instance)", False), ("baseline", True), ("candidate", True),
                            ("difference", True), ("95% CI", True), ("instances", True)], rows)


def _changed(changed: Sequence[dict[str, Any]]) -> str:
    rows = []
    for e in changed:
        direction = "up" if e["difference"] > 0 else "down"
        rows.append("<tr>" + "".join([
            _cell(f'<span class="id">{d.html_text(e["instance"])}</span>'),
            _cell(d.html_text(d.points(e["difference"])), True, direction),
            _cell(d.html_text(d.rate(e["baseline"]["pass_rate"])), True),
            _cell(d.html_text(d.rate(e["candidate"]["pass_rate"])), True),
            _cell(_ids(e["baseline"]["jobs"]), css="jobs"),
            _cell(_ids(e["candidate"]["jobs"]), css="jobs"),
        ]) + "</tr>")
    return _table("changed", [("instance", False), ("change", True), ("baseline", True), ("candidate", True),
                              ("baseline jobs", False), ("candidate jobs", False)], rows)


def section(result: dict[str, Any], index: int) -> str:
    base, cand = d.html_text(result["baseline"]), d.html_text(result["candidate"])
    p = result["paired"]
    changed = result.get("instances") or []
    changes = [(e["instance"], e["difference"]) for e in changed] + [("", 0.0)] * p["unchanged"]
    costs = result.get("costs") or {}
    parts = [
        f'<section class="comparison" id="comparison-{index}">',
        f'<h2><span class="id">{cand}</span> vs baseline <span class="id">{base}</span></h2>',
        f'<p class="meta">Metric <code>{d.html_text(result["metric"])}</code>, pass at &ge; '
        f'{d.html_text(result["pass_threshold"])}, instance key <code>{d.html_text(result["unit"])}</code>.</p>',
        _groups(result),
        f"<h3>Paired over {p['instances']} instances (candidate &minus; baseline)</h3>",
        _paired(p),
        f"<p>{p['improved']} improved, {p['regressed']} regressed, {p['unchanged']} unchanged.</p>",
        '<div class="charts">',
        '<figure class="chart">' + charts.pass_rates(result["groups"], ("baseline", "candidate"))
        + "<figcaption>Pass rate of each group (mean over its instances), whiskers: 95% CI."
          "</figcaption></figure>",
        '<figure class="chart">' + charts.paired_changes(changes)
        + "<figcaption>Change of pass rate of every paired instance, largest first "
          "(green: improved, red: regressed).</figcaption></figure>",
        "</div>",
    ]
    if costs:
        panels = "".join(f'<figure class="chart">{charts.cost_vs_pass(name, c, result["groups"])}</figure>'
                         for name, c in costs.items())
        parts += ["<h3>Costs</h3>", _costs(costs), f'<div class="charts">{panels}</div>',
                  '<p class="meta">Cost: mean per instance over the paired instances (grey: baseline, '
                  "blue: candidate); pass rate: each group's, whiskers its 95% CI.</p>"]
    parts.append(f"<h3>Changed instances ({len(changed)})</h3>")
    parts.append(_changed(changed) if changed else "<p>No paired instance changed its pass rate.</p>")
    for label, names in ((base, result.get("only_baseline") or []), (cand, result.get("only_candidate") or [])):
        if names:
            parts.append(f'<h3>Only in <span class="id">{label}</span> ({len(names)})</h3>')
            parts.append(f'<p class="only">{_ids(names)}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def render(results: Sequence[dict[str, Any]]) -> str:
    """The whole page for every comparison of ``bl compare``'s answer."""
    if results:
        base = results[0]["baseline"]
        names = ", ".join(str(r["candidate"]) for r in results)
        title = f"bl compare: {names} vs baseline {base}"
    else:
        title = "bl compare"
    body = "\n".join(section(r, i + 1) for i, r in enumerate(results))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{d.html_text(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{d.html_text(title)}</h1>\n"
        '<p class="meta">Unit of analysis: the instance (the trials of one instance are averaged first); '
        "95% confidence intervals are ±1.96 standard errors; paired differences over the instances "
        f"scored in both groups. {d.html_text(d.MARK_LEGEND)}.</p>\n"
        f"{body}\n</body>\n</html>\n"
    )
