"""Shared fixtures, one per concept; shared plain helpers are in support.py.

Every test runs the real CLI entry point (``benchloop.cli.app.main``) against the
real sandbox over HTTP; nothing in httpx is mocked.  The environment is
isolated per test: no user config, no user cache, no update checks.

* ``sandbox``: the sandbox a test talks to.  One for the session (3 groups x
  40 jobs, 25 tasks each, seed 7); a module that needs another one overrides
  ``sandbox`` with one from ``make_sandbox``, and ``api``/``backend`` follow.
* ``make_sandbox(**kwargs)``: more sandboxes for a module (``start_sandbox``'s
  arguments, ``api_key`` defaults to ``API_KEY``), stopped after the module.
* ``live``: the live group of ``sandbox`` put back to its start (every job running, the
  clock stopped), before and after the test.
* ``bl``: ``bl ARGS`` in-process -> ``Result(code, out, err)``.
* ``api``: ``bl`` pointed at ``sandbox`` with its key, ``--retry 0`` unless
  ``retry=`` says otherwise.
* ``backend``: what ``sandbox`` answers when asked directly over HTTP.
* ``origins(answer, require_key=False)``: stand-in HTTP origins
  (``support.Origin``), stopped after the test.
* ``closed_port``: a loopback port nothing listens on.
* ``module_env``: the per-test isolation below, for module-scoped runs.
* ``text_snapshot``: a syrupy snapshot stored as a text file.
"""

from __future__ import annotations

import contextlib
import io
import socket
import sys
from pathlib import Path

import httpx
import pytest
from support import API_KEY, Origin, Result
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from benchloop.cli.app import main
from benchloop.sandbox import start_sandbox


# -------------------------------------------------------------- environment
def _isolate(mp: pytest.MonkeyPatch, home: Path, cache: Path) -> None:
    for name in ("BENCHLOOP_API_KEY", "BENCHMARK_API_KEY", "BENCHLOOP_API_KEY_COMMAND", "BENCHLOOP_HOST",
                 "BENCHLOOP_OUTPUT_DIR", "BENCHLOOP_CONFIG", "BENCHLOOP_PROFILE", "BENCHLOOP_INDEX_URL",
                 "AP_API_KEY", "AP_API_KEY_COMMAND", "AP_BASE_URL", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        mp.delenv(name, raising=False)
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    mp.setenv("BENCHLOOP_NO_UPDATE_CHECK", "1")
    mp.setenv("COLUMNS", "100")
    # One shared compile cache for the session keeps the suite fast.
    mp.setenv("BENCHLOOP_CACHE_DIR", str(cache))


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path_factory):
    _isolate(monkeypatch, tmp_path_factory.mktemp("home"),
             Path(tmp_path_factory.getbasetemp()) / "spec-cache")


@pytest.fixture(scope="module")
def module_env(tmp_path_factory):
    """The per-test isolation, for runs made by module-scoped fixtures (set up before it)."""
    with pytest.MonkeyPatch.context() as mp:
        _isolate(mp, tmp_path_factory.mktemp("module-home"),
                 Path(tmp_path_factory.getbasetemp()) / "spec-cache")
        yield


# ---------------------------------------------------------------- sandboxes
@pytest.fixture(scope="session")
def sandbox():
    """One sandbox for the session: 3 groups x 40 jobs, 25 tasks each, seed 7."""
    with start_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, api_key=API_KEY) as sb:
        yield sb


@pytest.fixture(scope="module")
def make_sandbox():
    """Start a sandbox for this module: ``make_sandbox(**start_sandbox_kwargs)``."""
    with contextlib.ExitStack() as stack:

        def make(**kwargs):
            kwargs.setdefault("api_key", API_KEY)
            return stack.enter_context(start_sandbox(**kwargs))

        yield make


@pytest.fixture
def live(sandbox):
    """The live group GLIVE of ``sandbox`` (``live_jobs``): every job running and its clock stopped
    (pace 0: jobs finish when the test advances them), and so again afterwards."""
    sandbox.live.restart()
    sandbox.live.pace = 0
    yield sandbox.live
    sandbox.live.restart()


# ---------------------------------------------------------------- running bl
@pytest.fixture
def bl(capsys, monkeypatch):
    """Run `bl ARGS...` in-process; returns Result(code, out, err)."""

    def run(*args: str, stdin: str | None = None) -> Result:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def api(sandbox, bl):
    """Like ``bl`` but pointed at ``sandbox`` with its key and ``--retry 0`` (or ``retry=``)."""

    def run(*args: str, stdin: str | None = None, retry: str = "0", key: str | None = None) -> Result:
        return bl("--host", sandbox.url, "--api-key", sandbox.api_key if key is None else key,
                  "--retry", retry, *args, stdin=stdin)

    return run


class _Direct:
    """GETs to a sandbox that assert a 200: ``(path, **params)`` -> JSON, ``.response(...)``."""

    def __init__(self, sb):
        self.client = httpx.Client(base_url=sb.url, headers={"X-API-Key": sb.api_key})

    def response(self, path: str, **params) -> httpx.Response:
        response = self.client.get(path, params=params or None)
        assert response.status_code == 200, response.text
        return response

    def __call__(self, path: str, **params):
        return self.response(path, **params).json()


@pytest.fixture
def backend(sandbox):
    """GET a path from ``sandbox`` directly (the expected, unshaped body)."""
    direct = _Direct(sandbox)
    yield direct
    direct.client.close()


# ------------------------------------------------------------ other servers
@pytest.fixture
def origins():
    """Start stand-in origins: ``origins(answer, require_key=False)`` -> ``support.Origin``."""
    started: list[Origin] = []

    def start(answer, require_key: bool = False) -> Origin:
        origin = Origin(answer, require_key)
        started.append(origin)
        return origin

    yield start
    for origin in started:
        origin.stop()


@pytest.fixture
def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return port  # nothing listens there any more


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1: ``(certfile, keyfile)`` (skips without openssl)."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not available to make a self-signed certificate")
    where = tmp_path_factory.mktemp("tls")
    certfile, keyfile = where / "cert.pem", where / "key.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(keyfile),
         "-out", str(certfile), "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"openssl could not make a certificate: {made.stderr[-300:]}")
    return str(certfile), str(keyfile)


# ---------------------------------------------------------------- snapshots
class TextSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot):
    return snapshot.use_extension(TextSnapshotExtension)
