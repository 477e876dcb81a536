"""Proxies: ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``NO_PROXY`` apply to every request alike.

A small forward proxy (http.server, loopback only, plain-HTTP forwarding of
absolute-URI requests; the sandbox speaks http) sits between ``bl`` and two
sandboxes: the backend and an "object store" on another origin, which holds
the export file and the presigned artifact URLs the backend's artifact proxy
redirects to.  Real commands - a JSON get, a group export (``trajectory
download -g``), artifact downloads - run once directly and once through the
proxy: the results must be equal, every request must have gone through the
proxy, and the API key must reach the proxy only inside requests to the
configured backend.
"""

from __future__ import annotations

import http.client
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

import pytest
from support import final_files, run_inprocess

from benchloop.sandbox import start_sandbox
from benchloop.sandbox.server import QuietHTTPServer, serve_in_thread

KEY = "proxy-key-0123"
_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
_HOP_BY_HOP = {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "te", "trailer",
               "transfer-encoding", "upgrade", "content-length"}


@dataclass
class Proxied:
    method: str
    url: str  # the absolute URI the client asked the proxy for
    headers: dict[str, str]


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _ProxyServer

    def log_message(self, format, *args):  # noqa: A002 - stdlib signature
        pass

    def _forward(self) -> None:
        target = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        with self.server.lock:
            self.server.seen.append(Proxied(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
        if target.scheme != "http" or target.hostname not in ("127.0.0.1", "localhost"):
            self._answer(403, {}, b"this proxy forwards plain HTTP to loopback only")
            return
        upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=30)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            upstream.request(self.command, target.path + (f"?{target.query}" if target.query else ""),
                             body=body, headers=headers)
            response = upstream.getresponse()
            data = response.read()
            self._answer(response.status, {k: v for k, v in response.getheaders()
                                           if k.lower() not in _HOP_BY_HOP}, data)
        finally:
            upstream.close()

    def _answer(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_HEAD = _forward

    def do_CONNECT(self) -> None:  # noqa: N802 - stdlib naming
        self._answer(405, {}, b"no tunnels here")


class _ProxyServer(QuietHTTPServer):
    def __init__(self):
        self.seen: list[Proxied] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _ProxyHandler)


@pytest.fixture(scope="module")
def proxy():
    server = _ProxyServer()
    thread, _ = serve_in_thread(server, None, "proxy")
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture(scope="module")
def origins():
    common = dict(seed=5, groups=1, jobs_per_group=12, tasks_per_group=3, api_key=KEY, export_waiting=0,
                  export_running=0)
    with start_sandbox(**common) as store:
        # The store is named "localhost", the backend "127.0.0.1": two origins, and NO_PROXY can tell them apart.
        store_url = store.url.replace("127.0.0.1", "localhost")
        with start_sandbox(**common, object_store_url=store_url, redirect_artifacts=True) as backend:
            yield backend, store, store_url


@pytest.fixture()
def env(monkeypatch):
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


COMMANDS = [
    pytest.param(["report", "get", "-j", "G1-J0001,G1-J0002,G1-J0003"], id="json-get"),
    pytest.param(["trajectory", "download", "-g", "G1"], id="group-export"),
    pytest.param(["artifacts", "download", "-g", "G1"], id="artifacts"),
]


def _run(backend, store, root, argv):
    for sb in (backend, store):
        sb.reset_state()
        sb.reset_stats()
    result = run_inprocess("--host", backend.url, "--api-key", KEY, "--retry", "0", "-o", str(root), *argv)
    seen = {"backend": list(backend.requests_log), "store": list(store.requests_log)}
    return result, final_files(root), seen


def _messages(err: str, root) -> list[str]:
    """stderr without progress counters and the output root, in a stable order (workers finish
    in another order from run to run)."""
    return sorted(line.replace(str(root), "") for line in err.splitlines() if not line.startswith("[progress]"))


def _origin(url: str) -> tuple[str | None, int | None]:
    parts = urlsplit(url)
    return parts.hostname, parts.port


@pytest.mark.parametrize("argv", COMMANDS)
def test_every_request_goes_through_the_proxy_with_the_same_results(origins, proxy, env, tmp_path, argv):
    backend, store, store_url = origins
    direct, direct_files, direct_seen = _run(backend, store, tmp_path / "direct", argv)
    assert direct.code in (0, 1), direct.err

    env.setenv("HTTP_PROXY", proxy.url)
    env.setenv("HTTPS_PROXY", proxy.url)
    with proxy.lock:
        proxy.seen.clear()
    via, via_files, via_seen = _run(backend, store, tmp_path / "proxied", argv)
    with proxy.lock:
        proxied = list(proxy.seen)

    assert (via.code, via.out, via_files) == (direct.code, direct.out, direct_files)
    assert _messages(via.err, tmp_path / "proxied") == _messages(direct.err, tmp_path / "direct")
    # Every request the servers answered came through the proxy, in absolute form.
    answered = len(via_seen["backend"]) + len(via_seen["store"])
    assert answered == len(direct_seen["backend"]) + len(direct_seen["store"]) > 0
    assert len(proxied) == answered
    assert all(p.url.startswith("http://") for p in proxied)
    by_origin = {_origin(backend.url): 0, _origin(store_url): 0}
    for p in proxied:
        by_origin[_origin(p.url)] += 1
    assert by_origin[_origin(backend.url)] == len(via_seen["backend"])
    assert by_origin[_origin(store_url)] == len(via_seen["store"])
    # The key travels to the proxy only inside requests to the configured backend.
    for p in proxied:
        if _origin(p.url) == _origin(backend.url):
            assert p.headers.get("x-api-key") == KEY, p.url
        else:
            assert "x-api-key" not in p.headers, p.url
        assert KEY not in p.url and all(KEY not in v for k, v in p.headers.items() if k != "x-api-key")
    if argv[0] != "report":
        assert by_origin[_origin(store_url)] > 0  # downloads from the other origin went through it too


def test_no_proxy_applies_to_api_calls_and_downloads_alike(origins, proxy, env, tmp_path):
    backend, store, store_url = origins
    argv = ["pull", "-g", "G1", "--with", "report,artifacts,trajectory"]
    direct, direct_files, _ = _run(backend, store, tmp_path / "direct", argv)

    env.setenv("HTTP_PROXY", proxy.url)
    env.setenv("NO_PROXY", "localhost")  # the store: export file and artifacts go direct
    with proxy.lock:
        proxy.seen.clear()
    via, via_files, seen = _run(backend, store, tmp_path / "split", argv)
    with proxy.lock:
        proxied = list(proxy.seen)
    assert (via.code, via_files) == (direct.code, direct_files)
    assert len(seen["store"]) > 0 and len(proxied) == len(seen["backend"]) > 0
    assert all(_origin(p.url) == _origin(backend.url) for p in proxied)

    env.setenv("NO_PROXY", "127.0.0.1,localhost")  # nothing through the proxy at all
    with proxy.lock:
        proxy.seen.clear()
    bypass, bypass_files, _ = _run(backend, store, tmp_path / "bypass", argv)
    with proxy.lock:
        assert proxy.seen == []
    assert (bypass.code, bypass_files) == (direct.code, direct_files)


def test_a_proxy_for_https_only_leaves_plain_http_requests_alone(origins, proxy, env, tmp_path):
    backend, store, _ = origins
    env.setenv("HTTPS_PROXY", proxy.url)
    with proxy.lock:
        proxy.seen.clear()
    result, _, seen = _run(backend, store, tmp_path, ["report", "get", "-j", "G1-J0001"])
    assert result.code == 0, result.err
    assert json.loads(result.out)[0]["job_id"] == "G1-J0001"
    with proxy.lock:
        assert proxy.seen == []
    assert len(seen["backend"]) == 1


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_proxy_that_refuses_connections_is_a_network_failure(origins, env, tmp_path):
    # httpcore's ConnectError inside its proxy pool leaves the bridge as ours: the request was
    # never sent, so it is retried, and the run ends as a network failure (exit 4), with the
    # system's own words for it, as for a direct connection.
    backend, store, _ = origins
    env.setenv("HTTP_PROXY", f"http://127.0.0.1:{_closed_port()}")
    result = run_inprocess("--host", backend.url, "--api-key", KEY, "--retry", "1", "-v", "report", "get",
                           "-j", "G1-J0001")
    assert result.code == 4, result.err
    assert "Connection refused" in result.err and "retry" in result.err.lower()
