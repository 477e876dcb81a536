"""The command line: one ordinary Cyclopts tree built from the table (``build``; the table's
commands in ``commands``, the built-in ones in ``builtin_commands``), run and turned into an
exit code by ``app``, with its usage errors (``errors``), ``--version`` (``fast_version``) and
the update notice.  Nothing below this package imports it.
"""
