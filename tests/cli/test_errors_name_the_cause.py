"""Errors that say the right thing: a failing ``--query`` is a usage error with JMESPath's message,
a JSON call redirected to the login page is an authentication failure (a redirect elsewhere
an API error), a busy port is named as one, an option given before its resource says where
it goes, an unknown option there still gets a suggestion.

Against the sandbox or the scripted server. Found in round three of the reliability review
(docs/reliability.md, "Round three: the engine and the client"): each test fails on the code
before its fix. Nothing in httpx is mocked; nothing leaves loopback.
"""

from __future__ import annotations

import socket

import pytest
from support import API_KEY, run_inprocess

import benchloop
from benchloop.sandbox.scripted import Reply, start_scripted

REPORT = "/openapi/jobs/{}/report"
LOGIN = "https://login.alibaba-inc.com/ssoLogin.htm?backURL=x"


def bl(url: str, *args: str, stdin: str = ""):
    return run_inprocess("--host", url, "--api-key", API_KEY, "--retry", "0", *args, stdin=stdin)


# ============================================================= errors that say the right thing
@pytest.mark.parametrize("query, says", [
    ("abs(@)", "--query failed: In function abs(), invalid type for value: "),
    ("|".join(["@"] * 3000), "--query failed: the expression nests too deeply to evaluate"),
    ("[" * 3000 + "@" + "]" * 3000, "invalid --query expression: nested too deeply to parse"),
], ids=["type-error", "recursion-when-searching", "recursion-when-parsing"])
def test_a_query_that_fails_is_a_usage_error_with_jmespaths_message(sandbox, query, says):
    result = bl(sandbox.url, "metrics", "get", "-j", "G1-J0001", "--query", query)
    assert result.code == 2, result.err
    assert says in result.err and "unexpected" not in result.err, result.err
    assert "Usage: bl metrics get" in result.err and result.out == ""
    assert len(result.err) < 1000  # the offending value (the whole output) is cut


@pytest.mark.parametrize("location", [LOGIN, "/_sso/login.alibaba-inc.com/ssoLogin.htm"])
def test_a_json_call_redirected_to_the_login_page_is_an_authentication_failure(location):
    routes = {REPORT.format("J1"): Reply(302, b"<html>login</html>", "text/html", {"Location": location}),
              "/openapi/jobs": Reply(302, b"", headers={"Location": location})}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1")
        with benchloop.Client(host=srv.url, api_key=API_KEY, retry=0) as client:
            with pytest.raises(benchloop.AuthError, match="login page"):
                client.report.get(job="J1")  # was: PartialFailure (API error 302)
            with pytest.raises(benchloop.AuthError, match="login page"):
                list(client.jobs.iter(group="G1"))
        seen = [s.path for s in srv.seen]
    assert result.code == 3, result.err
    assert "authentication error: endpoint requires SSO login (redirected to login.alibaba-inc.com); X-API-Key not accepted" in result.err
    assert not any("ssoLogin" in path for path in seen)  # never followed


def test_a_redirect_elsewhere_is_still_an_api_error():
    routes = {REPORT.format("J1"): Reply(302, b"", headers={"Location": "https://elsewhere.example/x"})}
    with start_scripted(routes) as srv:
        result = bl(srv.url, "report", "get", "-j", "J1")
    assert result.code == 1 and "API error 302" in result.err, result.err


@pytest.fixture
def busy_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


def test_sandbox_serve_on_a_busy_port_says_the_port_is_in_use(busy_port):
    result = run_inprocess("sandbox", "serve", "--port", str(busy_port))
    assert result.code == 2, result.err
    assert f"Error: port {busy_port} is in use on 127.0.0.1" in result.err
    assert "local file" not in result.err


def test_python_m_sandbox_on_a_busy_port_says_the_port_is_in_use(busy_port, capsys):
    from benchloop.sandbox.__main__ import main

    assert main(["--port", str(busy_port)]) == 2
    assert f"port {busy_port} is in use" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["--output", "json", "jobs", "get", "-g", "G1"],
     "--output is an option of 'jobs get', not a global option: give it after the action "
     "('jobs get ... --output json'); only global options go before the resource"),
    (["--all", "jobs", "get", "-g", "G1"], "give it after the action ('jobs get ... --all')"),
    (["--openapi", "describe"], "--openapi is an option of 'describe', not a global option: give it after the command"),
], ids=["output", "flag", "builtin"])
def test_an_option_of_the_action_given_before_the_resource_says_where_it_goes(argv, says):
    result = run_inprocess(*argv)
    assert result.code == 2
    assert says in result.err and "Did you mean" not in result.err, result.err


def test_an_unknown_option_before_the_resource_still_gets_a_suggestion():
    result = run_inprocess("--verbos", "jobs", "get", "-g", "G1")
    assert result.code == 2 and "Unknown option: --verbos. Did you mean --verbose?" in result.err, result.err
