"""Talking to a backend: one HTTP client per service (``client.Http``), one retry policy
(``retry``), TLS trust, response decoding with its limits, resumable downloads.

It knows nothing of the table: a request is a method, a path, a query and a body.
This package imports only ``benchloop.base``.
"""
