"""Helpers of the opt-in browser tests: a headless Chromium driven over its DevTools pipe.

``chromium()`` finds one (``BENCHLOOP_CHROMIUM`` names it, else the usual names on
``PATH``), ``DevTools`` runs it with ``--remote-debugging-pipe`` (JSON messages ending in
NUL on fds 3 and 4: no port, no extra package), ``png_pixels`` reads a screenshot;
``MEASURE`` gives every chart's box and texts, ``overlaps`` and ``outside`` what is wrong
with them.
A plain helper module (as ``support.py``): the browser test modules import from here.
"""

from __future__ import annotations

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

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium() -> str | None:
    named = os.environ.get("BENCHLOOP_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None



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


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
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


def load(tmp_path: Path, document: str) -> tuple[DevTools, str, Path]:
    """A browser with ``document`` (written to a file) loaded in its page, and the session."""
    report = tmp_path / "report.html"
    report.write_text(document, encoding="utf-8")
    browser = DevTools(chromium(), tmp_path / "profile")
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


# What the layout tests measure of every chart of a page (the report's, the trend's).
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
