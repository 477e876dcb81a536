"""The items of one list of a big JSON document, read one at a time (``pull --sync``'s job list).

Why own code: ``json.load`` of a 10^6-job ``job_list.json`` (230 MB) builds every job as a
dict at once, ~1.5 GB, to keep two fields of each; the streaming parsers (ijson) are a
dependency for one reader of a file bl writes itself.  The stdlib's decoder already reads
one value at a time from a position (``JSONDecoder.raw_decode``, its C scanner): the
top-level object's members are walked here, the other members' values read whole (a
document's small fields: ``group_id``, ``total``), and the list's items are decoded one by
one from a buffer refilled ``CHUNK`` characters at a time, so memory holds the buffer and
one item whatever the file's length, and any JSON layout (pretty or compact) reads alike.

A value is taken only when what follows it is white space or punctuation (a number cut in
two, ``-2.`` of ``-2.5``, would decode as a shorter one): else it is read again with more
text; and a value that needs more text than the buffer
holds is retried with the buffer doubled (an item far larger than ``CHUNK`` costs a few
retries, not one per chunk).  Malformed text raises ``ValueError`` as ``json.load`` would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO

CHUNK = 1 << 20  # characters read at a time
_SPACE = " \t\n\r"
_AFTER = _SPACE + ",:]}"  # what may follow a whole value ("-2." may be the start of "-2.5")
_DECODER = json.JSONDecoder()


class MissingList(ValueError):
    """The document is not an object holding a list under the key asked for."""


class _Reader:
    def __init__(self, handle: TextIO):
        self.handle, self.buf, self.pos, self.eof = handle, "", 0, False

    def more(self, size: int) -> bool:
        """Read ``size`` more characters (the text read already dropped); False at the end."""
        if self.eof:
            return False
        text = self.handle.read(size)
        self.buf, self.pos = self.buf[self.pos:] + text, 0
        self.eof = not text
        return bool(text)

    def char(self) -> str:
        """The next character that is not white space ("" at the end), not consumed."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _SPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more(CHUNK):
                return ""

    def take(self, expected: str) -> str:
        found = self.char()
        if found not in expected:
            raise ValueError(f"expected {' or '.join(repr(c) for c in expected)} at character {self.pos}, "
                             f"found {found!r}" if found else f"expected {expected!r}: the text ends")
        self.pos += 1
        return found

    def value(self) -> Any:
        self.char()
        size = CHUNK
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                if self.eof:
                    raise
            else:
                if self.eof or (end < len(self.buf) and self.buf[end] in _AFTER):
                    self.pos = end
                    return value
            self.more(size)
            size *= 2


def items(handle: TextIO, key: str, others: dict[str, Any] | None = None) -> Iterator[Any]:
    """The items of the list under ``key`` of the JSON object ``handle`` holds, in order; a
    ``MissingList`` when the text is not an object or ``key`` is not a list of it, a
    ``ValueError`` when the text is not JSON (as far as it is read: the members after the
    list are read too, so a document cut short is found).  ``others`` receives the object's
    other members as they are read (those before the list by its first item)."""
    for _name, value in _walk(handle, key, "[", others):
        yield value


def members(handle: TextIO, key: str, others: dict[str, Any] | None = None) -> Iterator[tuple[str, Any]]:
    """The ``(name, value)`` members of the object under ``key`` of the JSON object ``handle``
    holds, in order, as :func:`items` reads a list's items (``MissingList`` when it is not an
    object)."""
    return _walk(handle, key, "{", others)


def _walk(handle: TextIO, key: str, kind: str, others: dict[str, Any] | None) -> Iterator[tuple[str, Any]]:
    what = "list" if kind == "[" else "object"
    close = "]" if kind == "[" else "}"
    reader = _Reader(handle)
    if reader.char() != "{":
        raise MissingList(f"the document is not an object with a {key!r} {what}")
    reader.take("{")
    found = False
    if reader.char() == "}":
        reader.take("}")
    else:
        while True:
            name = reader.value()
            if not isinstance(name, str):
                raise ValueError(f"a member's name is not a string: {name!r}")
            reader.take(":")
            if name == key and not found:
                if reader.char() != kind:
                    raise MissingList(f"{key!r} is not a {what}")
                found = True
                reader.take(kind)
                if reader.char() == close:
                    reader.take(close)
                else:
                    while True:
                        if kind == "{":
                            inner = reader.value()
                            if not isinstance(inner, str):
                                raise ValueError(f"a member's name is not a string: {inner!r}")
                            reader.take(":")
                            yield inner, reader.value()
                        else:
                            yield "", reader.value()
                        if reader.take("," + close) == close:
                            break
            else:
                value = reader.value()
                if others is not None:
                    others[name] = value
            if reader.take(",}") == "}":
                break
    if reader.char():
        raise ValueError(f"extra data after the document at character {reader.pos}")
    if not found:
        raise MissingList(f"the document has no {key!r} {what}")
