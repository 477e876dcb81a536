"""Output: JSON formatting, atomic files and safe local paths.

JSON follows CONTRACT.md 3.1: 2-space indent (or compact with --no-pretty),
non-ASCII literal, exactly one trailing newline, insertion key order.

Files are written atomically: a temp file in the destination directory, then
``os.replace``.  A crash therefore never leaves a truncated file at a final
path, and ``--skip-existing`` can trust any file it finds.  Every file gets
the same permissions (0666 minus the umask), whether or not it went through a
temp file.

Ids and server-supplied names become path components through
``safe_component``: separators, NUL and control characters are
percent-encoded and '.'/'..' are escaped, so no id can climb out of the output
root.  ``join_under`` checks the final path once more.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, TextIO

_UNSAFE = re.compile(r"[/\\\x00-\x1f\x7f%]")
MAX_COMPONENT_BYTES = 200


def dumps(value: Any, pretty: bool = True) -> str:
    if pretty:
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_json_array(stream: TextIO, elements: list[Any], pretty: bool = True) -> None:
    """Print one JSON array, element by element, without building one big string."""
    if not elements:
        stream.write("[]\n")
        return
    if not pretty:
        stream.write("[")
        for index, element in enumerate(elements):
            if index:
                stream.write(",")
            stream.write(json.dumps(element, ensure_ascii=False, separators=(",", ":")))
        stream.write("]\n")
        return
    stream.write("[\n")
    for index, element in enumerate(elements):
        text = json.dumps(element, indent=2, ensure_ascii=False)
        stream.write("  " + text.replace("\n", "\n  "))
        stream.write(",\n" if index < len(elements) - 1 else "\n")
    stream.write("]\n")


def safe_component(value: str) -> str:
    """Make one id or name usable as a single path component."""
    if "%" in value or _UNSAFE.search(value):
        value = _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", value)
    if value in ("", ".", ".."):
        value = value.replace(".", "%2E") or "%00"
    if len(value.encode("utf-8")) > MAX_COMPONENT_BYTES:
        digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
        value = value.encode("utf-8")[:120].decode("utf-8", "ignore") + "~" + digest
    return value


def join_under(root: str, relative: str) -> str:
    """Join ``relative`` (built from safe components) under ``root``, or refuse."""
    path = os.path.join(root, relative)
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root:
        raise ValueError(f"refusing to write outside the output root: {relative!r}")
    return path


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str, data: bytes | str) -> None:
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)[:60]}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_stream(path: str, produce) -> None:
    """Like ``atomic_write`` but ``produce(text_stream)`` writes the content piecewise."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)[:60]}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as handle:
            produce(handle)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json_file(path: str, value: Any, pretty: bool = True) -> None:
    """A JSON file, encoded piecewise: a 100,000-job list never exists as one string."""
    encoder = json.JSONEncoder(indent=2 if pretty else None, ensure_ascii=False,
                               separators=None if pretty else (",", ":"))

    def produce(out) -> None:
        for chunk in encoder.iterencode(value):
            out.write(chunk)
        out.write("\n")

    atomic_write_stream(path, produce)


def exists(path: str) -> bool:
    return Path(path).is_file()
