"""Output: JSON formatting, atomic files and safe local paths.

JSON follows docs/contract.md 3.1: 2-space indent (or compact with --no-pretty),
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
import itertools
import json
import os
import re
import threading
from contextlib import contextmanager
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


def safe_component(value: str, encode: bool = True) -> str:
    """Make one id or name usable as a single path component.

    ``encode=False`` only caps the length (for names that are already quoted).
    """
    if encode and ("%" in value or _UNSAFE.search(value)):
        value = _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", value)
    if value in ("", ".", ".."):
        value = value.replace(".", "%2E") or "%00"
    if len(value.encode("utf-8")) > MAX_COMPONENT_BYTES:
        digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
        value = value.encode("utf-8")[:120].decode("utf-8", "ignore") + "~" + digest
    return value


_REAL_ROOTS: dict[str, str] = {}
_REAL_DIRS: dict[str, str] = {}


def join_under(root: str, relative: str) -> str:
    """Join ``relative`` (built from safe components) under ``root``, or refuse.

    Components are already safe (see ``safe_component``); this is the second
    line of defence, so it only resolves what could move: the root (once per
    process), each existing directory on the way (once, when first seen) and
    the final name when it is a symlink.  A fan-out writing thousands of files
    into one directory pays one ``lstat`` per file, not one per path component.
    The trust assumption: nobody swaps a directory inside the output root for a
    symlink while ``bl`` runs (whoever can do that can also write the files).
    """
    parts = relative.replace(os.sep, "/").split("/")
    if os.path.isabs(relative) or any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"refusing to write outside the output root: {relative!r}")
    path = os.path.join(root, relative)
    real_root = _REAL_ROOTS.get(root)
    if real_root is None:
        real_root = _REAL_ROOTS[root] = os.path.realpath(root)
    head, tail = os.path.split(path)
    real_head = _REAL_DIRS.get(head)
    if real_head is None:
        real_head = os.path.realpath(head)
        if os.path.isdir(head):
            _REAL_DIRS[head] = real_head  # an existing directory: resolved for good
    real = os.path.realpath(path) if os.path.islink(path) else os.path.join(real_head, tail)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise ValueError(f"refusing to write outside the output root: {relative!r}")
    return path


def _umask_mode() -> int:
    """0666 minus the current umask.

    Read from /proc where possible: the portable way sets the umask to 0 for an
    instant, and a worker thread creating a file in that instant would make it
    world-writable.
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_SEQ = itertools.count()
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW  # O_EXCL never follows a symlink either


def _open_temp(tmp: str, mode: int) -> tuple[int, bool]:
    """``(fd, created)``: create ``tmp`` exclusively, or open the one already there (a
    leftover, or a file another writer is filling); retried while a concurrent writer
    renames it away or creates it between our two attempts."""
    for _ in range(100):
        try:
            return os.open(tmp, _CREATE, mode), True
        except FileNotFoundError:
            os.makedirs(os.path.dirname(tmp) or ".", exist_ok=True)
            continue
        except FileExistsError:
            pass
        try:
            return os.open(tmp, os.O_WRONLY | _NOFOLLOW), False
        except FileNotFoundError:
            continue  # renamed away by its writer just now: try to create it again
    raise OSError(f"cannot open a temp file beside {tmp!r}: it keeps appearing and disappearing")


def _still_at(fd: int, path: str) -> bool:
    try:
        here = os.lstat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (here.st_ino, here.st_dev) == (mine.st_ino, mine.st_dev)


def temp_beside(path: str, suffix: str = ".tmp", mode: int | None = None) -> tuple[int, str]:
    """Open a hidden temp file next to ``path``: ``.<name><suffix>``, locked, with
    its final permissions (``mode``, default 0666 minus the umask).

    The name is fixed per destination so that the leftover of a killed run
    (SIGKILL leaves no chance to clean up) is simply reused by the next run
    instead of piling up.  An exclusive ``flock`` tells a leftover (lock free:
    its writer is dead) from a file another live writer is filling (locked);
    in that case a unique name is used instead.  The common case - no
    leftover - costs one ``open`` and one ``flock``.
    """
    import fcntl

    directory = os.path.dirname(path) or "."
    tmp = os.path.join(directory, f".{os.path.basename(path)[:60]}{suffix}")
    # A new file gets 0666 minus the umask from the kernel itself; an explicit mode is
    # applied exactly with fchmod (the umask would otherwise narrow it).
    final = 0o666 if mode is None else mode
    for _ in range(100):
        fd, fresh = _open_temp(tmp, final)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live writer fills that one: take a name of our own
            os.close(fd)
            tmp = f"{tmp}.{os.getpid()}-{threading.get_ident() % 100000}-{next(_SEQ)}"
            fd, fresh = os.open(tmp, _CREATE, final), True
            break
        if fresh or _still_at(fd, tmp):
            break
        # We opened another writer's temp file just before it was renamed to its
        # destination: that inode is now a finished file, never truncate it.
        os.close(fd)
    else:
        raise OSError(f"cannot lock a temp file beside {path!r}")
    if not fresh:
        os.ftruncate(fd, 0)  # a dead run's leftover: reuse it
    if mode is not None:
        os.fchmod(fd, mode)
    elif not fresh:
        os.fchmod(fd, _umask_mode())
    return fd, tmp


def remove_stale_dirs(parent: str, prefix: str) -> None:
    """Remove ``<parent>/<prefix><pid>-*`` work directories whose process is gone."""
    import shutil

    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix):
            continue
        pid = name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


@contextmanager
def replacing(path: str, suffix: str = ".tmp", mode: int | None = None):
    """Yield ``(fd, tmp)`` of a temp file beside ``path`` (see ``temp_beside``); on
    success it replaces ``path``, on any failure it is removed.

    The descriptor belongs to this context: callers write through it but never
    close it.  It is closed only after the rename, so its lock covers the whole
    life of the temp name and no other writer can take the file over between
    the last write and the rename.
    """
    fd, tmp = temp_beside(path, suffix, mode)
    try:
        yield fd, tmp
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes | str, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically (plain ``os.write`` calls: no buffered file
    object, which would cost three more system calls per file)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, mode=mode) as (fd, _tmp):
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view):]


def atomic_write_stream(path: str, produce) -> None:
    """Like ``atomic_write`` but ``produce(text_stream)`` writes the content piecewise."""
    with replacing(path) as (fd, _tmp), os.fdopen(fd, "w", encoding="utf-8", newline="\n",
                                                  buffering=1 << 20, closefd=False) as handle:
        produce(handle)


def _large(value: Any) -> bool:
    if isinstance(value, list):
        return len(value) > 2000
    return isinstance(value, dict) and any(isinstance(v, list) and len(v) > 2000 for v in value.values())


def write_json_file(path: str, value: Any, pretty: bool = True) -> None:
    """A JSON file; large collections are encoded piecewise (a 100,000-job list never
    exists as one string), small documents in one go (faster)."""
    if not _large(value):
        atomic_write(path, dumps(value, pretty))
        return
    encoder = json.JSONEncoder(indent=2 if pretty else None, ensure_ascii=False,
                               separators=None if pretty else (",", ":"))

    def produce(out) -> None:
        for chunk in encoder.iterencode(value):
            out.write(chunk)
        out.write("\n")

    atomic_write_stream(path, produce)


def exists(path: str) -> bool:
    return Path(path).is_file()
