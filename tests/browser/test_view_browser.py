"""Opt-in: the pages of ``bl view`` as a real headless Chromium lays them out.

Run with ``make test-browser`` (``BENCHLOOP_TEST_BROWSER=1``); skipped otherwise, and
without a Chromium (``BENCHLOOP_CHROMIUM`` names one elsewhere).  The pages are the ones
``bl view`` writes for the sandbox: a job whose trace has images (G1-J0010) and a failing
BASE trial beside a passing CAND2 trial of a changed instance.  What only a browser can
tell:

* a full-page screenshot has the window's width and the page's height;
* no two text boxes overlap: the facts of a header, the pieces of a card's head, the
  blocks of a card, the cards of a cell, the cells of a row (boxes measured in the DOM);
* every image is decoded (``naturalWidth`` > 0), which the Content-Security-Policy allows
  only with ``img-src data:`` (the same page under ``default-src 'none'`` alone shows none);
* clicking the first-difference link lands on the marked step, at the top of the window;
* the page makes no request but for itself, runs no script and logs no CSP violation.
"""

from __future__ import annotations

import base64
import json
import os
import time

import pytest
from browser_support import chromium, evaluate, load, png_pixels

pytestmark = [
    pytest.mark.skipif(os.environ.get("BENCHLOOP_TEST_BROWSER") != "1",
                       reason="opt-in: make test-browser (BENCHLOOP_TEST_BROWSER=1)"),
    pytest.mark.skipif(chromium() is None, reason="no Chromium installed"),
]

CHANGED = "requests__requests-2334"


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, compare_jobs=160)


def page_of(api, tmp_path, *args: str) -> str:
    target = tmp_path / "view.html"
    result = api("view", *args, "-o", str(target))
    assert result.code == 0, result.err
    return target.read_text(encoding="utf-8")


# Boxes of the texts that sit side by side, per container: [[label, x, y, w, h], ...] per group.
BOXES = """JSON.stringify((() => {
  const box = e => { const r = e.getBoundingClientRect();
    return [e.className || e.tagName, r.left, r.top + scrollY, r.width, r.height]; };
  const groups = [];
  const add = (sel, kids) => document.querySelectorAll(sel).forEach(c => {
    const items = [...c.querySelectorAll(kids)].filter(k => k.parentElement === c).map(box)
      .filter(b => b[3] > 0 && b[4] > 0);
    if (items.length > 1) groups.push(items); });
  add('.trials', 'section');
  add('dl.facts', 'dt, dd');
  add('.head', 'span');
  add('article.step', 'div, pre, details, figure');
  add('.cell', 'article');
  add('.row', 'div');
  add('main.single', 'article');
  return groups; })())"""
IMAGES = "JSON.stringify([...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight]))"
PAGE_SIZE = "JSON.stringify([document.documentElement.scrollWidth, document.documentElement.scrollHeight])"


def overlapping(groups: list) -> list:
    """Pairs of boxes of one group that overlap by more than half a pixel each way."""
    found = []
    for items in groups:
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                dx = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
                dy = min(a[2] + a[4], b[2] + b[4]) - max(a[2], b[2])
                if dx > 0.5 and dy > 0.5:
                    found.append((a, b))
    return found


def settle(browser, session) -> None:
    """Lay every card out (cards off screen are skipped by content-visibility) before measuring."""
    evaluate(browser, session, "document.querySelectorAll('.row, main.single > article')"
                               ".forEach(e => e.style.contentVisibility = 'visible'); '0'")


def screenshot(browser, session, tmp_path, name: str) -> tuple[int, int, int, int]:
    width, height = evaluate(browser, session, PAGE_SIZE)
    shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                   "clip": {"x": 0, "y": 0, "width": width, "height": min(height, 16000),
                                                            "scale": 1}}, session=session, timeout=120)
    data = base64.b64decode(shot["data"])
    (tmp_path / name).write_bytes(data)
    shot_w, shot_h, rows = png_pixels(data)
    assert len({row[i:i + 3] for row in rows[::8] for i in range(0, len(row), 24)}) > 3  # drawn, not blank
    return width, height, shot_w, shot_h


def no_requests_scripts_or_violations(browser, session, page_uri: str) -> None:
    requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert [u for u in requests if not u.startswith("data:image/")] == [page_uri], requests  # images: in the page
    assert evaluate(browser, session, "JSON.stringify(document.scripts.length)") == 0
    logged = [e["params"]["entry"]["text"] for e in browser.events if e.get("method") == "Log.entryAdded"]
    assert not [t for t in logged if "Content Security Policy" in t], logged


def test_a_job_page_with_images(api, tmp_path):
    document = page_of(api, tmp_path, "-j", "G1-J0010")
    browser, session, report = load(tmp_path, document)
    try:
        browser.send("Log.enable", session=session)
        images = evaluate(browser, session, IMAGES)
        settle(browser, session)
        groups = evaluate(browser, session, BOXES)
        width, height, shot_w, shot_h = screenshot(browser, session, tmp_path, "job.png")
        time.sleep(0.2)
        no_requests_scripts_or_violations(browser, session, report.as_uri())
    finally:
        browser.close()
    assert (shot_w, shot_h) == (width, min(height, 16000)) and width <= 1200 and height > 2000
    assert len(images) == 2 and all(done and w == 96 and h == 64 for done, w, h in images), images
    assert len(groups) > 100 and not overlapping(groups), overlapping(groups)[:3]


def test_images_need_img_src_data(api, tmp_path):
    """The same page under the report's policy alone (``default-src 'none'``) decodes no image:
    ``img-src data:`` is what lets them show."""
    document = page_of(api, tmp_path, "-j", "G1-J0010").replace(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:", "default-src 'none'; style-src 'unsafe-inline'")
    browser, session, _ = load(tmp_path, document)
    try:
        images = evaluate(browser, session, IMAGES)
    finally:
        browser.close()
    assert len(images) == 2 and all(w == 0 for _, w, _ in images), images


def test_two_trials_side_by_side_and_the_first_difference_link(api, tmp_path):
    document = page_of(api, tmp_path, "--instance", CHANGED, "-g", "BASE", "-g", "CAND2")
    browser, session, report = load(tmp_path, document)
    try:
        browser.send("Log.enable", session=session)
        link = evaluate(browser, session, "JSON.stringify((() => { const r = document.querySelector('.firstdiff a')"
                                          ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2,"
                                          " document.querySelector('.firstdiff a').getAttribute('href')]; })())")
        assert link[2] == "#step-8"
        for kind in ("mousePressed", "mouseReleased"):  # a real click, as a person makes it
            browser.send("Input.dispatchMouseEvent", {"type": kind, "x": link[0], "y": link[1], "button": "left",
                                                      "clickCount": 1}, session=session)
        time.sleep(0.5)
        landed = evaluate(browser, session, "JSON.stringify([location.hash, scrollY, "
                                            "document.querySelector('.row.diff').getBoundingClientRect().top, "
                                            "document.querySelector('.row.diff').id])")
        seen = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)  # what the window shows
        seen_width, _, window = png_pixels(base64.b64decode(seen["data"]))
        settle(browser, session)
        groups = evaluate(browser, session, BOXES)
        cells = evaluate(browser, session, "JSON.stringify([...document.querySelectorAll('.row')].slice(0, 20).map("
                                           "r => [...r.children].map(c => Math.round(c.getBoundingClientRect().left))))")
        width, height, shot_w, shot_h = screenshot(browser, session, tmp_path, "pair.png")
        no_requests_scripts_or_violations(browser, session, report.as_uri())
    finally:
        browser.close()
    hash_, scrolled, top, ident = landed
    assert hash_ == "#step-8" and ident == "step-8" and scrolled > 300
    assert -8 <= top <= 8, top  # the marked step is at the top of the window
    bpp = len(window[0]) // seen_width
    marks = [y for y, row in enumerate(window) for i in range(0, len(row), bpp)
             if tuple(row[i:i + 3]) == (0xD9, 0x77, 0x06)]  # its outline (#d97706), drawn
    assert marks and min(marks) < 20, marks[:5]
    assert (shot_w, shot_h) == (width, min(height, 16000)) and width <= 1200
    assert all(len(c) == 3 and c[0] < c[1] < c[2] for c in cells), cells  # number, then the two trials
    assert len({tuple(c) for c in cells}) == 1  # aligned: every row's columns start at the same place
    assert len(groups) > 100 and not overlapping(groups), json.dumps(overlapping(groups)[:3])


def test_the_differing_argument_is_marked_in_both_cards_without_colour(api, tmp_path):
    """In the row of the first difference each card shows its dashed "≠ differs" box and its
    outlined argument line led by the sign "≠" (the ::before text): seen, not only coloured."""
    document = page_of(api, tmp_path, "--instance", CHANGED, "-g", "BASE", "-g", "CAND2")
    browser, session, _ = load(tmp_path, document)
    try:
        settle(browser, session)
        seen = evaluate(browser, session, """JSON.stringify([...document.querySelectorAll('.row.diff article')].map(a => {
          const box = a.querySelector('.differs'), mark = a.querySelector('mark.argdiff');
          const size = e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; };
          return [size(box), getComputedStyle(box).borderTopStyle, box.textContent,
                  size(mark), getComputedStyle(mark).outlineStyle, getComputedStyle(mark, '::before').content]; }))""")
    finally:
        browser.close()
    assert len(seen) == 2, seen
    for box, border, words, mark, outline, before in seen:
        assert box[0] > 0 and box[1] > 0 and border == "dashed" and words.startswith("≠ differs from the other trial:")
        assert mark[0] > 0 and mark[1] > 0 and outline == "dashed" and "≠" in before
