"""``--output parquet``: the format's entry, where the file goes, and the install hint.

The writing itself is ``parquet.py``, which needs DuckDB (the ``data`` extra:
``pip install 'benchloop-client[data]'``) and is imported only when a command writes
Parquet; this module is what every command may import (the format registry lists it).
"""

from __future__ import annotations

from typing import Any

from ...base.errors import UsageError
from ...table.outputs import Output
from .base import FORMATS

INSTALL_HINT = "--output parquet needs DuckDB: pip install 'benchloop-client[data]'"


class Target:
    """Where ``--output parquet`` writes: ``path`` (``-o FILE.parquet``), else ``stdout``'s bytes."""

    def __init__(self, path: str | None, stdout: Any):
        self.path, self.stdout = path, stdout

    def write(self, text: str) -> int:  # nothing textual is written here (the rows go to DuckDB)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


@FORMATS.register("parquet")
class Parquet:
    """``--output parquet``: the flat rows as one Parquet file (see the module docstring)."""

    streams = False

    def render(self, stream: Any, result: Any, pretty: bool, note: Any = None, output: Output | None = None,
               refuse: Any = None) -> None:
        from .parquet import write
        from .tabular import tabulate

        table = tabulate(result, output)
        target = stream if isinstance(stream, Target) else Target(None, stream)
        write(target.path, target.stdout, table.columns, ([row.get(c) for c in table.columns] for row in table.rows),
              table.rows[:1000], output)


def require() -> None:
    """DuckDB is there, or a usage error says how to install it (before any request)."""
    import importlib.util

    if importlib.util.find_spec("duckdb") is None:
        raise UsageError(INSTALL_HINT)


def destination(output_dir: str | None, stdout: Any) -> str | None:
    """The file to write (``-o FILE.parquet``), or None for stdout; a terminal is refused."""
    if output_dir and output_dir.lower().endswith(".parquet"):
        return output_dir
    isatty = getattr(stdout, "isatty", None)
    if isatty is not None and isatty():
        raise UsageError("--output parquet writes a binary file: give -o FILE.parquet, or redirect stdout "
                         "(> FILE.parquet)")
    return None
