"""Background update notice, at most one index request per 24 hours.

The package index comes from configuration only: ``BENCHLOOP_INDEX_URL``,
``index_url`` in the config file's ``[profile]``, or pip's own configured
index (``PIP_INDEX_URL`` or ``index-url`` in a pip.conf).  With none, nothing
runs.  It is off with ``BENCHLOOP_NO_UPDATE_CHECK=1`` and whenever ``CI`` is
set.

The check never slows a command: a daemon thread asks the index (PEP 691 JSON
or the HTML simple page, 3 s timeout) while the command runs; the notice is
printed on stderr only if the answer is already there when the command ends,
so nothing is ever printed after ``bl`` exits.  The cache records failures
too, so an unreachable index is not asked again for 24 hours.

The index is hostile until proven otherwise: a version that is not a plain
version string (letters, digits, ``.+!_-``) gives no notice at all, so no
escape sequence reaches the terminal; the index URL is printed without its
credentials, and the cache (0600) keeps only a digest of it.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from ..version import __version__

PACKAGE = "benchloop-client"
INTERVAL = 24 * 3600
TIMEOUT = 3.0


def cache_file() -> Path:
    """In the user cache directory (platformdirs' rule: ``$XDG_CACHE_HOME/benchloop`` on Linux),
    whatever ``BENCHLOOP_CACHE_DIR`` says (that one is the compiled table's)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("benchloop", appauthor=False)) / "version-check.json"


def _pip_index() -> str | None:
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    candidates = [os.path.join(os.environ.get("VIRTUAL_ENV", ""), "pip.conf"),
                  os.path.expanduser("~/.config/pip/pip.conf"), os.path.expanduser("~/.pip/pip.conf"),
                  "/etc/pip.conf"]
    import configparser  # only when a check is due (rarely): not at every start

    for candidate in candidates:
        parser = configparser.ConfigParser()
        try:
            parser.read(candidate)
        except configparser.Error:
            continue
        if parser.has_option("global", "index-url"):
            return parser.get("global", "index-url")
    return None


def index_url(profile: dict) -> str | None:
    url = os.environ.get("BENCHLOOP_INDEX_URL") or profile.get("index_url") or _pip_index()
    return url.rstrip("/") if url else None


def enabled() -> bool:
    return not (os.environ.get("BENCHLOOP_NO_UPDATE_CHECK") or os.environ.get("CI"))


def version(text: str) -> Any:
    """``text`` as a ``packaging`` Version (PEP 440); None for what is not one."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text.strip())
    except InvalidVersion:
        return None


def newer(latest: str | None, current: str) -> bool:
    """Whether ``latest`` is a later release than ``current`` (a local label, ``+build``, is no
    later release of the same version)."""
    a, b = version(latest or ""), version(current)
    return a is not None and b is not None and version(a.public) > version(b.public)


def _versions(body: bytes, content_type: str) -> list[str]:
    if "json" in content_type:
        data = json.loads(body)
        if isinstance(data.get("versions"), list):
            return [str(v) for v in data["versions"]]
        names = [f.get("filename", "") for f in data.get("files", []) if isinstance(f, dict)]
    else:
        names = re.findall(r">([^<>]+)</a>", body.decode("utf-8", "replace"))
    stem = PACKAGE.replace("-", "_")
    found = []
    for name in names:
        match = re.match(rf"(?i){re.escape(stem)}-([^-]+?)(?:\.tar\.gz|\.zip|-)", name.replace("-client", "_client", 1))
        if match:
            found.append(match.group(1))
    return found


MAX_PAGE = 8 << 20  # an index page larger than this is not read to its end


def _credentials(index: str) -> tuple[str, str | None]:
    """``(index without user info, its Basic Authorization value)``: an index URL may carry
    ``user:password@`` (as pip allows); it becomes a header sent to that index's origin only."""
    import base64
    from urllib.parse import unquote

    scheme, sep, rest = index.partition("//")
    end = min((i for i in (rest.find(mark) for mark in "/?#") if i >= 0), default=len(rest))
    if not sep or "@" not in rest[:end]:
        return index, None
    userinfo, _, hostport = rest[:end].rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return f"{scheme}//{hostport}{rest[end:]}", f"Basic {token}"


class _TooBig(Exception):
    pass


def fetch_latest(index: str) -> str | None:
    import tempfile

    from ..base.log import Log
    from ..transport.client import Http  # every request of bl goes through it

    index, authorization = _credentials(index.rstrip("/"))
    kind: dict[str, str] = {}
    size = [0]

    def check(status: int, headers: Any, url: str) -> None:
        kind["type"] = str(headers.get("content-type", ""))

    def count(n: int) -> None:
        size[0] += n
        if size[0] > MAX_PAGE:
            raise _TooBig()

    http = Http(index, authorization, TIMEOUT, 0, 1, Log(quiet=True), auth_header="Authorization")
    try:
        with tempfile.TemporaryDirectory(prefix="bl-update-") as tmp:
            page = os.path.join(tmp, "page")
            http.download(f"{index}/{PACKAGE}/", page, check=check, on_bytes=count,
                          headers={"Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"})
            body = Path(page).read_bytes()
    finally:
        http.close()
    found = [(v, text) for text in _versions(body, kind.get("type", "")) if (v := version(text)) is not None]
    stable = [pair for pair in found if not pair[0].is_prerelease]
    return max(stable or found, key=lambda pair: pair[0], default=(None, None))[1]


_PLAIN_VERSION = re.compile(r"[0-9A-Za-z.+!_-]{1,64}")


def index_digest(index: str) -> str:
    """What the cache keeps of the index URL: a digest (the URL may carry credentials)."""
    import hashlib

    return "sha256:" + hashlib.sha256(index.encode("utf-8", "surrogatepass")).hexdigest()


def shown_index(index: str) -> str:
    """The index URL for a notice: any ``user:password@`` replaced by ``***@`` (the one masking
    policy, ``base/masking.py``), control characters escaped."""
    from ..base.masking import shown_url

    index = shown_url(index)
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in index)


def _write_cache(path: Path, latest: str | None, index: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if hasattr(os, "fchmod"):  # not on Windows before Python 3.13 (no such mode there)
                os.fchmod(handle.fileno(), 0o600)
            handle.write(json.dumps({"checked_at": time.time(), "latest_version": latest,
                                     "index": index_digest(index)}))
        os.replace(tmp, path)
    except OSError:
        pass


class UpdateCheck:
    """Started before a command runs; ``notice()`` after it, without waiting."""

    def __init__(self, index: str, current: str = __version__, cache: Path | None = None):
        self.index, self.current = index, current
        self.cache = cache or cache_file()
        self.latest: str | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        try:
            data = json.loads(self.cache.read_text())
            age = time.time() - float(data["checked_at"])
            if 0 <= age < INTERVAL and data.get("index") == index_digest(self.index):
                self.latest = data.get("latest_version")
                return
        except (OSError, ValueError, KeyError, TypeError):
            pass
        self.thread = threading.Thread(target=self._run, name="bl-update-check", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        latest = None
        try:
            latest = fetch_latest(self.index)
        except Exception:  # any failure: no notice, try again in 24 h
            latest = None
        _write_cache(self.cache, latest, self.index)
        self.latest = latest

    def notice(self) -> str | None:
        if self.thread is not None and self.thread.is_alive():
            return None
        latest = self.latest
        if isinstance(latest, str) and _PLAIN_VERSION.fullmatch(latest) and newer(latest, self.current):
            return (f"[update] benchloop-client {latest} is available (installed {self.current}); "
                    f"upgrade: pip install --upgrade {PACKAGE} --index-url {shown_index(self.index)}")
        return None


def start(profile: dict) -> UpdateCheck | None:
    if not enabled():
        return None
    index = index_url(profile)
    if not index:
        return None
    check = UpdateCheck(index)
    check.start()
    return check
