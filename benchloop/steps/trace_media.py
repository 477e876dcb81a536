"""Download the media files a job trajectory references (docs/contract.md 2.9).

Every ``trace_media`` object with a non-empty ``oss_uri`` in the saved
trajectory names one file; each distinct URI is fetched once from the media
endpoint into ``<dest>/<name>``.  Names are the URI's last segment,
percent-quoted, with an extension from the MIME type when it has none, and
``-2``, ``-3``... before the first dot on collisions.  A login redirect is an
authentication failure of that media (recorded, not fatal).  Errors of
individual files are collected and reported together after the others were
fetched.
"""

from __future__ import annotations

import mimetypes
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from ..errors import BenchloopError, StepError
from ..http import ArtifactMissing
from . import WRITTEN


def media_refs(value: Any) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "trace_media" and isinstance(item, dict):
                uri = item.get("oss_uri")
                if isinstance(uri, str) and uri:
                    mime = item.get("mime_type")
                    yield uri, mime if isinstance(mime, str) else ""
            else:
                yield from media_refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from media_refs(item)


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


def trace_media(call) -> Any:
    """Fetch every media file the part's ``source`` (an earlier part) references into ``dest``."""
    seen: dict[str, str] = {}
    for uri, mime in media_refs(call.ctx.parts.get(call.part.params.get("source", "trajectory"))):
        seen.setdefault(uri, mime)
    if not seen or call.dest is None:
        return None
    taken: set[str] = set()
    errors = []
    for uri, mime in seen.items():
        target = os.path.join(call.dest, media_name(uri, mime, taken))
        try:
            call.download("request", target, call.ctx.child(oss_uri=uri, mime=mime))
        except (BenchloopError, ArtifactMissing) as exc:
            errors.append(f"{uri}: {exc}")
    if errors:
        raise StepError("; ".join(errors))
    return WRITTEN
