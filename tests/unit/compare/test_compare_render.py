"""The renderings of a comparison: terminal summary, markdown, self-contained HTML report.

The HTML is parsed (html.parser into a small tree) and checked for its
structure, for having no way to reach the network or run code, for charts
with a size, and for every hostile id shown as text.  The terminal and
markdown renderings are checked for escaping and for the mark on a
figure whose Holm-adjusted p-value is below 0.05; the worked example is kept as snapshots.
"""

from __future__ import annotations

import re
import shlex

import pytest
from compare_cases import HAND_BASELINE, HAND_CANDIDATE, payloads, table_rows
from html_tree import parse

from benchloop.compare import charts, html_report, markdown, terminal
from benchloop.compare.stats import compare_groups

HOSTILE = [
    "<script>alert(1)</script>",
    '" onmouseover="alert(2)',
    "\x1b[31mred\x1b[0m\x9b2J",
    "abc\u202edcba",
    "a|b [x](javascript:alert(3)) *bold* `code`",
    "</svg><img src=x onerror=alert(4)>",
    "&amp; &lt;",
]


def hand() -> list[dict]:
    groups = []
    for gid, table in (("G1", HAND_BASELINE), ("G2", HAND_CANDIDATE)):
        jobs, metrics = payloads(gid, table)
        groups.append((gid, table_rows(gid, jobs, metrics)))
    return compare_groups(groups, metric="metrics[?type=='eval'].data.task_score | [0]",
                          pass_threshold=0.5, unit="instance_id", costs=["duration_s", "tool_error_count"])


def _rows(gid: str, scores: dict[str, list[float]], cost: float = 10.0) -> list[dict]:
    return [{"job_id": f"{gid}-{inst}-{k}", "instance": inst, "score": s, "pass": s >= 0.5,
             "duration_s": cost + k}
            for inst, trials in scores.items() for k, s in enumerate(trials)]


def clear_win() -> list[dict]:
    """A candidate that passes 20 of 24 instances the baseline fails: CIs exclude 0."""
    base = {f"i{k}": [0.0, 0.0] for k in range(24)}
    cand = {f"i{k}": [1.0, 1.0] if k < 20 else [0.0, 0.0] for k in range(24)}
    return compare_groups([("BASE", _rows("BASE", base)), ("CAND", _rows("CAND", cand, cost=30.0))],
                          metric="m", pass_threshold=0.5, unit="u", costs=["duration_s"])


def hostile() -> list[dict]:
    """Every hostile string as a group id, an instance key and a job id."""
    base = {name: [0.0] for name in HOSTILE}
    cand = {name: [1.0] for name in HOSTILE[:-1]}
    cand["only " + HOSTILE[0]] = [1.0]
    rows_a = [dict(r, job_id=HOSTILE[i % len(HOSTILE)]) for i, r in enumerate(_rows("A", base))]
    return compare_groups([(HOSTILE[0], rows_a), (HOSTILE[2], _rows("B", cand))],
                          metric=HOSTILE[1], pass_threshold=0.5, unit=HOSTILE[3], costs=["duration_s"])


def _number(value: str | None) -> float:
    assert value is not None and re.fullmatch(r"\d+(\.\d+)?", value), value
    return float(value)


# ------------------------------------------------------------------- html
def test_report_structure():
    results = hand() + clear_win()
    builder, root = parse(html_report.render(results))
    assert builder.doctype == "DOCTYPE html"
    [html] = root.find_all("html")
    assert html.attrs["lang"] == "en"
    metas = root.find_all("meta")
    assert any(m.attrs.get("charset") == "utf-8" for m in metas)
    sections = root.find_all("section", "comparison")
    assert len(sections) == 2
    for section, result in zip(sections, results, strict=True):
        [groups] = section.find_all("table", "groups")
        assert len(groups.find_all("tr")) == 1 + 2
        [paired] = section.find_all("table", "paired")
        assert len(paired.find_all("tr")) == 1 + 2
        [costs] = section.find_all("table", "costs")
        assert len(costs.find_all("tr")) == 1 + len(result["costs"])
        [changed] = section.find_all("table", "changed")
        body_rows = changed.find_all("tbody")[0].find_all("tr")
        assert len(body_rows) == len(result["instances"])
        for tr, entry in zip(body_rows, result["instances"], strict=True):
            cells = tr.find_all("td")
            assert cells[0].all_text() == entry["instance"]
            assert [s.all_text() for s in cells[4].find_all("span")] == entry["baseline"]["jobs"]
            assert [s.all_text() for s in cells[5].find_all("span")] == entry["candidate"]["jobs"]
        svgs = section.find_all("svg")
        kinds = [next(iter(s.classes())) for s in svgs]
        assert kinds == ["chart-pass-rates", "chart-paired-changes", *["chart-cost"] * len(result["costs"])]
        bars = svgs[1].find_all("rect", "bar")
        assert len(bars) == len(result["instances"])  # one bar per changed instance (few instances)


def test_report_leads_with_every_verdict_and_separates_ids():
    results = hand() + clear_win()
    _, root = parse(html_report.render(results))
    [top] = root.find_all("div", "verdicts")
    assert [p.all_text() for p in top.find_all("p", "verdict")] == [r["summary"] for r in results]
    assert "better" in top.find_all("p", "verdict")[1].classes()
    # the first thing of each section after its title is its verdict too
    for section, result in zip(root.find_all("section", "comparison"), results, strict=True):
        assert section.children[1].tag == "p" and section.children[1].all_text() == result["summary"]
    # ids are separate words: the text of a list of them has ", " between ids
    changed = root.find_all("table", "changed")[0].find_all("tbody")[0].find_all("tr")[0].find_all("td")
    assert changed[4].all_text() == ", ".join(hand()[0]["instances"][0]["baseline"]["jobs"])
    only = root.find_all("p", "only")
    assert [p.all_text() for p in only[:2]] == ["i6", "i7"]
    many = clear_win()[0]
    many["only_baseline"] = ["django__django-11308", "pytest__pytest-12092"]
    _, root = parse(html_report.render([many]))
    assert root.find_all("p", "only")[0].all_text() == "django__django-11308, pytest__pytest-12092"


def test_report_shows_warnings_slices_and_clusters_when_asked():
    rows_a = [dict(r, slice=r["instance"][:2]) for r in _rows("A", {f"r{k % 3}__i{k}": [float(k % 2)] for k in range(18)})]
    rows_b = [dict(r, slice=r["instance"][:2]) for r in _rows("B", {f"r{k % 3}__i{k}": [1.0] for k in range(18)})]
    [plain] = compare_groups([("A", rows_a), ("B", rows_b)], metric="m", pass_threshold=0.5, unit="u")
    _, root = parse(html_report.render([plain]))
    assert not root.find_all("table", "slices") and not root.find_all("table", "clusters")
    [r] = compare_groups([("A", rows_a), ("B", rows_b)], metric="m", pass_threshold=0.5, unit="u", by="x",
                         cluster="^(r\\d)__")
    r["warnings"] = ["<b>careful</b>"]
    _, root = parse(html_report.render([r]))
    [slices] = root.find_all("table", "slices")
    assert [tr.find_all("td")[0].all_text() for tr in slices.find_all("tbody")[0].find_all("tr")] == ["r0", "r1", "r2"]
    [clusters] = root.find_all("table", "clusters")
    assert len(clusters.find_all("tbody")[0].find_all("tr")) == 3
    assert [next(iter(s.classes())) for s in root.find_all("svg")][-2:] == ["chart-slices", "chart-clusters"]
    assert root.find_all("ul", "warnings")[0].all_text() == "<b>careful</b>"  # escaped, shown as text


def test_whiskers_are_clipped_with_a_mark_where_they_were_cut():
    groups = [{"group_id": "A", "pass_rate": 0.05, "pass_rate_ci95": [-0.2, 0.3]},
              {"group_id": "B", "pass_rate": 0.97, "pass_rate_ci95": [0.9, 1.04]}]
    _, root = parse(charts.drawn(charts.pass_rates(groups, ("baseline", "candidate"))))
    cuts = root.find_all("polygon", "cut")
    assert len(cuts) == 2
    assert [c.find_all("title")[0].all_text() for c in cuts] == [
        "A 95% CI: the interval goes on to -0.2", "B 95% CI: the interval goes on to 1.04"]
    for line_ in root.find_all("line"):  # nothing drawn outside the plot (x from 170 to 570)
        assert 170 <= float(line_.attrs["x1"]) <= 570 and 170 <= float(line_.attrs["x2"]) <= 570
    inside = [{"group_id": "A", "pass_rate": 0.5, "pass_rate_ci95": [0.4, 0.6]}] * 2
    assert not parse(charts.drawn(charts.pass_rates(inside, ("baseline", "candidate"))))[1].find_all("polygon", "cut")
    # the cost chart's pass-rate whiskers too
    cost = {"baseline_mean": 30.57, "candidate_mean": 30.62}
    _, root = parse(charts.drawn(charts.cost_vs_pass("duration_s", cost, groups)))
    assert len(root.find_all("polygon", "cut")) == 2


def test_cost_charts_start_at_zero_or_say_they_do_not():
    groups = [{"group_id": "A", "pass_rate": 0.5, "pass_rate_ci95": [0.4, 0.6]},
              {"group_id": "B", "pass_rate": 0.55, "pass_rate_ci95": [0.45, 0.65]}]
    _, root = parse(charts.drawn(charts.cost_vs_pass("duration_s", {"baseline_mean": 30.57, "candidate_mean": 30.62}, groups)))
    texts = [t.all_text() for t in root.find_all("text")]
    assert "0.0" in texts and "mean duration_s per instance" in texts
    points = [float(c.attrs["cx"]) for c in root.find_all("circle", "point")]
    assert abs(points[1] - points[0]) < 1  # 30.57 against 30.62 is no big move on an axis from 0
    _, root = parse(charts.drawn(charts.cost_vs_pass("delta", {"baseline_mean": -3.0, "candidate_mean": 2.0}, groups)))
    assert "mean delta per instance (axis not from 0)" in [t.all_text() for t in root.find_all("text")]


def test_report_charts_have_a_size():
    _, root = parse(html_report.render(hand()))
    for svg in root.find_all("svg"):
        w, h = _number(svg.attrs.get("width")), _number(svg.attrs.get("height"))
        assert w > 0 and h > 0
        assert svg.attrs["viewbox"] == f"0 0 {svg.attrs['width']} {svg.attrs['height']}"
        assert svg.find_all("title") and svg.attrs.get("role") == "img"
    pass_rates = root.find_all("svg", "chart-pass-rates")[0]
    for bar in pass_rates.find_all("rect", "bar"):
        assert _number(bar.attrs["width"]) > 0 and _number(bar.attrs["height"]) > 0
    assert root.find_all("circle", "point")


def test_report_is_self_contained():
    document = html_report.render(hand() + hostile())
    _, root = parse(document)
    for tag in ("script", "link", "img", "iframe", "object", "embed", "base", "image", "use", "a"):
        assert not root.find_all(tag), tag
    for node in root.iter():
        for name in node.attrs:
            assert not name.startswith("on"), (node.tag, name)
            assert name not in ("src", "href", "xlink:href", "srcset", "action", "formaction"), (node.tag, name)
    [style] = root.find_all("style")
    assert "url(" not in style.all_text() and "@import" not in style.all_text()
    csp = [m for m in root.find_all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp and csp[0].attrs["content"].startswith("default-src 'none'")


def test_report_escapes_every_hostile_string():
    results = hostile()
    document = html_report.render(results)
    _, root = parse(document)
    assert not root.find_all("script") and not root.find_all("img")
    text = root.all_text()
    for name in HOSTILE:
        shown = name.replace("\x1b", "\\x1b").replace("\x9b", "\\x9b").replace("\u202e", "\\u202e")
        assert shown in text, name
    assert "\x1b" not in document and "\u202e" not in document and "\x9b" not in document
    changed = root.find_all("table", "changed")[0]
    instances = [tr.find_all("td")[0].all_text() for tr in changed.find_all("tbody")[0].find_all("tr")]
    assert sorted(instances) == sorted(n.replace("\x1b", "\\x1b").replace("\x9b", "\\x9b")
                                       .replace("\u202e", "\\u202e") for n in HOSTILE[:-1])
    # attribute values (aria-label, title) stay attribute values
    for svg in root.find_all("svg"):
        assert set(svg.attrs) == {"class", "width", "height", "viewbox", "role", "aria-label"}


def test_report_of_many_instances_stays_small():
    base = {f"i{k}": [float(k % 3 == 0)] for k in range(5000)}
    cand = {f"i{k}": [float(k % 2 == 0)] for k in range(5000)}
    [r] = compare_groups([("A", _rows("A", base)), ("B", _rows("B", cand))], metric="m",
                         pass_threshold=0.5, unit="u")
    svg = charts.drawn(charts.paired_changes([(e["instance"], e["difference"]) for e in r["instances"]]
                                             + [("", 0.0)] * r["paired"]["unchanged"]))
    _, root = parse(svg)
    bars = root.find_all("rect", "bar")
    assert 0 < len(bars) <= charts.MAX_BARS
    assert all(_number(b.attrs["height"]) > 0 and _number(b.attrs["width"]) > 0 for b in bars)


def test_report_without_data_still_renders():
    [r] = compare_groups([("A", []), ("B", [])], metric="m", pass_threshold=0.5, unit="u",
                         costs=["duration_s"])
    _, root = parse(html_report.render([r]))
    texts = root.all_text()
    assert "no scored instances" in texts and "no paired instances" in texts and "no data" in texts


# ---------------------------------------------------------------- terminal
def test_terminal_summary_of_the_worked_example(text_snapshot):
    assert terminal.render(hand()) == text_snapshot


def test_terminal_marks_a_figure_whose_adjusted_p_value_is_below_005():
    out = terminal.render(clear_win())
    assert out.startswith("CAND is better than BASE: +83.3 pp [")
    pass_rate_line = next(line for line in out.splitlines() if line.strip().startswith("pass rate"))
    assert "+83.3 pp*" in pass_rate_line
    cost_line = next(line for line in out.splitlines() if line.strip().startswith("duration_s"))
    assert "+20.0*" in cost_line
    assert out.rstrip().endswith("* p < 0.05")
    # the worked example has no such difference: no mark on any figure
    assert not re.search(r"\d\*", terminal.render(hand()))


def test_the_mark_follows_the_adjustment_over_candidates():
    # p = 0.03 alone is marked; as one of three equal candidates its adjusted p is 0.09: not marked
    base = {f"i{k}": [0.0] for k in range(12)}
    cand = {f"i{k}": [1.0] if k < 4 else [0.0] for k in range(12)}
    cand.update({"i4": [0.0], "i11": [1.0]})
    one = compare_groups([("A", _rows("A", base)), ("B", _rows("B", cand))], metric="m", pass_threshold=0.5,
                         unit="u")
    three = compare_groups([("A", _rows("A", base))] + [(g, _rows(g, cand)) for g in "BCD"], metric="m",
                           pass_threshold=0.5, unit="u")
    p = one[0]["paired"]["p_value"]
    assert 0.0167 < p < 0.05
    assert "pp*" in terminal.render(one) and "pp*" not in terminal.render(three)
    assert terminal.render(three).rstrip().endswith("* p < 0.05 after Holm's adjustment over the 3 candidates")
    assert "**" in markdown.render(one) and "**+" not in markdown.render(three)


def test_terminal_escapes_hostile_strings():
    out = terminal.render(hostile())
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out)
    assert "\\x1b[31mred" in out and "abc\\u202edcba" in out


def test_terminal_lists_the_strongest_evidence_first_and_says_how_many():
    out = terminal.render(clear_win())
    assert "changed instances (10 of 20, strongest evidence first; --changes all lists every one)" in out
    assert "changed instances (20, strongest evidence first)" in terminal.render(clear_win(), "all")
    assert "improved instances (20, strongest evidence first)" in terminal.render(clear_win(), "improved")
    assert "regressed instances" not in terminal.render(clear_win(), "regressed")  # none: no list


# ---------------------------------------------------------------- markdown
def test_markdown_of_the_worked_example(text_snapshot):
    assert markdown.render(hand()) == text_snapshot


def test_markdown_tables_keep_their_columns_with_hostile_ids():
    out = markdown.render(hostile())
    assert "<script>" not in out and "<img" not in out and "\x1b" not in out
    assert "](javascript" not in out  # no link can form
    for block in re.split(r"\n\n", out):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        if not lines:
            continue
        cells = {len(re.findall(r"(?<!\\)\|", line)) for line in lines}
        assert len(cells) == 1, block


def test_markdown_bolds_a_marked_figure():
    out = markdown.render(clear_win())
    assert "| pass rate | **+83.3 pp** \\* |" in out
    assert "**+20.0** \\*" in out
    assert "**+" not in markdown.render(hand()).split("\n", 3)[3]  # (the verdict line is bold)


@pytest.mark.parametrize("renderer", [terminal.render, markdown.render, html_report.render])
def test_renderers_accept_every_candidate(renderer):
    rows = _rows("A", {"i1": [1.0], "i2": [0.0]})
    results = compare_groups([("A", rows), ("B", rows), ("C", rows)], metric="m", pass_threshold=0.5, unit="u")
    out = renderer(results)
    assert out.count("B") >= 1 and out.count("C") >= 1


def test_nothing_paired_says_so():
    a = _rows("A", {"i1": [1.0], "i2": [0.0]})
    b = _rows("B", {"j1": [1.0]})
    [r] = compare_groups([("A", a), ("B", b)], metric="m", pass_threshold=0.5, unit="u", costs=["duration_s"])
    out = terminal.render([r])
    assert "no instance is scored in both groups" in out and "only in A (2): i1, i2" in out
    assert "pass rate   n/a" not in out
    md = markdown.render([r])
    assert "No instance is scored in both groups" in md and "Only in B (1): j1." in md


# ------------------------------------------------------------------ --why
EVIL = ["<script>alert(9)</script>", '" onclick="alert(10)', "</style><style>body{display:none}</style>",
        "x" * 5000 + "</code></td></tr></table><script>alert(11)</script>", "'; rm -rf / #"]


def _why(result: dict) -> dict:
    """A divergence summary over the result's changed instances whose argument values, tools
    and job ids are hostile (each pair differs at step 1 in the editor's path)."""
    from benchloop.viewer import divergences as dv

    def step(tool: str, path: str) -> list[dict]:
        return [{"step": 0, "role": "assistant", "tool_calls": [{"name": "editor", "arguments": {"command": "view", "path": "a"}}]},
                {"step": 1, "role": "assistant", "tool_calls": [{"name": tool, "arguments": {"command": "str_replace", "path": path}}]}]

    found, passing, failing = [], [], []
    for k, entry in enumerate(result["instances"]):
        evil = EVIL[k % len(EVIL)]
        good = {"job_id": f"P{k}{evil}", "group_id": result["baseline"], "trajectory": step("editor", "ok.py"), "pass": True}
        bad = {"job_id": f"F{k}{evil}", "group_id": result["candidate"], "trajectory": step("editor", evil), "pass": False,
               "report": {"fail_reason": evil}}
        found.append(dv.divergence(entry, good, bad))
        passing.append((entry["instance"], good))
        failing.append((entry["instance"], bad))
    scope = dv.Scope(every=True, picked=len(found), looked_at=len(found))
    return dv.summarise(result["candidate"], result["baseline"], found, passing, failing, scope)


def test_the_why_section_shows_each_kind_and_divergence_as_text_whatever_the_values():
    results = hostile()
    for r in results:
        r["divergences"] = _why(r)
    document = html_report.render(results)
    builder, root = parse(document)
    assert not root.find_all("script") and not root.find_all("img") and not root.find_all("a")
    assert len(root.find_all("style")) == 1  # no value closed the one style sheet
    for node in root.iter():
        assert not any(name.startswith("on") for name in node.attrs), node.tag
    [section] = root.find_all("div", "why")
    summary = results[0]["divergences"]
    [kinds] = section.find_all("table", "why-kinds")
    rows = kinds.find_all("tbody")[0].find_all("tr")
    assert [tr.find_all("td")[0].all_text() for tr in rows] == [k["kind"] for k in summary["directions"][0]["kinds"]]
    [table] = section.find_all("table", "why")
    rows = table.find_all("tbody")[0].find_all("tr")
    assert len(rows) == len(summary["divergences"]) == len(results[0]["instances"])
    for tr, d in zip(rows, summary["divergences"], strict=True):
        cells = [td.all_text() for td in tr.find_all("td")]
        path = next(c for c in d["changes"] if c["argument"] == "path")
        assert cells[4:7] == ["path", "ok.py", path["failing"]]
        assert len(cells[6]) <= 120 and cells[6] == path["failing"]  # a long value is cut
        assert cells[9] == html_report.view_command(d)
        assert shlex.split(cells[9]) == ["bl", "view", "-j", d["passing"]["job_id"], "-j", d["failing"]["job_id"]]
    for evil in EVIL[:3]:
        assert evil in section.all_text()


def test_the_why_section_marks_a_kind_that_explains_nothing_in_words_and_links_under_report_dir():
    [result] = clear_win()
    result["divergences"] = _why(result)
    kinds = result["divergences"]["directions"][0]["kinds"]
    kinds[0]["explains_nothing"] = True  # as the summary marks one (test_divergences checks when)
    links = {("CAND", e["instance"]): f"instances/CAND/{e['instance']}.html" for e in result["instances"]}
    _, root = parse(html_report.render([result], links=links))
    [section] = root.find_all("div", "why")
    [row] = section.find_all("table", "why-kinds")[0].find_all("tbody")[0].find_all("tr")
    assert row.find_all("td", "nothing")[0].all_text() == "explains nothing"
    linked = [a.attrs["href"] for a in section.find_all("a")]
    assert sorted(set(linked)) == sorted(links.values())
    _, plain = parse(html_report.render([{k: v for k, v in result.items() if k != "divergences"}]))
    assert not plain.find_all("div", "why")


def test_the_why_section_says_when_nothing_was_looked_at():
    from benchloop.viewer import divergences as dv

    [result] = clear_win()
    scope = dv.Scope(every=False, picked=len(result["instances"]), looked_at=0)
    result["divergences"] = dv.summarise("CAND", "BASE", [], scope=scope)
    _, root = parse(html_report.render([result]))
    [note] = root.find_all("p", "why-note")
    assert note.all_text() == f"{scope.note()}." and "--why-all looks at all" in note.all_text()
    assert not root.find_all("table", "why")
