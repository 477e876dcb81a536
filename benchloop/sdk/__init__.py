"""The Python client (``from benchloop import Client``): the CLI's engine as a library.

See docs/python.md.  ``benchloop/__init__.py`` re-exports these names lazily,
so ``import benchloop`` stays as cheap as ``bl --version`` needs.
"""

from __future__ import annotations

from .client import Client
from .errors import (
           AuthError,
           BenchloopError,
           NetworkError,
           PartialFailure,
           UnknownArgument,
           UsageError,
           WaitTimeout,
)
from .results import DownloadResult

__all__ = ["AuthError", "BenchloopError", "Client", "DownloadResult", "NetworkError", "PartialFailure",
           "UnknownArgument", "UsageError", "WaitTimeout"]
