"""``bl view`` of a 5,000-step, 50 MB trajectory: render time, peak memory, and how long
Chromium takes to open the page (issue 34: under 5 s on this machine).

The trajectory is served by a stand-in backend on loopback (a stdlib HTTP server in this
process: the sandbox's trajectories are as long as their jobs' turns, a few hundred steps):
5,000 steps of about 10 kB of text each, alternating assistant steps with a tool call and
tool steps, as ``GET /openapi/jobs/BIG/trajectory``, with the job, its report and its
metrics.  ``bl view -j BIG -o page.html`` runs as a child process (wall, CPU and peak RSS
from ``wait4``); the page is then opened in a headless Chromium driven over its DevTools
pipe (no port, no extra package), three times, and the time from navigation to the load
event is the figure (the browser's own start is not counted).  Without Chromium that
figure is "not measured".
"""

from __future__ import annotations

import json
import os
import random
import select
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .report import Table, mb, secs, size

if TYPE_CHECKING:
    from .bench import Bench

STEPS = 5000
STEP_CHARS = 10_000
OPEN_TARGET_S = 5.0
RSS_TARGET_MB = 400  # the 50 MB answer, its parsed steps and the page written piece by piece
KEY = "bench-view-key"


def trajectory_bytes(steps: int = STEPS, chars: int = STEP_CHARS) -> bytes:
    """A trajectory of ``steps`` steps of about ``chars`` characters of text (80-column lines)."""
    rng = random.Random(34)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz_().=") for _ in range(rng.randint(2, 9)))
             for _ in range(4000)]
    pool = " ".join(rng.choice(words) for _ in range(60_000))
    out = []
    for i in range(steps):
        start = (i * 7919) % (len(pool) - chars)
        text = "\n".join(pool[j:j + 80] for j in range(start, start + chars, 80))
        if i % 2 == 0:
            out.append({"step": i, "role": "assistant", "content": text, "tokens": 400 + i % 300,
                        "tool_calls": [{"id": f"c{i}", "name": "bash", "arguments": {"command": f"pytest -k t{i}"}}]})
        else:
            out.append({"step": i, "role": "tool", "tool": "bash", "content": text, "tokens": 900, "exit_code": i % 2})
    return json.dumps({"job_id": "BIG", "trajectory": out}).encode()


class _Backend(BaseHTTPRequestHandler):
    answers: dict[str, bytes] = {}

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = self.answers.get(self.path.split("?", 1)[0])
        self.send_response(200 if body is not None else 404)
        body = body if body is not None else b'{"error": "not found"}'
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def serve(trajectory: bytes) -> ThreadingHTTPServer:
    _Backend.answers = {
        "/openapi/jobs/BIG/trajectory": trajectory,
        "/openapi/jobs/BIG": json.dumps({"job_id": "BIG", "group_id": "GBIG", "status": "failed",
                                         "instance_id": "big__big-1", "template": "swe-bench-verified"}).encode(),
        "/openapi/jobs/BIG/report": json.dumps({"job_id": "BIG", "reports": [
            {"content": "# report", "fail_reason": "timeout", "sub_fail_reason": "job_timeout"}]}).encode(),
        "/openapi/metrics/BIG": json.dumps({"job_id": "BIG", "metrics": [{"type": "eval", "data": {"task_score": 0.1}}],
                                            "run_metrics": [{"duration_s": "3600", "tokens_sent": "9000000"}]}).encode(),
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Backend)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# ---------------------------------------------------------------- Chromium
def chromium() -> str | None:
    named = os.environ.get("BENCHLOOP_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _pipes_to_3_and_4(reader: int, writer: int) -> None:
    import fcntl

    high_r, high_w = fcntl.fcntl(reader, fcntl.F_DUPFD, 10), fcntl.fcntl(writer, fcntl.F_DUPFD, 10)
    os.dup2(high_r, 3)
    os.dup2(high_w, 4)


def open_seconds(binary: str, page: Path, profile: Path, timeout: float = 120) -> float:
    """Seconds from navigating a fresh headless Chromium to ``page`` until its load event."""
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    proc = subprocess.Popen([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--disable-background-networking", f"--user-data-dir={profile}",
                             "--remote-debugging-pipe", "--window-size=1200,900", "about:blank"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            pass_fds=(3, 4), preexec_fn=lambda: _pipes_to_3_and_4(to_r, from_w))
    os.close(to_r)
    os.close(from_w)
    buffer, counter = b"", [0]

    def read(deadline: float) -> dict[str, Any]:
        nonlocal buffer
        while b"\0" not in buffer:
            ready, _, _ = select.select([from_r], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(from_r, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed its pipe")
            buffer += chunk
        message, buffer = buffer.split(b"\0", 1)
        return json.loads(message)

    def send(method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        counter[0] += 1
        message: dict[str, Any] = {"id": counter[0], "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(to_w, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = read(deadline)
            if answer.get("id") == counter[0]:
                return answer.get("result", {})

    try:
        [target] = [t for t in send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        session = send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        send("Page.enable", session=session)
        started = time.perf_counter()
        send("Page.navigate", {"url": page.as_uri()}, session=session)
        deadline = time.monotonic() + timeout
        while read(deadline).get("method") != "Page.loadEventFired":
            pass
        return time.perf_counter() - started
    finally:
        for fd in (to_w, from_r):
            os.close(fd)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


# ---------------------------------------------------------------- scenario
def view_page(b: Bench) -> list[Table]:
    body = trajectory_bytes()
    server = serve(body)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    bl = b.clients[0]  # another build may have no bl view
    out = b.fresh_dir("view-page")
    page = out / "page.html"
    argv = [bl.path, "--host", url, "--api-key", KEY, "-q", "view", "-j", "BIG", "-o", str(page)]
    b.show(argv, url=url, note=f"a stand-in backend serving {STEPS:,} steps, {size(len(body))}")
    runs = []
    try:
        for _ in range(max(1, min(3, b.sizes.cpu_runs))):
            runs.append(b.run(argv, timeout=600))
    finally:
        server.shutdown()
    ok_runs = [r for r in runs if r.ok]
    wall = statistics.median(r.wall for r in ok_runs) if ok_runs else float("nan")
    rss = max(r.maxrss_kb for r in ok_runs) / 1024 if ok_runs else float("nan")
    written = page.stat().st_size if page.is_file() else 0
    binary = chromium()
    opened: list[float] = []
    if binary and written:
        for k in range(3):
            with tempfile.TemporaryDirectory(dir=out) as profile:
                try:
                    opened.append(open_seconds(binary, page, Path(profile)))
                except (OSError, TimeoutError, EOFError, ValueError) as exc:
                    b.log(f"  ! Chromium load {k + 1}: {exc}")
    load = statistics.median(opened) if opened else float("nan")
    open_ok = None if not opened else load < OPEN_TARGET_S
    rss_ok = None if not ok_runs else rss < RSS_TARGET_MB
    table = Table(f"`bl view` of a {STEPS:,}-step trajectory ({size(len(body))})",
                  ["figure", "measured", "target", "met"])
    mark = {True: "yes", False: "**NO**", None: "n/a"}
    table.rows += [
        ["`bl view` wall s (render and write)", secs(wall), "", ""],
        ["`bl view` peak RSS MB", mb(rss), f"< {RSS_TARGET_MB}", mark[rss_ok]],
        ["page size", size(written), "", ""],
        ["Chromium: navigation to load event, s (median of 3)",
         secs(load) if opened else "not measured (no Chromium)", f"< {OPEN_TARGET_S:g}", mark[open_ok]],
    ]
    if opened:
        table.notes.append("Chromium loads: " + ", ".join(f"{s:.2f} s" for s in opened)
                           + " (a fresh headless browser each, its own start not counted).")
    table.notes.append(f"Median wall of {len(ok_runs)} run(s); peak RSS the largest. Each step's text above "
                       "1,200 characters or 16 lines shows its beginning, the whole text folded in a <details>; "
                       "cards off screen are not laid out (content-visibility: auto).")
    b.verdict(f"`bl view` page of a {STEPS:,}-step {size(len(body))} trajectory opens in Chromium < "
              f"{OPEN_TARGET_S:g} s", secs(load) + " s" if opened else "not measured", open_ok)
    b.verdict(f"`bl view` of that trajectory: peak RSS < {RSS_TARGET_MB} MB", f"{mb(rss)} MB", rss_ok)
    shutil.rmtree(out, ignore_errors=True)
    return [table]
