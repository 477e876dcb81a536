"""``transport/download.py``: a download's attempts, on loopback (the scripted server).

Through the client's one entry (``Http.download``, which runs a ``download.Download`` in a
temp file) and through ``Download`` itself: resume after a cut (``Range`` with ``If-Range``,
the validator sent back as it came), what starts over instead (a decoded body, a weak
validator, a 416, an unframed body shorter than the size announced before it), what is
never a file (204, a redirect loop), the bytes counted as they are kept, and the ``check``
hook and the key across redirects.  Every answer is a real one; nothing in httpx is mocked.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import httpx
import pytest
from support import RecordingLog, leftovers

from benchloop.base.errors import ApiError, AuthError
from benchloop.sandbox.scripted import Reply, json_reply, start_scripted
from benchloop.transport.client import Http
from benchloop.transport.download import Download, raw_header

KEY = "download-key-0123"
OBJECT = bytes(range(256)) * 400  # 100 kB, not text: what an artifact looks like

# (the environment's proxy settings are cleared by this folder's conftest.py)


def _http(url: str, retry_count: int = 2, key: str | None = KEY, timeout: float = 10) -> Http:
    return Http(url, key, timeout, retry_count, 4, RecordingLog())


# ------------------------------------------------------------- downloads
def _download(url: str, target: str, dest: Path, **kwargs):
    http = _http(url, **{k: kwargs.pop(k) for k in ("retry_count",) if k in kwargs})
    http.policy._uniform = lambda a, b: 0.0
    try:
        return http.download(target, str(dest), **kwargs)
    finally:
        http.close()


def test_a_gzip_encoded_download_is_saved_decoded(tmp_path):
    # Asked for identity, the server compresses anyway: the file holds the object's bytes.
    encoded = gzip.compress(OBJECT)
    with start_scripted({"/obj": Reply(200, encoded, "application/octet-stream",
                                       headers={"Content-Encoding": "gzip"})}) as srv:
        written = _download(srv.url, "/obj", tmp_path / "obj")
        sent = srv.seen[0].headers.get("accept-encoding")
    assert sent == "identity"
    assert (tmp_path / "obj").read_bytes() == OBJECT
    assert written == len(OBJECT) and len(encoded) < len(OBJECT)


def test_a_cut_gzip_download_starts_over_without_range(tmp_path):
    encoded = gzip.compress(OBJECT)
    replies = [Reply(200, encoded, headers={"Content-Encoding": "gzip"}, cut="truncate"),
               Reply(200, encoded, headers={"Content-Encoding": "gzip"})]
    with start_scripted({"/obj": replies}) as srv:
        _download(srv.url, "/obj", tmp_path / "obj")
        ranges = [s.headers.get("range") for s in srv.seen]
    assert ranges == [None, None]  # decoded bytes cannot be resumed with a Range of encoded ones
    assert (tmp_path / "obj").read_bytes() == OBJECT


@pytest.mark.parametrize("body, encoding, message", [
    (b"\x1f\x8b\x08\x00garbage-not-gzip", "gzip", "corrupt gzip body"),
    (gzip.compress(OBJECT, mtime=0)[:-8] + b"\x00" * 8, "gzip", "corrupt gzip body"),  # wrong CRC and length
    (b"\x00\x01", "br", "corrupt br body"),
    (b"\x00\x01", "compress", "unsupported Content-Encoding: compress"),
])
def test_an_undecodable_download_fails_and_leaves_nothing(tmp_path, body, encoding, message):
    with start_scripted({"/obj": Reply(200, body, headers={"Content-Encoding": encoding})}) as srv:
        with pytest.raises(ApiError) as caught:
            _download(srv.url, "/obj", tmp_path / "obj")
    assert message in str(caught.value)
    assert not (tmp_path / "obj").exists() and leftovers(tmp_path) == []


def test_a_plain_download_resumes_with_range_after_a_cut(tmp_path):
    def rest(seen):
        start = int(seen.headers["range"].split("=")[1].rstrip("-"))
        return Reply(206, OBJECT[start:], headers={"Content-Range": f"bytes {start}-{len(OBJECT) - 1}/{len(OBJECT)}"})

    calls = iter([Reply(200, OBJECT, cut="truncate", send=30000)])
    with start_scripted({"/obj": lambda seen: next(calls, None) or rest(seen)}) as srv:
        _download(srv.url, "/obj", tmp_path / "obj", retry_count=1)
        ranges = [s.headers.get("range") for s in srv.seen]
    assert ranges == [None, "bytes=30000-"]
    assert (tmp_path / "obj").read_bytes() == OBJECT


class _Refused(Exception):
    pass


def test_check_sees_the_final_answer_before_any_byte_is_saved(tmp_path):
    calls = []

    def check(status, headers, url):
        calls.append((status, headers.get("content-type"), url))

    routes = {"/start": Reply(302, b"", headers={"Location": "/final?sig=1"}),
              "/final": Reply(200, OBJECT, "application/x-tar")}
    with start_scripted(routes) as srv:
        _download(srv.url, "/start", tmp_path / "obj", check=check)
    assert calls == [(200, "application/x-tar", f"{srv.url}/final?sig=1")]
    assert (tmp_path / "obj").read_bytes() == OBJECT


def test_an_exception_of_check_propagates_unchanged_and_nothing_is_kept(tmp_path):
    def check(status, headers, url):
        raise _Refused(f"{status} {headers.get('content-type')}")

    with start_scripted({"/obj": Reply(200, b"<html>sign in</html>", "text/html")}) as srv:
        with pytest.raises(_Refused, match="200 text/html"):
            _download(srv.url, "/obj", tmp_path / "obj", check=check)
    assert list(tmp_path.iterdir()) == []


def test_check_runs_once_per_attempt_but_never_for_a_401(tmp_path):
    statuses = []
    replies = [json_reply({"error": "busy"}, 503, **{"Retry-After": "0"}), Reply(200, OBJECT)]
    with start_scripted({"/obj": replies, "/auth": json_reply({"error": "no"}, 401)}) as srv:
        _download(srv.url, "/obj", tmp_path / "obj", check=lambda s, h, u: statuses.append(s))
        with pytest.raises(AuthError):
            _download(srv.url, "/auth", tmp_path / "auth", check=lambda s, h, u: statuses.append(s))
    assert statuses == [503, 200]
    assert (tmp_path / "obj").read_bytes() == OBJECT


def test_a_page_named_login_is_not_a_login_page(tmp_path):
    # Words in a URL mean nothing: only a redirect to a configured login host is a login page.
    # The page is an answer like any other: the caller's check sees it (the table's
    # ``missing:`` rule turns an HTML page into "no artifact" there).
    seen = []
    routes = {"/obj": Reply(302, b"", headers={"Location": "/sso/login.htm?back=/obj"}),
              "/sso/login.htm": Reply(200, b"<html>login</html>", "text/html")}
    with start_scripted(routes) as srv:
        http = Http(srv.url, KEY, 10, 0, 4, RecordingLog(), login_hosts=("login.example",))
        try:
            http.download("/obj", str(tmp_path / "obj"), check=lambda s, h, u: seen.append((s, h.get("content-type"))))
        finally:
            http.close()
    assert seen == [(200, "text/html")]
    assert (tmp_path / "obj").read_bytes() == b"<html>login</html>"


def test_a_redirect_to_a_login_page_is_an_auth_failure(tmp_path):
    location = "/_sso/login.example/ssoLogin.htm?back=x"  # the SSO page, served by the origin itself
    with start_scripted({"/obj": Reply(302, b"", headers={"Location": location})}) as srv:
        http = Http(srv.url, KEY, 10, 2, 4, RecordingLog(), login_hosts=("login.example",))
        with pytest.raises(AuthError):
            http.download("/obj", str(tmp_path / "obj"))
        paths = [s.path for s in srv.seen]
    assert paths == ["/obj"]


def test_the_key_follows_redirects_only_on_the_configured_origin(tmp_path):
    with start_scripted({"/obj": Reply(200, OBJECT)}) as other:
        with start_scripted({"/start": Reply(302, b"", headers={"Location": f"{other.url}/obj"})}) as api:
            _download(api.url, "/start", tmp_path / "obj")
            backend = api.seen
        foreign = other.seen
    assert [s.headers.get("x-api-key") for s in backend] == [KEY]
    assert [s.headers.get("x-api-key") for s in foreign] == [None]
    assert (tmp_path / "obj").read_bytes() == OBJECT




# ------------------------------------------------------------- Download, attempt by attempt
def resumable(cuts: list[int], **validators: str):
    """A route serving OBJECT whole (200) or from the asked ``Range`` on (206), the n-th answer
    cut after ``cuts[n]`` bytes of its body (announcing its whole length) while cuts last."""
    served = []

    def route(seen) -> Reply:
        asked = seen.headers.get("range")
        start = int(asked.split("=")[1].rstrip("-")) if asked else 0
        headers = dict(validators)
        if start:
            headers["Content-Range"] = f"bytes {start}-{len(OBJECT) - 1}/{len(OBJECT)}"
        n = len(served)
        served.append(start)
        cut = {"cut": "truncate", "send": cuts[n]} if n < len(cuts) else {}
        return Reply(206 if start else 200, OBJECT[start:], "application/octet-stream", headers, **cut)
    return route


def attempts(url: str, tmp_path: Path, target: str = "/obj", retry_count: int = 2, size: int | None = None):
    """``Download(...).run()`` into a temp file: (bytes written, the file's bytes, on_bytes calls)."""
    counted: list[int] = []
    tmp = tmp_path / "obj.part"
    http = _http(url, retry_count)
    http.policy._uniform = lambda a, b: 0.0  # no backoff wait between attempts
    try:
        written = Download(http, url + target, None, str(tmp), counted.append, None, None, size).run()
    finally:
        http.close()
    return written, tmp.read_bytes(), counted


def test_a_download_cut_twice_resumes_each_time_with_its_etag_sent_back(tmp_path):
    with start_scripted({"/obj": resumable([30000, 20000], ETag='"v1"')}) as srv:
        written, data, counted = attempts(srv.url, tmp_path)
        asked = [(s.headers.get("range"), s.headers.get("if-range")) for s in srv.seen]
    assert asked == [(None, None), ("bytes=30000-", '"v1"'), ("bytes=50000-", '"v1"')]
    assert data == OBJECT and written == len(OBJECT)
    assert sum(counted) == len(OBJECT)  # every byte counted once, as it was kept


def test_last_modified_validates_the_rest_when_there_is_no_etag(tmp_path):
    stamp = "Wed, 21 Oct 2015 07:28:00 GMT"
    with start_scripted({"/obj": resumable([30000], **{"Last-Modified": stamp})}) as srv:
        _, data, _ = attempts(srv.url, tmp_path)
        asked = [(s.headers.get("range"), s.headers.get("if-range")) for s in srv.seen]
    assert asked == [(None, None), ("bytes=30000-", stamp)]
    assert data == OBJECT


def test_a_weak_etag_validates_nothing_so_the_rest_is_asked_without_if_range(tmp_path):
    # RFC 9110 13.1.5: a weak validator cannot validate a byte range, nor a Last-Modified behind it.
    validators = {"ETag": 'W/"v1"', "Last-Modified": "Wed, 21 Oct 2015 07:28:00 GMT"}
    with start_scripted({"/obj": resumable([30000], **validators)}) as srv:
        _, data, _ = attempts(srv.url, tmp_path)
        asked = [(s.headers.get("range"), s.headers.get("if-range")) for s in srv.seen]
    assert asked == [(None, None), ("bytes=30000-", None)]
    assert data == OBJECT


def test_a_416_to_the_rest_starts_over_from_the_first_byte(tmp_path):
    first = resumable([30000], ETag='"v1"')
    replies = iter([None, Reply(416, b'{"error": "range"}')])

    def route(seen) -> Reply:
        reply = next(replies, None)
        return reply if reply is not None else first(seen)

    with start_scripted({"/obj": route}) as srv:
        _, data, _ = attempts(srv.url, tmp_path)
        ranges = [s.headers.get("range") for s in srv.seen]
    assert ranges == [None, "bytes=30000-", None]
    assert data == OBJECT


def test_an_unframed_body_shorter_than_the_size_announced_before_is_asked_again_whole(tmp_path):
    replies = [Reply(200, OBJECT, "application/octet-stream", cut="unframed", send=40000),
               Reply(200, OBJECT, "application/octet-stream", cut="unframed")]
    with start_scripted({"/obj": replies}) as srv:
        _, data, _ = attempts(srv.url, tmp_path, size=len(OBJECT))
        ranges = [s.headers.get("range") for s in srv.seen]
    assert ranges == [None, None]  # no length to resume against: whole again
    assert data == OBJECT


def test_without_a_size_announced_an_unframed_body_is_what_the_close_delimits(tmp_path):
    with start_scripted({"/obj": Reply(200, OBJECT, "application/octet-stream", cut="unframed", send=40000)}) as srv:
        written, data, _ = attempts(srv.url, tmp_path)
        assert len(srv.seen) == 1
    assert data == OBJECT[:40000] and written == 40000


def test_a_body_longer_than_the_size_announced_before_fails_without_a_retry(tmp_path):
    with start_scripted({"/obj": Reply(200, OBJECT, "application/octet-stream")}) as srv:
        with pytest.raises(Exception, match="size mismatch: 102400 bytes received") as caught:
            attempts(srv.url, tmp_path, size=1000)
        assert len(srv.seen) == 1
    assert not isinstance(caught.value, ApiError)


@pytest.mark.parametrize("reply, says", [
    (Reply(204), "HTTP 204 is not a file to save"),
    (Reply(304), "HTTP 304 is not a file to save"),
    (Reply(302), "HTTP 302 is not a file to save (a redirect without a Location)"),
])
def test_an_answer_without_a_body_to_keep_is_not_a_file(tmp_path, reply, says):
    with start_scripted({"/obj": reply}) as srv:
        with pytest.raises(ApiError, match=says.replace("(", r"\(").replace(")", r"\)")):
            attempts(srv.url, tmp_path)
        assert len(srv.seen) == 1


def test_a_redirect_loop_ends_after_ten_hops(tmp_path):
    with start_scripted({"/obj": Reply(302, b"", headers={"Location": "/obj"})}) as srv:
        with pytest.raises(ApiError, match="too many redirects"):
            attempts(srv.url, tmp_path)
        assert len(srv.seen) == 10
    assert not (tmp_path / "obj.part").exists() or (tmp_path / "obj.part").stat().st_size == 0


def test_a_header_is_read_as_the_bytes_that_came(tmp_path):
    with start_scripted({"/obj": Reply(200, b"x", headers={"ETag": '"v1"'})}) as srv:
        with httpx.Client() as client:
            response = client.get(srv.url + "/obj")
    assert raw_header(response, b"etag") == b'"v1"'
    assert raw_header(response, b"last-modified") is None
