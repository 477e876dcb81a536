"""The one HTTP stack (``benchloop/transport/``): its client, and the retry rules on the wire.

Everything talks to real loopback servers (the scripted server, the sandbox);
nothing in httpx is mocked.  What the sandbox never shows is scripted here:
compressed answers (JSON and downloads), servers that close connections
(announced or not), refused connections, and
the retry rules one by one on the wire (the policy alone: test_retry.py).
"""

from __future__ import annotations

import ast
import gzip
import json
import threading
import time
import zlib
from pathlib import Path

import pytest
from support import RecordingLog, run_inprocess

import benchloop.transport
from benchloop.base.errors import ApiError, AuthError, Cancelled, NetworkError
from benchloop.sandbox.scripted import Reply, json_reply, start_scripted
from benchloop.transport import decoding
from benchloop.transport.client import Http

KEY = "stack-key-0123"
REPORT = {"summary": "ok", "words": ["ünïcode", "b"]}  # no job_id: one answer serves every job
OBJECT = bytes(range(256)) * 400  # 100 kB, not text: what an artifact looks like

# (the environment's proxy settings are cleared by this folder's conftest.py)




def _http(url: str, retry_count: int = 2, key: str | None = KEY, timeout: float = 10) -> Http:
    return Http(url, key, timeout, retry_count, 4, RecordingLog())


def _report(api_url: str, *ids: str, retry_count: str = "2"):
    return run_inprocess("--host", api_url, "--api-key", KEY, "--retry", retry_count, "--concurrency", "1",
                         "report", "get", "-j", ",".join(ids))


# ------------------------------------------------------------------ imports
# Importing any of these would be a second HTTP stack: every request goes through httpx's
# public API (benchloop/transport/client.py); only the sandbox, a server, has sockets.
FORBIDDEN = {"http.client", "socket", "httpcore", "h11", "h2", "urllib.request", "urllib3", "requests",
             "aiohttp", "httplib2", "pycurl", "http.server", "socketserver", "ssl_socket"}
PACKAGE = Path(benchloop.transport.__file__).parent.parent
TRANSPORT = PACKAGE / "transport"


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def test_nothing_outside_the_sandbox_imports_a_socket_or_another_http_stack():
    found = [f"{path.relative_to(PACKAGE)}: {name}" for path in sorted(PACKAGE.rglob("*.py"))
             if "sandbox" not in path.relative_to(PACKAGE).parts
             for name in _imports(path)
             if name in FORBIDDEN or name.split(".")[0] in FORBIDDEN - {"http", "urllib"}]
    assert found == []


def test_the_import_scan_sees_every_form():
    probe = "import socket\nfrom http import client\nfrom httpcore import ConnectionPool\n"
    path = TRANSPORT.parent.parent / "tests" / "__probe__.py"
    try:
        path.write_text(probe)
        assert {"socket", "http.client", "httpcore"} <= set(_imports(path))
    finally:
        path.unlink()


# ------------------------------------------------------------- JSON answers
@pytest.mark.parametrize("encoding, encode", [
    ("gzip", gzip.compress),
    ("x-gzip", gzip.compress),
    ("deflate", zlib.compress),
    ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send it
    ("gzip, identity", gzip.compress),
])
def test_compressed_json_answers_are_decoded(encoding, encode):
    body = encode(json.dumps(REPORT).encode("utf-8"))
    with start_scripted({"/openapi/jobs/J1/report": Reply(200, body, headers={"Content-Encoding": encoding})}) as api:
        result = _report(api.url, "J1")
        sent = api.seen[0].headers.get("accept-encoding")
    assert result.code == 0, result.err
    assert json.loads(result.out) == [REPORT]
    assert sent == "gzip, deflate"


def test_an_unknown_content_encoding_is_a_clear_failure():
    reply = Reply(200, b"\x00\x01", headers={"Content-Encoding": "sdch"})
    with start_scripted({"/openapi/jobs/J1/report": reply}) as api:
        result = _report(api.url, "J1")
        seen = api.seen
    assert result.code == 1  # the server's answer, not a network failure (exit 4), and not retried
    assert "API error 200: unsupported Content-Encoding: sdch" in result.err
    assert len(seen) == 1


@pytest.mark.parametrize("status, code, requests", [(401, 3, 1), (503, 1, 3), (200, 1, 1)])
def test_an_undecodable_body_still_lets_the_status_decide(status, code, requests):
    # 401 stays an authentication failure (exit 3), a 503 is retried (then fails), a 200 fails at once.
    reply = Reply(status, b"\x00garbage", headers={"Content-Encoding": "gzip", "Retry-After": "0"})
    with start_scripted({"/openapi/jobs/J1/report": reply}) as api:
        result = _report(api.url, "J1")
        seen = api.seen
    assert result.code == code, result.err
    assert len(seen) == requests


def test_a_compressed_json_answer_is_capped_when_decoded(monkeypatch):
    monkeypatch.setattr(decoding, "MAX_JSON_BYTES", 1 << 20)
    bomb = gzip.compress(b"[" + b" " * (4 << 20) + b"]")  # 4 MB of JSON in ~4 kB
    with start_scripted({"/openapi/jobs/J1/report": Reply(200, bomb, headers={"Content-Encoding": "gzip"})}) as api:
        result = _report(api.url, "J1")
    assert result.code == 1
    assert "the JSON answer is larger than 1048576 bytes (decoded); refused" in result.err


def test_a_redirect_is_an_error_for_a_json_request():
    with start_scripted({"/openapi/jobs/J1/report": Reply(302, b"{}", headers={"Location": "/elsewhere"})}) as api:
        result = _report(api.url, "J1")
        paths = [s.path for s in api.seen]
    assert result.code == 1 and "API error 302" in result.err
    assert paths == ["/openapi/jobs/J1/report"]


# ------------------------------------------------------------- connections
def test_a_server_announcing_close_gets_a_new_connection_each_time():
    with start_scripted({"*": json_reply(REPORT, Connection="close")}) as api:
        result = _report(api.url, "J1", "J2", "J3")
        seen, connections = api.seen, api.connections
    assert result.code == 0, result.err
    assert len(json.loads(result.out)) == 3 and len(seen) == 3
    assert connections == 3


def checked(answer: object, reused: bool) -> None:
    """The identity check of an endpoint whose answers name their id (here always the right one)."""


def test_sequential_requests_reuse_one_connection_and_keep_the_base_path(tmp_path):
    with start_scripted({"*": json_reply(REPORT)}) as api:
        http = _http(api.url + "/prefix/")
        try:
            answers = [http.request_json("GET", f"/openapi/jobs/J{n}/report", {"x": 1}, expect=checked)
                       for n in range(5)]
            first = api.connections
            unchecked = [http.request_json("GET", f"/openapi/jobs/J{n}/report") for n in range(2)]
            http.download("/openapi/jobs/J9/report", str(tmp_path / "report.json"))
        finally:
            http.close()
        seen, connections = api.seen, api.connections
    assert answers == [REPORT] * 5 and unchecked == [REPORT] * 2
    assert [s.target for s in seen] == [f"/prefix/openapi/jobs/J{n}/report?x=1" for n in range(5)] + [
        f"/prefix/openapi/jobs/J{n}/report" for n in range(2)] + ["/prefix/openapi/jobs/J9/report"]
    # Checked JSON calls share one keep-alive connection; an answer that names no id (unchecked)
    # and a download each get a new connection, closed after them.
    assert first == 1 and connections == 1 + 2 + 1
    assert all(s.headers.get("x-api-key") == KEY for s in seen)
    assert json.loads((tmp_path / "report.json").read_bytes()) == REPORT


def test_an_idle_connection_closed_by_the_server_is_replaced_before_reuse():
    # The server answers as if it kept the connection, then closes it (an idle timeout).
    # Without the check before reuse the next request would fail on the dead socket.
    with start_scripted({"*": Reply(200, json.dumps(REPORT).encode(), cut="close_after")}) as api:
        http = _http(api.url, retry_count=0)
        try:
            first = http.request_json("GET", "/openapi/jobs/J1/report")
            time.sleep(0.2)  # the FIN arrives
            second = http.request_json("GET", "/openapi/jobs/J2/report")
        finally:
            http.close()
        connections = api.connections
    assert first == second == REPORT
    assert connections == 2


def test_a_base_url_path_is_encoded_for_the_wire():
    with start_scripted({"*": json_reply(REPORT)}) as api:
        result = run_inprocess("--host", api.url + "/base path/bäse%2F/", "--api-key", KEY, "report", "get",
                               "-j", "J1")
        targets = [s.target for s in api.seen]
    assert result.code == 0, result.err
    assert targets == ["/base%20path/b%C3%A4se%2F/openapi/jobs/J1/report"]


def test_an_absolute_url_with_an_upper_case_scheme_is_not_joined_to_the_host(tmp_path):
    # A download_url may say HTTP:// (schemes are case-insensitive); it was read as a path.
    with start_scripted({"/obj": Reply(200, OBJECT, "application/gzip")}) as srv:
        http = _http(srv.url)
        try:
            http.download(srv.url.replace("http://", "HTTP://") + "/obj", str(tmp_path / "o"))
        finally:
            http.close()
    assert (tmp_path / "o").read_bytes() == OBJECT


def test_every_request_of_a_download_goes_on_a_new_connection(tmp_path):
    routes = {"/a": Reply(302, b"moved", "text/plain", headers={"Location": "/b"}), "/b": Reply(200, OBJECT,
                                                                                        "application/gzip")}
    with start_scripted(routes) as srv:
        http = _http(srv.url)
        try:
            for n in range(3):
                http.download("/a", str(tmp_path / f"o{n}"))
        finally:
            http.close()
        connections = srv.connections
    assert connections == 3 * 2  # the redirect and the object, of each of the 3 downloads
    assert all((tmp_path / f"o{n}").read_bytes() == OBJECT for n in range(3))


@pytest.mark.parametrize("host", ["localhost:9", "backend.example", "ftp://backend.example", "http://",
                                  "http://backend.example:port"])
def test_a_backend_url_without_http_scheme_or_host_is_a_usage_error(host):
    result = run_inprocess("--host", host, "--api-key", KEY, "report", "get", "-j", "J1")
    assert result.code == 2, result.err
    assert "invalid backend URL" in result.err and result.out == ""


# ------------------------------------------------------------- retry rules
def _dead_url() -> str:
    with start_scripted({}) as srv:
        return srv.url  # nothing listens there any more


def test_a_refused_connection_is_never_sent_so_even_a_post_is_retried():
    http = _http(_dead_url(), retry_count=2)
    http.policy._uniform = lambda a, b: 0.0  # no backoff wait in the test
    with pytest.raises(NetworkError):
        http.request_json("POST", "/openapi/jobs/J1/report/trigger", body={"x": 1})
    assert sum("retrying" in line for line in http.log.lines) == 2


@pytest.mark.parametrize("method, requests", [("POST", 1), ("GET", 3)])
def test_a_reset_after_sending_is_retried_for_get_only(method, requests):
    with start_scripted({"/x": Reply(cut="reset")}) as srv:
        http = _http(srv.url, retry_count=2)
        http.policy._uniform = lambda a, b: 0.0
        with pytest.raises(NetworkError):
            http.request_json(method, "/x")
        http.close()
        assert len(srv.seen) == requests


@pytest.mark.parametrize("method, requests", [("POST", 1), ("GET", 3)])
def test_a_5xx_is_retried_for_get_only(method, requests):
    with start_scripted({"/x": json_reply({"error": "busy"}, 503, **{"Retry-After": "0"})}) as srv:
        http = _http(srv.url, retry_count=2)
        with pytest.raises(ApiError) as caught:
            http.request_json(method, "/x")
        http.close()
        assert len(srv.seen) == requests
    assert caught.value.status == 503 and caught.value.body == {"error": "busy"}


@pytest.mark.serial  # timing: run alone (make test runs these after the parallel part)
def test_a_429_is_retried_for_a_post_too_honouring_retry_after():
    replies = [json_reply({"error": "slow down"}, 429, **{"Retry-After": "0"}), json_reply({"ok": True})]
    with start_scripted({"/x": replies}) as srv:
        http = _http(srv.url, retry_count=1)
        started = time.monotonic()
        assert http.request_json("POST", "/x", body={"a": 1}) == {"ok": True}
        elapsed = time.monotonic() - started
        http.close()
        seen = srv.seen
    assert [s.method for s in seen] == ["POST", "POST"]
    assert elapsed < 0.2  # Retry-After: 0, not the backoff


def test_a_401_is_never_retried():
    with start_scripted({"/x": json_reply({"error": "no"}, 401)}) as srv:
        http = _http(srv.url, retry_count=3)
        with pytest.raises(AuthError):
            http.request_json("GET", "/x")
        http.close()
        assert len(srv.seen) == 1


def test_a_cancel_stops_a_retry_loop_in_its_backoff():
    with start_scripted({"/x": json_reply({"error": "busy"}, 503, **{"Retry-After": "30"})}) as srv:
        http = _http(srv.url, retry_count=3)
        threading.Timer(0.3, http.cancelled.set).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            http.request_json("GET", "/x")
        http.close()
        assert len(srv.seen) == 1
    assert time.monotonic() - started < 5


# ------------------------------------------------------------- public APIs only
_LIBRARIES = ("httpx", "httpcore")
_NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make"}  # public, despite the underscore


def _library_bases(tree: ast.Module) -> dict[str, bool]:
    """Each class of a module, and whether it subclasses a class of httpx or httpcore."""
    return {node.name: any(isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name)
                           and base.value.id in _LIBRARIES for base in node.bases)
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def _own_attributes(cls: ast.ClassDef) -> set[str]:
    """The attribute names a class assigns to ``self`` (or defines) in its own body."""
    names = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    names |= {t.id for n in cls.body if isinstance(n, (ast.Assign, ast.AnnAssign))
              for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
    return names


def _private_accesses(source: str, name: str = "<source>") -> list[str]:
    """Any ``x._name`` on an object that is not our own ``self`` (it could be a library's private
    state); inside a subclass of a library class, a ``self._name`` the subclass does not define;
    ``getattr``/``setattr``/``hasattr`` with a private name."""
    found = []
    tree = ast.parse(source)
    subclasses = _library_bases(tree)
    for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)] + [tree]:
        own = _own_attributes(cls) if isinstance(cls, ast.ClassDef) and subclasses.get(cls.name) else None
        body = cls.body if isinstance(cls, ast.ClassDef) else [n for n in tree.body if not isinstance(n, ast.ClassDef)]
        for node in (n for part in body for n in ast.walk(part)):
            private = isinstance(node, ast.Attribute) and node.attr.startswith("_") and \
                not node.attr.startswith("__") and node.attr not in _NAMEDTUPLE
            if private and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{name}:{node.lineno} .{node.attr}")
            elif private and own is not None and node.attr not in own:
                found.append(f"{name}:{node.lineno} self.{node.attr} (not defined by {cls.name})")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) > 1 and \
                    isinstance(node.args[1], ast.Constant) and str(node.args[1].value).startswith("_"):
                found.append(f"{name}:{node.lineno} {node.func.id}(..., {node.args[1].value!r})")
    return found


def test_the_transport_uses_no_private_attribute_of_httpx_or_httpcore():
    found = [hit for path in sorted(TRANSPORT.rglob("*.py"))
             for hit in _private_accesses(path.read_text(encoding="utf-8"), path.name)]
    assert found == []


@pytest.mark.parametrize("source, hit", [
    ("def send(client, request):\n    return client._transport_for_url(request.url)\n", "._transport_for_url"),
    ("def hook(transport):\n    transport._pool._network_backend = None\n", "._network_backend"),
    ("def hook(pool):\n    return getattr(pool, '_network_backend', None)\n", "getattr(..., '_network_backend')"),
    ("import httpcore\nclass P(httpcore.ConnectionPool):\n    def n(self):\n        return len(self._connections)\n",
     "self._connections (not defined by P)"),
], ids=["method", "attribute", "getattr", "subclass"])
def test_the_private_attribute_scan_finds_what_the_old_code_did(source, hit):
    assert any(found.endswith(hit) for found in _private_accesses(source)), _private_accesses(source)


# ------------------------------------------------------------- TLS trust
def test_the_trust_store_is_the_systems_unless_a_bundle_or_the_opt_out_says_otherwise(cert, monkeypatch):
    import ssl

    import truststore

    from benchloop.transport.client import tls_context

    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "BENCHLOOP_TRUSTSTORE"):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(tls_context(None), truststore.SSLContext)  # the system's store, as pip uses it
    bundle = tls_context(cert[0])  # exactly the given certificates, verified as create_default_context does
    assert not isinstance(bundle, truststore.SSLContext)
    assert bundle.verify_mode == ssl.CERT_REQUIRED and bundle.check_hostname
    assert bundle.cert_store_stats()["x509_ca"] == 1
    monkeypatch.setenv("SSL_CERT_FILE", cert[0])
    assert tls_context(None).cert_store_stats()["x509_ca"] == 1
    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.setenv("BENCHLOOP_TRUSTSTORE", "0")
    certifi_only = tls_context(None)
    assert not isinstance(certifi_only, truststore.SSLContext)
    assert certifi_only.verify_mode == ssl.CERT_REQUIRED and certifi_only.cert_store_stats()["x509_ca"] > 50


@pytest.mark.parametrize("opt_out", ["1", "0"])
def test_a_self_signed_backend_is_refused_by_either_trust_store(cert, monkeypatch, opt_out):
    monkeypatch.setenv("BENCHLOOP_TRUSTSTORE", opt_out)
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    with start_scripted({"*": json_reply(REPORT)}, tls=cert) as srv:
        result = _report(srv.url, "J1", retry_count="0")
        trusted = run_inprocess("--host", srv.url, "--api-key", KEY, "--ca-bundle", cert[0], "report", "get",
                                "-j", "J1")
    assert result.code == 4 and "CERTIFICATE_VERIFY_FAILED" in result.err, result.err
    assert trusted.code == 0, trusted.err
