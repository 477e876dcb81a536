"""One direct HTTP/1.1 connection: our request bytes out, the standard library's parser in.

Why not httpcore's ``HTTP11Connection``: under it h11 validates and normalizes
every header of the request and of the answer, in pure Python, through a
state machine of events; a profile of ``trajectory download`` showed it as the
largest client cost (0.42 ms of wire per 335-byte answer against 0.20 ms for a
whole ``http.client`` exchange with ``json.loads``).  At ``--concurrency 16``
on two cores that CPU is the wall time.

So a connection here writes the request itself - the request line and the
header list :mod:`._pool` builds, checked against the same grammar h11 checks
(a token for names, no control characters in values or the target), in one
write - and reads the answer with ``http.client.HTTPResponse``, a parser as old
and as maintained as Python: status line, headers, ``Content-Length``,
chunked and close-delimited bodies, ``HEAD`` and keep-alive (``will_close``).
It never decodes a body (``_decoding`` does, within limits).

HTTPResponse reads from ``makefile("rb")`` of what it is given; here that is a
C ``io.BufferedReader`` over our :class:`._streams.Stream`, so deadlines,
cancel and TLS (``start_tls`` happens before) hold as for every connection.
What HTTPResponse is more lenient about than h11 is checked after it parsed:

- at most 16 KiB for the status line and headers together (h11's limit;
  HTTPResponse alone would take 100 lines of 64 KiB);
- header lines it could not parse, a ``Content-Length`` that is not one
  number, a ``Transfer-Encoding`` other than ``chunked``, a negative chunk
  size: a ``RemoteProtocolError``, never a guess at the framing;
- any 1xx before the answer is skipped (HTTPResponse alone skips only 100).

Every failure is one of httpcore's exception classes (``_streams.TRANSPORT_ERRORS``)
with h11's wording where it had one, so retry classification and messages stay.
"""

from __future__ import annotations

import http.client
import io
import re
import time
from collections.abc import Iterator
from typing import Any

import httpcore

MAX_HEADER_BYTES = 16 * 1024  # status line and headers of one answer (h11's max_incomplete_event_size)
READ_SIZE = 65536  # one socket read, as httpcore's

# The request grammar h11 enforces (RFC 9110/9112): token names, visible values, visible target.
_TOKEN = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(rb"(?:[\x21-\x7e\x80-\xff]+(?:[ \t]+[\x21-\x7e\x80-\xff]+)*)?")
_TARGET = re.compile(rb"[\x21-\x7e]+")
_LENGTH = re.compile(r"[0-9]+")
_FOLD = re.compile(r"\r?\n[ \t]*")

_IDLE, _ACTIVE, _CLOSED = 0, 1, 2


class _Raw(io.RawIOBase):
    """Our stream as a raw file: every read obeys the deadline and the cancel switch."""

    def __init__(self, stream: httpcore.NetworkStream, timeout: float):
        self._stream, self._timeout = stream, timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer), self._timeout)
        n = len(data)
        buffer[:n] = data
        return n


class _Reader:
    """The connection's buffered reader as HTTPResponse sees it: ``readline`` spends a byte
    budget while an answer's head is read; ``close`` is the connection's business."""

    __slots__ = ("read", "read1", "readinto", "peek", "_buffered", "budget")

    def __init__(self, buffered: io.BufferedReader):
        self._buffered = buffered
        self.read, self.read1, self.readinto, self.peek = (
            buffered.read, buffered.read1, buffered.readinto, buffered.peek)
        self.budget: int | None = None

    def readline(self, limit: int = -1) -> bytes:
        budget = self.budget
        if budget is None:
            return self._buffered.readline(limit)
        line = self._buffered.readline(budget + 1 if limit < 0 else min(limit, budget + 1))
        self.budget = budget - len(line)
        if self.budget < 0:
            raise httpcore.RemoteProtocolError(f"the answer's headers are longer than {MAX_HEADER_BYTES} bytes")
        return line

    def close(self) -> None:
        """HTTPResponse "closes its file" at the end of a body: the connection stays ours."""

    def flush(self) -> None:
        pass


class _Socket:
    """What HTTPResponse is built on: ``makefile("rb")`` is the connection's one reader."""

    __slots__ = ("_reader",)

    def __init__(self, reader: _Reader):
        self._reader = reader

    def makefile(self, mode: str) -> _Reader:
        return self._reader


def _protocol_error(exc: http.client.HTTPException) -> httpcore.RemoteProtocolError:
    if isinstance(exc, http.client.RemoteDisconnected):
        return httpcore.RemoteProtocolError("Server disconnected without sending a response.")
    if isinstance(exc, http.client.IncompleteRead):
        return httpcore.RemoteProtocolError("peer closed connection without sending complete message body")
    return httpcore.RemoteProtocolError(f"malformed answer: {type(exc).__name__} {str(exc).strip()[:80]!r}")


def _head(answer: http.client.HTTPResponse) -> list[tuple[bytes, bytes]]:
    """The answer's headers as raw pairs, once what HTTPResponse would guess around is refused
    as h11 refuses it: lines that are not headers, a doubtful length, a coding other than chunked."""
    message = answer.msg
    if message.defects or message.get_payload():
        raise httpcore.RemoteProtocolError("malformed answer: a header line that is not 'name: value'")
    headers, lengths, codings = [], [], []
    for name, value in message.items():
        if "\n" in value or "\r" in value:  # an obsolete folded line: one space, as h11 makes it
            value = _FOLD.sub(" ", value)
        value = value.strip(" \t")  # optional white space around a value is not part of it (h11)
        lower = name.lower()
        if lower == "content-length":
            lengths.append(value)
        elif lower == "transfer-encoding":
            codings.append(value)
        headers.append((name.encode("latin-1"), value.encode("latin-1")))
    if lengths:
        values = {part.strip() for value in lengths for part in value.split(",")}
        if len(values) != 1 or not _LENGTH.fullmatch(next(iter(values))):
            raise httpcore.RemoteProtocolError(f"malformed answer: Content-Length {', '.join(lengths)!r}")
    if codings and (len(codings) != 1 or codings[0].strip().lower() != "chunked"):
        raise httpcore.RemoteProtocolError("Only Transfer-Encoding: chunked is supported")
    return headers


class Response:
    """One answer on a :class:`Connection`: ``status``, ``headers`` (raw pairs), ``stream`` (the
    body as received, never decoded) and ``close``, as httpcore's ``Response`` offers them."""

    __slots__ = ("status", "headers", "_answer", "_connection", "_complete")

    def __init__(self, answer: http.client.HTTPResponse, connection: Connection):
        self.status: int = answer.status
        self.headers = _head(answer)
        self._answer = answer
        self._connection: Connection | None = connection
        self._complete = False

    @property
    def stream(self) -> Iterator[bytes]:
        return self._body()

    def _body(self) -> Iterator[bytes]:
        answer = self._answer
        try:
            while True:
                chunk = answer.read1(READ_SIZE)
                if not chunk:
                    break
                if answer.chunked and answer.chunk_left is not None and answer.chunk_left < 0:
                    raise httpcore.RemoteProtocolError("malformed answer: a negative chunk size")
                yield chunk
        except http.client.HTTPException as exc:
            raise _protocol_error(exc) from None
        except ValueError:  # a chunk size HTTPResponse took (int() allows a sign) but cannot read
            raise httpcore.RemoteProtocolError("malformed answer: a bad chunk size") from None
        if answer.length:  # read1 ends quietly when the server closed before the announced length
            raise httpcore.RemoteProtocolError(
                f"peer closed connection without sending complete message body: {answer.length} bytes missing")
        self._complete = True

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:  # once: a second close must not touch a connection reused since
            connection.answered(reusable=self._complete and not self._answer.will_close and self.status != 101)


class Connection:
    """One HTTP/1.1 connection of :mod:`._pool`, used by one request at a time."""

    def __init__(self, stream: httpcore.NetworkStream, timeout: float, keepalive_expiry: float):
        self._stream = stream
        self._timeout = timeout
        self._reader = _Reader(io.BufferedReader(_Raw(stream, timeout), READ_SIZE))
        self._socket = _Socket(self._reader)
        self._keepalive_expiry = keepalive_expiry
        self._expire_at: float | None = None
        self._state = _IDLE

    def request(self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]],
                content: bytes | None) -> Response:
        """Send the request; return its answer once the head is read, the body still to read."""
        if self._state != _IDLE:
            raise httpcore.ConnectionNotAvailable()
        self._state, self._expire_at = _ACTIVE, None
        if not _TOKEN.fullmatch(method) or not _TARGET.fullmatch(target):
            raise httpcore.LocalProtocolError(f"illegal request line: {method!r} {target!r}")
        parts = [method, b" ", target, b" HTTP/1.1\r\n"]
        for name, value in headers:
            if not _TOKEN.fullmatch(name) or not _VALUE.fullmatch(value):
                raise httpcore.LocalProtocolError(f"illegal header: {name!r}")
            parts += (name, b": ", value, b"\r\n")
        parts.append(b"\r\n")
        if content:
            parts.append(content)
        try:
            self._stream.write(b"".join(parts), self._timeout)
        except httpcore.WriteError:
            pass  # a server may answer (413, 401) and close before reading it all: read the answer
        return Response(self._read_head(method), self)

    def _read_head(self, method: bytes) -> http.client.HTTPResponse:
        reader = self._reader
        try:
            while True:
                reader.budget = MAX_HEADER_BYTES
                answer = http.client.HTTPResponse(self._socket, method=method.decode("ascii"))  # type: ignore[arg-type]
                answer.begin()
                if not 100 <= answer.status < 200 or answer.status == 101:
                    break  # 1xx: an interim answer (103 Early Hints...), the real one follows
        except http.client.HTTPException as exc:
            raise _protocol_error(exc) from None
        finally:
            reader.budget = None
        return answer

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
