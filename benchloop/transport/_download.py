"""Downloads: redirects followed by hand, a temp file, resume after a cut.

Redirects are followed here, not by the library, so the API key is attached
only while the URL stays on the configured origin, never over a scheme
downgrade; a redirect to a login page is an authentication failure.  The body
goes to a temp file that becomes the destination only when complete and of
the announced length.  After a cut, the next attempt asks for the rest with
``Range`` and ``If-Range`` (the first answer's strong ``ETag``, else its
``Last-Modified``) and appends only a 206 that continues the same object: its
``Content-Range`` starts where the file stops, its total is the length the
first answer announced, and it carries the validator that was sent.  Anything
else starts over.  A compressed body (asked for ``identity``, got gzip anyway)
is decoded: the file holds the object's bytes.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from ..base.errors import ApiError, AuthError, Cancelled, NetworkError
from ._decoding import Decoder, Undecodable, declared_length, decoder_for, error_text
from ._streams import TRANSPORT_ERRORS, Deadline
from .retry import AUTH, RESTART, SENT, Failed, classify_status, classify_transport, retry_after
from .slots import slot
from .urls import is_login_url, same_origin, scheme_of, shown_url, with_query

if TYPE_CHECKING:
    from ._pool import Answer
    from .client import Http

MAX_REDIRECTS = 10
DRAIN = 65536  # an unread rest up to this size is read so that its connection can be kept
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


def release(answer: Answer) -> None:
    """Close an answer, reading a small unread rest first (a redirect, an error page) so that
    its connection goes back to the pool instead of being dropped."""
    try:
        if not answer.consumed:
            length = declared_length(answer.headers)
            if length is not None and length <= DRAIN:
                for _chunk in answer.iter_raw():
                    pass
    except Exception:  # noqa: BLE001 - a broken rest only costs the connection
        pass
    finally:
        answer.close()


def open_following(http: Http, url: str, headers: dict[str, str]) -> Answer:
    """Send a GET, following redirects by hand with the API key only on our origin."""
    for _hop in range(MAX_REDIRECTS):
        hop_headers = dict(headers)
        if http.api_key and same_origin(url, http.host):
            hop_headers[http.auth_header] = http.api_key
        answer = http.send("GET", url, hop_headers)
        if not answer.is_redirect:
            return answer
        release(answer)
        nxt = urljoin(url, answer.headers["location"])
        if is_login_url(nxt, http.login_hosts, http.host):
            raise Failed(AUTH, AuthError(f"redirected to a login page ({nxt.split('?')[0]}); "
                                         "the API key was not accepted"))
        if scheme_of(url) == "https" and scheme_of(nxt) != "https":
            raise ApiError(answer.status,
                           f"refusing redirect from https to {scheme_of(nxt) or 'an unknown scheme'}: {nxt}")
        url = nxt
    raise ApiError(310, "too many redirects")


class Download:
    """The attempts of one download into ``tmp``; ``have`` is what the temp file holds so far."""

    def __init__(self, http: Http, url: str, params: dict[str, Any] | None, tmp: str, on_bytes: Any, check: Any):
        self.http, self.url, self.tmp = http, with_query(url, params), tmp
        self.on_bytes, self.check = on_bytes, check
        self.have = 0
        self.validator: tuple[str, str] | None = None  # the first answer's ("etag" or "last-modified", value)
        self.length: int | None = None  # the whole object's length the first answer announced

    def run(self) -> int:
        self.http.policy.run("GET", lambda: shown_url(self.url.split("?")[0]), self.attempt)
        return os.path.getsize(self.tmp)

    def request_headers(self) -> dict[str, str]:
        headers = {"Accept": "*/*", "Accept-Encoding": "identity"}
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
        with slot(), Deadline(http.timeout):  # on the wire: one slot; the attempt within --timeout
            http.policy.check()  # once the slot is ours
            try:
                answer = open_following(http, self.url, headers)
            except TRANSPORT_ERRORS as exc:
                raise http.failed(classify_transport(exc), exc) from None
            try:
                self.save(answer)
            except TRANSPORT_ERRORS as exc:
                raise http.failed(SENT, exc) from None
            finally:
                release(answer)

    def save(self, answer: Answer) -> None:
        """Write one answer's body to the temp file, or raise what the answer means."""
        self.refuse(answer)
        try:
            decoder = decoder_for(answer.headers)
        except Undecodable as exc:
            raise ApiError(answer.status, str(exc)) from None
        length = declared_length(answer.headers)  # this answer's raw (encoded) length
        mode, total = self.placement(answer, decoder, length)
        raw = self.stream(answer, decoder, mode)
        if length is not None and raw != length:
            if decoder is not None:
                self.have = 0
            raise Failed(SENT, NetworkError(f"body cut short: {raw} of {length} bytes"))
        if total is not None and self.have != total:
            raise Failed(SENT, NetworkError(f"body cut short: {self.have} of {total} bytes"))

    def refuse(self, answer: Answer) -> None:
        """Raise for an answer that carries no body to save (auth, the caller's check, errors)."""
        http, status = self.http, answer.status
        if status in http.auth_statuses:
            raise Failed(AUTH, AuthError(f"authentication failed (HTTP {status})"))
        if self.check is not None:
            self.check(status, answer.headers, answer.url)
        kind = RESTART if status == 416 and self.have else classify_status(status)
        if kind is None and status < 400:
            return
        error = ApiError(status, error_text(answer.iter_raw(), answer.headers, TRANSPORT_ERRORS, http.api_key))
        if kind == RESTART:
            self.have = 0  # our partial file is useless: start over
        if kind is None:
            raise error
        raise Failed(kind, error, retry_after(answer.headers.get("retry-after")))

    def continues(self, answer: Answer, decoder: Decoder | None) -> int | None:
        """The whole length, when a 206 continues the same object where our file stops; else None."""
        match = _CONTENT_RANGE.match(answer.headers.get("content-range", ""))
        if decoder is not None or not match or not self.have or int(match.group(1)) != self.have:
            return None
        if match.group(3) == "*" or int(match.group(3)) != self.length:
            return None  # another object: its total is not the length announced first
        if self.validator is not None and answer.headers.get(self.validator[0]) != self.validator[1]:
            return None  # the server ignored If-Range: these bytes are of another version
        return int(match.group(3))

    def placement(self, answer: Answer, decoder: Decoder | None, length: int | None) -> tuple[str, int | None]:
        """``(file mode, whole length)``: append a 206 that continues the same object, else start over."""
        if answer.status == 206:
            total = self.continues(answer, decoder)
            if total is None:
                # Never glue partial content of another start or another object to what we
                # have: drop that and ask again without Range.
                self.have = 0
                raise Failed(RESTART, NetworkError("partial content (HTTP 206) that does not continue "
                                                   "the same object; starting over"))
            return "ab", total
        if self.have:
            self.http.log.debug(f"{self.url.split('?')[0]}: the object changed or no resume support; "
                                "starting over")
        self.have = 0
        self.validator = None
        for name in ("etag", "last-modified"):
            value = answer.headers.get(name)
            if value:
                # A weak ETag cannot validate a byte range (RFC 9110 13.1.5); nor Last-Modified behind it.
                self.validator = None if value.startswith("W/") else (name, value)
                break
        self.length = length if decoder is None else None
        return "wb", None

    def stream(self, answer: Answer, decoder: Decoder | None, mode: str) -> int:
        """Copy the body (decoded when it came compressed) into the temp file; the raw bytes read."""
        raw = 0
        cancelled = self.http.cancelled
        try:
            with open(self.tmp, mode) as handle:
                for chunk in answer.iter_raw():  # as received: a cut keeps every byte that came
                    raw += len(chunk)
                    for data in (decoder.pieces(chunk) if decoder is not None else (chunk,)):
                        self.keep(handle, data)
                    if cancelled.is_set():
                        raise Cancelled("cancelled")
                if decoder is not None:
                    self.keep(handle, decoder.finish())
        except Undecodable as exc:
            self.have = 0
            raise ApiError(answer.status, str(exc)) from None
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
