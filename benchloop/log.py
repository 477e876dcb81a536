"""stderr lines: info, [progress], [warn], [error], [debug] (docs/contract.md 3.7).

stdout carries data only; everything a person reads goes through here.  ``-q``
keeps only errors; ``-v`` adds debug lines.  Writes are serialised with a lock
because workers log from several threads.
"""

from __future__ import annotations

import json
import sys
import threading
import time

_lock = threading.Lock()
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F] if c != 0x09}


class Log:
    def __init__(self, quiet: bool = False, verbose: bool = False, stream=None, error_format: str = "text"):
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self._stream = stream
        self.json_errors = error_format == "json"

    @property
    def stream(self):
        return self._stream or sys.stderr

    @property
    def tty(self) -> bool:
        if self._tty is None:
            self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        return self._tty

    _tty: bool | None = None

    _live = ""

    secrets: tuple[str, ...] = ()

    def clean(self, line: str) -> str:
        """Server-supplied text never drives the terminal, and never shows the key."""
        line = line.translate(_CONTROL)
        for secret in self.secrets:
            line = line.replace(secret, "***")
        return line

    def _emit(self, line: str) -> None:
        line = self.clean(line)
        with _lock:
            if self._live:
                self.stream.write("\r\x1b[K")
            self.stream.write(line + "\n")
            if self._live:
                self.stream.write(self._live)
            self.stream.flush()

    def live(self, line: str) -> None:
        """On a terminal: (re)draw one status line in place; '' erases it."""
        if self.quiet:
            return
        with _lock:
            self._live = line[:200]
            self.stream.write("\r\x1b[K" + self._live)
            self.stream.flush()

    def info(self, message: str) -> None:
        if not self.quiet:
            self._emit(message)

    def progress(self, message: str) -> None:
        if not self.quiet:
            self._emit(f"[progress] {message}")

    def warn(self, message: str) -> None:
        if not self.quiet:
            self._emit(f"[warn] {message}")

    def debug(self, message: str) -> None:
        if self.verbose:
            self._emit(f"[debug] {message}")

    def error(self, message: str) -> None:
        if self.json_errors:
            self._emit(json.dumps({"error": message}, ensure_ascii=False))
        else:
            self._emit(f"[error] {message}")

    def failures(self, noun: str, failures: list, code: int) -> None:
        """The end-of-run failure summary: text lines, or one JSON object."""
        if self.json_errors:
            self._emit(json.dumps({
                "error": f"{len(failures)} {noun} failed",
                "exit_code": code,
                "failures": [{"id": f.ident, "message": f.message, "network": f.network} for f in failures],
            }, ensure_ascii=False))
            return
        self._emit(f"[error] {len(failures)} {noun} failed:")
        for failure in failures:
            self._emit(f"[error]   - {failure.ident}: {failure.message}")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class Counter:
    """A count progress line: start, then one line per processed item."""

    def __init__(self, log: Log, label: str, total: int, unit: str, action: str, eta: bool = False):
        self.log, self.label, self.total, self.unit = log, label, total, unit
        self.action, self.eta = action, eta
        self.done = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()
        log.progress(f"{label}: total={total} {unit}")

    def step(self, detail: str, ok: bool = True) -> None:
        with self._lock:
            self.done += 1
            done = self.done
        if self.log.quiet:
            return
        verb = self.action if ok else "failed"
        line = f"{self.label}: {done}/{self.total} {self.unit}, {verb} {detail}"
        elapsed = time.monotonic() - self.started
        if self.eta:
            line += f", elapsed={_clock(elapsed)}"
            if done:
                line += f", eta={_clock((self.total - done) * elapsed / done)}"
        if self.log.tty and not self.log.quiet:
            # A live bar on a terminal; the last state stays as a normal line.
            if done >= self.total:
                self.log.live("")
                self.log.progress(line)
            else:
                width = 20
                filled = int(width * done / max(self.total, 1))
                eta = f" eta {_clock((self.total - done) * elapsed / done)}" if done else ""
                self.log.live(f"{self.label} {'━' * filled}{'─' * (width - filled)} {done}/{self.total} {self.unit}"
                              f" {_clock(elapsed)}{eta}")
            return
        self.log.progress(line)


def human_bytes(count: float) -> str:
    if count < 1000:
        return f"{int(count)} B"
    for unit in ("kB", "MB", "GB", "TB"):
        count /= 1000
        if count < 1000 or unit == "TB":
            return f"{count:.1f} {unit}"
    return f"{count:.1f} TB"


class ByteProgress:
    """Byte progress of concurrent downloads.

    On a terminal: one line redrawn in place at most every 0.1 s and erased at
    the end.  Otherwise: a ``[progress]`` line at most every 5 s (none for
    short transfers), so logs stay readable.  Nothing with ``-q``.
    """

    def __init__(self, log: Log, label: str, files: int, interval: float | None = None):
        self.log, self.label, self.files = log, label, files
        self.tty = bool(getattr(log.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.1 if self.tty else 5.0)
        self.done = 0
        self.finished = 0
        self.started = time.monotonic()
        self.last = self.started
        self._lock = threading.Lock()
        self.visible = False

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        return (f"{self.label} {human_bytes(self.done)} {human_bytes(self.done / elapsed)}/s "
                f"({self.finished}/{self.files} files)")

    def _show(self, force: bool = False) -> None:
        if self.log.quiet:
            return
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        if self.tty:
            self.log.live(self.line())
            self.visible = True
        else:
            self.log.progress(self.line())

    def add(self, count: int) -> None:
        with self._lock:
            self.done += count
        self._show()

    def file_done(self) -> None:
        with self._lock:
            self.finished += 1
        self._show()

    def close(self) -> None:
        if self.visible and self.tty:
            self.log.live("")
