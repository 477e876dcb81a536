"""Where the endpoint table and its schema live, and the error a malformed table raises.

Apart from ``load`` (the cache) and ``compiler`` (YAML, schema, lints)
so that both can use them without importing each other.
"""

from __future__ import annotations

import os
from pathlib import Path

_PKG_DIR = Path(__file__).resolve().parent.parent  # benchloop/
SPEC_NAME = "benchloop.yaml"
SCHEMA_NAME = "benchloop.schema.json"


class SpecError(Exception):
    """The endpoint table is malformed; the message names file, line and key."""


def spec_dir() -> Path:
    """Directory holding the table: inside the wheel, or the checkout's spec/."""
    override = os.environ.get("BENCHLOOP_SPEC_DIR")
    if override:
        return Path(override)
    shipped = _PKG_DIR / "_spec"
    if (shipped / SPEC_NAME).is_file():
        return shipped
    return _PKG_DIR.parent / "spec"
