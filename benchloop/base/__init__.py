"""Shared low-level helpers, the ground floor: errors and exit codes, the stderr log,
atomic files and safe paths, display widths, id lists.

Nothing here imports another benchloop package.
"""
