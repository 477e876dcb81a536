"""benchloop-client: the spec-driven `bl` command line client."""

from __future__ import annotations


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("benchloop-client")
    except Exception:  # not installed (running from a checkout)
        return "0.0.0+unknown"


__version__ = _version()
