"""``bl --version`` without importing Cyclopts: the one answer given before the app is built.

The version is the most frequent command of scripts that check an install, and it needs
nothing but the package's own version string: building the app would cost Cyclopts'
import (~100 ms) for one line.  The rule is Cyclopts' own (``App._parse_known_args``):
``--version`` anywhere before a ``--`` is the version, unless ``--help``/``-h`` is
there too (help wins).  The line is what the app's ``version=`` prints.
"""

from __future__ import annotations

from ..version import __version__

VERSION_LINE = f"bmcli {__version__}"
HELP_FLAGS = ("--help", "-h")


def asks_for_version(tokens: list[str]) -> bool:
    """Whether Cyclopts would answer ``tokens`` with the version."""
    options = tokens[:tokens.index("--")] if "--" in tokens else tokens
    return "--version" in options and not any(flag in options for flag in HELP_FLAGS)
