"""Response bodies and their limits: Content-Encoding decoding, bombs, error texts.

JSON answers may be gzip/deflate-encoded (decoded here, capped at
``MAX_JSON_BYTES`` decoded); downloads ask for ``Accept-Encoding: identity``
and are decoded anyway if the server compresses, so a saved file holds the
object's bytes.  Decoding is done in pieces of at most ``PIECE`` bytes and a
body that expands more than ``BOMB_RATIO``-fold past ``BOMB_FLOOR`` bytes is
refused (a decompression bomb).  An error body is cut to ``MAX_ERROR_TEXT``
characters, with the API key redacted, before it becomes a message.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

# A decoded (gzip/deflate) JSON answer larger than this is refused: a small
# compressed body must not be able to exhaust memory.
MAX_JSON_BYTES = 256 << 20
# Decoding stops as a bomb once the output passes BOMB_FLOOR bytes and BOMB_RATIO times the input.
BOMB_FLOOR = 16 << 20
BOMB_RATIO = 200
PIECE = 1 << 20  # at most this much decoded output at a time
# An error answer's body is cut to this many characters in a message (stderr is for people).
MAX_ERROR_TEXT = 2000


class Undecodable(ValueError):
    """A body in a Content-Encoding we cannot (or failed to) decode, or too large decoded."""


_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class Decoder:
    """Incremental gzip/deflate decoding (deflate with or without its zlib wrapper)."""

    def __init__(self, coding: str):
        self.coding = coding
        self._z = zlib.decompressobj(_WBITS[coding])
        self._head = b""  # deflate: the first bytes, until the wrapper is recognised
        self._sniffed = coding != "deflate"
        self.taken = 0  # encoded bytes fed
        self.given = 0  # decoded bytes produced

    def feed(self, data: bytes, limit: int | None = None) -> bytes:
        """Decoded bytes of ``data``; with ``limit``, more than ``limit`` of them is an error."""
        return b"".join(self.pieces(data, limit))

    def _sniff(self, data: bytes) -> bytes | None:
        """Deflate: tell a zlib wrapper from raw deflate (as some servers send) by the first two
        bytes; None while fewer have come."""
        data, self._head = self._head + data, b""
        if len(data) < 2:
            self._head = data
            return None
        if (data[0] & 0x0F) != 8 or ((data[0] << 8) | data[1]) % 31:
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)
        self._sniffed = True
        return data

    def pieces(self, data: bytes, limit: int | None = None) -> Iterator[bytes]:
        """The decoded bytes of ``data`` in pieces of at most ``PIECE`` bytes (memory stays
        bounded whatever the ratio); a decompression bomb or more than ``limit`` is an error."""
        try:
            if not self._sniffed:
                sniffed = self._sniff(data)
                if sniffed is None:
                    return
                data = sniffed
            self.taken += len(data)
            produced = 0
            while data:
                piece = self._z.decompress(data, PIECE)
                data = self._z.unconsumed_tail
                if self._z.eof and self._z.unused_data and self.coding != "deflate":
                    data = self._z.unused_data + data  # another gzip member follows
                    self._z = zlib.decompressobj(_WBITS[self.coding])
                elif self._z.eof:
                    data = b""
                produced += len(piece)
                self.given += len(piece)
                self._check(produced, limit)
                if piece:
                    yield piece
        except zlib.error as exc:
            raise Undecodable(f"corrupt {self.coding} body: {exc}") from None

    def _check(self, produced: int, limit: int | None) -> None:
        if limit is not None and produced > limit:
            raise Undecodable(f"{self.coding} body decodes to more than {MAX_JSON_BYTES} bytes")
        if self.given > BOMB_FLOOR and self.given > BOMB_RATIO * self.taken:
            raise Undecodable(f"{self.coding} body expands more than {BOMB_RATIO}-fold "
                              f"(over {self.given} bytes from {self.taken}); refused as a "
                              "decompression bomb")

    def finish(self) -> bytes:
        if not self._sniffed:
            raise Undecodable(f"corrupt {self.coding} body: too short")
        try:
            tail = self._z.flush()
        except zlib.error as exc:
            raise Undecodable(f"corrupt {self.coding} body: {exc}") from None
        if not self._z.eof:
            raise Undecodable(f"corrupt {self.coding} body: the compressed stream is incomplete")
        return tail


def decoder_for(headers: Mapping[str, str]) -> Decoder | None:
    """The decoder a response's Content-Encoding needs (None for none or identity)."""
    value = headers.get("content-encoding")
    if not value:
        return None
    codings = [c for c in (t.strip().lower() for t in value.split(",")) if c and c != "identity"]
    if not codings:
        return None
    if len(codings) > 1 or codings[0] not in _WBITS:
        raise Undecodable(f"unsupported Content-Encoding: {value.strip()}")
    return Decoder(codings[0])


def read_json_body(chunks: Iterable[bytes], headers: Mapping[str, str]) -> bytes:
    """A whole JSON answer's body, decoded when compressed (at most ``MAX_JSON_BYTES``)."""
    decoder = decoder_for(headers)
    if decoder is None:
        return b"".join(chunks)
    parts, left = [], MAX_JSON_BYTES
    for chunk in chunks:
        part = decoder.feed(chunk, left)
        left -= len(part)
        parts.append(part)
    parts.append(decoder.finish())
    return b"".join(parts)


def declared_length(headers: Mapping[str, str]) -> int | None:
    declared = headers.get("content-length", "")
    return int(declared) if declared.isdigit() else None


def json_body(body: Any) -> bytes:
    """A request body as compact JSON (``{}`` for none)."""
    return json.dumps(body if body is not None else {}, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


# ------------------------------------------------------------------ error bodies
def cut(text: str, size: int | None = None) -> str:
    """An error body as a message: at most ``MAX_ERROR_TEXT`` characters, saying what was cut."""
    if len(text) <= MAX_ERROR_TEXT:
        return text
    total = f"{size} bytes" if size is not None else f"{len(text)} characters"
    return f"{text[:MAX_ERROR_TEXT]}... (cut: the answer has {total})"


def redact(content: bytes, secret: str | None) -> bytes:
    """``content`` without ``secret``, raw or JSON-escaped: redacted before anything escapes it."""
    if secret:
        for form in {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}:
            content = content.replace(form.encode("utf-8", "surrogatepass"), b"***")
    return content


def parsed_or_text(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content.decode("utf-8", "replace")


def error_body(content: bytes, secret: str | None = None) -> Any:
    """An error answer's body for ``ApiError``: its JSON when small, else the start of its text."""
    content = redact(content, secret)
    if len(content) <= MAX_ERROR_TEXT:
        return parsed_or_text(content)
    return cut(content[:MAX_ERROR_TEXT * 4].decode("utf-8", "replace"), len(content))


def error_text(chunks: Iterable[bytes], headers: Mapping[str, str], broken: tuple[type[BaseException], ...],
               secret: str | None = None, limit: int = MAX_ERROR_TEXT * 4) -> str:
    """The start of an error answer's body, as text (decoded if compressed), cut for a message;
    a read failing with one of ``broken`` keeps what came (the status is what matters)."""
    data = b""
    try:
        for chunk in chunks:
            data += chunk
            if len(data) >= limit:
                break
    except broken:
        pass
    try:
        decoder = decoder_for(headers)
        if decoder is not None:
            data = decoder.feed(data, limit)
    except Undecodable:
        pass
    return cut(redact(data[:limit], secret).decode("utf-8", "replace"), declared_length(headers))
