"""Opt-in: the page of ``bl trend --report`` as a real headless Chromium lays it out.

Run with ``make test-browser`` (it sets ``BENCHLOOP_TEST_BROWSER=1``); skipped otherwise, and
skipped when no Chromium is installed (``BENCHLOOP_CHROMIUM`` names one elsewhere).  The
parsed-HTML tests of test_trend_report.py cover the structure; this one covers what only a
browser can tell, with the page loaded from disk: the chart has a size, every run's mark and
band a laid-out box, no two texts overlap and none leaves the chart (three runs with names,
twenty-four numbered, hostile and long run ids), the page runs no script and asks for nothing
from the network, and a screenshot of the chart is not blank.
"""

from __future__ import annotations

import base64
import os

import numpy as np
import pytest
from browser_support import MEASURE, chromium, evaluate, load, outside, overlaps, png_pixels

from benchloop.compare import trend, trend_report
from benchloop.compare.groups import gather

pytestmark = [
    pytest.mark.skipif(os.environ.get("BENCHLOOP_TEST_BROWSER") != "1",
                       reason="opt-in: make test-browser (BENCHLOOP_TEST_BROWSER=1)"),
    pytest.mark.skipif(chromium() is None, reason="no Chromium installed"),
]

MARKS = """JSON.stringify([...document.querySelectorAll('svg.chart-trend')].map(s => {
  const sized = sel => [...s.querySelectorAll(sel)].filter(e => {
    const q = e.getBoundingClientRect(); return q.width > 0 && q.height > 0; }).length;
  return {marks: sized('.point'), flagged: sized('polygon.flagged'), bands: sized('rect.band')};
}))"""


def _series(names: list[str], shifts: list[float], n: int = 80, k: int = 4) -> dict:
    rng = np.random.default_rng(11)
    p = rng.uniform(0.2, 0.6, size=n)
    groups = []
    for name, shift in zip(names, shifts, strict=True):
        rows = [{"job_id": f"{name}-{i}-{t}", "instance": f"i{i}", "score": float(v), "pass": bool(v),
                 "status": "succeeded"}
                for i in range(n) for t, v in enumerate(rng.random(k) < min(1.0, p[i] + shift))]
        groups.append(gather(name, rows))
    return trend.trend(groups)


CASES = {
    "three-named": (["BASE", "CAND", "CAND2"], [0.0, 0.05, 0.3]),
    "twenty-four-numbered": ([f"week-{i:02d}" for i in range(24)], [0.0] * 20 + [0.3] * 4),
    "hostile-and-long": (["<script>alert(1)</script>", "x" * 80 + "\u202e", '" onmouseover="alert(2)'],
                         [0.0, 0.0, 0.35]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_trend_page_lays_out_without_overlaps(tmp_path, case):
    names, shifts = CASES[case]
    element = _series(names, shifts)
    browser, session, _ = load(tmp_path, trend_report.render(element))
    try:
        [chart] = evaluate(browser, session, MEASURE)
        [marks] = evaluate(browser, session, MARKS)
        scripts = evaluate(browser, session, "JSON.stringify(document.scripts.length)")
        box = {"x": chart["x"], "y": chart["y"], "width": chart["w"], "height": chart["h"], "scale": 1}
        shot = browser.send("Page.captureScreenshot", {"format": "png", "clip": box}, session=session)
        requests = [e for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    finally:
        browser.close()
    assert chart["cls"] == "chart-trend" and chart["w"] > 300 and chart["h"] > 150
    assert not overlaps(chart), overlaps(chart)
    assert not outside(chart), outside(chart)
    assert marks == {"marks": len(names), "flagged": len(element["flagged"]), "bands": len(names) - 1}
    assert element["flagged"]  # each case has a run outside the band: its diamond is measured above
    assert scripts == 0
    assert all(e["params"]["request"]["url"].startswith("file:") for e in requests), requests
    width, height, rows = png_pixels(base64.b64decode(shot["data"]))
    assert width > 0 and len(set(rows)) > 10  # not one blank colour
