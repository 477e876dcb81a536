"""Shared low-level helpers, the ground floor: errors and exit codes, the stderr log,
atomic files and safe paths, JSON text and the listings that spill to disk, display widths, id
lists.

Nothing here imports another benchloop package.
"""
