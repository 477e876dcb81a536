"""The keep-alive pool that carries API calls (``benchloop/keepalive.py``), on real loopback servers.

The sandbox exercises the pool in every other test; these are the cases a
correct backend never shows: compressed answers, servers that close
connections (announced or not), and a proxy in the environment, which hands
API calls to httpx instead.
"""

from __future__ import annotations

import gzip
import json
import time
import zlib

import pytest

from benchloop.keepalive import OriginPool, proxied
from benchloop.sandbox.scripted import Reply, json_reply, start_scripted
from benchloop.sandbox.testing import run_inprocess

KEY = "keepalive-key-0123"
REPORT = {"job_id": "J1", "summary": "ok", "words": ["ünïcode", "b"]}

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture()
def no_proxy_env(monkeypatch):
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def _report(api_url: str, *ids: str):
    return run_inprocess("--host", api_url, "--api-key", KEY, "--retry", "2", "--concurrency", "1",
                         "report", "get", "-j", ",".join(ids))


@pytest.mark.parametrize("encoding, encode", [
    ("gzip", gzip.compress),
    ("deflate", zlib.compress),
    ("deflate", lambda data: zlib.compress(data)[2:-4]),  # raw deflate, as some servers send it
])
def test_compressed_answers_are_decoded(no_proxy_env, encoding, encode):
    body = encode(json.dumps(REPORT).encode("utf-8"))
    with start_scripted({"/openapi/jobs/J1/report": Reply(200, body, headers={"Content-Encoding": encoding})}) as api:
        result = _report(api.url, "J1")
        sent = api.seen[0].headers.get("accept-encoding")
    assert result.code == 0, result.err
    assert json.loads(result.out) == [REPORT]
    assert sent == "gzip, deflate"


def test_an_unknown_content_encoding_is_a_clear_failure(no_proxy_env):
    reply = Reply(200, b"\x00\x01", headers={"Content-Encoding": "br"})
    with start_scripted({"/openapi/jobs/J1/report": reply}) as api:
        result = _report(api.url, "J1")
        seen = api.seen
    assert result.code == 1  # the server's answer, not a network failure (exit 4), and not retried
    assert "API error 200: unsupported Content-Encoding: br" in result.err
    assert len(seen) == 1


def test_a_server_announcing_close_gets_a_new_connection_each_time(no_proxy_env):
    reply = json_reply(REPORT, Connection="close")
    with start_scripted({"*": reply}) as api:
        result = _report(api.url, "J1", "J2", "J3")
        seen = api.seen
    assert result.code == 0, result.err
    assert len(json.loads(result.out)) == 3 and len(seen) == 3


def test_an_idle_connection_closed_by_the_server_is_replaced_before_reuse(no_proxy_env):
    # The server answers as if it kept the connection, then closes it (an idle timeout).
    # Without the check before reuse the next request would fail on the dead socket.
    with start_scripted({"*": Reply(200, json.dumps(REPORT).encode(), cut="close_after")}) as api:
        pool = OriginPool(api.url, timeout=10)
        try:
            first = pool.request("GET", "/openapi/jobs/J1/report", {})
            time.sleep(0.2)  # the FIN arrives
            second = pool.request("GET", "/openapi/jobs/J2/report", {})
        finally:
            pool.close()
    assert first[0] == second[0] == 200
    assert json.loads(second[2]) == REPORT
    assert pool.opened == 2


def test_sequential_requests_reuse_one_pooled_connection(no_proxy_env):
    with start_scripted({"*": json_reply(REPORT)}) as api:
        pool = OriginPool(api.url + "/prefix/", timeout=10)
        try:
            answers = [pool.request("GET", f"/openapi/jobs/J{n}/report?x=1", {}) for n in range(5)]
        finally:
            pool.close()
        targets = [s.target for s in api.seen]
    assert [a[0] for a in answers] == [200] * 5
    assert pool.opened == 1
    assert targets == [f"/prefix/openapi/jobs/J{n}/report?x=1" for n in range(5)]  # base path kept


def test_a_refused_connection_is_reported_as_never_sent():
    from benchloop.keepalive import Failure

    with start_scripted({}) as api:
        url = api.url
    pool = OriginPool(url, timeout=5)  # the server is gone: nothing listens on that port
    with pytest.raises(Failure) as caught:
        pool.request("POST", "/x", {}, b"{}")
    assert caught.value.sent is False


@pytest.mark.parametrize("env, expected", [
    ({}, False),
    ({"NO_PROXY": "*"}, False),
    ({"HTTP_PROXY": "http://proxy:3128"}, True),
    ({"https_proxy": "http://proxy:3128"}, True),
    ({"ALL_PROXY": "http://proxy:3128"}, True),
    # httpx decides per URL (NO_PROXY its way), so any configured proxy hands it the calls.
    ({"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": "backend.example"}, True),
])
def test_any_configured_proxy_hands_api_calls_to_httpx(no_proxy_env, env, expected):
    for name, value in env.items():
        no_proxy_env.setenv(name, value)
    assert proxied() is expected


def test_with_a_proxy_in_the_environment_api_calls_go_through_it(no_proxy_env):
    # The scripted server plays the proxy: it receives absolute-form targets for a
    # backend name that does not resolve, so an answer proves the proxy carried it.
    with start_scripted({"/openapi/jobs/J1/report": json_reply(REPORT)}) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        result = run_inprocess("--host", "http://backend.invalid:9", "--api-key", KEY, "--retry", "0",
                               "report", "get", "-j", "J1")
        targets = [s.target for s in proxy.seen]
    assert result.code == 0, result.err
    assert json.loads(result.out) == [REPORT]
    assert targets == ["http://backend.invalid:9/openapi/jobs/J1/report"]


def test_a_base_url_path_is_encoded_for_the_wire(no_proxy_env):
    with start_scripted({"*": json_reply(REPORT)}) as api:
        pool = OriginPool(api.url + "/base path/bäse%2F/", timeout=10)
        try:
            status = pool.request("GET", "/openapi/jobs/J1/report", {})[0]
        finally:
            pool.close()
        targets = [s.target for s in api.seen]
    assert status == 200
    assert targets == ["/base%20path/b%C3%A4se%2F/openapi/jobs/J1/report"]


@pytest.mark.parametrize("status, code, requests", [(401, 3, 1), (503, 1, 3), (200, 1, 1)])
def test_an_undecodable_body_still_lets_the_status_decide(no_proxy_env, status, code, requests):
    # 401 stays an authentication failure (exit 3), a 503 is retried (then fails), a 200 fails at once.
    reply = Reply(status, b"\x00garbage", headers={"Content-Encoding": "gzip", "Retry-After": "0"})
    with start_scripted({"/openapi/jobs/J1/report": reply}) as api:
        result = _report(api.url, "J1")
        seen = api.seen
    assert result.code == code, result.err
    assert len(seen) == requests


@pytest.mark.parametrize("host", ["localhost:9", "backend.example", "ftp://backend.example", "http://",
                                  "http://backend.example:port"])
def test_a_backend_url_without_http_scheme_or_host_is_a_usage_error(host):
    result = run_inprocess("--host", host, "--api-key", KEY, "report", "get", "-j", "J1")
    assert result.code == 2, result.err
    assert "invalid backend URL" in result.err and result.out == ""
