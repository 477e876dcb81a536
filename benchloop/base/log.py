"""stderr lines: info, [progress], [warn], [error], [debug] (docs/contract.md 3.7).

stdout carries data only; everything a person reads goes through here.  ``-q``
keeps only errors; ``-v`` adds debug lines.  Writes are serialised with a lock
because workers log from several threads.

Off a terminal every line keeps the contract's bytes: scripts parse the
unprefixed info lines (``wrote <path>``, ...).  On a terminal a person reads
them: info lines get the ``[info]`` prefix, per-file lines (``wrote``,
``downloaded``, ``skip existing``, ...) are shown only with ``-v`` (as the
AWS CLI and rclone do), and counters draw one live line that fits the
terminal and ends as a normal ``[progress]`` line.
"""

from __future__ import annotations

import json
import sys
import threading
import time

from . import textwidth
from .hiding import JSON_TEXT, LINE, is_terminal
from .masking import scrub

_lock = threading.Lock()
# C0, DEL and C1 (U+0080-U+009F: 8-bit CSI and friends drive some terminals too), format
# characters (bidi overrides, zero-width ones) and separators escaped (``hiding.py``); tab kept.
_CONTROL = LINE


class Log:
    def __init__(self, quiet: bool = False, verbose: bool = False, stream=None, error_format: str = "text"):
        self.quiet = quiet
        self.verbose = verbose and not quiet
        self._stream = stream
        self.json_errors = error_format == "json"
        self.hidden: dict[str, int] = {}  # per-file lines not shown on a terminal, by kind
        self.network_failed = False  # the failure summary had a network failure
        # --error-format json: a command's errors are one JSON object.  A command run collects
        # them (``defer_json``) and ``flush`` prints the object at its end: the failure summary
        # or the first error, with the later lines (advice) under "hints".
        self.defer_json = False
        self._json: dict | None = None

    @property
    def stream(self):
        return self._stream or sys.stderr

    @property
    def tty(self) -> bool:
        if self._tty is None:
            self._tty = is_terminal(self.stream)
        return self._tty

    _tty: bool | None = None

    _live = ""

    secrets: tuple[str, ...] = ()

    def clean(self, line: str) -> str:
        """Server-supplied text never drives the terminal, and never shows the key.

        The key is masked (``masking.scrub``) before control characters are escaped, and
        again after, in the forms an encoding may have given it (JSON-escaped for
        ``--error-format json``, its control characters escaped): a key with a quote, a
        backslash or a control character is still never printed.
        """
        secrets = self.secrets
        if not secrets:
            return line.translate(_CONTROL)
        return scrub(scrub(line, secrets).translate(_CONTROL), secrets)

    def _emit(self, line: str) -> None:
        line = self.clean(line)
        with _lock:
            if self._live:
                self.stream.write("\r\x1b[K")
            self.stream.write(line + "\n")
            if self._live:
                self.stream.write(self._live)
            self.stream.flush()

    def continued(self, line: str) -> None:
        """A further line of the error just printed (a hint under it): no prefix, always shown."""
        self._emit(line)

    def live(self, line: str) -> None:
        """On a terminal: (re)draw one status line in place; '' erases it.

        The line is cut to the terminal's width (display columns, so wide
        characters count twice), one column short of it so that it never wraps.
        """
        if self.quiet:
            return
        columns = textwidth.terminal_columns(self.stream)
        with _lock:
            self._live = textwidth.cut(line.translate(_CONTROL), max(columns - 1, 1), "…")
            self.stream.write("\r\x1b[K" + self._live)
            self.stream.flush()

    def info(self, message: str) -> None:
        """An info line: unprefixed for scripts (contract 3.7); ``[info] ...`` on a terminal."""
        if not self.quiet:
            self._emit(f"[info] {message}" if self.tty else message)

    def note(self, message: str) -> None:
        """A line of advice that no script parses: always ``[info] ...``."""
        if not self.quiet:
            self._emit(f"[info] {message}")

    FILE_VERBS = {"wrote": "written", "downloaded": "written", "skip existing": "skipped", "skip unchanged": "skipped"}

    def file(self, verb: str, path: str, note: str = "") -> None:
        """A file written, downloaded or left alone: its line (``per_file``), and ``touched``."""
        self.touched(self.FILE_VERBS[verb], path)
        self.per_file(f"{verb} {path}{note}")

    def touched(self, kind: str, path: str) -> None:
        """A file was ``written``, ``skipped`` or written as a ``placeholder`` (not the object: a
        missing artifact's empty archive); a front end that reports files (the Python client's
        ``DownloadResult``) overrides this instead of reading the lines."""

    def per_file(self, message: str) -> None:
        """A line about one file (``wrote``, ``downloaded``, ``skip existing``, ...).

        Off a terminal it is an info line as the contract fixes it; on a
        terminal it is shown only with ``-v``, so that it does not scroll the
        progress away.
        """
        if self.quiet:
            return
        if self.tty and not self.verbose:
            kind = "skipped" if message.startswith("skip") else "missing" if message.startswith("no ") else "written"
            with _lock:
                self.hidden[kind] = self.hidden.get(kind, 0) + 1
            return
        self.info(message)

    def hidden_summary(self) -> str | None:
        """On a terminal without -v: one line counting the per-file lines not shown."""
        if not self.hidden:
            return None
        words = {"written": "file(s) written", "skipped": "skipped", "missing": "without artifact"}
        parts = [f"{self.hidden[k]} {words[k]}" for k in words if self.hidden.get(k)]
        return f"{', '.join(parts)} (-v lists each file)"

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
            if self._json is None:
                self._json = {"error": message}
            else:
                self._json.setdefault("hints", []).append(message)
            if not self.defer_json:
                self.flush()
        else:
            self._emit(f"[error] {message}")

    def flush(self) -> None:
        """Print the collected JSON error object, if any (``--error-format json``)."""
        if self._json is not None:
            # Hiding characters as JSON escapes: the line stays JSON once ``clean`` has run.
            self._emit(json.dumps(self._json, ensure_ascii=False).translate(JSON_TEXT))
            self._json = None

    def failures(self, noun: str, failures: list, code: int) -> None:
        """The end-of-run failure summary: text lines, or one JSON object."""
        self.network_failed = self.network_failed or any(getattr(f, "network", False) for f in failures)
        if self.json_errors:
            summary: dict = {
                "error": f"{len(failures)} {noun} failed",
                "exit_code": code,
                "failures": [{"id": f.ident, "message": f.message, "network": f.network} for f in failures],
            }
            if self._json is not None:  # errors logged before the summary come with it
                summary["hints"] = [self._json["error"], *self._json.get("hints", ())]
            self._json = summary
            if not self.defer_json:
                self.flush()
            return
        self._emit(f"[error] {len(failures)} {noun} failed:")
        for failure in failures:
            self._emit(f"[error]   - {failure.ident}: {failure.message}")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def abandoned(error: BaseException | None) -> bool:
    """Whether an item ended because the command gave its work up (Ctrl-C, or the cancel of
    a 401 or full disk elsewhere), not because the item itself failed."""
    from .errors import Cancelled

    return isinstance(error, (Cancelled, KeyboardInterrupt))


class Counter:
    """A count progress line: start, then one line per processed item."""

    def __init__(self, log: Log, label: str, total: int, unit: str, action: str, eta: bool = False):
        self.log, self.label, self.total, self.unit = log, label, total, unit
        self.action, self.eta = action, eta
        self.done = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()
        log.progress(f"{label}: total={total} {unit}")

    def step(self, detail: str, ok: bool = True, error: BaseException | None = None) -> None:
        """Count one item: done (``ok``), or failed; an item whose work was abandoned (``error``
        a cancel: Ctrl-C, a 401 or full disk elsewhere) is named ``abandoned``, not failed."""
        # Counting and drawing under one lock: a slower thread can never draw an
        # older count after a newer one (a stale bar left after the final line).
        verb = self.action if ok else "abandoned" if abandoned(error) else "failed"
        with self._lock:
            self.done += 1
            if not self.log.quiet:
                self._show(self.done, detail, verb)

    def _show(self, done: int, detail: str, verb: str) -> None:
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
        self.tty = is_terminal(log.stream)
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
        with self._lock:  # counted and drawn together: never an older state after a newer one
            self.done += count
            self._show()

    def file_done(self) -> None:
        with self._lock:
            self.finished += 1
            self._show()

    def close(self) -> None:
        with self._lock:
            if self.visible and self.tty:
                self.log.live("")
                self.visible = False
