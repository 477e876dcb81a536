"""Fetched media as data URIs: real PNG, JPEG, GIF and WebP images only, each capped.

A page is self-contained (no request leaves it; its Content-Security-Policy allows
images from ``data:`` URIs and nothing else), so the images of a trajectory are fetched
once and written into the page.  What the bytes are decides, not what the server said:
the type is read from the file's own signature, and anything else (an SVG, which can
carry a script; HTML; a video) is never embedded, only named.
"""

from __future__ import annotations

import base64
import re
from typing import Any

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def sniff(data: bytes) -> str | None:
    """The image type of ``data`` from its signature, or None when it is none of ``IMAGE_TYPES``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def embedded(data: bytes, allowed: tuple[str, ...] = IMAGE_TYPES) -> dict[str, Any]:
    """What the page shows for fetched bytes: ``{"type", "data"}`` (base64) for an allowed image,
    else ``{"problem"}``."""
    kind = sniff(data)
    if kind is None or kind not in allowed:
        return {"problem": f"not embedded: {len(data)} bytes that are no {', '.join(allowed)} image"}
    return {"type": kind, "data": base64.b64encode(data).decode("ascii"), "bytes": len(data)}


def data_uri(entry: dict[str, Any]) -> str | None:
    """The ``data:`` URI of an embedded image (its type re-checked), else None."""
    kind, data = entry.get("type"), entry.get("data")
    if kind not in IMAGE_TYPES or not isinstance(data, str):
        return None
    if not _BASE64.fullmatch(data):  # only base64 ever goes into the attribute
        return None
    return f"data:{kind};base64,{data}"


_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
