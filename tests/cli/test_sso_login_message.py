"""A request redirected to the service's SSO login page says so in the official client's words.

Scripts (and the official client's own tests) look for "requires SSO login" and
"X-API-Key not accepted" in the error line and in a task archive's ``source_failures``:
``bl`` keeps those words first (``endpoint requires SSO login (redirected to <login host>);
X-API-Key not accepted``) and then says what the redirect means.  The login host is the
table's ``login_hosts``; hostile backends here redirect an artifact download, a JSON call and
a trace media file there.
"""

from __future__ import annotations

import json
import zipfile

from support import final_files

from benchloop.sandbox.scripted import Reply, json_reply, start_scripted
from benchloop.table.load import load_model

OFFICIAL = "endpoint requires SSO login (redirected to {host}); X-API-Key not accepted"


def _login_host() -> str:
    """The default service's first login host, from the table."""
    hosts = load_model().default_service.login_hosts
    assert hosts, "the table declares the service's login hosts"
    return hosts[0]


def _run(bl, srv, *args):
    return bl("--host", srv.url, "--api-key", "k", "--retry", "0", *args)


def test_an_artifact_redirected_to_the_login_page(bl, tmp_path):
    host = _login_host()
    listing = {"job_id": "J1", "artifacts": [{"name": "result.tgz", "url": "x"}]}
    routes = {"/openapi/jobs/J1/artifacts": json_reply(listing),
              "/openapi/jobs/J1/artifacts/download": Reply(
                  302, b"", headers={"Location": f"https://{host}/ssoLogin.htm?backURL=x&token=secret"})}
    with start_scripted(routes) as srv:
        result = _run(bl, srv, "artifacts", "download", "-j", "J1", "-o", str(tmp_path))
    assert result.code == 3, result.err
    line = next(line for line in result.err.splitlines() if line.startswith("[error]"))
    assert OFFICIAL.format(host=host) in line, result.err
    assert f"https://{host}/ssoLogin.htm" in line and "secret" not in result.err  # our rest, no query
    assert final_files(tmp_path) == {}


def test_a_json_call_redirected_to_the_login_page(bl):
    host = _login_host()
    routes = {"/openapi/jobs/J1/report": Reply(302, b"", headers={"Location": f"https://{host}/ssoLogin.htm"})}
    with start_scripted(routes) as srv:
        result = _run(bl, srv, "report", "get", "-j", "J1")
    assert result.code == 3, result.err
    assert OFFICIAL.format(host=host) in result.err and result.out == ""


def test_a_media_file_behind_the_login_page_is_named_in_source_failures(api, tmp_path):
    # The sandbox's TMEDIA task: one image of G1-J0025 redirects to the login page on purpose.
    host = _login_host()
    result = api("trajectory", "download", "--task-id", "TMEDIA", "-o", str(tmp_path))
    assert result.code == 1, result.err
    with zipfile.ZipFile(tmp_path / "TMEDIA_trajectories.zip") as archive:
        manifest = json.loads(archive.read("manifest.json"))
    (failure,) = manifest["source_failures"]
    assert OFFICIAL.format(host=host) in failure["error"], failure
    assert OFFICIAL.format(host=host) in result.err
