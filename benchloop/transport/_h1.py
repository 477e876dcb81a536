"""One direct HTTP/1.1 connection: our request bytes out, our own small parser in.

Why not httpcore's ``HTTP11Connection``: under it h11 validates and normalizes
every header of the request and of the answer, in pure Python, through a
state machine of events; a profile of ``trajectory download`` showed it as the
largest client cost (0.42 ms of wire per 335-byte answer against 0.20 ms for a
whole ``http.client`` exchange with ``json.loads``).  At ``--concurrency 16``
on two cores that CPU is the wall time.  Why not ``http.client.HTTPResponse``
(the first replacement): its header parser is the ``email`` package's
feedparser, a third of the remaining wire cost (``parse_headers`` ~1.0 of 2.4 s
in a profile of 2,000 answers), and what it is lenient about (1xx other than
100, more than 16 KiB of head, folded or malformed lines, doubtful lengths)
had to be checked again after it.  An answer's head is a few lines; reading
them here is shorter than those checks were.

A connection writes the request itself - the request line and the header list
:mod:`._pool` builds, checked against the same grammar h11 checks (a token for
names, no control characters in values or the target), in one write - and
reads the answer from a C ``io.BufferedReader`` over our
:class:`._streams.Stream`, so deadlines, cancel and TLS (``start_tls`` happens
before) hold as for every connection:

- the status line must be ``HTTP/1.0`` or ``HTTP/1.1``; the status line and
  headers together at most 16 KiB (h11's limit), at most 100 fields; a line
  that is not ``name: value`` with a token name and no control character in
  the value is refused; a folded line joins its field with one space (h11);
- any 1xx before the answer is skipped (101 is an answer, never kept alive);
- the body (RFC 9112 section 6.3): none for HEAD, 1xx, 204 and 304; chunked
  when ``Transfer-Encoding`` says so (any other coding is refused); else one
  ``Content-Length`` (different or non-numeric values are refused); else until
  the server closes.  A body cut short is an error, never a short answer;
- kept alive: HTTP/1.1 unless ``Connection: close``, HTTP/1.0 only with
  ``keep-alive``, and only once the answer was read to its end.

It never decodes a body (``_decoding`` does, within limits).  Every failure is
one of the transport's error classes (:mod:`._errors`, httpcore's names) with
h11's wording where it had one, so retry classification and messages stay.
tests/test_h1.py drives it with servers that send exact bytes.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from typing import Any

from ._errors import ConnectionNotAvailable, LocalProtocolError, RemoteProtocolError, WriteError
from ._streams import Stream

MAX_HEADER_BYTES = 16 * 1024  # status line and headers of one answer (h11's max_incomplete_event_size)
READ_SIZE = 65536  # one socket read (as httpcore's)

# The request grammar h11 enforces (RFC 9110/9112): token names, visible values, visible target.
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(rb"(?:[\x21-\x7e\x80-\xff]+(?:[ \t]+[\x21-\x7e\x80-\xff]+)*)?")
_TARGET = re.compile(rb"[\x21-\x7e]+")
_FIELD = re.compile(rb"[^\x00-\x08\x0a-\x1f\x7f]*")  # a received value: no control character but tab
_LENGTH = re.compile(rb"[0-9]+")
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_STATUS = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?:[ \t][^\r\n]*)?\r?\n")
MAX_HEADERS = 100  # fields of one head (as http.client; h11 counts bytes only)
_CHUNK_LINE = 1024  # a chunk-size line with its extensions

_IDLE, _ACTIVE, _CLOSED = 0, 1, 2


class _Raw(io.RawIOBase):
    """Our stream as a raw file: every read obeys the deadline and the cancel switch."""

    def __init__(self, stream: Stream, timeout: float):
        self._stream, self._timeout = stream, timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer), self._timeout)
        n = len(data)
        buffer[:n] = data
        return n


def _cut(what: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"peer closed connection without sending complete message {what}")


def _malformed(what: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"malformed answer: {what}")


class _HeadReader:
    """Lines of one answer's head, within ``MAX_HEADER_BYTES`` counted as they are read."""

    __slots__ = ("readline", "left")

    def __init__(self, buffered: Any):
        self.readline, self.left = buffered.readline, MAX_HEADER_BYTES

    def line(self) -> bytes:
        line = self.readline(self.left + 1)
        self.left -= len(line)
        if self.left < 0:
            raise RemoteProtocolError(f"the answer's headers are longer than {MAX_HEADER_BYTES} bytes")
        return line


def _fields(lines: _HeadReader) -> list[tuple[bytes, bytes]]:
    """The header fields up to the empty line, as raw pairs: names as sent, values without the
    white space around them; an obsolete folded line joins its field with one space (as h11)."""
    headers: list[tuple[bytes, bytes]] = []
    while True:
        line = lines.line()
        if line == b"\r\n" or line == b"\n":
            return headers
        if not line.endswith(b"\n"):
            raise _cut("head")
        if line[:1] in (b" ", b"\t") and headers:
            name, value = headers[-1]
            headers[-1] = (name, (value + b" " + line.strip(b" \t\r\n")).strip(b" \t"))
            continue
        name, colon, value = line.partition(b":")
        value = value.strip(b" \t\r\n")
        if not colon or not _TOKEN.fullmatch(name) or not _FIELD.fullmatch(value):
            raise _malformed("a header line that is not 'name: value'")
        headers.append((name, value))
        if len(headers) > MAX_HEADERS:
            raise _malformed(f"more than {MAX_HEADERS} headers")


class Response:
    """One answer on a :class:`Connection`: ``status``, ``headers`` (raw pairs), ``stream`` (the
    body as received, never decoded) and ``close``, as httpcore's ``Response`` offers them.

    The body's framing follows RFC 9112 section 6.3: none for HEAD, 1xx, 204 and 304;
    chunked when ``Transfer-Encoding`` says so (the only coding accepted); else
    ``Content-Length`` (one number, however often repeated); else until the server closes.
    """

    __slots__ = ("status", "headers", "_buffered", "_length", "_chunked", "_keep", "_connection", "_complete")

    def __init__(self, status: int, version: bytes, headers: list[tuple[bytes, bytes]], method: bytes,
                 connection: Connection):
        self.status, self.headers = status, headers
        lengths: list[bytes] = []
        codings: list[bytes] = []
        tokens: set[bytes] = set()
        for name, value in headers:
            lower = name.lower()
            if lower == b"content-length":
                lengths += [part.strip() for part in value.split(b",")]
            elif lower == b"transfer-encoding":
                codings.append(value)
            elif lower == b"connection":
                tokens.update(part.strip().lower() for part in value.split(b","))
        if lengths and (len(set(lengths)) != 1 or not _LENGTH.fullmatch(lengths[0])):
            raise _malformed(f"Content-Length {b', '.join(lengths).decode('latin-1')!r}")
        if codings and (len(codings) != 1 or codings[0].lower() != b"chunked"):
            raise RemoteProtocolError("Only Transfer-Encoding: chunked is supported")
        self._chunked = bool(codings)
        self._length: int | None = int(lengths[0]) if lengths and not codings else None
        if method == b"HEAD" or status in (204, 304) or status < 200:
            self._chunked, self._length = False, 0
        # Kept alive: HTTP/1.1 unless it says close; HTTP/1.0 only when it says keep-alive; never
        # an answer whose end is the connection's, nor a switch of protocols.
        self._keep = (b"close" not in tokens if version == b"1" else b"keep-alive" in tokens) and (
            self._chunked or self._length is not None) and status != 101
        self._buffered = connection.reader
        self._connection: Connection | None = connection
        self._complete = False

    @property
    def stream(self) -> Iterator[bytes]:
        return self._chunks() if self._chunked else self._body()

    def _body(self) -> Iterator[bytes]:
        read1, left = self._buffered.read1, self._length
        if left is None:  # until the server closes
            while chunk := read1(READ_SIZE):
                yield chunk
        else:
            while left:
                chunk = read1(min(left, READ_SIZE))
                if not chunk:
                    raise _cut(f"body: {left} bytes missing")
                left -= len(chunk)
                yield chunk
        self._complete = True

    def _chunks(self) -> Iterator[bytes]:
        buffered = self._buffered
        while True:
            line = buffered.readline(_CHUNK_LINE)
            if not line.endswith(b"\n"):
                raise _cut("body") if len(line) < _CHUNK_LINE else _malformed("a chunk size line too long")
            size = line.split(b";", 1)[0].strip()
            if not _HEX.fullmatch(size):
                raise _malformed(f"a bad chunk size {size[:20].decode('latin-1')!r}")
            left = int(size, 16)
            if not left:
                break
            while left:
                chunk = buffered.read1(min(left, READ_SIZE))
                if not chunk:
                    raise _cut("body")
                left -= len(chunk)
                yield chunk
            end = buffered.readline(3)
            if end != b"\r\n" and end != b"\n":
                raise _cut("body") if not end else _malformed("a chunk longer than its size")
        _fields(_HeadReader(buffered))  # the trailer: read (within the head's limit), not used
        self._complete = True

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:  # once: a second close must not touch a connection reused since
            connection.answered(reusable=self._complete and self._keep)


class Connection:
    """One HTTP/1.1 connection of :mod:`._pool`, used by one request at a time."""

    def __init__(self, stream: Stream, timeout: float, keepalive_expiry: float):
        self._stream = stream
        self._timeout = timeout
        self.reader = io.BufferedReader(_Raw(stream, timeout), READ_SIZE)
        self._keepalive_expiry = keepalive_expiry
        self._expire_at: float | None = None
        self._state = _IDLE

    def request(self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]],
                content: bytes | None) -> Response:
        """Send the request; return its answer once the head is read, the body still to read."""
        if self._state != _IDLE:
            raise ConnectionNotAvailable()
        self._state, self._expire_at = _ACTIVE, None
        if not _TOKEN.fullmatch(method) or not _TARGET.fullmatch(target):
            raise LocalProtocolError(f"illegal request line: {method!r} {target!r}")
        parts = [method, b" ", target, b" HTTP/1.1\r\n"]
        for name, value in headers:
            if not _TOKEN.fullmatch(name) or not _VALUE.fullmatch(value):
                raise LocalProtocolError(f"illegal header: {name!r}")
            parts += (name, b": ", value, b"\r\n")
        parts.append(b"\r\n")
        if content:
            parts.append(content)
        try:
            self._stream.write(b"".join(parts), self._timeout)
        except WriteError:
            pass  # a server may answer (413, 401) and close before reading it all: read the answer
        return self._read_head(method)

    def _read_head(self, method: bytes) -> Response:
        while True:
            lines = _HeadReader(self.reader)  # each answer's head has the whole limit
            first = lines.line()
            if not first:
                raise RemoteProtocolError("Server disconnected without sending a response.")
            status = _STATUS.fullmatch(first)
            if status is None:
                if not first.endswith(b"\n"):
                    raise _cut("head")
                raise _malformed(f"not an HTTP/1.x status line: {first[:40].decode('latin-1').strip()!r}")
            headers = _fields(lines)
            code = int(status.group(2))
            if not 100 <= code < 200 or code == 101:  # 1xx: an interim answer (103 Early Hints...)
                return Response(code, status.group(1), headers, method, self)

    def answered(self, reusable: bool) -> None:
        """The answer was closed: idle again if it was read whole and may be kept, else closed."""
        if reusable and self._state == _ACTIVE:
            self._state = _IDLE
            self._expire_at = time.monotonic() + self._keepalive_expiry
        else:
            self.close()

    def is_idle(self) -> bool:
        return self._state == _IDLE

    def has_expired(self) -> bool:
        """Idle past the keep-alive expiry, or closed by the server (readable while idle: EOF)."""
        if self._expire_at is not None and time.monotonic() > self._expire_at:
            return True
        return self._state == _IDLE and bool(self._stream.get_extra_info("is_readable"))

    def close(self) -> None:
        if self._state != _CLOSED:
            self._state = _CLOSED
            self._stream.close()
