"""Shared low-level helpers, the ground floor: errors and exit codes, the stderr log,
atomic files and safe paths, JSON text, the ids a walk has seen (on disk past a few
thousand), display widths, id lists.

Nothing here imports another benchloop package.
"""
