"""Output files: atomic writes and safe local paths (JSON text itself: ``jsontext``).

Files are written atomically: a temp file in the destination directory, then
``os.replace``.  A crash therefore never leaves a truncated file at a final
path, and ``--skip-existing`` can trust any file it finds.  Every file gets
the same permissions (0666 minus the umask), whether or not it went through a
temp file.

Ids and server-supplied names become path components through
``safe_component``: separators, '%', controls and the characters that hide or
reorder text (bidi overrides, zero-width ones: ``hiding.py``) are percent-encoded
(their UTF-8 bytes) and '.'/'..' are escaped, so no id can climb out of the
output root or pass for another name.  ``join_under`` checks the final path once more.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import jsontext
from .errors import BenchloopError, Cancelled
from .hiding import is_hiding, percent_encoded

_UNSAFE = re.compile(r"[/\\\x00-\x1f\x7f%]")
MAX_COMPONENT_BYTES = 200


def safe_component(value: str, encode: bool = True) -> str:
    """Make one id or name usable as a single path component.

    ``encode=False`` only caps the length (for names that are already quoted).  A name over
    ``MAX_COMPONENT_BYTES`` keeps its beginning and its extension, with a hash of the whole
    name between them (distinct names stay distinct): ``<120 bytes>~<16 hex>.html``.
    """
    if encode and ("%" in value or _UNSAFE.search(value)):
        value = _UNSAFE.sub(lambda m: percent_encoded(m.group()), value)
    if encode and not value.isascii():
        # Controls, format characters (bidi, zero-width) and separators, as their UTF-8 bytes.
        value = "".join(percent_encoded(c) if is_hiding(c) else c for c in value)
    if value in ("", ".", ".."):
        value = value.replace(".", "%2E") or "%00"
    if len(value.encode("utf-8")) > MAX_COMPONENT_BYTES:
        import hashlib  # rare (a name over the limit): no OpenSSL load at every start

        digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
        suffix = _suffix(value)  # a page stays a page: the shortening keeps ``.html``
        head = value[:len(value) - len(suffix)]
        value = head.encode("utf-8")[:120].decode("utf-8", "ignore") + "~" + digest + suffix
    return value


_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}(\.[A-Za-z0-9]{1,10})?$")


def _suffix(value: str) -> str:
    """The extension a shortened name keeps (``.html``, ``.tar.gz``; at most 21 characters)."""
    found = _SUFFIX.search(value)
    return found.group() if found and found.start() > 0 else ""


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
    real = os.path.realpath(path) if _existing_link(path) else os.path.join(real_head, tail)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise ValueError(f"refusing to write outside the output root: {relative!r}")
    return path


def _existing_link(path: str) -> bool:
    """Whether ``path`` is a symlink (one ``lstat``, which also refuses a FIFO, socket or device
    there before anything is fetched for it)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    try:
        _refuse_mode(mode, path)
    except NotRegular as exc:
        raise local_error(exc, path) from None  # a file error of that path, as from the write itself
    return stat.S_ISLNK(mode)


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


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW  # O_EXCL never follows a symlink either
# Temp names: ``.<name>.%tmp-<16 hex>.<tmp|part>``.  The token is random, so no server-chosen
# name can predict it, and ``%t`` never occurs in a name ``safe_component`` or ``quote`` made
# (a ``%`` there is always followed by two upper-case hex digits): an artifact named like a temp
# file is never taken for one.
TEMP_NAME = re.compile(r"^\..*\.%tmp-[0-9a-f]{16}\.(tmp|part)$")
_random = __import__("random").Random(os.urandom(16))
_random_lock = threading.Lock()
_swept: set[str] = set()
_swept_lock = threading.Lock()
_live: set[str] = set()  # temp files open right now (removed by ``remove_live_temps`` on a forced exit)
_live_dirs: set[str] = set()  # staging directories in use right now (``staging_dir``)
_live_lock = threading.Lock()
FATAL_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, getattr(errno, "EDQUOT", errno.ENOSPC)})
_REASONS = {
    errno.ENOSPC: "no space left on device",
    errno.EROFS: "read-only file system",
    getattr(errno, "EDQUOT", -1): "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTDIR: "a component of the path is a file, not a directory",
    errno.EISDIR: "it is a directory",
    errno.ENAMETOOLONG: "file name too long",
    errno.EEXIST: "it exists and is not a regular file",
}


class LocalFileError(BenchloopError):
    """A local file could not be written: a failure of the id (or entry) that wanted it."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"cannot write {path}: {reason}")
        self.path = path


class NoRoomError(Cancelled):
    """A write failed in a way every further write will too (disk full, read-only file
    system): the command stops (a ``Cancelled``, so every handler lets it through)."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"cannot write {path}: {reason}; stopped, every further write would fail too")
        self.path = path


def local_error(exc: OSError, path: str | None = None) -> BenchloopError:
    """The error of one local file operation, naming the path; ``NoRoomError`` when no write can
    succeed any more."""
    if isinstance(exc, BenchloopError):
        return exc
    where = path or exc.filename or "a local file"
    if isinstance(exc, (NotRegular, NotOurs)):
        reason = exc.strerror or "not a regular file"
    else:
        reason = _REASONS.get(exc.errno or 0) or exc.strerror or str(exc) or type(exc).__name__
    if exc.errno in FATAL_ERRNOS:
        return NoRoomError(str(where), reason)
    return LocalFileError(str(where), reason)


class NotRegular(OSError):
    """A FIFO, socket or device where a file is to be written: refused, never opened."""


class NotOurs(OSError):
    """Where a file the user named is to be written: a symlink or special file (refused), or a
    directory that does not exist (not made)."""


def _refuse_special(path: str) -> None:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    _refuse_mode(mode, path)


def _refuse_mode(mode: int, path: str) -> None:
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
        raise NotRegular(errno.EEXIST, "it exists and is not a regular file (a FIFO, socket or device); "
                         "refusing to write there", path)


def _token() -> str:
    with _random_lock:
        return f"{_random.getrandbits(64):016x}"


def _sweep(directory: str) -> None:
    """Remove the temp files of killed runs in ``directory`` (once per directory and process):
    names of the temp pattern, regular files, whose lock is free (their writer is gone).
    Without ``fcntl`` (Windows) the OS is the lock: a file another process still has open
    cannot be deleted there, so only the leftovers no process holds go."""
    fcntl = fcntl_or_none()
    if directory in _swept:  # as given: no getcwd() per file (the CLI never changes directory)
        return
    key = os.path.abspath(directory)
    with _swept_lock:
        known = key in _swept
        _swept.update((directory, key))
    if known:
        return
    try:
        names = [n for n in os.listdir(directory) if n.startswith(".") and TEMP_NAME.match(n)]
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        if fcntl is None:
            _remove_unheld(path)
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW)
        except OSError:
            continue
        try:
            here = os.fstat(fd)
            if not stat.S_ISREG(here.st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a live writer's file
            if _still_at(fd, path):
                os.unlink(path)
        except OSError:
            pass
        finally:
            os.close(fd)


def fcntl_or_none() -> Any:
    """The ``fcntl`` module, or None where the platform has none (Windows): every ``flock`` of
    bl (this module's and the config file's lock) goes through here, so a write never needs it."""
    try:
        import fcntl
    except ImportError:
        return None
    return fcntl


def _remove_unheld(path: str) -> None:
    """Without ``flock``: delete a leftover temp file unless a process still holds it open
    (Windows refuses to delete an open file) or it is not a regular file."""
    with _live_lock:
        if path in _live:  # this process's own writer (another thread)
            return
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
    except OSError:
        pass  # in use by a live writer, or gone already


def _still_at(fd: int, path: str) -> bool:
    try:
        here = os.lstat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (here.st_ino, here.st_dev) == (mine.st_ino, mine.st_dev)


def temp_beside(path: str, suffix: str = ".tmp", mode: int | None = None,
                new_dirs: bool = True) -> tuple[int, str]:
    """Create a hidden temp file next to ``path``: ``.<name>.%tmp-<random>.<suffix>``, created
    with ``O_EXCL`` (never an existing file, FIFO or symlink), locked, with its final
    permissions (``mode``, default 0666 minus the umask).

    The name is unpredictable, so no file the server names and no file of the user is ever
    opened, truncated or taken over.  Leftovers of a killed run (SIGKILL leaves no chance to
    clean up) are found by their pattern plus a free lock, the first time a process writes
    into their directory.  A FIFO, socket or device at ``path`` itself is refused by
    ``replacing``, just before the rename (``join_under`` refuses one before the download).
    A missing directory is created, unless ``new_dirs`` is false (a file the user named:
    its directory must exist).
    Where the platform has no ``flock`` (Windows) the file is not locked: the OS itself keeps
    a file open in one process from being deleted by another, which is all the sweep needs.
    """
    fcntl = fcntl_or_none()
    directory = os.path.dirname(path) or "."
    _sweep(directory)
    # A new file gets 0666 minus the umask from the kernel itself; an explicit mode is
    # applied exactly with fchmod (the umask would otherwise narrow it).
    final = 0o666 if mode is None else mode
    base = os.path.basename(path)[:60]
    for _ in range(100):
        tmp = os.path.join(directory, f".{base}.%tmp-{_token()}{suffix}")
        try:
            fd = os.open(tmp, _CREATE, final)
        except FileNotFoundError:
            if not new_dirs:
                raise NotOurs(errno.ENOENT, f"the directory {directory} does not exist", path) from None
            os.makedirs(directory, exist_ok=True)
            continue
        except FileExistsError:
            continue
        if fcntl is None:
            break
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if _still_at(fd, tmp):  # not swept between our create and our lock (by inode: NFS keeps
                break               # an unlinked open file's link count under another name)
        except OSError:
            pass
        os.close(fd)  # another process swept it between our create and our lock: a new name
    else:
        raise OSError(errno.EAGAIN, "cannot create a temp file", path)
    if mode is not None:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        else:  # Windows before Python 3.13: by name (only the read-only bit exists there)
            os.chmod(tmp, mode)
    with _live_lock:
        _live.add(tmp)
    return fd, tmp


def remove_live_temps() -> None:
    """Remove every temp file and staging directory still in use in this process (a forced
    exit after Ctrl-C, when workers blocked in a read could not clean up after themselves)."""
    import shutil

    # From a signal handler: the interrupted thread may hold the lock, and would never let go.
    held = _live_lock.acquire(timeout=0.5)
    try:
        paths = list(_live)
        _live.clear()
        dirs = list(_live_dirs)
        _live_dirs.clear()
    finally:
        if held:
            _live_lock.release()
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass
    for work in dirs:
        shutil.rmtree(work, ignore_errors=True)


STAGING_LOCK = ".lock"  # inside a staging directory: held (flock) by its owner for the directory's life
STALE_AFTER = 24 * 3600  # seconds without a change before a staging directory without a lock is stale


@contextmanager
def staging_dir(parent: str, prefix: str) -> Iterator[str]:
    """A hidden work directory ``<parent>/<prefix><pid>-XXXXXXXX`` (task archives, the group
    export), locked for its whole life and removed after; the stale ones of dead runs under
    ``parent`` are removed first (``remove_stale_dirs``).

    The lock is an ``flock`` on ``STAGING_LOCK`` inside the directory.  The kernel releases it
    when the owner dies, however it dies, and it is seen from every process that opens the
    file, in any PID namespace and, through NFS locks, on any host sharing the volume: so no
    run takes another's live directory for a dead one, which a PID in the name cannot tell
    (another namespace or host has other PIDs).  The lock file is created and locked under
    another name and renamed into place, so ``STAGING_LOCK`` never exists unlocked while its
    owner lives.
    """
    import shutil
    import tempfile

    remove_stale_dirs(parent, prefix)
    work = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent)
    with _live_lock:
        _live_dirs.add(work)
    lock = _lock_staging(work)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)  # still locked: no sweep takes it meanwhile
        with _live_lock:
            _live_dirs.discard(work)
        if lock is not None:
            os.close(lock)


def _lock_staging(work: str) -> int | None:
    """Lock ``work`` (its ``STAGING_LOCK``); the descriptor that holds the lock, or None where
    no lock can be taken (no ``fcntl``, a file system without locks): the directory then has no
    lock file and only the age rule of ``remove_stale_dirs`` applies to it."""
    fcntl = fcntl_or_none()
    if fcntl is None:
        return None
    pending = os.path.join(work, STAGING_LOCK + ".new")
    try:
        fd = os.open(pending, _CREATE, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(pending, os.path.join(work, STAGING_LOCK))
    except OSError:
        os.close(fd)
        try:
            os.unlink(pending)
        except OSError:
            pass
        return None
    return fd


def remove_stale_dirs(parent: str, prefix: str) -> None:
    """Remove the ``<parent>/<prefix><pid>-*`` staging directories of dead runs.

    A directory with a lock file is removed only when its lock can be taken (its owner is
    gone: the kernel released the lock), and it is removed while this process holds it.  A
    directory without one - made by a ``bl`` older than the lock, or on a file system
    without locks - is removed only when nothing in it has changed for ``STALE_AFTER``
    (a day: a live run writes all the time) and the PID in its name is no live process
    here.  Anything else (a lock held, a lock that cannot be asked, a platform without
    ``flock``) is kept: nothing is removed that is not shown to be stale.  A directory named
    with this process's PID is never asked: it is this run's own (two groups of one command
    share the export prefix), and on NFS, where flock is a POSIX lock held per process, this
    process would get its own lock and its ``close`` would release it.
    """
    fcntl = fcntl_or_none()
    if fcntl is None:  # Windows: no lock to ask, nothing is shown to be stale
        return
    import shutil

    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        pid = name[len(prefix):].split("-", 1)[0] if name.startswith(prefix) else ""
        path = os.path.join(parent, name)
        if not pid.isdigit() or int(pid) == os.getpid() or not _is_real_dir(path):
            continue
        try:
            fd = os.open(os.path.join(path, STAGING_LOCK), os.O_RDWR | os.O_NONBLOCK | _NOFOLLOW)  # NFS: RDWR
        except FileNotFoundError:
            if not _alive(int(pid)) and time.time() - _last_change(path) > STALE_AFTER:
                shutil.rmtree(path, ignore_errors=True)
            continue
        except OSError:
            continue  # not ours to open: cannot tell
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held by a live run, here or anywhere else the volume is shared
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)


def _is_real_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)  # never a symlink to somewhere else
    except OSError:
        return False


def _last_change(path: str) -> float:
    """The newest modification time in the tree under ``path`` (the directory's own included)."""
    newest = 0.0
    for top, dirs, files in os.walk(path):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            try:
                newest = max(newest, os.lstat(name).st_mtime)
            except OSError:
                continue
    return newest


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _mode_of(path: str) -> tuple[int | None, str | None]:
    """``path``'s own mode (``lstat``: a link is a link), None when nothing is there; or why it
    cannot be looked at."""
    try:
        return os.lstat(path).st_mode, None
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, _REASONS.get(exc.errno or 0) or exc.strerror or str(exc)


def user_file_problem(path: str) -> str | None:
    """Why a file the user named (``--report FILE``) cannot be written at ``path``, or None.

    Such a path is never replaced when it is a symbolic link (``/dev/stdout`` is one: as
    root, replacing it broke the container's stdout) or a FIFO, socket or device: it is
    refused, not written through, since whatever it points to is not ours to overwrite.
    Its directory must exist (a typo does not silently make directories).  A directory at
    ``path`` is left to the write, which names it.
    """
    mode, problem = _mode_of(path)
    if problem is not None:
        return problem
    if mode is not None and stat.S_ISLNK(mode):
        return "it is a symbolic link; refusing to replace it or write through it (name its target)"
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return "it exists and is not a regular file (a FIFO, socket or device); refusing to write there"
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        return f"the directory {directory} does not exist"
    return None


def user_dir_problem(path: str, parents: bool = False, links: bool = False) -> str | None:
    """Why the directory the user named for the files of an action (``--report-dir DIR``,
    ``bl view -o DIR/``) cannot take them, or None; a missing one is made by the writer.

    Something else there (a file, a FIFO, socket or device) is refused, and so is a symbolic
    link unless ``links`` (a link to a directory is then followed, as an output root is).  A
    missing directory's parent must exist, as a named file's directory must (a typo does not
    silently make directories), unless ``parents`` (made as well, as the output root is).
    """
    target = path.rstrip("/" + os.sep) or path  # "DIR/" is DIR; "/" stays
    mode, problem = _mode_of(target)
    if problem is not None:
        return problem
    if mode is not None and stat.S_ISLNK(mode):
        if not links:
            return "it is a symbolic link; refusing to write through it (name its target)"
        return None if os.path.isdir(target) else "it is a symbolic link to something that is not a directory"
    if mode is not None and stat.S_ISREG(mode):
        return "it is a file, not a directory"
    if mode is not None and not stat.S_ISDIR(mode):
        return "it exists and is not a directory (a FIFO, socket or device); refusing to write there"
    if mode is None and not parents:
        parent = os.path.dirname(target) or "."
        if not os.path.isdir(parent):
            return f"the directory {parent} does not exist"
    return None


@contextmanager
def replacing(path: str, suffix: str = ".tmp", mode: int | None = None, user_file: bool = False):
    """Yield ``(fd, tmp)`` of a temp file beside ``path`` (see ``temp_beside``); on
    success it replaces ``path``, on any failure it is removed.

    The descriptor belongs to this context: callers write through it but never
    close it.  It is closed only after the rename, so its lock covers the whole
    life of the temp name and no other writer can take the file over between
    the last write and the rename.  Without ``fcntl`` (Windows) there is no lock to
    keep, and a file open there cannot be renamed: it is closed just before the rename.
    ``user_file``: a file the user named
    (:func:`user_file_problem`, checked again just before the rename): no new directory,
    never a symlink or special file replaced.
    """
    try:
        fd, tmp = temp_beside(path, suffix, mode, new_dirs=not user_file)
    except OSError as exc:
        raise local_error(exc, path) from None
    open_fd: int | None = fd
    try:
        yield fd, tmp
        _refuse_special(path)
        problem = user_file_problem(path) if user_file else None
        if problem is not None:
            raise NotOurs(errno.EEXIST, problem, path)
        if fcntl_or_none() is None:  # Windows: an open file cannot be renamed, and no lock is held
            os.close(fd)
            open_fd = None
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise local_error(exc, path) from None
        raise
    finally:
        if open_fd is not None:
            os.close(open_fd)
        with _live_lock:
            _live.discard(tmp)


def atomic_write(path: str, data: bytes | str, mode: int | None = None, user_file: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (plain ``os.write`` calls: no buffered file
    object, which would cost three more system calls per file); ``user_file``: see
    :func:`replacing`."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, mode=mode, user_file=user_file) as (fd, _tmp):
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view):]


def atomic_write_stream(path: str, produce, user_file: bool = False) -> None:
    """Like ``atomic_write`` but ``produce(text_stream)`` writes the content piecewise."""
    with replacing(path, user_file=user_file) as (fd, _tmp), os.fdopen(
            fd, "w", encoding="utf-8", newline="\n", buffering=1 << 20, closefd=False) as handle:
        produce(handle)


def write_json_file(path: str, value: Any, pretty: bool = True) -> None:
    """A JSON file; a big document (a long listing) is encoded piecewise, so a
    100,000-job list never exists as one string; a small one in one go (faster)."""
    if not jsontext.is_big(value):
        atomic_write(path, jsontext.dumps(value, pretty))
        return
    atomic_write_stream(path, lambda out: jsontext.write(out, value, pretty))


def exists(path: str) -> bool:
    return Path(path).is_file()


def real_dirs(base: str, *names: str) -> str:
    """Make (where missing) the directories ``base/names[0]/names[1]/...`` and return the last,
    never through a symbolic link: each of ``names`` that exists must be a real directory.

    For the folders a command lays out inside a directory the user named (``--report-dir
    DIR``'s ``instances/<candidate>``): a symlink there (or a Windows junction) would make the
    writes land in whatever it points to, replacing files of the same names there.  It is
    refused, not replaced, with a ``NotOurs`` naming it (``local_error`` turns it into a file
    error of that path); a file there is refused too.  ``base`` itself is not looked at (the
    user named it; it was checked when the arguments were).  Each level is made with
    ``mkdir`` (never ``makedirs``, which follows links) and looked at with ``lstat``.
    """
    path = base
    for name in names:
        path = os.path.join(path, name)
        for _attempt in range(2):
            mode, problem = _mode_of(path)
            if problem is not None:
                raise NotOurs(errno.EACCES, problem, path)
            if mode is None:
                try:
                    os.mkdir(path)
                except FileExistsError:  # made meanwhile: looked at again
                    continue
                break
            junction = getattr(os.path, "isjunction", None)
            if stat.S_ISLNK(mode) or (junction is not None and junction(path)):
                raise NotOurs(errno.ELOOP, "it is a symbolic link; refusing to write through it", path)
            if not stat.S_ISDIR(mode):
                raise NotOurs(errno.ENOTDIR, "it exists and is not a directory", path)
            break
    return path


def size_of(path: str) -> int | None:
    """The size of the file at ``path`` in bytes, or None when it cannot be seen."""
    try:
        return os.stat(path).st_size
    except OSError:
        return None
