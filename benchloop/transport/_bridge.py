"""Requests through a proxy: httpcore's proxy pools, under our deadlines and cancel switch.

httpcore speaks to HTTP, HTTPS (TLS in TLS included) and SOCKS proxies; we
give its pools a network backend of our own (``network_backend=``, the public
seam httpcore offers): httpcore's sync backend whose every connection obeys
the calling thread's deadline and is shut down by a cancel, like a direct one
(:mod:`._streams`).  What httpcore raises leaves this module as our own error
classes (:mod:`._errors`: the same names and messages).  Imported only when a
proxy rule matches a request: a direct request never loads httpcore.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

import httpcore

from ._errors import ReadTimeout, UnsupportedProtocol, translated
from ._streams import Switchboard, _past_deadline, overdue, shut, time_left
from ._wire import Place


def _overdue() -> BaseException:
    """Past the deadline, as httpcore's own timeout says it (inside httpcore's code)."""
    return httpcore.ReadTimeout(str(overdue()))


def _left(timeout: float | None) -> float | None:
    try:
        return time_left(timeout)
    except ReadTimeout:  # what time_left raises past the deadline
        raise _overdue() from None


class _Stream(httpcore.NetworkStream):
    """One of httpcore's connections: reads and writes get only the time left; a cancel ends them."""

    def __init__(self, inner: httpcore.NetworkStream, board: Switchboard):
        self._inner, self._board = inner, board

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._board.cancelled.is_set():
            raise httpcore.ReadError("cancelled")
        try:
            return self._inner.read(max_bytes, _left(timeout))
        except Exception:
            if _past_deadline():
                raise _overdue() from None
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self._board.cancelled.is_set():
            raise httpcore.WriteError("cancelled")
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._board.untrack(self)
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        try:
            self._inner = self._inner.start_tls(ssl_context, server_hostname, _left(timeout))
        except BaseException:
            self.close()  # as httpcore's own stream does when its handshake fails
            raise
        return self

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)

    def abort(self) -> None:
        shut(self._inner.get_extra_info("socket"))


class _Backend(httpcore.NetworkBackend):
    """httpcore's sync network backend whose connections are :class:`_Stream` s of one board."""

    def __init__(self, board: Switchboard):
        self._inner = httpcore.SyncBackend()
        self._board = board

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        inner = self._inner.connect_tcp(host, port, _left(timeout), local_address, socket_options)
        return self._board.track(_Stream(inner, self._board))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        inner = self._inner.connect_unix_socket(path, _left(timeout), socket_options)
        return self._board.track(_Stream(inner, self._board))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def proxy_pool(proxy: str, scheme: str, board: Switchboard, trust: Any, keepalive_expiry: float) -> Any:
    """httpcore's pool for ``proxy`` (http, https, socks5, socks5h), for ``scheme`` URLs."""
    parts = urlsplit(proxy)
    auth = (unquote(parts.username or ""), unquote(parts.password or "")) if parts.username else None
    bare = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    common: dict[str, Any] = dict(
        proxy_auth=auth, ssl_context=trust() if scheme == "https" else None, max_connections=None,
        max_keepalive_connections=None, keepalive_expiry=keepalive_expiry, network_backend=_Backend(board))
    if parts.scheme in ("http", "https"):
        return httpcore.HTTPProxy(bare, proxy_ssl_context=trust() if parts.scheme == "https" else None, **common)
    if parts.scheme in ("socks5", "socks5h"):
        try:
            return httpcore.SOCKSProxy(bare, **common)
        except ImportError:
            raise UnsupportedProtocol("a SOCKS proxy needs the socksio package") from None
    raise UnsupportedProtocol(f"unknown scheme for proxy URL {parts.scheme!r}")


class Proxied:
    """An answer through a proxy: ``status``, raw ``headers``, the body as it arrives."""

    def __init__(self, response: httpcore.Response):
        self._response = response
        self.status: int = response.status
        self.headers: list[tuple[bytes, bytes]] = response.headers

    @property
    def stream(self) -> Iterator[bytes]:
        try:
            yield from self._response.stream  # type: ignore[misc]
        except Exception as exc:
            _raise(exc)

    def close(self) -> None:
        try:
            self._response.close()
        except Exception as exc:
            _raise(exc)


def _raise(exc: Exception) -> NoReturn:
    ours = translated(exc)
    if ours is exc:
        raise exc
    raise ours from exc


def send(pool: Any, method: bytes, place: Place, target: bytes, headers: list[tuple[bytes, bytes]],
         content: bytes | None, timeout: float) -> Proxied:
    """One request through ``pool``; its answer with the body still to read."""
    # No body: an empty iterable, so that h11 is not handed an empty data event to frame.
    request = httpcore.Request(method, httpcore.URL(scheme=place.scheme.encode("ascii"),
                                                    host=place.host.encode("ascii"), port=place.port,
                                                    target=target),
                               headers=headers, content=() if content is None else content,
                               extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"),
                                                                    timeout)})
    try:
        return Proxied(pool.handle_request(request))
    except Exception as exc:
        _raise(exc)
