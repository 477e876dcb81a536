"""The command line: the Cyclopts app (``app``), the table's commands (``commands``),
the built-in commands (``builtins``), help pages (``help``), shell completion and the
update notice.  Nothing below this package imports it.
"""
