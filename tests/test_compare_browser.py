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
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path

import pytest
from compare_cases import HAND_BASELINE, HAND_CANDIDATE, payloads, table_rows

from benchloop.compare import html_report
from benchloop.compare.stats import compare_groups

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser() -> str | None:
    named = os.environ.get("BENCHLOOP_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


pytestmark = [
    pytest.mark.skipif(os.environ.get("BENCHLOOP_TEST_BROWSER") != "1",
                       reason="opt-in: make test-browser (BENCHLOOP_TEST_BROWSER=1)"),
    pytest.mark.skipif(_browser() is None, reason="no Chromium installed"),
]


def _onto_3_and_4(reader: int, writer: int) -> None:
    """In the child: the pipe ends onto fds 3 and 4 (moved above 10 first, so neither is clobbered)."""
    high_r, high_w = fcntl.fcntl(reader, fcntl.F_DUPFD, 10), fcntl.fcntl(writer, fcntl.F_DUPFD, 10)
    os.dup2(high_r, 3)
    os.dup2(high_w, 4)


class DevTools:
    """A headless Chromium and its DevTools protocol over a pipe."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The browser reads commands on fd 3 and writes answers on fd 4.
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
             "--window-size=1200,900", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=lambda: _onto_3_and_4(to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict] = []

    def close(self) -> None:
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("no answer from the browser")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise EOFError("the browser closed its pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next:
                assert "error" not in answer, answer
                return answer["result"]
            self.events.append(answer)

    def wait_event(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGBA/RGB bytes) of a non-interlaced 8-bit PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0 and color in (2, 6)
    bpp = 4 if color == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


MEASURE = """JSON.stringify([...document.querySelectorAll('svg')].map(s => {
  const r = s.getBoundingClientRect();
  const sized = sel => [...s.querySelectorAll(sel)].filter(e => {
    const q = e.getBoundingClientRect(); return q.width > 0 && q.height > 0; }).length;
  const boxes = [...s.querySelectorAll('text')].map(t => {
    const q = t.getBoundingClientRect();
    return {text: t.textContent, x: q.left - r.left, y: q.top - r.top, w: q.width, h: q.height}; });
  return {cls: s.getAttribute('class'), x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height,
          bars: sized('rect.bar'), points: sized('circle.point'), texts: sized('text'),
          cuts: sized('polygon.cut'), boxes: boxes};
}))"""
PAGE_SIZE = "JSON.stringify([document.documentElement.scrollWidth, document.documentElement.scrollHeight])"


def overlaps(chart: dict) -> list[tuple[str, str]]:
    """Pairs of texts of one chart whose boxes overlap (by more than half a pixel each way)."""
    found = []
    boxes = [b for b in chart["boxes"] if b["w"] > 0 and b["h"] > 0]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
            dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
            if dx > 0.5 and dy > 0.5:
                found.append((a["text"], b["text"]))
    return found


def outside(chart: dict) -> list[str]:
    """Texts of a chart that reach beyond its box (cut off by the edge)."""
    return [b["text"] for b in chart["boxes"] if b["w"] > 0 and (
        b["x"] < -0.5 or b["y"] < -0.5 or b["x"] + b["w"] > chart["w"] + 0.5 or b["y"] + b["h"] > chart["h"] + 0.5)]


def load(tmp_path: Path, document: str) -> tuple[DevTools, str, Path]:
    """A browser with ``document`` (written to a file) loaded in its page, and the session."""
    report = tmp_path / "report.html"
    report.write_text(document, encoding="utf-8")
    browser = DevTools(_browser(), tmp_path / "profile")
    [page] = [t for t in browser.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
    session = browser.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
    for domain in ("Page", "Network", "Runtime"):
        browser.send(f"{domain}.enable", session=session)
    browser.send("Page.navigate", {"url": report.as_uri()}, session=session)
    browser.wait_event("Page.loadEventFired")
    return browser, session, report


def evaluate(browser: DevTools, session: str, expression: str):
    return json.loads(browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                   session=session)["result"]["value"])


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
    shot_w, shot_h, rows = _png_pixels(page_png)
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

    browser = DevTools(_browser(), tmp_path / "profile")
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
        width, height, rows = _png_pixels(shot)
        assert width > 0 and height > 0
        colours = {row[i:i + 3] for row in rows[::4] for i in range(0, len(row), 12)}
        assert len(colours) > 3, chart  # drawn, not a blank rectangle
