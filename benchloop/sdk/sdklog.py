"""The runtime's log lines, for a library: ``logging`` records instead of stderr.

The CLI's :class:`benchloop.base.log.Log` writes ``[progress]``/``[warn]``/...
lines on stderr.  :class:`LoggingLog` keeps its interface (the engine, the
steps and the HTTP client call the same methods) but prints nothing: every
line becomes a record of ``logging.getLogger("benchloop")`` (info -> INFO,
``[progress]`` -> DEBUG, ``[warn]`` -> WARNING, ``[error]`` -> ERROR,
``[debug]`` -> DEBUG), the API key masked and control characters escaped as
on stderr.  Progress lines also go to the optional callback, and a call's log
records the files it wrote or left alone (the engine reports each through
``Log.touched``, next to its ``wrote``/``downloaded``/``skip existing`` line)
for its ``DownloadResult``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..base.log import Log

LOGGER = logging.getLogger("benchloop")
LOGGER.addHandler(logging.NullHandler())  # a library is quiet until its user configures logging
_PREFIXES = (("[progress] ", "progress"), ("[warn] ", logging.WARNING), ("[error] ", logging.ERROR),
             ("[debug] ", logging.DEBUG))


class _Null:
    """A stream that is not a terminal and keeps nothing (ByteProgress asks ``isatty``)."""

    def write(self, _text: str) -> int:
        return 0

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class LoggingLog(Log):
    _tty = False  # never a live line

    def __init__(self, progress: Callable[[str], Any] | None = None, secrets: tuple[str, ...] = (),
                 collect: bool = False):
        super().__init__(quiet=False, verbose=True, stream=_Null())
        self.on_progress = progress
        self.secrets = secrets
        self.collect = collect
        self.paths: list[str] = []
        self.skipped: list[str] = []
        self.placeholders: list[str] = []
        self._paths_lock = threading.Lock()

    def live(self, line: str) -> None:
        pass

    def debug(self, message: str) -> None:
        if LOGGER.isEnabledFor(logging.DEBUG):
            super().debug(message)

    def _emit(self, line: str) -> None:
        line = self.clean(line)
        level: Any = logging.INFO
        for prefix, kind in _PREFIXES:
            if line.startswith(prefix):
                line, level = line[len(prefix):], kind
                break
        if level == "progress":
            if self.on_progress is not None:
                self.on_progress(line)
            LOGGER.debug("[progress] %s", line)
            return
        LOGGER.log(level, "%s", line)

    def touched(self, kind: str, path: str) -> None:
        """Note a file written or left alone, for the call's ``DownloadResult``."""
        if self.collect:
            with self._paths_lock:
                (self.skipped if kind == "skipped" else self.paths).append(path)
                if kind == "placeholder":  # written too, but not the object
                    self.placeholders.append(path)
