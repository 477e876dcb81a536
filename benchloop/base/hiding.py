"""Characters that must never reach a terminal or a file name as they are.

Controls (Unicode category Cc: C0, DEL, C1) drive terminals.  Format characters
(category Cf: the bidi overrides and isolates U+202A-U+202E and U+2066-U+2069,
zero-width spaces and joiners, the byte-order mark, tag characters) and the line
and paragraph separators (Zl, Zp) display as nothing or reorder what follows, so
a name from a server can hide part of itself (``report<U+202E>dm.exe`` reads
``reportexe.md``) or make two different names look the same.  Lone surrogates
(Cs) cannot be written as UTF-8 at all.

Terminal text escapes them (``\\x1b``, ``\\u202e``, ``\\U000e0001``: what Python's
``repr`` shows); file names percent-encode their UTF-8 bytes (``%E2%80%AE``).  JSON text
on a terminal writes them as JSON's own escapes (``\\u009b``, a surrogate pair beyond
U+FFFF), so it stays valid JSON holding the same strings.

The one policy, for every place that writes text a person reads (``EscapeTable`` with a
format's own notation and the few characters that are its structure):

* stderr lines (``log.py``): ``LINE``, every hiding character escaped but the tab;
* a value among others on one line (``--output text`` on a terminal): ``VALUE``, the tab
  and the line feed escaped too;
* JSON text a person may read: ``JSON_TEXT``, the line feeds of the layout kept
  (``--output json``/``jsonl`` on a terminal; the objects of ``--error-format json`` on
  stderr always, where every line is escaped);
* the flat formats (``table``, ``csv``, ``markdown``) and the YAML document name their own
  structure characters.

Off a terminal (a pipe, a file) a program reads: JSON and YAML keep their bytes, and
``--output text`` leaves out a line rather than write a value that would break it
(``BREAKS_LINES``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

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


def json_escaped(char: str) -> str:
    """``char`` as JSON escapes it: ``\\u009b``; beyond U+FFFF its UTF-16 surrogate pair."""
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def percent_encoded(char: str) -> str:
    """``char`` as the percent-encoded bytes of its UTF-8 form (``/`` -> ``%2F``, U+202E ->
    ``%E2%80%AE``): one code for every character, so that distinct names stay distinct."""
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))


class EscapeTable(dict):
    """A ``str.translate`` table: its own entries, and every hiding character escaped (by
    ``escape``: ``escaped`` unless the text has a notation of its own, as JSON has).

    The Unicode database is asked once per distinct character (on first sight, then
    remembered), so that start-up never walks all of Unicode and text that is mostly
    ASCII costs a dictionary lookup per character, as a plain table does.
    """

    def __init__(self, entries: Mapping[int, str] | None = None, escape: Callable[[str], str] = escaped):
        super().__init__(entries or {})
        self.escape = escape

    def __missing__(self, code: int) -> str:
        char = chr(code)
        value = self.escape(char) if is_hiding(char) else char
        self[code] = value
        return value


LINE = EscapeTable({0x09: "\t"})  # a line on stderr: the tab kept
VALUE = EscapeTable()  # one value of a line of values: the tab and the line feed escaped too
# JSON text as json.dumps writes it: a control character in a string is escaped already, so a raw
# line feed is the layout's; every other hiding character becomes its JSON escape.
JSON_TEXT = EscapeTable({0x0A: "\n"}, json_escaped)

# What ends a line or a field for some reader, or has no UTF-8 form: controls (C0, DEL, C1:
# NEL U+0085 and the FS/GS/RS separators break lines for Python's ``splitlines``), the line
# and paragraph separators, lone surrogates.
BREAKS_LINES = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")



def json_for_terminal(text: str) -> str:
    """JSON text with its hiding characters escaped (ASCII text has none but DEL: no scan)."""
    if text.isascii() and "\x7f" not in text:
        return text
    return text.translate(JSON_TEXT)


class JsonTerminal:
    """A terminal stream that writes each piece of JSON text through ``json_for_terminal``."""

    def __init__(self, stream: Any):
        self.stream = stream

    def write(self, text: str) -> int:
        return int(self.stream.write(json_for_terminal(text)))

def hides(text: str) -> bool:
    """Whether ``text`` holds a character outside ASCII that hides or reorders text (the ASCII
    controls are left to the caller: every format escapes or refuses them already)."""
    return not text.isascii() and any(map(is_hiding, text))


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal, where a person reads, rather than a pipe or a file."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False
