"""TLS trust: which certificates an ``https://`` host must chain to.

``--ca-bundle``, else ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi;
certificates and host names are always verified.  The context is made only
when the first ``https://`` connection needs it, and loads its trust store at
the first handshake: loading certifi's bundle costs ~25 ms, which a
plain-HTTP backend never pays.
"""

from __future__ import annotations

import os
import ssl
import threading
from typing import Any


def trust_store(ca_bundle: str | None) -> tuple[str | None, str | None]:
    """``(cafile, capath)``: ``--ca-bundle``, else SSL_CERT_FILE, else SSL_CERT_DIR, else none (certifi)."""
    cafile = ca_bundle or os.environ.get("SSL_CERT_FILE") or None
    capath = None if cafile else os.environ.get("SSL_CERT_DIR") or None
    return cafile, capath


class LazyTrust(ssl.SSLContext):
    """``ssl.create_default_context(cafile=..., capath=...)`` whose trust store is loaded at
    the first handshake rather than when it is made."""

    cafile: str | None = None
    capath: str | None = None
    loaded = False
    _lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self.loaded:
                return
            if self.capath:
                self.load_verify_locations(capath=self.capath)
            elif self.cafile:
                self.load_verify_locations(cafile=self.cafile)
            else:
                import certifi

                self.load_verify_locations(cafile=certifi.where())
            self.loaded = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> Any:
        if not self.loaded:
            self._load()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> Any:
        if not self.loaded:
            self._load()
        return super().wrap_bio(*args, **kwargs)


def make_trust(ca_bundle: str | None) -> ssl.SSLContext:
    """The client's TLS context: CERT_REQUIRED and check_hostname, HTTP/1.1 by ALPN."""
    context = LazyTrust(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname: always verified
    context.cafile, context.capath = trust_store(ca_bundle)
    context.set_alpn_protocols(["http/1.1"])
    return context
