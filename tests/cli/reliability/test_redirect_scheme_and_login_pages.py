"""Redirects: never from https to cleartext (whatever the scheme's case), a file named like a
login page is data, the table's SSO host is an authentication failure.

Each runs ``bl`` against the scripted server (over TLS where the scheme matters). Found in round
two of the reliability review (docs/reliability.md, "Round two"): each test fails on the code
before its fix. Nothing in httpx is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import zipfile

import pytest
from support import API_KEY, final_files, media_task_routes, run_inprocess

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted

OBJECT = bytes(range(256)) * 800  # 200 kB


def report(job: str, **extra) -> Reply:
    return json_reply({"job_id": job, "summary": "ok", **extra})


def bl(url: str, *args: str, stdin: str = "", retry: str = "0"):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", retry, *args, stdin=stdin)


# ====================================================== redirects: scheme and login pages


@pytest.mark.parametrize("scheme", ["http", "HTTP", "Http"])
def test_a_redirect_from_https_to_cleartext_is_refused_whatever_the_case(cert, tmp_path, scheme):
    with start_scripted({"/obj": Reply(200, OBJECT, "application/octet-stream")}) as plain:
        target = plain.url.replace("http", scheme, 1) + "/obj"
        listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
        routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
                  "/openapi/jobs/J1/artifacts/download": Reply(302, b"", headers={"Location": target})}
        with start_scripted(routes, tls=cert) as secure:
            result = run_inprocess("--host", secure.url, "--api-key", API_KEY, "--ca-bundle", cert[0],
                                   "--retry", "0", "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
        assert plain.seen == []
    assert result.code == 1, result.err
    assert "refusing redirect from https" in result.err
    assert final_files(tmp_path) == {}


@pytest.mark.parametrize("name", ["login.tgz", "ssologin.tgz"])
def test_an_artifact_named_login_behind_a_presigned_url_is_data(tmp_path, name):
    with start_scripted({f"/bucket/{name}": Reply(200, OBJECT, "application/octet-stream")}) as store:
        listing = {"artifacts": [{"name": name, "url": "x"}]}
        routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
                  "/openapi/jobs/J1/artifacts/download": Reply(
                      302, b"", headers={"Location": f"{store.url}/bucket/{name}?Signature=abc&login=1"})}
        with start_scripted(routes) as srv:
            result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    assert final_files(tmp_path) == {f"J1/{name}": OBJECT}


def test_a_media_file_named_login_png_is_data(tmp_path):
    routes = media_task_routes("oss://bucket/login.png")
    with start_scripted({"/login/login.png": Reply(200, b"\x89PNG login", "image/png")}) as store:
        routes["/openapi/getTrajV2/mediaFile"] = Reply(302, b"", headers={"Location": f"{store.url}/login/login.png"})
        with start_scripted(routes) as srv:
            result = bl(srv.url, "trajectory", "download", "--task-id", "TX", "-o", str(tmp_path))
    assert result.code == 0, result.err
    with zipfile.ZipFile(tmp_path / "TX_trajectories.zip") as archive:
        assert archive.read("source/J1/login.png") == b"\x89PNG login"


def test_the_configured_sso_host_is_still_an_authentication_failure(tmp_path):
    listing = {"artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": Reply(
                  302, b"", headers={"Location": "https://login.alibaba-inc.com/ssoLogin.htm?back=x"})}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 3, result.err
    assert "login page" in result.err and final_files(tmp_path) == {}
