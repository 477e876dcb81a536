"""What a request can fail with once it is handed to a connection.

The classes and their names are httpcore's (``ConnectError``, ``ReadTimeout``,
``RemoteProtocolError`` ...), and so is every message, so that what a user reads
does not depend on the path a request took.  They are our own classes because
a direct connection (:mod:`._streams`, :mod:`._h1`) never imports httpcore: it
costs ~60 ms at every start (h11, ssl, logging) that a plain-HTTP command does
not need.  Requests through a proxy run in httpcore's proxy pools
(:mod:`._bridge`), whose errors are turned into these at the one boundary.
"""

from __future__ import annotations


class TransportError(Exception):
    """Any failure of the wire."""


class NetworkError(TransportError):
    pass


class ConnectError(NetworkError):
    pass


class ReadError(NetworkError):
    pass


class WriteError(NetworkError):
    pass


class CloseError(NetworkError):
    pass


class TimeoutException(TransportError):
    pass


class ConnectTimeout(TimeoutException):
    pass


class ReadTimeout(TimeoutException):
    pass


class WriteTimeout(TimeoutException):
    pass


class PoolTimeout(TimeoutException):
    pass


class ProtocolError(TransportError):
    pass


class RemoteProtocolError(ProtocolError):
    pass


class LocalProtocolError(ProtocolError):
    pass


class ProxyError(TransportError):
    pass


class UnsupportedProtocol(TransportError):
    pass


class ConnectionNotAvailable(Exception):
    """A connection asked for a second request while it serves one (never leaves the pool)."""


# What ``except`` catches around a request: every failure of the wire, direct or proxied.
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (TransportError,)

# The unsent ones: the request never left, so it may be sent again whatever its method.
UNSENT_ERRORS: tuple[type[BaseException], ...] = (ConnectError, ConnectTimeout, PoolTimeout, ProxyError)

_BY_NAME: dict[str, type[TransportError]] = {
    cls.__name__: cls for cls in (
        NetworkError, ConnectError, ReadError, WriteError, CloseError, TimeoutException, ConnectTimeout,
        ReadTimeout, WriteTimeout, PoolTimeout, ProtocolError, RemoteProtocolError, LocalProtocolError,
        ProxyError, UnsupportedProtocol)}


def translated(exc: BaseException) -> BaseException:
    """Ours for an exception of httpcore's hierarchy (by its public class names, most
    specific first); any other exception as it is."""
    if isinstance(exc, TransportError):
        return exc
    for cls in type(exc).__mro__:
        ours = _BY_NAME.get(cls.__name__)
        if ours is not None and cls.__module__.startswith("httpcore"):
            return ours(*exc.args)
    return exc
