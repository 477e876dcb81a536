"""Characters that must never reach a terminal or a file name as they are.

Controls (Unicode category Cc: C0, DEL, C1) drive terminals.  Format characters
(category Cf: the bidi overrides and isolates U+202A-U+202E and U+2066-U+2069,
zero-width spaces and joiners, the byte-order mark, tag characters) and the line
and paragraph separators (Zl, Zp) display as nothing or reorder what follows, so
a name from a server can hide part of itself (``report<U+202E>dm.exe`` reads
``reportexe.md``) or make two different names look the same.  Lone surrogates
(Cs) cannot be written as UTF-8 at all.

Terminal text escapes them (``\\x1b``, ``\\u202e``, ``\\U000e0001``: what Python's
``repr`` shows); file names percent-encode their UTF-8 bytes (``%E2%80%AE``).
"""

from __future__ import annotations

import unicodedata

HIDING_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def is_hiding(char: str) -> bool:
    """Whether ``char`` (one character) controls, hides or reorders text instead of showing."""
    return unicodedata.category(char) in HIDING_CATEGORIES


def escaped(char: str) -> str:
    """``char`` as a visible escape: ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def percent_encoded(char: str) -> str:
    """``char`` as the percent-encoded bytes of its UTF-8 form (``/`` -> ``%2F``, U+202E ->
    ``%E2%80%AE``): one code for every character, so that distinct names stay distinct."""
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


class EscapeTable(dict):
    """A ``str.translate`` table: its own entries, and every hiding character escaped.

    The Unicode database is asked once per distinct character (on first sight, then
    remembered), so that start-up never walks all of Unicode and text that is mostly
    ASCII costs a dictionary lookup per character, as a plain table does.
    """

    def __missing__(self, code: int) -> str:
        char = chr(code)
        value = escaped(char) if is_hiding(char) else char
        self[code] = value
        return value
