"""``bl compare --report FILE.html``: one self-contained HTML page per comparison run.

Self-contained means it opens from a mail attachment or an artifact store:
no network (no external stylesheet, font, image or script; a
Content-Security-Policy of ``default-src 'none'`` says so to the browser
too), no JavaScript, the charts inline SVG (:mod:`.charts`).  Every string
that came from the server or the user is escaped (:func:`display.html_text`):
ids are hostile input, and a report is opened in a browser.  (The combine masks
the API key in the results before they get here: a page is made to be shared.)

The page leads with every comparison's verdict.  Per candidate: the verdict, the
warnings, the group figures (over all and over the paired instances), the paired
figures (a figure whose Holm-adjusted p-value is below 0.05 is marked), the
charts (pass rates with CIs, the per-instance paired changes, cost against pass
rate), the costs, the slices of ``--by`` and the clusters of ``--cluster`` (a
table and a chart each), the changed instances with their job ids (``--changes``;
all by default), and the instances of one group only.  Lists of ids are
separated (", "), so that they read, copy and search as separate ids.

``--report-dir`` makes the same page its folder's ``index.html``: each changed instance
links (a relative link, escaped) to the side-by-side page of its trials beside it, the
only links a report ever has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
.verdict{font-size:15px;padding:6px 10px;border-left:4px solid #9ca3af;background:#f9fafb;margin:6px 0}
.verdict.better{border-color:#15803d}.verdict.worse{border-color:#b91c1c}
.warnings{color:#92400e}
figure{margin:8px 0 14px}figcaption{color:#4b5563;font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:12px}svg{max-width:100%;height:auto}
.meta{color:#4b5563}a.trials{color:#1d4ed8}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'"


def _cell(content: str, num: bool = False, css: str = "") -> str:
    classes = " ".join(c for c in ("num" if num else "", css) if c)
    return f'<td class="{classes}">{content}</td>' if classes else f"<td>{content}</td>"


def _table(css: str, header: Sequence[tuple[str, bool]], rows: Sequence[str]) -> str:
    head = "".join(f'<th class="num">{h}</th>' if num else f"<th>{h}</th>" for h, num in header)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _diff(text: str, p_adjusted: Any) -> str:
    if d.significant(p_adjusted):
        return f'<span class="sig">{d.html_text(text)}{d.MARK}</span>'
    return d.html_text(text)


def _ids(values: Sequence[Any]) -> str:
    """Ids as separate spans with ", " between them (text, copy and search see separate ids)."""
    return ", ".join(f'<span class="id">{d.html_text(v)}</span>' for v in values)


def _verdict(result: dict[str, Any]) -> str:
    kind = result["paired"].get("verdict", "inconclusive")
    return f'<p class="verdict {d.html_text(kind)}">{d.html_text(result.get("summary") or "")}</p>'


def _groups(result: dict[str, Any]) -> str:
    rows = []
    for g, role in zip(result["groups"], ("baseline", "candidate"), strict=True):
        rows.append("<tr>" + "".join([
            _cell(f'<span class="id">{d.html_text(g["group_id"])}</span>'), _cell(role),
            _cell(str(g["jobs"]), True), _cell(str(g["jobs_scored"]), True),
            _cell(str(g["instances"]), True),
            _cell(d.html_text(f"{d.rate(g['pass_rate'])} {d.rate_ci(g['pass_rate_ci95'])}"), True),
            _cell(d.html_text(d.rate(g.get("paired_pass_rate"))), True),
            _cell(d.html_text(f"{d.score(g['mean'])} {d.score_ci(g['mean_ci95'])}"), True),
            _cell(d.html_text(d.score(g.get("paired_mean"))), True),
        ]) + "</tr>")
    return _table("groups", [("group", False), ("role", False), ("jobs", True), ("scored", True),
                             ("instances", True), ("pass rate (95% CI)", True), ("paired pass rate", True),
                             ("mean score (95% CI)", True), ("paired mean", True)], rows)


def _paired(p: dict[str, Any]) -> str:
    rows = [
        "<tr>" + _cell("pass rate") + _cell(_diff(d.points(p["pass_rate_difference"]), p.get("p_value_adjusted")), True)
        + _cell(d.html_text(d.points_ci(p["ci95"])), True) + _cell(d.html_text(d.points(p["se"], False)), True)
        + _cell(d.html_text(d.p_text(p["p_value"])), True) + _cell(d.html_text(d.p_text(p.get("p_value_adjusted"))), True)
        + _cell(d.html_text(d.p_text(p.get("sign_test_p"))), True) + "</tr>",
        "<tr>" + _cell("mean score")
        + _cell(_diff(d.score(p["mean_difference"], True), p.get("mean_difference_p_value_adjusted")), True)
        + _cell(d.html_text(d.score_ci(p["mean_difference_ci95"], True)), True)
        + _cell(d.html_text(d.score(p.get("mean_difference_se"))), True)
        + _cell(d.html_text(d.p_text(p.get("mean_difference_p_value"))), True)
        + _cell(d.html_text(d.p_text(p.get("mean_difference_p_value_adjusted"))), True) + _cell("", True) + "</tr>",
    ]
    return _table("paired", [("figure", False), ("difference", True), ("95% CI", True), ("se", True),
                             ("p-value", True), ("adjusted", True), ("sign test", True)], rows)


def _costs(costs: dict[str, Any]) -> str:
    rows = []
    for name, c in costs.items():
        scale = d.cost_scale(c)
        rows.append("<tr>" + _cell(f"<code>{d.html_text(name)}</code>")
                    + _cell(d.html_text(d.number(c["baseline_mean"], scale=scale)), True)
                    + _cell(d.html_text(d.number(c["candidate_mean"], scale=scale)), True)
                    + _cell(_diff(d.number(c["difference"], True, scale), c.get("p_value_adjusted")), True)
                    + _cell(d.html_text(d.number_ci(c["ci95"], True, scale)), True)
                    + _cell(d.html_text(d.p_text(c.get("p_value_adjusted"))), True)
                    + _cell(str(c.get("instances", "")), True) + "</tr>")
    return _table("costs", [("cost (mean per instance)", False), ("baseline", True), ("candidate", True),
                            ("difference", True), ("95% CI", True), ("p adjusted", True), ("instances", True)], rows)


def _slices(result: dict[str, Any]) -> list[str]:
    slices = result.get("slices") or []
    if not slices:
        return []
    rows = []
    for key, cells, p_adjusted in d.slice_rows(result):
        shown = [d.html_text(c) for c in cells]
        shown[2] = _diff(cells[2], p_adjusted)
        rows.append("<tr>" + _cell(f'<span class="id">{d.html_text(key)}</span>')
                    + "".join(_cell(c, i < 5) for i, c in enumerate(shown)) + "</tr>")
    chart = charts.differences([(d.slice_key(s["key"]), s["paired"]["pass_rate_difference"], s["paired"]["ci95"])
                                for s in slices], "slice")
    return [f"<h3>By <code>{d.html_text(result.get('by'))}</code> ({len(slices)} slices)</h3>",
            _table("slices", [("slice", False), *((h, i < 5) for i, h in enumerate(d.SLICE_HEADER))], rows),
            f'<figure class="chart">{chart}<figcaption>Change of pass rate in each slice, computed from that '
            "slice's jobs alone; p-values Holm-adjusted over the slices.</figcaption></figure>"]


def _clusters(result: dict[str, Any]) -> list[str]:
    clusters = result.get("cluster_differences") or []
    if result.get("cluster") is None:
        return []
    rows = ["<tr>" + "".join([
        _cell(f'<span class="id">{d.html_text(c["cluster"])}</span>'), _cell(str(c["instances"]), True),
        _cell(str(c["improved"]), True), _cell(str(c["regressed"]), True),
        _cell(d.html_text(d.points(c["pass_rate_difference"])), True)]) + "</tr>" for c in clusters]
    chart = charts.differences([(c["cluster"], c["pass_rate_difference"], None) for c in clusters], "cluster")
    return [f"<h3>Clusters of <code>{d.html_text(result['cluster'])}</code> ({len(clusters)})</h3>",
            '<p class="meta">The standard error, interval and p-value above are cluster-robust: instances of one '
            "cluster are not independent, so the evidence counts clusters, not instances.</p>",
            _table("clusters", [("cluster", False), ("paired instances", True), ("improved", True),
                                ("regressed", True), ("mean change", True)], rows),
            f'<figure class="chart">{chart}<figcaption>Mean change of pass rate of the paired instances of each '
            "cluster.</figcaption></figure>"]


def _changed(changed: Sequence[dict[str, Any]], links: Mapping[str, str] | None = None, css: str = "changed") -> str:
    rows = []
    for e in changed:
        direction = "up" if e["difference"] > 0 else "down"
        name = f'<span class="id">{d.html_text(e["instance"])}</span>'
        href = (links or {}).get(str(e["instance"]))
        if href is not None:  # a relative link to the side-by-side page (--report-dir)
            name = f'<a class="trials" href="{d.html_text(href)}">{name}</a>'
        rows.append("<tr>" + "".join([
            _cell(name),
            _cell(d.html_text(d.points(e["difference"])), True, direction),
            _cell(d.html_text(d.rate(e["baseline"]["pass_rate"])), True),
            _cell(d.html_text(d.rate(e["candidate"]["pass_rate"])), True),
            _cell(_ids(e["baseline"]["jobs"]), css="jobs"),
            _cell(_ids(e["candidate"]["jobs"]), css="jobs"),
            *(_cell(d.html_text(c), i < 2, "sig" if i == 2 and c else "") for i, c in enumerate(d.evidence_cells(e))),
        ]) + "</tr>")
    return _table(css, [("instance", False), ("change", True), ("baseline", True), ("candidate", True),
                        ("baseline jobs", False), ("candidate jobs", False),
                        ("p (Fisher)", True), ("q (BH)", True), ("", False)], rows)


def _evidence(result: dict[str, Any], links: Mapping[str, str] | None) -> list[str]:
    """First after the verdict: the noise floor, and the changes ranked by evidence, those beyond
    noise listed (the data: ``noise_floor``, ``evidence``, ``instances[].beyond_noise``)."""
    floor, evidence = d.floor_line(result), d.evidence_line(result)
    if not (floor or evidence):
        return []
    beyond = [e for e in result.get("instances") or [] if e.get("beyond_noise")]
    parts = ['<div class="evidence">']
    if floor:
        parts.append(f'<p class="meta">Noise floor: {d.html_text(floor)}.</p>')
    if evidence:
        parts.append(f"<p>Changed instances: {d.html_text(evidence)}.</p>")
    if beyond:
        parts.append(_changed(beyond, links, "beyond"))
    return [*parts, "</div>"]


def section(result: dict[str, Any], index: int, changes: str = "largest",
            links: Mapping[str, str] | None = None) -> str:
    base, cand = d.html_text(result["baseline"]), d.html_text(result["candidate"])
    p = result["paired"]
    every = result.get("instances") or []
    changes_shown = [(e["instance"], e["difference"]) for e in every] + [("", 0.0)] * p["unchanged"]
    shown, title = d.changed(result, changes, None)
    costs = result.get("costs") or {}
    warnings = result.get("warnings") or []
    parts = [
        f'<section class="comparison" id="comparison-{index}">',
        f'<h2><span class="id">{cand}</span> vs baseline <span class="id">{base}</span></h2>',
        _verdict(result),
        *_evidence(result, links),
    ]
    if warnings:
        parts.append('<ul class="warnings">' + "".join(f"<li>{d.html_text(w)}</li>" for w in warnings) + "</ul>")
    parts += [
        f'<p class="meta">Metric <code>{d.html_text(result["metric"])}</code>, pass at &ge; '
        f'{d.html_text(result["pass_threshold"])}, instance key <code>{d.html_text(result["unit"])}</code>'
        f"{d.html_text(d.clusters_note(result))}.</p>",
        _groups(result),
        f"<h3>Paired over {p['instances']} instances (candidate &minus; baseline)</h3>",
        _paired(p),
        f"<p>{p['improved']} improved, {p['regressed']} regressed, {p['unchanged']} unchanged"
        + (f"; a difference smaller than &plusmn;{d.html_text(d.points(p['mde'], False))} cannot be detected "
           "reliably (80% power)" if d.finite(p.get("mde")) else "") + ".</p>",
        '<div class="charts">',
        '<figure class="chart">' + charts.pass_rates(result["groups"], ("baseline", "candidate"))
        + "<figcaption>Pass rate of each group (mean over its instances), whiskers: 95% CI "
          "(a triangle marks a whisker cut at the edge).</figcaption></figure>",
        '<figure class="chart">' + charts.paired_changes(changes_shown)
        + "<figcaption>Change of pass rate of every paired instance, largest first "
          "(green: improved, red: regressed).</figcaption></figure>",
        "</div>",
    ]
    if costs:
        panels = "".join(f'<figure class="chart">{charts.cost_vs_pass(name, c, result["groups"])}</figure>'
                         for name, c in costs.items())
        parts += ["<h3>Costs</h3>", _costs(costs), f'<div class="charts">{panels}</div>',
                  '<p class="meta">Cost: mean per instance over the paired instances (grey: baseline, '
                  "blue: candidate), on an axis from zero; pass rate: each group's, whiskers its 95% CI.</p>"]
    parts += _slices(result)
    parts += _clusters(result)
    parts.append(f"<h3>{d.html_text(title[0].upper() + title[1:])}</h3>")
    if links:
        parts.append('<p class="meta">Each linked instance opens the page of a baseline trial and a candidate '
                     "trial side by side (bl view), the first step where they differ marked.</p>")
    parts.append(_changed(shown, links) if shown else "<p>No paired instance changed its pass rate.</p>")
    for label, names in ((base, result.get("only_baseline") or []), (cand, result.get("only_candidate") or [])):
        if names:
            parts.append(f'<h3>Only in <span class="id">{label}</span> ({len(names)})</h3>')
            parts.append(f'<p class="only">{_ids(names)}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def render(results: Sequence[dict[str, Any]], changes: str = "largest",
           links: Mapping[tuple[str, str], str] | None = None) -> str:
    """The whole page for every comparison of ``bl compare``'s answer (``changes``: which
    changed instances each section lists; ``largest`` lists them all here; ``links``: the
    relative link of each (candidate, instance) page of ``--report-dir``)."""
    if results:
        base = results[0]["baseline"]
        names = ", ".join(str(r["candidate"]) for r in results)
        title = f"bl compare: {names} vs baseline {base}"
    else:
        title = "bl compare"
    verdicts = "\n".join(_verdict(r) for r in results)
    body = "\n".join(section(r, i + 1, changes, {inst: href for (cand, inst), href in (links or {}).items()
                                                   if cand == str(r["candidate"])})
                     for i, r in enumerate(results))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{d.html_text(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{d.html_text(title)}</h1>\n"
        f'<div class="verdicts">\n{verdicts}\n</div>\n'
        '<p class="meta">Unit of analysis: the instance (the trials of one instance are averaged first); '
        "95% confidence intervals from Student's t (cluster-robust with --cluster); paired differences over "
        "the instances scored in both groups; the verdict is the pass rate's, from its p-value "
        f"Holm-adjusted over the candidates. {d.html_text(d.legend(results))}.</p>\n"
        f"{body}\n</body>\n</html>\n"
    )
