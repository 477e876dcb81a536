"""Talking to a backend: one HTTP client per service.

Public: ``client`` (``Http``, the client), ``retry`` (the one retry policy),
``slots`` (requests in flight per worker pool), ``urls`` (origins, login
pages, how URLs are encoded and shown).  Private, one concern each: ``_pool``
(keep-alive connections and proxies), ``_wire`` (URLs in wire form), ``_h1``
(one HTTP/1.1 connection), ``_streams`` (sockets, deadlines and cancel),
``_errors`` (what the wire fails with), ``_bridge`` (httpcore's proxy pools),
``_proxies`` (the proxy environment), ``_trust`` (TLS), ``_decoding`` (bodies
and their limits), ``_download`` (redirects, temp files, resume).

It knows nothing of the table: a request is a method, a path, a query and a body.
This package imports only ``benchloop.base`` and ``benchloop.version`` (and
httpcore for proxies; httpx only to parse a URL out of the ordinary).
"""
