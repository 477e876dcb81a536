"""Downloads: redirects followed by hand, a temp file, resume after a cut.

What httpx lacks: on a redirect to another origin it strips ``Authorization``
but keeps any other header, ``X-API-Key`` included; it has no resume and no
notion of a file.  So redirects are followed here: each hop's URL is an
``httpx.URL`` joined from the ``Location``, and the key rides only on a hop
whose URL is on the configured origin with no user info (:mod:`.urls`), never
over a scheme downgrade; a redirect to a login page is an authentication
failure.  Only a ``200`` (or a ``206`` that continues this download) is saved:
any other answer without a body to keep (204, 205, 304, a 3xx without
``Location``) fails the file with its status.  The body goes to a temp file
that becomes the destination only when complete and of the announced length:
the answer's ``Content-Length`` and, where the caller knows it (an artifact
listing's ``size``), the object's size announced before: a body without a
length that ends early is a cut, never a complete file.
After a cut, the next attempt asks for the rest with ``Range`` and
``If-Range`` (the first answer's strong ``ETag``, else its ``Last-Modified``,
sent back byte for byte, non-ASCII included) and appends only a 206 that
continues the same object: its ``Content-Range`` starts where the file stops,
its total is the length the first answer announced, and it carries the
validator that was sent.  Anything else starts over.  A compressed body
(asked for ``identity``, got gzip anyway) is decoded: the file holds the
object's bytes.  Every request of a download goes on a new connection, closed
after it (``Http.file_client``): a file carries no id that could be checked,
so nothing a server sends before or after a file on a connection can become
another file.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any, Protocol

from ..base.errors import ApiError, AuthError, BenchloopError, Cancelled, NetworkError
from .decoding import Decoder, Undecodable, declared_length, decoder_for, error_text
from .retry import AUTH, RESTART, SENT, Failed, RetryPolicy, classify_status, retry_after
from .slots import slot
from .urls import REDIRECTS, login_message, shown_url


class Http(Protocol):
    """What a download needs of the HTTP client that runs it (``client.Http``, which imports
    this module: described here rather than imported, so that the two never import each other)."""

    api_key: str | None
    auth_statuses: tuple[int, ...]
    cancelled: Any
    home: Any
    httpx: Any
    log: Any
    login_hosts: tuple[str, ...]
    policy: RetryPolicy
    timeout: float

    def parse(self, url: str | Any, params: dict[str, Any] | None = None) -> Any: ...

    def build(self, method: str, url: str | Any, headers: dict[str, Any] | None = None) -> Any: ...

    @property
    def file_client(self) -> Any: ...

    def send(self, request: Any, deadline: float, client: Any = None) -> Any: ...

    def read(self, response: Any, deadline: float) -> Any: ...

    def finish(self, response: Any) -> None: ...


MAX_REDIRECTS = 10
_CONTENT_RANGE = re.compile(rb"bytes (\d+)-(\d+)/(\d+|\*)")


def raw_header(response: Any, name: bytes) -> bytes | None:
    """A header's value as it came (bytes): the first of that name, or None."""
    for key, value in response.headers.raw:
        if key.lower() == name:
            return value
    return None


class Download:
    """The attempts of one download into ``tmp``; ``have`` is what the temp file holds so far."""

    def __init__(self, http: Http, url: str, params: dict[str, Any] | None, tmp: str, on_bytes: Any, check: Any,
                 headers: dict[str, str] | None = None, size: int | None = None):
        self.http, self.tmp, self.extra = http, tmp, headers or {}
        self.size = size  # the object's size announced elsewhere (a listing), or None
        self.url = http.parse(url, params)  # parsed once; each hop's request is built from it
        self.on_bytes, self.check = on_bytes, check
        self.have = 0
        self.validator: tuple[bytes, bytes] | None = None  # the first answer's (b"etag" or b"last-modified", value)
        self.length: int | None = None  # the whole object's length the first answer announced

    def run(self) -> int:
        self.http.policy.run("GET", lambda: shown_url(self.url, query=False), self.attempt)
        return os.path.getsize(self.tmp)

    def request_headers(self) -> dict[str, Any]:
        headers: dict[str, Any] = {"Accept": "*/*", **self.extra, "Accept-Encoding": "identity"}
        if self.have:
            if self.length is None:
                self.have = 0  # the first answer announced no length: nothing to check a rest against
            else:
                headers["Range"] = f"bytes={self.have}-"
                if self.validator is not None:  # a changed object answers 200 (the whole new one)
                    headers["If-Range"] = self.validator[1]
        return headers

    def attempt(self) -> None:
        http = self.http
        headers = self.request_headers()
        with slot():  # on the wire: one slot; the attempt as a whole within --timeout
            http.policy.check()  # once the slot is ours
            deadline = time.monotonic() + http.timeout
            response = self.follow(headers, deadline)
            try:
                self.save(response, deadline)
            finally:
                http.finish(response)

    def follow(self, headers: dict[str, Any], deadline: float) -> Any:
        """Send the GET, following redirects by hand with the API key only on our origin."""
        http, url = self.http, self.url
        for _hop in range(MAX_REDIRECTS):
            response = http.send(http.build("GET", url, headers), deadline, http.file_client)
            location = response.headers.get("location")
            if response.status_code not in REDIRECTS or not location:
                return response
            http.finish(response)
            try:
                nxt = url.join(location)
            except http.httpx.InvalidURL as exc:
                raise ApiError(response.status_code, f"redirect to an invalid URL: {exc}") from None
            refusal = login_message(nxt, http.login_hosts, http.home)
            if refusal is not None:
                raise Failed(AUTH, AuthError(refusal))
            if url.scheme == "https" and nxt.scheme != "https":
                raise ApiError(response.status_code, f"refusing redirect from https to "
                                                     f"{nxt.scheme or 'an unknown scheme'}: {shown_url(nxt)}")
            url = nxt
        raise ApiError(310, "too many redirects")

    def save(self, response: Any, deadline: float) -> None:
        """Write one answer's body to the temp file, or raise what the answer means."""
        self.refuse(response, deadline)
        try:
            decoder = decoder_for(response.headers)
        except Undecodable as exc:
            raise ApiError(response.status_code, str(exc)) from None
        length = declared_length(response.headers)  # this answer's raw (encoded) length
        mode, total = self.placement(response, decoder, length)
        raw = self.stream(response, decoder, mode, deadline)
        if length is not None and raw != length:
            if decoder is not None:
                self.have = 0
            raise Failed(SENT, NetworkError(f"body cut short: {raw} of {length} bytes"))
        if total is not None and self.have != total:
            raise Failed(SENT, NetworkError(f"body cut short: {self.have} of {total} bytes"))
        if self.size is not None and self.have != self.size:
            self.check_size(response.status_code, length)

    def check_size(self, status: int, length: int | None) -> None:
        """Fail a body whose size is not the one announced before it (``size``): shorter without
        a ``Content-Length`` is a cut (asked again); any other difference is the server's."""
        have, size = self.have, self.size
        if have < (size or 0) and length is None:
            self.have = 0  # no length to resume against: the next attempt starts over
            raise Failed(SENT, NetworkError(f"body cut short: {have} of {size} bytes (the size the listing "
                                            "announced; the answer gave no Content-Length)"))
        raise BenchloopError(f"size mismatch: {have} bytes received (HTTP {status}), the listing announced "
                             f"{size} bytes")

    def refuse(self, response: Any, deadline: float) -> None:
        """Raise for an answer that carries no body to save (auth, the caller's check, errors,
        and every status but 200 and 206: nothing else is the object)."""
        http, status = self.http, response.status_code
        if status in http.auth_statuses:
            raise Failed(AUTH, AuthError(f"authentication failed (HTTP {status})", status))
        if self.check is not None:
            self.check(status, response.headers, str(response.request.url))
        if status in (200, 206):
            return
        kind = RESTART if status == 416 and self.have else classify_status(status)
        if kind is None and status < 400:
            raise ApiError(status, f"HTTP {status} is not a file to save"
                           + (" (a redirect without a Location)" if status in REDIRECTS else ""))
        text = error_text(http.read(response, deadline), response.headers, (Failed, NetworkError), http.api_key)
        error = ApiError(status, text)
        if kind == RESTART:
            self.have = 0  # our partial file is useless: start over
        if kind is None:
            raise error
        raise Failed(kind, error, retry_after(response.headers.get("retry-after")))

    def continues(self, response: Any, decoder: Decoder | None) -> int | None:
        """The whole length, when a 206 continues the same object where our file stops; else None."""
        match = _CONTENT_RANGE.fullmatch(raw_header(response, b"content-range") or b"")
        if decoder is not None or not match or not self.have or int(match.group(1)) != self.have:
            return None
        if match.group(3) == b"*" or int(match.group(3)) != self.length:
            return None  # another object: its total is not the length announced first
        if self.validator is not None and raw_header(response, self.validator[0]) != self.validator[1]:
            return None  # the server ignored If-Range: these bytes are of another version
        return int(match.group(3))

    def placement(self, response: Any, decoder: Decoder | None, length: int | None) -> tuple[str, int | None]:
        """``(file mode, whole length)``: append a 206 that continues the same object, else start over."""
        if response.status_code == 206:
            total = self.continues(response, decoder)
            if total is None:
                # Never glue partial content of another start or another object to what we
                # have: drop that and ask again without Range.
                self.have = 0
                raise Failed(RESTART, NetworkError("partial content (HTTP 206) that does not continue "
                                                   "the same object; starting over"))
            return "ab", total
        if self.have:
            self.http.log.debug(f"{shown_url(self.url, query=False)}: the object changed or no resume "
                                "support; starting over")
        self.have = 0
        self.validator = None
        for name in (b"etag", b"last-modified"):
            value = raw_header(response, name)
            if value:
                # A weak ETag cannot validate a byte range (RFC 9110 13.1.5); nor Last-Modified behind it.
                self.validator = None if value.startswith(b"W/") else (name, value)
                break
        self.length = length if decoder is None else None
        return "wb", None

    def stream(self, response: Any, decoder: Decoder | None, mode: str, deadline: float) -> int:
        """Copy the body (decoded when it came compressed) into the temp file; the raw bytes read."""
        raw = 0
        cancelled = self.http.cancelled
        try:
            with open(self.tmp, mode) as handle:
                for chunk in self.http.read(response, deadline):  # as received: a cut keeps every byte that came
                    raw += len(chunk)
                    for data in (decoder.pieces(chunk) if decoder is not None else (chunk,)):
                        self.keep(handle, data)
                    if cancelled.is_set():
                        raise Cancelled("cancelled")
                if decoder is not None:
                    self.keep(handle, decoder.finish())
        except Undecodable as exc:
            self.have = 0
            raise ApiError(response.status_code, str(exc)) from None
        except BaseException:
            if decoder is not None:
                self.have = 0  # decoded bytes cannot be resumed with a Range of encoded ones
            raise
        return raw

    def keep(self, handle: Any, data: bytes) -> None:
        if data:
            handle.write(data)
            self.have += len(data)
            if self.on_bytes:
                self.on_bytes(len(data))
