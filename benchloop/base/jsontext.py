"""JSON text as docs/contract.md 3.1 formats it, written piecewise when it is big.

The format: 2-space indent (or compact ``,``/``:`` separators with --no-pretty),
non-ASCII literal, insertion key order, one trailing newline: ``json.dumps``'s
bytes.  A big value (a listing of more than ``LONG`` items, a ``Spool``, or a
document holding one a level or two down) is never built as one string: its
outer levels are written structure by structure and each item is encoded on
its own, then indented for its depth.  json.dumps indents a nested value the
same way (a JSON string never holds a raw newline), so the bytes are the same;
the property tests compare the two.  One deliberate difference: a lone surrogate,
which UTF-8 cannot carry, is written as its ``\\uXXXX`` escape (json.dumps with
``ensure_ascii=False`` leaves it raw, and printing or saving that text fails).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TextIO

from .spool import Spool

LONG = 2000  # a list longer than this is written item by item
_DEPTH = 2  # how far down a document is searched for a big value
_BATCH = 1 << 16  # characters collected before one write
_ITEMS = 200  # a listing's items encoded together


# A lone surrogate (a backend may send "\\ud800") has no UTF-8 form: it is written as the
# escape it came as, so the text can be printed and saved and reads back the same.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _materialize(value: Any) -> Any:
    if isinstance(value, Spool):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode(value: Any, pretty: bool) -> str:
    """``value``'s JSON text, without the newline (pretty: indented)."""
    if pretty:
        out = json.dumps(value, indent=2, ensure_ascii=False, default=_materialize)
    else:
        out = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_materialize)
    if out.isascii() or not _LONE_SURROGATE.search(out):  # isascii() is a flag: no scan
        return out
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def dumps(value: Any, pretty: bool = True) -> str:
    """The whole document as one string (small values)."""
    return encode(value, pretty) + "\n"


def is_big(value: Any, depth: int = _DEPTH) -> bool:
    """A spooled or long listing, or an object holding one within ``depth`` levels."""
    if isinstance(value, Spool):
        return True
    if isinstance(value, list):
        return len(value) > LONG
    if isinstance(value, dict) and depth > 0:
        return any(is_big(v, depth - 1) for v in value.values() if isinstance(v, (dict, list, Spool)))
    return False


def chunks(value: Any, pretty: bool, level: int = 0, whole: bool = False) -> Iterator[str]:
    """Pieces of ``value``'s text at nesting ``level``; joined, they are json.dumps's text with
    every line after the first indented by ``level`` steps.  ``whole``: write the outer list piece
    by piece even when it is short (its elements may hold a spooled listing)."""
    pad = "\n" + "  " * level if pretty else ""
    if isinstance(value, dict) and is_big(value) and all(isinstance(k, str) for k in value):
        yield "{"
        for n, (key, item) in enumerate(value.items()):
            yield ("," if n else "") + (pad + "  " if pretty else "") + encode(key, False)
            yield ": " if pretty else ":"
            yield from chunks(item, pretty, level + 1)
        yield pad + "}"
    elif isinstance(value, Spool) or (isinstance(value, list) and (whole or is_big(value))):
        yield from _items(value, pretty, pad, level, whole)
    else:
        text = encode(value, pretty)
        yield text.replace("\n", pad) if level and pretty else text


def _items(values: Any, pretty: bool, pad: str, level: int, check: bool) -> Iterator[str]:
    """A list's text, its items encoded ``_ITEMS`` at a time (one encoder call for many small
    items is several times faster than one each); ``check``: an item may itself be big."""
    first = True
    batch: list[Any] = []
    for item in values:
        if check and is_big(item):
            if batch:
                yield _batch_text(batch, pretty, pad, first)
                first, batch = False, []
            yield ("[" if first else ",") + (pad + "  " if pretty else "")
            first = False
            yield from chunks(item, pretty, level + 1)
            continue
        batch.append(item)
        if len(batch) >= _ITEMS:
            yield _batch_text(batch, pretty, pad, first)
            first, batch = False, []
    if batch:
        yield _batch_text(batch, pretty, pad, first)
        first = False
    yield "[]" if first else pad + "]"


def _batch_text(batch: list[Any], pretty: bool, pad: str, first: bool) -> str:
    """Items as they stand inside their list: the text of ``batch`` as a list, without its
    brackets (pretty: ``"[\\n  A,\\n  B\\n]"`` -> ``"\\n  A,\\n  B"``, re-indented for its level)."""
    text = encode(batch, pretty)
    inner = text[1:-2].replace("\n", pad) if pretty else text[1:-1]
    return ("[" if first else ",") + inner


def write(stream: TextIO, value: Any, pretty: bool = True, whole: bool = False) -> None:
    """Write ``value``'s document and its newline, in batches of ``_BATCH`` characters."""
    batch: list[str] = []
    size = 0
    for piece in chunks(value, pretty, whole=whole):
        batch.append(piece)
        size += len(piece)
        if size >= _BATCH:
            stream.write("".join(batch))
            batch.clear()
            size = 0
    batch.append("\n")
    stream.write("".join(batch))


def write_json_array(stream: TextIO, elements: list[Any], pretty: bool = True) -> None:
    """Print one JSON array, element by element, without building one big string."""
    write(stream, elements, pretty, whole=True)
