"""Files saved in place of a download that the backend says is missing.

The table names them (``missing: {placeholder: NAME}``): a download whose
answer matches the part's missing rule is saved as this content instead, and
counts as done.  The reference client saves an empty gzip-compressed tar for
a missing artifact, so scripts that unpack every ``.tgz`` keep working.
"""

from __future__ import annotations

import io
from collections.abc import Callable


def empty_tgz() -> bytes:
    """An empty tar archive, gzip-compressed, byte-stable (no timestamp)."""
    import gzip  # only when an artifact is missing: not at every start
    import tarfile

    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w"):
        pass
    return raw.getvalue()


PLACEHOLDERS: dict[str, Callable[[], bytes]] = {"empty_tgz": empty_tgz}
