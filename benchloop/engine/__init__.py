"""The generic engine: run one action of the table over its ids.

``command`` is the top (one command over its ids, its output and exit code); below it
``compose`` (pull), ``archive`` (task ZIPs), ``pipeline`` (parts: request, scan,
fan-out, step), ``pagination``, ``waiter``, ``items``, ``transforms``, ``outcomes``
(the worker pool and the exit-code accounting), ``formats`` (how stdout is printed)
and ``steps/`` (the few named steps that no generic part can express).  Nothing here
names a resource.  It imports ``base``, ``table`` and ``transport``.
"""
