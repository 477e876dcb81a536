"""``bl compare --report FILE.html``: one self-contained HTML page per comparison run.

Self-contained means it opens from a mail attachment or an artifact store:
no network (no external stylesheet, font, image or script; a
Content-Security-Policy of ``default-src 'none'`` says so to the browser
too), no JavaScript, the charts inline SVG (:mod:`.charts`).  The markup is the template
``templates/report.html`` (Jinja2, autoescaped: :mod:`benchloop.base.templating`): every
string that came from the server or the user is escaped where the template outputs it,
ids are hostile input, and a report is opened in a browser; this module only says what
the page shows, as plain data (the charts too: :mod:`.charts` gives their shapes, the
template draws them).  (The combine masks
the API key in the results before they get here: a page is made to be shared.)

The page leads with every comparison's verdict.  Per candidate: the verdict, the
warnings, the group figures (over all and over the paired instances), the paired
figures (a figure whose Holm-adjusted p-value is below 0.05 is marked), the
charts (pass rates with CIs, the per-instance paired changes, cost against pass
rate), the costs, the slices of ``--by`` and the clusters of ``--cluster`` (a
table and a chart each), the changed instances with their job ids (``--changes``;
all by default), with ``--why`` where they part (:func:`_why`), and the instances of one
group only.  Lists of ids are
separated (", "), so that they read, copy and search as separate ids.

``--report-dir`` makes the same page its folder's ``index.html``: each changed instance
links (a relative link, escaped) to the side-by-side page of its trials beside it, the
only links a report ever has.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from . import charts, sequential
from . import display as d

CSP = "default-src 'none'; style-src 'unsafe-inline'"  # (the template's, for tests and docs)

# A cell of a table: (kind, value, numeric, css class).  Kinds: "text"; "id" (an id, in a
# span); "code"; "diff" (value: (text, significant)); "ids" (a list of ids); "link" (value:
# (id, relative link)); "cells" (a list of cells, separated by ", ").
Cell = tuple[str, Any, bool, str]


def _cell(kind: str, value: Any, num: bool = False, css: str = "") -> Cell:
    return (kind, value, num, css)


def _text(value: Any, num: bool = False, css: str = "") -> Cell:
    return ("text", value, num, css)


def _table(css: str, header: Sequence[tuple[str, bool]], rows: Sequence[Sequence[Cell]]) -> dict[str, Any]:
    return {"css": css, "header": list(header), "rows": [list(r) for r in rows]}


def _diff(text: str, p_adjusted: Any, num: bool = True) -> Cell:
    return ("diff", (text, d.significant(p_adjusted)), num, "")


def _verdict_of(result: Mapping[str, Any]) -> str:
    """The verdict that decides: the sequential one with --sequential, else the fixed-sample one."""
    return str((result.get("sequential") or result["paired"]).get("verdict", "inconclusive"))


def _sequential(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """The fixed-sample and the sequential interval side by side (None without --sequential)."""
    rows = sequential.price_rows(result)
    if not rows:
        return None
    title = sequential.PRICE_TITLE
    table = _table("paired sequential", [("figure", False), ("difference", True), ("interval", True),
                                         ("over", True), ("evidence", False)],
                   [[_text(c, i in (1, 2, 3)) for i, c in enumerate(r)] for r in rows])
    return {"title": title[0].upper() + title[1:], "table": table}


def _groups(result: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for g, role in zip(result["groups"], ("baseline", "candidate"), strict=True):
        rows.append([
            _cell("id", g["group_id"]), _text(role),
            _text(g["jobs"], True), _text(g["jobs_scored"], True), _text(g["instances"], True),
            _text(f"{d.rate(g['pass_rate'])} {d.rate_ci(g['pass_rate_ci95'])}", True),
            _text(d.rate(g.get("paired_pass_rate")), True),
            _text(f"{d.score(g['mean'])} {d.score_ci(g['mean_ci95'])}", True),
            _text(d.score(g.get("paired_mean")), True),
        ])
    return _table("groups", [("group", False), ("role", False), ("jobs", True), ("scored", True),
                             ("instances", True), ("pass rate (95% CI)", True), ("paired pass rate", True),
                             ("mean score (95% CI)", True), ("paired mean", True)], rows)


def _paired(p: dict[str, Any]) -> dict[str, Any]:
    rows = [
        [_text("pass rate"), _diff(d.points(p["pass_rate_difference"]), p.get("p_value_adjusted")),
         _text(d.points_ci(p["ci95"]), True), _text(d.points(p["se"], False), True),
         _text(d.p_text(p["p_value"]), True), _text(d.p_text(p.get("p_value_adjusted")), True),
         _text(d.p_text(p.get("sign_test_p")), True)],
        [_text("mean score"), _diff(d.score(p["mean_difference"], True), p.get("mean_difference_p_value_adjusted")),
         _text(d.score_ci(p["mean_difference_ci95"], True), True), _text(d.score(p.get("mean_difference_se")), True),
         _text(d.p_text(p.get("mean_difference_p_value")), True),
         _text(d.p_text(p.get("mean_difference_p_value_adjusted")), True), _text("", True)],
    ]
    return _table("paired", [("figure", False), ("difference", True), ("95% CI", True), ("se", True),
                             ("p-value", True), ("adjusted", True), ("sign test", True)], rows)


def _costs(costs: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for name, c in costs.items():
        scale = d.cost_scale(c)
        rows.append([_cell("code", name), _text(d.number(c["baseline_mean"], scale=scale), True),
                     _text(d.number(c["candidate_mean"], scale=scale), True),
                     _diff(d.number(c["difference"], True, scale), c.get("p_value_adjusted")),
                     _text(d.number_ci(c["ci95"], True, scale), True),
                     _text(d.p_text(c.get("p_value_adjusted")), True), _text(c.get("instances", ""), True)])
    return _table("costs", [("cost (mean per instance)", False), ("baseline", True), ("candidate", True),
                            ("difference", True), ("95% CI", True), ("p adjusted", True), ("instances", True)], rows)


def _slices(result: dict[str, Any]) -> dict[str, Any] | None:
    slices = result.get("slices") or []
    if not slices:
        return None
    rows = []
    for key, cells, p_adjusted in d.slice_rows(result):
        shown = [_text(c, i < 5) for i, c in enumerate(cells)]
        shown[2] = _diff(cells[2], p_adjusted)
        rows.append([_cell("id", key), *shown])
    chart = charts.differences([(d.slice_key(s["key"]), s["paired"]["pass_rate_difference"],
                                 s["paired"].get("ci95_adjusted", s["paired"]["ci95"])) for s in slices], "slice")
    return {"by": result.get("by"), "count": len(slices), "chart": chart, "adjustment": d.slices_adjustment(result),
            "table": _table("slices", [("slice", False), *((h, i < 5) for i, h in enumerate(d.SLICE_HEADER))], rows)}


def _clusters(result: dict[str, Any]) -> dict[str, Any] | None:
    if result.get("cluster") is None:
        return None
    clusters = result.get("cluster_differences") or []
    rows = [[_cell("id", c["cluster"]), _text(c["instances"], True), _text(c["improved"], True),
             _text(c["regressed"], True), _text(d.points(c["pass_rate_difference"]), True)] for c in clusters]
    chart = charts.differences([(c["cluster"], c["pass_rate_difference"], None) for c in clusters], "cluster")
    return {"cluster": result["cluster"], "count": len(clusters), "chart": chart,
            "table": _table("clusters", [("cluster", False), ("paired instances", True), ("improved", True),
                                         ("regressed", True), ("mean change", True)], rows)}


def _changed(changed: Sequence[dict[str, Any]], links: Mapping[str, str] | None = None,
             css: str = "changed") -> dict[str, Any]:
    rows = []
    for e in changed:
        direction = "up" if e["difference"] > 0 else "down"
        href = (links or {}).get(str(e["instance"]))
        # A relative link to the side-by-side page (--report-dir), made safe by the template's |href.
        name = _cell("id", e["instance"]) if href is None else _cell("link", (e["instance"], href))
        rows.append([name, _text(d.points(e["difference"]), True, direction),
                     _text(d.rate(e["baseline"]["pass_rate"]), True), _text(d.rate(e["candidate"]["pass_rate"]), True),
                     _cell("ids", e["baseline"]["jobs"], css="jobs"), _cell("ids", e["candidate"]["jobs"], css="jobs"),
                     *(_text(c, i < 2, "sig" if i == 2 and c else "") for i, c in enumerate(d.evidence_cells(e)))])
    return _table(css, [("instance", False), ("change", True), ("baseline", True), ("candidate", True),
                        ("baseline jobs", False), ("candidate jobs", False),
                        ("p (Fisher)", True), ("q (BH)", True), ("", False)], rows)


def _evidence(result: dict[str, Any], links: Mapping[str, str] | None) -> dict[str, Any] | None:
    """First after the verdict: the noise floor, and the changes ranked by evidence, those beyond
    noise listed (the data: ``noise_floor``, ``evidence``, ``instances[].beyond_noise``)."""
    floor, evidence = d.floor_line(result), d.evidence_line(result)
    if not (floor or evidence):
        return None
    beyond = [e for e in result.get("instances") or [] if e.get("beyond_noise")]
    return {"floor": floor or None, "line": evidence or None, "beyond": _changed(beyond, links, "beyond") if beyond else None}


def view_command(d_: Mapping[str, Any]) -> str:
    """The command that opens a divergence's own pair of trials side by side (shell-quoted)."""
    import shlex

    return " ".join(["bl view", *(f"-j {shlex.quote(str(d_[side]['job_id']))}" for side in ("passing", "failing"))])


def _share(counts: Mapping[str, Any]) -> str:
    return f"{counts.get('taking_it', 0)} of {counts.get('trials', 0)}" if counts.get("trials") else "-"


def _reasons(reasons: Mapping[str, Any]) -> str:
    return ", ".join(f"{r} {n}" for r, n in reasons.items())


def _instance(name: Any, links: Mapping[str, str] | None) -> Cell:
    href = (links or {}).get(str(name))
    return _cell("id", name) if href is None else _cell("link", (name, href))


def _why(result: dict[str, Any], links: Mapping[str, str] | None) -> dict[str, Any] | None:
    """``--why``: the divergence summary of the candidate (``result["divergences"]``, made by
    ``viewer.divergences``): per direction its kinds with counts, the explains-nothing mark and
    the fail reasons, then every divergence with its step, argument, both values and the pair's
    ``bl view`` command; an instance links to its side-by-side page under ``--report-dir``."""
    from .why_scope import scope_of

    summary = result.get("divergences")
    if not isinstance(summary, dict):
        return None
    directions = []
    for direction in summary.get("directions") or []:
        word = "Regressions" if direction["direction"] == "regressed" else "Improvements"
        rows = [[_text(k["kind"]), _text(k["count"], True),
                 _text("explains nothing" if k["explains_nothing"] else "", False, "nothing" if k["explains_nothing"] else ""),
                 _text(_share(k["in_failing"]), True), _text(_share(k["in_passing"]), True),
                 _text(_reasons(k["fail_reasons"])),
                 ("cells", [_instance(i, links) for i in k["instances"]], False, "")]
                for k in direction["kinds"]]
        directions.append({
            "title": f"{word} ({direction['instances']})", "reasons": _reasons(direction["fail_reasons"]),
            "kinds": _table("why-kinds", [("kind (the first differing action)", False), ("instances", True),
                                          ("", False), ("in failing trials", True), ("in passing trials", True),
                                          ("fail reasons", False), ("which", False)], rows)})
    rows = []
    for dv_ in summary.get("divergences") or []:
        changes = dv_.get("changes") or []
        first = next((c for c in changes if c["argument"] == dv_.get("argument")), changes[0] if changes else None)
        side = dv_["failing"]
        rows.append([_instance(dv_["instance"], links), _text(dv_["direction"]),
                     _text("" if dv_["step"] is None else dv_["step"], True), _cell("code", dv_.get("tool") or ""),
                     _cell("code", first["argument"] if first else ""),
                     _cell("code", "" if first is None else _value(first["passing"])),
                     _cell("code", "" if first is None else _value(first["failing"])),
                     _text(dv_["shape"]), _text(side.get("sub_fail_reason") or side.get("fail_reason") or ""),
                     _cell("code", view_command(dv_))])
    table = _table("why", [("instance", False), ("direction", False), ("step", True), ("failing tool", False),
                           ("argument", False), ("passing value", False), ("failing value", False),
                           ("shape", False), ("fail reason", False), ("the pair side by side", False)], rows)
    return {"scope": scope_of(summary).title(), "note": summary.get("note"), "directions": directions,
            "divergences": table if rows else None}


def _value(value: Any) -> str:
    """A differing argument's value as the page shows it (already cut to 120 characters)."""
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def section(result: dict[str, Any], index: int, changes: str = "largest",
            links: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What the section of one comparison shows."""
    p = result["paired"]
    every = result.get("instances") or []
    changes_shown = [(e["instance"], e["difference"]) for e in every] + [("", 0.0)] * p["unchanged"]
    shown, title = d.changed(result, changes, None)
    costs = result.get("costs") or {}
    return {
        "index": index, "baseline": result["baseline"], "candidate": result["candidate"],
        "verdict": _verdict_of(result), "summary": result.get("summary") or "",
        "evidence": _evidence(result, links), "why": _why(result, links),
        "warnings": result.get("warnings") or [], "metric": result["metric"],
        "pass_threshold": result["pass_threshold"], "unit": result["unit"], "clusters_note": d.clusters_note(result),
        "groups": _groups(result), "paired": p, "paired_table": _paired(p),
        "sequential": _sequential(result),  # with --sequential: both intervals (the price of looking)
        "detectable": d.detectable(p) or None, "equivalence": d.equivalence_text(p) or None,
        "pass_rates": charts.pass_rates(result["groups"], ("baseline", "candidate")),
        "paired_changes": charts.paired_changes(changes_shown),
        "costs": _costs(costs) if costs else None,
        "cost_charts": [charts.cost_vs_pass(name, c, result["groups"]) for name, c in costs.items()],
        "slices": _slices(result), "clusters": _clusters(result),
        "title": title[0].upper() + title[1:], "links": bool(links),
        "changed": _changed(shown, links) if shown else None,
        "only": [(label, names) for label, names in ((result["baseline"], result.get("only_baseline") or []),
                                                      (result["candidate"], result.get("only_candidate") or []))
                 if names],
    }


def generate(results: Sequence[dict[str, Any]], changes: str = "largest",
             links: Mapping[tuple[str, str], str] | None = None) -> Iterator[str]:
    """The whole page for every comparison of ``bl compare``'s answer, piece by piece
    (``changes``: which changed instances each section lists; ``largest`` lists them all here;
    ``links``: the relative path of each (candidate, instance) page of ``--report-dir``, made a
    link by the template: ``templating.href``)."""
    from ..base.templating import generate as from_template

    if results:
        base = results[0]["baseline"]
        names = ", ".join(str(r["candidate"]) for r in results)
        title = f"bl compare: {names} vs baseline {base}"
    else:
        title = "bl compare"

    def sections() -> Iterator[dict[str, Any]]:
        for i, r in enumerate(results):
            mine = {inst: href for (cand, inst), href in (links or {}).items() if cand == str(r["candidate"])}
            yield section(r, i + 1, changes, mine)

    verdicts = [(_verdict_of(r), r.get("summary") or "") for r in results]
    return from_template("compare", "report.html", title=title, verdicts=verdicts, legend=d.legend(results),
                         sections=sections(), mark=d.MARK)


def render(results: Sequence[dict[str, Any]], changes: str = "largest",
           links: Mapping[tuple[str, str], str] | None = None) -> str:
    """:func:`generate` as one string."""
    return "".join(generate(results, changes, links))
