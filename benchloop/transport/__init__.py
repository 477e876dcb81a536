"""Talking to a backend: one ``httpx.Client`` per service, and what httpx lacks.

Public: ``client`` (``Http``: every request, direct or through a proxy, through
httpx's public API), ``retry`` (the one retry policy), ``slots`` (requests in
flight per worker pool), ``urls`` (origins, the key's home, login pages, how
URLs are encoded and shown), ``deadline`` (a total deadline and a cancel
switch), ``decoding`` (bodies decoded within limits), ``download``
(redirects with the key kept home, temp files, resume).

It holds no HTTP parser, socket or TLS code of its own.  It knows nothing of
the table: a request is a method, a path, a query and a body.  This package
imports only ``benchloop.base``, ``benchloop.version`` and httpx (when the
first client is made).
"""
