"""benchloop-client: the spec-driven `bl` command line client, and its Python client.

The version lives in ``version.py`` (pyproject reads it there), so that
``bl --version`` needs no package-metadata lookup.  The Python client's names
(``Client``, the exceptions, ``DownloadResult``; docs/python.md) are loaded on
first use by ``__getattr__``, so importing the package costs nothing more.
"""

from __future__ import annotations

import sys

from .version import __version__

# Not typing.TYPE_CHECKING: importing typing would cost `bl --version` ~7 ms. Type checkers
# treat a name TYPE_CHECKING that is False at run time the same way.
TYPE_CHECKING = False

_SDK = ("AuthError", "BenchloopError", "Client", "DownloadResult", "NetworkError", "PartialFailure",
        "UnknownArgument", "UsageError", "WaitTimeout")
__all__ = ["__version__", *_SDK]

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ loads them
    from .sdk import (
        AuthError as AuthError,
    )
    from .sdk import (
        BenchloopError as BenchloopError,
    )
    from .sdk import (
        Client as Client,
    )
    from .sdk import (
        DownloadResult as DownloadResult,
    )
    from .sdk import (
        NetworkError as NetworkError,
    )
    from .sdk import (
        PartialFailure as PartialFailure,
    )
    from .sdk import (
        UnknownArgument as UnknownArgument,
    )
    from .sdk import (
        UsageError as UsageError,
    )
    from .sdk import (
        WaitTimeout as WaitTimeout,
    )


def __getattr__(name: str) -> object:
    if name in _SDK:
        from . import sdk

        value = getattr(sdk, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'benchloop' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*vars(sys.modules[__name__]), *_SDK})
