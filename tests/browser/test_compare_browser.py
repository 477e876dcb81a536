"""Opt-in: the HTML report of ``bl compare`` as a real headless Chromium lays it out.

Run with ``make test-browser`` (it sets ``BENCHLOOP_TEST_BROWSER=1``); skipped
otherwise, and skipped when no Chromium is installed (``BENCHLOOP_CHROMIUM``
names one elsewhere).  CI does not need a browser: the parsed-HTML tests of
test_compare_render.py cover the structure; this one covers what only a
browser can tell, with the report's own file loaded from disk:

* every chart has a laid-out size, and its bars and points have one too;
* the page makes no network request and runs no script of its own;
* a screenshot of each chart is not blank, and one of the whole page has the
  window's width and the page's height;
* no two texts of a chart overlap (their boxes measured in the DOM: tick labels,
  axis titles, legends, names, values), and every text lies inside its chart;
* a report of the sandbox's runs with slices (``--by template``) and clusters
  (``--cluster``) shows them, with whiskers cut at the plot's edge marked.

The browser is driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages ending in NUL on fds 3 and 4), so
the test needs no extra package and opens no port.
"""

from __future__ import annotations

import base64
import json
import os

import pytest
from browser_support import (
    MEASURE,
    PAGE_SIZE,
    DevTools,
    chromium,
    evaluate,
    load,
    outside,
    overlaps,
    png_pixels,
)
from compare_cases import HAND_BASELINE, HAND_CANDIDATE, payloads, table_rows

from benchloop.compare import html_report
from benchloop.compare.stats import compare_groups

pytestmark = [
    pytest.mark.skipif(os.environ.get("BENCHLOOP_TEST_BROWSER") != "1",
                       reason="opt-in: make test-browser (BENCHLOOP_TEST_BROWSER=1)"),
    pytest.mark.skipif(chromium() is None, reason="no Chromium installed"),
]


def sandbox_results() -> list[dict]:
    """The sandbox's runs compared as ``bl compare -g BASE,CAND,CAND2 --by template --cluster ...``
    would (the rows made from the sandbox's own payloads, no server)."""
    from compare_cases import COMPARE_COLUMNS, COSTS

    from benchloop.sandbox import payloads as sandbox_payloads
    from benchloop.sandbox.dataset import Dataset

    data = Dataset(seed=7, groups=0, compare_jobs=160)
    groups = []
    for gid in ("BASE", "CAND", "CAND2"):
        jobs = list(data.iter_group_jobs(gid))
        groups.append((gid, table_rows(gid, [sandbox_payloads.job_summary(j) for j in jobs],
                                       [sandbox_payloads.job_metrics(j) for j in jobs], columns=COMPARE_COLUMNS,
                                       by="template")))
    return compare_groups(groups, metric="m", pass_threshold=0.5, unit="instance_id", costs=COSTS,
                          cluster="^(.+?)__", by="template", outcome_statuses=("succeeded", "failed"))


def test_sandbox_report_lays_out_without_overlaps(tmp_path):
    results = sandbox_results()
    browser, session, report = load(tmp_path, html_report.render(results))
    try:
        measured = evaluate(browser, session, MEASURE)
        width, height = evaluate(browser, session, PAGE_SIZE)
        shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                       "clip": {"x": 0, "y": 0, "width": width, "height": height,
                                                                "scale": 1}}, session=session)
        page_png = base64.b64decode(shot["data"])
        (tmp_path / "page.png").write_bytes(page_png)
    finally:
        browser.close()
    shot_w, shot_h, rows = png_pixels(page_png)
    assert (shot_w, shot_h) == (width, height) and width <= 1200 and height > 2000
    per_section = ["chart-pass-rates", "chart-paired-changes", *["chart-cost"] * 4, "chart-slices", "chart-clusters"]
    assert [c["cls"] for c in measured] == per_section * 2
    for chart in measured:
        assert chart["w"] > 100 and chart["h"] > 50, chart["cls"]
        assert not overlaps(chart), (chart["cls"], overlaps(chart))
        assert not outside(chart), (chart["cls"], outside(chart))
    slices = [c for c in measured if c["cls"] == "chart-slices"]
    assert all(c["points"] == 3 for c in slices)  # one per template
    assert all(c["points"] == 8 for c in measured if c["cls"] == "chart-clusters")  # one per repository
    assert all(c["points"] == 2 for c in measured if c["cls"] == "chart-cost")


def test_long_names_and_cut_whiskers_lay_out_without_overlaps(tmp_path):
    base = [{"job_id": f"A-{k}", "instance": f"{'x' * 60}{k // 2}__i{k}", "score": float(k < 2), "pass": k < 2,
             "duration_s": 30.57, "slice": f"category-with-a-long-name-{k % 2}"} for k in range(4)]
    cand = [dict(r, job_id=f"B-{k}", score=1.0, **{"pass": True, "duration_s": 30.62}) for k, r in enumerate(base)]
    results = compare_groups([("BASELINE-" + "L" * 60, base), ("CANDIDATE-" + "M" * 60, cand)], metric="m",
                             pass_threshold=0.5, unit="u", costs=["duration_s"], cluster="^(.+?)__", by="x")
    browser, session, _ = load(tmp_path, html_report.render(results))
    try:
        measured = evaluate(browser, session, MEASURE)
    finally:
        browser.close()
    for chart in measured:
        assert not overlaps(chart), (chart["cls"], overlaps(chart))
        assert not outside(chart), (chart["cls"], outside(chart))
    # four instances, two of them 0 -> 1: the t interval of the groups' rates reaches past 0% and 100%
    assert sum(c["cuts"] for c in measured if c["cls"] in ("chart-pass-rates", "chart-cost", "chart-slices")) > 0


def test_report_charts_have_size_in_a_real_browser(tmp_path):
    groups = []
    for gid, table in (("G1", HAND_BASELINE), ("G2", HAND_CANDIDATE)):
        jobs, metrics = payloads(gid, table)
        groups.append((gid, table_rows(gid, jobs, metrics)))
    results = compare_groups(groups, metric="m", pass_threshold=0.5, unit="instance_id",
                             costs=["duration_s", "tool_error_count"])
    report = tmp_path / "report.html"
    report.write_text(html_report.render(results), encoding="utf-8")

    browser = DevTools(chromium(), tmp_path / "profile")
    try:
        [page] = [t for t in browser.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        session = browser.send("Target.attachToTarget", {"targetId": page["targetId"],
                                                         "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Page.navigate", {"url": report.as_uri()}, session=session)
        browser.wait_event("Page.loadEventFired")
        measured = json.loads(browser.send("Runtime.evaluate", {"expression": MEASURE, "returnByValue": True},
                                           session=session)["result"]["value"])
        for chart in measured:  # before any screenshot: a chart without a size fails here, named
            assert chart["w"] > 100 and chart["h"] > 50, chart
        shots = []
        for chart in measured:
            shot = browser.send("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": chart["x"], "y": chart["y"], "width": chart["w"], "height": chart["h"],
                         "scale": 1}}, session=session)
            shots.append(base64.b64decode(shot["data"]))
        (tmp_path / "chart-0.png").write_bytes(shots[0])
    finally:
        browser.close()

    requests = [e["params"]["request"]["url"] for e in browser.events
                if e.get("method") == "Network.requestWillBeSent"]
    assert requests == [report.as_uri()], requests  # the document itself, nothing else
    assert [c["cls"] for c in measured] == ["chart-pass-rates", "chart-paired-changes", "chart-cost", "chart-cost"]
    for chart in measured:
        assert chart["texts"] > 0, chart
        assert not overlaps(chart), (chart["cls"], overlaps(chart))
        assert not outside(chart), (chart["cls"], outside(chart))
    assert measured[0]["bars"] == 2  # one bar per group
    assert measured[1]["bars"] == len(results[0]["instances"])  # one bar per changed instance
    assert measured[2]["points"] == 2
    for chart, shot in zip(measured, shots, strict=True):
        width, height, rows = png_pixels(shot)
        assert width > 0 and height > 0
        colours = {row[i:i + 3] for row in rows[::4] for i in range(0, len(row), 12)}
        assert len(colours) > 3, chart  # drawn, not a blank rectangle
