"""``bl trend``'s renderings and outputs: the page of ``--report`` (parsed: self-contained, every
hostile run id text, the chart's marks where the figures put them), and every ``--output``
format, the Python client and the page through the command line against the sandbox."""

from __future__ import annotations

import csv
import io
import json
import os
import re

import numpy as np
import pytest
import yaml
from html_tree import parse

import benchloop
from benchloop.compare import html_report, trend, trend_report
from benchloop.compare.groups import gather

HOSTILE = [
    "<script>alert(1)</script>",
    '" onmouseover="alert(2)',
    "\x1b[31mred\x1b[0m\x9b2J",
    "abc\u202edcba",
    "</svg><img src=x onerror=alert(4)>",
    "&amp; &lt;",
]


def _shown(name: str) -> str:
    return name.replace("\x1b", "\\x1b").replace("\x9b", "\\x9b").replace("\u202e", "\\u202e")


def _group(name: str, passes: dict[str, list[int]]):
    return gather(name, [{"job_id": f"{name}-{k}-{t}", "instance": k, "score": float(v), "pass": bool(v),
                          "status": "succeeded"} for k, trials in passes.items() for t, v in enumerate(trials)])


def _series(names: list[str], shifts: list[float], seed: int = 3, n: int = 120, k: int = 4) -> dict:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.2, 0.6, size=n)
    return trend.trend([_group(name, {f"i{i}": [int(v) for v in rng.random(k) < min(1.0, p[i] + s)]
                                      for i in range(n)}) for name, s in zip(names, shifts, strict=True)])


def _number(value: str) -> float:
    return float(value)


def _centre(node) -> tuple[float, float]:
    """Where a run's mark is: a point's centre, or a diamond's (the mean of its corners)."""
    if node.tag == "circle":
        return _number(node.attrs["cx"]), _number(node.attrs["cy"])
    corners = [tuple(map(float, p.split(","))) for p in node.attrs["points"].split()]
    return sum(c[0] for c in corners) / 4, sum(c[1] for c in corners) / 4


def test_the_page_is_self_contained_with_the_comparison_reports_policy():
    _, root = parse(trend_report.render(_series(["A", "B", "C"], [0.0, 0.0, 0.25])))
    for tag in ("script", "link", "img", "iframe", "object", "embed", "base", "image", "use", "a", "foreignobject"):
        assert not root.find_all(tag), tag
    for node in root.iter():
        for name in node.attrs:
            assert not name.startswith("on"), (node.tag, name)
            assert name not in ("src", "href", "xlink:href", "srcset", "action", "formaction"), (node.tag, name)
    [style] = root.find_all("style")
    assert "url(" not in style.all_text() and "@import" not in style.all_text()
    [csp] = [m for m in root.find_all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp.attrs["content"] == html_report.CSP


def test_the_chart_marks_every_run_where_its_rate_is_and_a_flagged_one_by_shape():
    """One mark per run; a run outside its band is a diamond (class ``flagged``), the others
    circles; each mark's height is inside its band exactly when the run is not flagged."""
    element = _series(["R1", "R2", "R3", "R4"], [0.0, 0.0, 0.25, 0.25])
    assert element["flagged"] == ["R3", "R4"]  # the figures this test reads the chart against
    _, root = parse(trend_report.render(element))
    [svg] = root.find_all("svg", "chart-trend")
    assert _number(svg.attrs["width"]) > 0 and _number(svg.attrs["height"]) > 0
    marks = svg.find_all("circle", "point") + svg.find_all("polygon", "point")
    marks.sort(key=lambda m: _centre(m)[0])
    assert len(marks) == len(element["runs"])
    assert [("flagged" in m.classes()) for m in marks] == [r["flagged"] for r in element["runs"]]
    assert [m.tag for m in marks] == ["polygon" if r["flagged"] else "circle" for r in element["runs"]]
    bands = sorted(svg.find_all("rect", "band"), key=lambda b: _number(b.attrs["x"]))
    assert len(bands) == len(element["runs"]) - 1  # every run after the first has its limit
    for mark, band, run in zip(marks[1:], bands, element["runs"][1:], strict=True):
        x, y = _centre(mark)
        top, height = _number(band.attrs["y"]), _number(band.attrs["height"])
        assert _number(band.attrs["x"]) < x < _number(band.attrs["x"]) + _number(band.attrs["width"])
        assert (top <= y <= top + height) == (not run["flagged"]), run["group_id"]
    tips = [t.all_text() for t in svg.find_all("title")]  # (html_tree reads a circle as void: its title follows it)
    for run in element["runs"]:
        assert any(t.startswith(f"{run['group_id']}: {100 * run['pass_rate']:.1f}%") for t in tips), run["group_id"]
    # the table says it too: the flagged rows, and the run numbers the chart uses when it numbers them
    rows = root.find_all("table", "trend")[0].find_all("tbody")[0].find_all("tr")
    assert [("flagged" in tr.classes()) for tr in rows] == [r["flagged"] for r in element["runs"]]
    assert [tr.find_all("td")[0].all_text() for tr in rows] == [str(i + 1) for i in range(len(rows))]


def test_many_runs_are_numbered_under_the_axis():
    names = [f"weekly-run-{i:02d}" for i in range(20)]
    element = _series(names, [0.0] * 20, n=40, k=2)
    _, root = parse(trend_report.render(element))
    [svg] = root.find_all("svg", "chart-trend")
    labels = [t.all_text() for t in svg.find_all("text")]
    assert [str(i + 1) for i in range(20)] == [x for x in labels if x.isdigit()]
    assert not any(name in labels for name in names)


def test_every_hostile_run_id_is_text():
    element = _series(HOSTILE, [0.0, 0.0, 0.3, 0.0, 0.0, 0.0])
    document = trend_report.render(element)
    _, root = parse(document)
    assert not root.find_all("script") and not root.find_all("img")
    assert "\x1b" not in document and "\u202e" not in document and "\x9b" not in document
    cells = [tr.find_all("td")[1].all_text() for tr in root.find_all("table", "trend")[0].find_all("tr")[1:]]
    assert cells == [_shown(n) for n in HOSTILE]
    title = root.find_all("title")[0].all_text()
    assert all(_shown(n) in title for n in HOSTILE)
    [svg] = root.find_all("svg")
    assert set(svg.attrs) == {"class", "width", "height", "viewbox", "role", "aria-label"}
    tips = " ".join(t.all_text() for t in svg.find_all("title"))
    assert all(_shown(n) in tips for n in HOSTILE)
    for node in svg.iter():  # nothing in the chart but the shapes it draws
        assert node.tag in {"svg", "title", "line", "rect", "circle", "polygon", "text"}, node.tag


def test_the_api_key_is_masked_in_the_page(bl, sandbox_trend):
    """A backend may echo the key inside an id: the page is made to be shared."""
    key = sandbox_trend.api_key
    element = _series([f"run-{key}", "B"], [0.0, 0.0])
    from benchloop.base.masking import scrub_value

    page = trend_report.render(scrub_value(element, (key,)))
    assert key not in page


# ------------------------------------------------------------ the command
@pytest.fixture(scope="module")
def sandbox_trend(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160)


RUNS = ["BASE", "CAND", "CAND2"]


@pytest.fixture
def trend_cli(bl, sandbox_trend):
    def run(*args: str):
        return bl("--host", sandbox_trend.url, "--api-key", sandbox_trend.api_key, "--retry", "0", "trend",
                  *(a for r in RUNS for a in ("-g", r)), *args)

    return run


def _choices() -> list[str]:
    from benchloop.engine.formats import FORMATS

    return sorted(FORMATS)


def test_every_output_format_gives_the_series_rows(trend_cli, tmp_path):
    """One row per run in every format ``--output`` offers (the formats' registry), the same
    figures as the JSON."""
    first = trend_cli("--no-pretty")
    assert first.code == 0, first.err
    [element] = json.loads(first.out)
    runs = element["runs"]
    assert [r["group_id"] for r in runs] == RUNS and element["flagged"] == ["CAND2"]
    seen = set()
    for name in _choices():
        target = ["-o", str(tmp_path / "t.parquet")] if name == "parquet" else []
        r = trend_cli("--output", name, *target)
        assert r.code == 0, (name, r.err)
        seen.add(name)
        if name == "json":
            assert json.loads(r.out) == [element]
        elif name == "yaml":
            assert yaml.safe_load(r.out) == [element]
        elif name == "jsonl":
            assert [json.loads(line) for line in r.out.splitlines()] == runs
        elif name == "csv":
            rows = list(csv.DictReader(io.StringIO(r.out)))
            assert [row["group_id"] for row in rows] == RUNS
            assert [row["flagged"] for row in rows] == ["true" if x["flagged"] else "false" for x in runs]
            assert [float(row["pass_rate"]) for row in rows] == [x["pass_rate"] for x in runs]
            assert rows[1]["reference.difference"] and not rows[0]["reference.difference"]
            # the first run's null differences are their fields' empty columns, not a column of their own
            assert "previous" not in rows[0] and "reference" not in rows[0]
        elif name == "parquet":
            duckdb = pytest.importorskip("duckdb")
            got = duckdb.sql(f"SELECT group_id, pass_rate, flagged, \"reference.difference\" "
                             f"FROM read_parquet('{tmp_path / 't.parquet'}')").fetchall()
            assert got == [(x["group_id"], x["pass_rate"], x["flagged"],
                            (x["reference"] or {}).get("difference")) for x in runs]
        elif name == "text":
            cells = [line.split("\t") for line in r.out.splitlines()]
            assert [(c[0], c[-1]) for c in cells] == [(x["group_id"], json.dumps(x["flagged"])) for x in runs]
        elif name in ("table", "markdown"):
            lines = r.out.splitlines()
            for run in runs:
                [row] = [line for line in lines if re.search(rf"(^|\s|\|){run['group_id']}(\s|\|)", line)]
                assert ("outside noise" in row) == run["flagged"]
        else:
            pytest.fail(f"a format this test does not read: {name}")
    assert {"json", "jsonl", "yaml", "table", "csv", "markdown", "parquet"} <= seen


def test_report_writes_the_page_beside_the_printed_series(trend_cli, tmp_path):
    page = tmp_path / "trend.html"
    r = trend_cli("--report", str(page))
    assert r.code == 0, r.err
    assert json.loads(r.out)[0]["groups"] == RUNS
    _, root = parse(page.read_text(encoding="utf-8"))
    assert len(root.find_all("svg", "chart-trend")) == 1
    assert [p.attrs["class"] for p in root.find_all("polygon", "flagged")] == ["point flagged"]
    printed = trend_cli("--report", "-")
    assert printed.code == 0 and printed.out.startswith("<!DOCTYPE html>")
    assert printed.out == page.read_text(encoding="utf-8")


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_report_never_replaces_a_symlink(trend_cli, tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep", encoding="utf-8")
    link = tmp_path / "trend.html"
    link.symlink_to(target)
    r = trend_cli("--report", str(link))
    assert r.code == 2 and "symbolic link" in r.err and not r.out  # refused before any request
    assert target.read_text(encoding="utf-8") == "keep"


def test_the_python_client_gives_what_the_command_prints(trend_cli, sandbox_trend, tmp_path):
    printed = json.loads(trend_cli("--no-pretty").out)
    page = tmp_path / "sdk.html"
    with benchloop.Client(host=sandbox_trend.url, api_key=sandbox_trend.api_key, retry=0) as client:
        assert client.trend(group=RUNS) == printed
        assert client.trend.trend(group=RUNS, report=str(page)) == printed
    assert page.read_text(encoding="utf-8") == trend_cli("--report", "-").out


def test_the_mcp_tool_gives_what_the_command_prints(trend_cli, sandbox_trend):
    """The ``trend`` tool of its toolset (read from the table's ``mcp:`` section), against the
    same runs: the same series, and its output schema declares it."""
    import anyio
    import jsonschema
    from mcp import Client

    from benchloop.mcp_server.serve import build_runner
    from benchloop.mcp_server.server import build_server
    from benchloop.table.load import load_model

    [toolset] = [name for name, ts in load_model().mcp.toolsets.items() if "trend" in ts.resources]
    runner = build_runner({"http": None, "tools": None, "toolsets": toolset, "allow_writes": False,
                           "allow_downloads": None, "max_chars": 60_000},
                          {"host": sandbox_trend.url, "api_key": sandbox_trend.api_key, "retry": 0})

    async def main():
        async with Client(build_server(runner)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("trend", {"group": RUNS})

    try:
        tools, result = anyio.run(main)
    finally:
        runner.close()
    assert "trend" in tools and "report" not in tools["trend"].input_schema["properties"]  # no local file
    assert not result.is_error
    assert result.structured_content["result"] == json.loads(trend_cli("--no-pretty").out)
    declared = runner.tools["trend"].output_schema
    strict = {"$defs": declared.get("$defs", {}), **declared["properties"]["result"]["anyOf"][0]}
    jsonschema.validate(result.structured_content["result"], strict)
