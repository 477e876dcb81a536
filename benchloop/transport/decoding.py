"""Response bodies and their limits: Content-Encoding decoding, bombs, error texts.

What httpx lacks: it decodes a body whole, with no limit on what a small
compressed body expands to, so answers are read raw (``iter_raw``) and decoded
here.  JSON answers may be gzip/deflate (and br/zstd when those libraries are
installed: the ``compression`` extra) encoded; a JSON answer larger than
``MAX_JSON_BYTES`` is refused, decoded or not, with one message.  Downloads ask
for ``Accept-Encoding: identity`` and are decoded anyway if the server
compresses, so a saved file holds the object's bytes.  Decoding yields pieces
of at most ``PIECE`` bytes and a body that expands more than ``BOMB_RATIO``-fold
past ``BOMB_FLOOR`` bytes is refused (a decompression bomb).  An error body is
cut to ``MAX_ERROR_TEXT`` characters, with the API key redacted, before it
becomes a message.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..base.masking import scrub_bytes

# A JSON answer larger than this (as sent or decoded) is refused: neither a long body nor a
# small compressed one may exhaust memory.
MAX_JSON_BYTES = 256 << 20
# Decoding stops as a bomb once the output passes BOMB_FLOOR bytes and BOMB_RATIO times the input.
BOMB_FLOOR = 16 << 20
BOMB_RATIO = 200
PIECE = 1 << 20  # at most this much decoded output at a time
ZSTD_SLICE = 256  # zstd input fed at a time: its output per call is bounded by this (~128 KiB a byte)
# An error answer's body is cut to this many characters in a message (stderr is for people).
MAX_ERROR_TEXT = 2000


class Undecodable(ValueError):
    """A body in a Content-Encoding we cannot (or failed to) decode, or too large decoded."""


class TooLarge(Undecodable):
    """More than a JSON answer may hold."""


def too_large(limit: int) -> TooLarge:
    """One message for a JSON answer over the limit, whether it came compressed or not."""
    return TooLarge(f"the JSON answer is larger than {limit} bytes (decoded); refused")


_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class _Zlib:
    """gzip (every member) and deflate (with or without its zlib wrapper, as servers send it)."""

    def __init__(self, coding: str):
        self.coding = coding
        self._z = zlib.decompressobj(_WBITS[coding])
        self._head = b""  # deflate: the first bytes, until the wrapper is recognised
        self._sniffed = coding != "deflate"

    def _sniff(self, data: bytes) -> bytes | None:
        data, self._head = self._head + data, b""
        if len(data) < 2:
            self._head = data
            return None
        if (data[0] & 0x0F) != 8 or ((data[0] << 8) | data[1]) % 31:
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)
        self._sniffed = True
        return data

    def pieces(self, data: bytes) -> Iterator[bytes]:
        if not self._sniffed:
            sniffed = self._sniff(data)
            if sniffed is None:
                return
            data = sniffed
        while data:
            piece = self._z.decompress(data, PIECE)
            data = self._z.unconsumed_tail
            if self._z.eof and self._z.unused_data and self.coding != "deflate":
                data = self._z.unused_data + data  # another gzip member follows
                self._z = zlib.decompressobj(_WBITS[self.coding])
            elif self._z.eof:
                data = b""
            yield piece

    def finish(self) -> bytes:
        if not self._sniffed:
            raise Undecodable(f"corrupt {self.coding} body: too short")
        tail = self._z.flush()
        if not self._z.eof:
            raise Undecodable(f"corrupt {self.coding} body: the compressed stream is incomplete")
        return tail


class _Brotli:
    def __init__(self, module: Any):
        self._d = module.Decompressor()

    def pieces(self, data: bytes) -> Iterator[bytes]:
        piece = self._d.process(data, output_buffer_limit=PIECE)
        yield piece
        while not self._d.can_accept_more_data():
            yield self._d.process(b"", output_buffer_limit=PIECE)

    def finish(self) -> bytes:
        if not self._d.is_finished():
            raise Undecodable("corrupt br body: the compressed stream is incomplete")
        return b""


class _Zstd:
    def __init__(self, module: Any):
        self._module = module
        self._d = module.ZstdDecompressor().decompressobj()
        self._done = False

    def pieces(self, data: bytes) -> Iterator[bytes]:
        for start in range(0, len(data), ZSTD_SLICE):
            if self._done:
                raise Undecodable("corrupt zstd body: data after the end of the frame")
            yield self._d.decompress(data[start:start + ZSTD_SLICE])
            self._done = bool(self._d.eof)

    def finish(self) -> bytes:
        if not self._done:
            raise Undecodable("corrupt zstd body: the compressed stream is incomplete")
        return b""


def _optional(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class Decoder:
    """Incremental decoding of one Content-Encoding, within the bomb limits."""

    def __init__(self, coding: str):
        self.coding = coding
        self._impl: Any
        if coding in _WBITS:
            self._impl = _Zlib(coding)
        elif coding == "br" and (brotli := _optional("brotli") or _optional("brotlicffi")) is not None:
            self._impl = _Brotli(brotli)
        elif coding == "zstd" and (zstd := _optional("zstandard")) is not None:
            self._impl = _Zstd(zstd)
        else:
            raise Undecodable(f"unsupported Content-Encoding: {coding}")
        self.taken = 0  # encoded bytes fed
        self.given = 0  # decoded bytes produced

    def feed(self, data: bytes, limit: int | None = None) -> bytes:
        """Decoded bytes of ``data``; with ``limit``, more than ``limit`` of them is an error."""
        return b"".join(self.pieces(data, limit))

    def pieces(self, data: bytes, limit: int | None = None) -> Iterator[bytes]:
        """The decoded bytes of ``data`` in pieces of at most ``PIECE`` bytes (memory stays
        bounded whatever the ratio); a decompression bomb or more than ``limit`` is an error."""
        self.taken += len(data)
        produced = 0
        try:
            for piece in self._impl.pieces(data):
                produced += len(piece)
                self.given += len(piece)
                self._check(produced, limit)
                if piece:
                    yield piece
        except Undecodable:
            raise
        except Exception as exc:  # noqa: BLE001 - each library's own error for a corrupt stream
            raise Undecodable(f"corrupt {self.coding} body: {exc}") from None

    def _check(self, produced: int, limit: int | None) -> None:
        if limit is not None and produced > limit:
            raise TooLarge(f"{self.coding} body decodes to more than {limit} bytes")
        if self.given > BOMB_FLOOR and self.given > BOMB_RATIO * self.taken:
            raise Undecodable(f"{self.coding} body expands more than {BOMB_RATIO}-fold "
                              f"(over {self.given} bytes from {self.taken}); refused as a "
                              "decompression bomb")

    def finish(self) -> bytes:
        try:
            return self._impl.finish()
        except Undecodable:
            raise
        except Exception as exc:  # noqa: BLE001
            raise Undecodable(f"corrupt {self.coding} body: {exc}") from None


def decoder_for(headers: Mapping[str, str]) -> Decoder | None:
    """The decoder a response's Content-Encoding needs (None for none or identity)."""
    value = headers.get("content-encoding")
    if not value:
        return None
    codings = [c for c in (t.strip().lower() for t in value.split(",")) if c and c != "identity"]
    if not codings:
        return None
    if len(codings) > 1:
        raise Undecodable(f"unsupported Content-Encoding: {value.strip()}")
    return Decoder(codings[0])


def read_json_body(chunks: Iterable[bytes], headers: Mapping[str, str], limit: int | None = None) -> bytes:
    """A whole JSON answer's body, decoded when compressed; more than ``limit`` bytes
    (``MAX_JSON_BYTES``), as sent or decoded, is refused (``TooLarge``) before it is all in memory."""
    limit = MAX_JSON_BYTES if limit is None else limit
    try:
        return _read_json_body(chunks, headers, limit)
    except TooLarge:
        raise too_large(limit) from None


def _read_json_body(chunks: Iterable[bytes], headers: Mapping[str, str], limit: int) -> bytes:
    declared = declared_length(headers)
    if declared is not None and declared > limit:
        raise too_large(limit)
    decoder = decoder_for(headers)
    parts: list[bytes] = []
    left = limit
    for chunk in chunks:
        if decoder is not None:
            chunk = decoder.feed(chunk, left)
        left -= len(chunk)
        if left < 0:
            raise too_large(limit)
        parts.append(chunk)
    if decoder is not None:
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
    """``content`` without ``secret`` in any of its forms (``base.masking``, the one policy):
    redacted before anything escapes it."""
    return scrub_bytes(content, (secret,)) if secret else content


_CONTROL_BYTES = bytes(c for c in range(32) if c not in (9, 10, 13))


def binary_note(content: bytes, total: int | None = None) -> str | None:
    """What a message says of ``content`` when it is binary data (a NUL, or more than a tenth
    of its bytes control characters or not UTF-8): its size only; None for text (a Latin-1
    error page is text, its odd bytes replaced)."""
    if not content:
        return None
    text = content.decode("utf-8", "replace")
    odd = text.count("\ufffd") + sum(content.count(c) for c in _CONTROL_BYTES)
    if b"\x00" in content or odd * 10 > len(text):
        return f"({total if total is not None else len(content)} bytes of binary data, not text)"
    return None


def parsed_or_text(content: bytes) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return binary_note(content) or content.decode("utf-8", "replace")


def error_body(content: bytes, secret: str | None = None) -> Any:
    """An error answer's body for ``ApiError``: its JSON when small, else the start of its text
    (binary data: its size only)."""
    content = redact(content, secret)
    if len(content) <= MAX_ERROR_TEXT:
        return parsed_or_text(content)
    start = content[:MAX_ERROR_TEXT * 4]
    return binary_note(start, len(content)) or cut(start.decode("utf-8", "replace"), len(content))


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
    data = redact(data[:limit], secret)
    return binary_note(data, declared_length(headers)) or cut(data.decode("utf-8", "replace"),
                                                               declared_length(headers))
