"""benchloop-client: the spec-driven `bl` command line client.

The version lives here (and only here: pyproject reads it), so that
``bl --version`` needs no package-metadata lookup.
"""

from __future__ import annotations

__version__ = "0.3.0"
