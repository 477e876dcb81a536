"""Download the media files a job trajectory references (docs/contract.md 2.9).

The part's ``items:`` finds every ``trace_media`` object with a non-empty
``oss_uri`` in the saved trajectory, once per URI; each is fetched from the
media endpoint into ``<dest>/<name>``.  Names are the URI's last segment,
percent-quoted, with an extension from the MIME type when it has none, and
``-2``, ``-3``... before the first dot on collisions.  A login redirect is an
authentication failure of that media (recorded, not fatal).  Errors of
individual files are collected and reported together after the others were
fetched.
"""

from __future__ import annotations

import mimetypes
import os
from typing import Any
from urllib.parse import quote

from ...base.errors import BenchloopError, StepError
from ..stepcall import StepCall
from .registry import WRITTEN, step


def media_name(uri: str, mime: str, taken: set[str]) -> str:
    name = quote(uri.rstrip("/").rsplit("/", 1)[-1], safe="-_.")
    if name in ("", ".", ".."):
        name = "media"
    if "." not in name.lstrip(".") and mime:
        name += mimetypes.guess_extension(mime.split(";")[0].strip()) or ""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        stem, dot, rest = name.partition(".")
        candidate = f"{stem}-{n}{dot}{rest}"
    taken.add(candidate)
    return candidate


@step("trace_media")
def trace_media(call: StepCall) -> Any:
    """Fetch every media file the part's ``source`` (an earlier part) references into ``dest``."""
    refs = call.items(call.earlier(call.params.text("source")))
    if not refs or call.dest is None:
        return None
    taken: set[str] = set()
    errors = []
    for ref in refs:
        uri = ref["oss_uri"]
        mime = ref["mime_type"] if isinstance(ref.get("mime_type"), str) else ""
        target = os.path.join(call.dest, media_name(uri, mime, taken))
        try:
            call.fetch_file("request", target, oss_uri=uri, mime=mime)
        except BenchloopError as exc:
            errors.append(f"{uri}: {exc}")
    if errors:
        raise StepError("; ".join(errors))
    return WRITTEN
