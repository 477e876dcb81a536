"""JSON text as docs/contract.md 3.1 formats it, written piecewise when it is big.

The format: 2-space indent (or compact ``,``/``:`` separators with --no-pretty),
non-ASCII literal, insertion key order, one trailing newline: ``json.dumps``'s
bytes.  A big value (a listing of more than ``LONG`` items, or a document
holding one a level or two down) is never built as one string: its
outer levels are written structure by structure and each item is encoded on
its own, then indented for its depth.  json.dumps indents a nested value the
same way (a JSON string never holds a raw newline), so the bytes are the same;
the property tests compare the two.  One deliberate difference: a lone surrogate,
which UTF-8 cannot carry, is written as its ``\\uXXXX`` escape (json.dumps with
``ensure_ascii=False`` leaves it raw, and printing or saving that text fails).

Speed: the stdlib's pretty encoder is pure Python (``indent`` never uses its C
encoder): 3.5 ms for a 90 KB trajectory.  When orjson is installed (a default
dependency wherever it has wheels, see pyproject.toml) it writes the text, ~50x
faster, and reads answers (:func:`loads`, ~3x faster); its bytes are json.dumps's
for every value it takes as json.dumps does.  What it takes differently goes the
stdlib way, so the text never depends on whether orjson is there
(tests/unit/base/test_jsontext_fast.py compares the two paths): integers beyond 64 bits
(orjson refuses to write them and reads them as floats), NaN and infinities
(written as ``null`` by orjson, refused by its reader), floats below 1e-4 (its
``0.00001``, ``1e-7`` against Python's ``1e-05``, ``1e-07``), lone surrogates,
keys that are not strings, and any type json.dumps would not write.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import operator
import re
from collections.abc import Iterator
from typing import Any, TextIO

LONG = 2000  # a list longer than this is written item by item
_DEPTH = 2  # how far down a document is searched for a big value
_BATCH = 1 << 16  # characters collected before one write
_ITEMS = 200  # a listing's items encoded together


# A lone surrogate (a backend may send "\\ud800") has no UTF-8 form: it is written as the
# escape it came as, so the text can be printed and saved and reads back the same.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


_orjson: Any = None  # the module once imported (False: not installed)
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))  # every digit a 0, all else a space
_LONG_NUMBER = b"0" * 19  # 19 digits in a row (after _DIGITS): maybe an integer beyond 64 bits


def fast() -> Any:
    """orjson when installed (imported at the first use), else None."""
    global _orjson
    if _orjson is None:
        try:
            import orjson
        except ImportError:
            _orjson = False
        else:
            _orjson = orjson
    return _orjson or None


def loads(content: bytes | str) -> Any:
    """Parse JSON text as ``json.loads`` does (the same value, the same errors), through orjson
    when it is installed and reads it the same: never for text with 19 digits in a row (an
    integer beyond 64 bits, which orjson reads as a float), and the stdlib again for what orjson
    refuses (NaN, a lone surrogate escape, UTF-16, too deep a nesting...)."""
    orjson = fast()
    if orjson is not None:
        raw = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
        if _LONG_NUMBER not in raw.translate(_DIGITS):
            try:
                return orjson.loads(raw)
            except orjson.JSONDecodeError:
                pass
    return json.loads(content)


_PLAIN = frozenset({str, int, bool, type(None)})  # the types orjson writes as json.dumps does
_CONTAINERS = frozenset({dict, list, tuple})


def _odd_floats(value: Any) -> bool:
    """Whether ``value`` holds a float orjson writes otherwise than json.dumps (not finite, or
    below 1e-4 in magnitude), or anything this walk does not know (then: the stdlib).  The
    values of each list or object are sorted by type in C (``map(type, ...)``): a loop in
    Python runs per container, not per value (a page of rows is 1,000 objects)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            values: Any = item.values()
        elif kind is list or kind is tuple:
            values = item
        else:
            values = (item,)
        kinds = set(map(type, values))
        if kinds <= _PLAIN:
            continue
        if float in kinds:  # its floats, then each finite and 0 or at least 1e-4 in size: in C
            floats = list(itertools.compress(values, map(operator.is_, map(type, values), itertools.repeat(float))))
            if not all(map(math.isfinite, floats)) or min(map(abs, filter(None, floats)), default=1.0) < 1e-4:
                return True
        if not kinds <= _PLAIN | _CONTAINERS | {float}:
            return True  # a subclass: json.dumps decides
        if kinds & _CONTAINERS:
            stack.extend(v for v in values if type(v) in _CONTAINERS)
    return False


# A digit before ``e-`` (a float's exponent, ``1e-7``) is ``0e-`` once every digit is a 0 and every
# other byte but ``e`` and ``-`` a space: found by two C scans, not a regular expression (~30x slower).
_EXPONENT = bytes(48 if 48 <= b <= 57 else b if b in b"e-" else 32 for b in range(256))


def _fast_text(value: Any, pretty: bool) -> str | None:
    """orjson's text of ``value`` when it is json.dumps's, else None."""
    orjson = fast()
    if orjson is None:
        return None
    option = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    try:
        out = orjson.dumps(value, option=option | orjson.OPT_INDENT_2 if pretty else option)
    except TypeError:  # orjson.JSONEncodeError: a big integer, a lone surrogate, a key not a string...
        return None
    if _suspect(out) and _odd_floats(value):
        return None
    return out.decode("utf-8")


def _suspect(out: bytes) -> bool:
    """Whether orjson's text may differ from json.dumps's: NaN and infinities come out as
    ``null``, floats below 1e-4 in another notation (``0.00001``, ``1e-7``); only then is the
    value looked at closer (text such as ``swe-bench`` is no exponent)."""
    return b"null" in out or b"0.0000" in out or (b"e-" in out and b"0e-" in out.translate(_EXPONENT))


def lines(values: list[Any]) -> str:
    """Each value's compact text (:func:`encode`) and a newline: ``--output jsonl``'s lines
    of a page of rows, encoded by orjson in one call each and checked once for the page."""
    orjson = fast()
    if orjson is not None and values:
        dump = functools.partial(orjson.dumps, option=orjson.OPT_PASSTHROUGH_DATACLASS
                                 | orjson.OPT_PASSTHROUGH_DATETIME)
        try:
            out = b"\n".join(map(dump, values))
        except TypeError:  # a big integer, a lone surrogate...: each value on its own below
            pass
        else:
            if not (_suspect(out) and _odd_floats(values)):
                return out.decode("utf-8") + "\n"
    return "".join([encode(value, False) + "\n" for value in values])


def stdlib_text(value: Any, pretty: bool) -> str:
    """``value``'s text through the standard library's encoder (:func:`encode` without orjson)."""
    if pretty:
        out = json.dumps(value, indent=2, ensure_ascii=False)
    else:
        out = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _escape_surrogates(out)


def _escape_surrogates(out: str) -> str:
    if out.isascii() or not _LONE_SURROGATE.search(out):  # isascii() is a flag: no scan
        return out
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def encode(value: Any, pretty: bool) -> str:
    """``value``'s JSON text, without the newline (pretty: indented)."""
    text = _fast_text(value, pretty)
    return text if text is not None else stdlib_text(value, pretty)


def dumps(value: Any, pretty: bool = True) -> str:
    """The whole document as one string (small values)."""
    return encode(value, pretty) + "\n"


def is_big(value: Any, depth: int = _DEPTH) -> bool:
    """A long listing, or an object holding one within ``depth`` levels."""
    if isinstance(value, list):
        return len(value) > LONG
    if isinstance(value, dict) and depth > 0:
        return any(is_big(v, depth - 1) for v in value.values() if isinstance(v, (dict, list)))
    return False


def chunks(value: Any, pretty: bool, level: int = 0, whole: bool = False) -> Iterator[str]:
    """Pieces of ``value``'s text at nesting ``level``; joined, they are json.dumps's text with
    every line after the first indented by ``level`` steps.  ``whole``: write the outer list piece
    by piece even when it is short (its elements may hold a long listing)."""
    pad = "\n" + "  " * level if pretty else ""
    if isinstance(value, dict) and is_big(value) and all(isinstance(k, str) for k in value):
        yield "{"
        for n, (key, item) in enumerate(value.items()):
            yield ("," if n else "") + (pad + "  " if pretty else "") + encode(key, False)
            yield ": " if pretty else ":"
            yield from chunks(item, pretty, level + 1)
        yield pad + "}"
    elif isinstance(value, list) and (whole or is_big(value)):
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
