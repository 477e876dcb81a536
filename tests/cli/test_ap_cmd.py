"""``bl ap-cmd`` against the sandbox's AgentPlatform data (docs/contract.md 1.5, ap-cmd).

Every data branch has a snapshot of its rebuilt command line; the rules around
it (cluster resolution, keys, JSON options, extra arguments, errors and their
exit codes, where each key goes) are checked one by one.  The sandbox groups
are listed in ``benchloop/sandbox/agentplatform.py``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from benchloop.sandbox.agentplatform import GROUPS, PROFILES
from benchloop.sandbox.scripted import json_reply, start_scripted

AP_KEY = "ap-sandbox-key"
# APG-PARAMS has a "${AP_SANDBOX_HOME}" param: printed as written, with this warning
HOME_NOTE = "[warn] -p home: ${AP_SANDBOX_HOME} is left as written (bl does not expand variables from your environment)\n"


@pytest.fixture(autouse=True)
def ap_env(monkeypatch):
    for name in ("AP_BASE_URL", "AP_API_KEY", "AP_CLUSTER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AP_SANDBOX_HOME", "/home/sandbox")  # a "${AP_SANDBOX_HOME}" param is never expanded


@pytest.fixture
def ap(sandbox, bl):
    """``bl ap-cmd ARGS`` with the sandbox as Benchloop (with its key) and AgentPlatform."""

    def run(*args: str, key: str | None = AP_KEY, benchloop_key: bool = True, before: tuple = ()) -> object:
        head = ["--host", sandbox.url, "--retry", "0", *before]
        if benchloop_key:
            head += ["--api-key", sandbox.api_key]
        ap_opts = ["--ap-base-url", sandbox.url] + (["--ap-api-key", key] if key else [])
        return bl(*head, "ap-cmd", *args, *ap_opts)

    return run


# ------------------------------------------------------------------ branches
BRANCHES = {
    # the cluster from the Benchloop group lookup (EVAL-HK-PROD-1, lower-cased); profile diffs
    "profile": (["APG-PROFILE"], []),
    # stored params (secrets, $VAR left as written, quoting), overrides vs template with
    # sidecars; found by discovery after a 404 on the given cluster
    "stored-params": (["APG-PARAMS", "--ap-cluster", "HK-TEST"], [HOME_NOTE.rstrip("\n")]),
    # no stored params: the sample job's env filtered by the template schema; DATASET/SPLIT exists
    "sample-job": (["APG-SAMPLE@hk-prod-2"], []),
    # the template only on another cluster (warned at each use); DATASET/SPLIT does not exist
    "template-elsewhere": (["APG-REMOTE@wlcb-prod-1"],
                           ["[warn] template 'remote-agent' found on cluster 'bj-prod-1'"] * 2),
    # no template anywhere: the environment's own names, unfiltered
    "no-template": (["APG-NOTEMPLATE@hz-prod-1"],
                    ["[warn] template 'gone-agent' not found on any known cluster; falling back to unfiltered params"]),
    # no stored params and no job: no -p at all
    "no-jobs": (["APG-EMPTY@pre-release-1"], ["[warn] template 'swe-agent' found on cluster 'sg-prod-2'"]),
    # a cluster outside the list (Env: debug)
    "debug-cluster": (["APG-DEBUG@DEBUG"], []),
}


@pytest.mark.parametrize("name", list(BRANCHES))
def test_each_branch(ap, name, text_snapshot):
    args, warnings = BRANCHES[name]
    result = ap(*args)
    assert (result.code, result.err.splitlines()) == (0, warnings)
    assert result.out == text_snapshot


def test_output_shape(ap):
    out = ap("APG-SAMPLE@hk-prod-2").out
    assert out.startswith("export AP_CLUSTER=hk-prod-2\nexport AP_API_KEY=***\n\nap job create swe-agent \\\n  ")
    assert out.endswith("\n") and AP_KEY not in out


def test_profile_changes_equal_to_the_profile_hide_their_segment(ap, text_snapshot):
    # --trials 1 and --concurrency 2 are the profile's; --batch-size 200 is the default (the group had 100).
    result = ap("APG-PROFILE", "--trials", "1", "--concurrency", "2", "--batch-size", "200",
                "--params", '{"temperature": 0.5, "new": "sk-abcdef123456"}')
    assert result.code == 0
    for gone in ("--trials", "--concurrency", "--batch-size", "temperature"):
        assert gone not in result.out
    assert '"new": "sk-abcdef123456"' in result.out  # keys given by --params are never masked
    assert result.out == text_snapshot


def test_changes_of_a_plain_group(ap, text_snapshot):
    result = ap("APG-SAMPLE@hk-prod-2", "--trials", "9", "--dataset", "d x", "--suite-name", "new name",
                "--agenthub-ref", "rev9", "--concurrency", "16", "-q", "my queue", "--batch-size", "10",
                "--params", '{"model_api_key": "sk-visible-key"}', "--overrides", '{"timeout": 5}')
    assert result.code == 0
    assert "--trials" not in result.out  # never for a group without profile
    assert "-q 'my queue'" in result.out  # quoted (the official client printed -q my queue)
    assert result.out == text_snapshot


# ------------------------------------------------------------------- cluster
def test_at_cluster_wins_over_ap_cluster_with_a_warning(ap):
    result = ap("APG-PARAMS@SG-PROD-2", "--ap-cluster", "hk-test")
    assert result.code == 0
    assert result.err == "[warn] cluster 'sg-prod-2' from group_id@cluster overrides --ap-cluster 'hk-test'\n" + HOME_NOTE
    assert result.out.startswith("export AP_CLUSTER=sg-prod-2\n")


def test_same_cluster_twice_is_no_warning(ap):
    assert ap("APG-PARAMS@sg-prod-2", "--ap-cluster", "SG-PROD-2").err == HOME_NOTE


def test_environment_variables(sandbox, bl, monkeypatch):
    monkeypatch.setenv("AP_BASE_URL", sandbox.url)
    monkeypatch.setenv("AP_API_KEY", AP_KEY)
    monkeypatch.setenv("AP_CLUSTER", "sg-prod-2")
    result = bl("--retry", "0", "ap-cmd", "APG-PARAMS")
    assert (result.code, result.err) == (0, HOME_NOTE)
    assert result.out.startswith("export AP_CLUSTER=sg-prod-2\n")


def test_flags_win_over_environment_variables(ap, monkeypatch, closed_port):
    monkeypatch.setenv("AP_BASE_URL", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("AP_API_KEY", "wrong")
    monkeypatch.setenv("AP_CLUSTER", "hk-test")
    result = ap("APG-PARAMS", "--ap-cluster", "sg-prod-2")
    assert result.code == 0 and result.out.startswith("export AP_CLUSTER=sg-prod-2\n")


def test_benchloop_lookup_failure_only_warns(ap):
    """No cluster given and Benchloop does not know the group: a warning, then the usage error."""
    result = ap("APG-SAMPLE")
    assert result.code == 2
    assert result.err.splitlines()[0] == ('[warn] failed to resolve cluster from Benchloop group APG-SAMPLE: '
                                          'API error 404: {"error": "group not found: APG-SAMPLE"}')
    assert result.err.endswith("Error: AP_CLUSTER is required (use --ap-cluster or environment variable)\n")


def test_benchloop_lookup_runs_before_the_key_check(ap):
    result = ap("APG-PROFILE", key=None)
    assert result.code == 2 and result.err.endswith(
        "Error: AP_API_KEY is required (use --ap-api-key or environment variable)\n")


# --------------------------------------------------------------- usage errors
@pytest.mark.parametrize(("args", "key", "message"), [
    (["APG-PARAMS@sg-prod-2"], None, "AP_API_KEY is required (use --ap-api-key or environment variable)"),
    (["APG-PARAMS"], AP_KEY, "AP_CLUSTER is required (use --ap-cluster or environment variable)"),
    (["APG-PARAMS"], None, "AP_API_KEY is required (use --ap-api-key or environment variable)"),
    (["APG-PARAMS@sg-prod-2", "--params", "{bad"], AP_KEY,
     "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    (["APG-PARAMS@sg-prod-2", "--overrides", "nope"], AP_KEY, "invalid JSON: Expecting value: line 1 column 1 (char 0)"),
    ([], AP_KEY, "Missing argument 'GROUP_ID'."),
])
def test_usage_errors(ap, args, key, message):
    result = ap(*args, key=key, benchloop_key=False)
    assert (result.code, result.out) == (2, "")
    assert result.err.endswith(f"Error: {message}\n")


def test_not_found_wins_over_invalid_json(ap):
    result = ap("APG-NONE@hk-test", "--params", "{bad")
    assert (result.code, result.err) == (1, "[error] group 'APG-NONE' not found on cluster 'hk-test'.\n")


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--params", "[1]", "--params must be a JSON object, not list"),
    ("--overrides", '"x"', "--overrides must be a JSON object, not str"),
])
def test_json_that_is_not_an_object(ap, option, value, message):
    result = ap("APG-PROFILE@eval-hk-prod-1", option, value)
    assert (result.code, result.out, result.err) == (1, "", f"[error] failed to build command: {message}\n")


def test_empty_json_changes_nothing(ap):
    assert ap("APG-SAMPLE@hk-prod-2", "--params", "{}").out == ap("APG-SAMPLE@hk-prod-2").out


# ----------------------------------------------------------- extra arguments
def test_extra_arguments(ap, text_snapshot):
    result = ap("APG-SAMPLE@hk-prod-2", "-concurrency", "16", "-p", '{"x": "y", "token": "sk-1234567"}',
                "--extra", "v 1", "--show-secrets", "--flag", "positional")
    assert result.code == 0
    lines = result.out.splitlines()
    assert "  -concurrency 16 \\" in lines  # replaces --concurrency 2, spelt as typed
    assert "  --show-secrets" not in result.out
    assert lines[-2:] == ["  --extra 'v 1' \\", "  --flag positional"]
    assert result.out == text_snapshot


def test_extra_arguments_after_the_id_are_ap_cmds_not_global(ap):
    """After ap-cmd, -q and --concurrency are ap-cmd's own; before it they are the global ones."""
    result = ap("APG-PARAMS@sg-prod-2", "-q", "qq", "--concurrency", "3", before=("-q", "--concurrency", "2"))
    assert result.code == 0
    assert "  -q qq \\\n" in result.out and "  --concurrency 3 \\\n" in result.out


def test_extra_p_without_a_p_segment_is_appended(ap):
    out = ap("APG-EMPTY@pre-release-1", "-p", '{"a": "b"}').out
    assert out.endswith("  -p '{\"a\": \"b\"}'\n")


# -------------------------------------------------------------------- errors
def test_not_found_on_any_cluster(ap):
    result = ap("APG-NONE", "--ap-cluster", "somewhere")
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith("[error] group 'APG-NONE' not found on any known cluster.\n"
                                 "Hint: if the group is on an unlisted cluster, specify it with: bl ap-cmd "
                                 "APG-NONE@<cluster_name>\n"
                                 "Searched on AgentPlatform (/api/groups/{group}), in this order: somewhere, hk-test, ")
    assert result.err.endswith("bj-prod-1. ap-cmd takes the id of an AgentPlatform group, the one a benchmark group "
                               "was submitted as.\n")


def test_discovery_tries_the_clusters_in_order(ap, sandbox):
    before = len(sandbox.requests_log)
    assert ap("APG-NONE", "--ap-cluster", "sg-prod-2").code == 1
    clusters = [r.headers.get("x-cluster") for r in sandbox.requests_log[before:] if r.path.startswith("/api/groups/")]
    assert clusters == ["sg-prod-2", "hk-test", "hk-benchmark-dev", "pre-release-1", "pre-release-2",
                        "pre-release-gpu", "rl-sg-prod-1", "eval-hk-prod-1", "hk-prod-2", "wlcb-prod-1", "sh-prod-1",
                        "hz-prod-1", "bj-prod-1"]


def test_group_without_template_or_profile(ap):
    result = ap("APG-BARE@hk-test")
    assert (result.code, result.err) == (
        1, "[error] failed to build command: Group has no template and no profile; cannot reconstruct command\n")


@pytest.mark.parametrize(("key", "status"), [("wrong", 403), ("expired-key", 401)])
def test_wrong_key(ap, key, status):
    result = ap("APG-PARAMS", "--ap-cluster", "hk-test", key=key)
    assert (result.code, result.out) == (3, "")
    assert result.err == f"[error] authentication error: AgentPlatform authentication failed (HTTP {status})\n"


def test_network_failure(sandbox, bl, closed_port):
    result = bl("--retry", "0", "ap-cmd", "APG-PARAMS@sg-prod-2", "--ap-base-url", f"http://127.0.0.1:{closed_port}",
                "--ap-api-key", AP_KEY)
    assert (result.code, result.out) == (4, "")
    assert result.err.startswith("[error] failed to fetch group APG-PARAMS: ")
    assert "Connection refused" in result.err and "benchmark-analysis" not in result.err


# ------------------------------------------------------------------ security
def test_each_key_goes_to_its_own_service_only(ap, sandbox):
    before = len(sandbox.requests_log)
    assert ap("APG-PROFILE").code == 0
    seen = {(urlsplit(r.path).path.split("/")[1], r.headers.get("x-api-key")) for r in sandbox.requests_log[before:]}
    assert seen == {("openapi", sandbox.api_key), ("api", AP_KEY), ("apis", AP_KEY)}


def test_headers_of_every_agentplatform_request(ap, sandbox):
    before = len(sandbox.requests_log)
    assert ap("APG-DEBUG@debug").code == 0
    requests = sandbox.requests_log[before:]
    assert requests and {(r.headers.get("x-cluster"), r.headers.get("env")) for r in requests} == {("debug", "debug")}


def test_the_keys_never_show(ap, sandbox):
    result = ap("APG-PARAMS", "--ap-cluster", "hk-test", before=("-v",))
    assert AP_KEY not in result.out + result.err and sandbox.api_key not in result.out + result.err


def test_plain_http_to_another_host_warns():
    from benchloop.base.log import Log
    from benchloop.settings.session import service_http
    from benchloop.table.load import load_model

    stream = io.StringIO()
    service = load_model().services["agentplatform"]
    http = service_http(service, {"ap_api_key": "k" * 8}, {}, Log(stream=stream), timeout=1, retry=0, pool=1)
    assert http.host == "http://agentplatform.aliyun-inc.com" and http.auth_header == "X-API-KEY"
    assert http.auth_statuses == (401, 403)
    assert stream.getvalue() == ("[warn] http://agentplatform.aliyun-inc.com is plain HTTP: the AgentPlatform API "
                                 "key travels unencrypted\n")
    quiet = io.StringIO()
    service_http(service, {"ap_api_key": "k" * 8, "ap_base_url": "http://127.0.0.1:1"}, {}, Log(stream=quiet),
                 timeout=1, retry=0, pool=1)
    assert quiet.getvalue() == ""


def test_base_url_and_key_from_the_config_file(sandbox, bl, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[profile]\nap_base_url = "{sandbox.url}"\nap_api_key = "{AP_KEY}"\n')
    result = bl("--config", str(config), "--retry", "0", "ap-cmd", "APG-PARAMS@sg-prod-2")
    assert result.code == 0, result.err


def test_no_redirect_carries_the_key(bl, origins):
    """A redirect to another origin is not followed, so the key cannot travel there."""
    elsewhere = origins(lambda path, query: (200, {"Content-Type": "application/json"}, b"{}"))
    ap_origin = origins(lambda path, query: (302, {"Location": elsewhere.url + path}, b""))
    result = bl("--retry", "0", "ap-cmd", "G@hk-test", "--ap-base-url", ap_origin.url, "--ap-api-key", AP_KEY)
    assert result.code == 1 and result.err.startswith("[error] failed to fetch group G: API error 302")
    assert ap_origin.seen[0].headers["x-api-key"] == AP_KEY
    assert not elsewhere.seen



# ------------------------------------------------- round three: what users paste
# docs/reliability.md "Round three: ap-cmd".  A printed command is pasted into real shells
# with a fake `ap` on PATH that records its argv: no injected command may run, and `ap` must
# receive exactly the group's values (secrets masked).
SHELLS = [shell for shell in ("bash", "sh") if shutil.which(shell)]
LOCAL_AP_KEY, LOCAL_BL_KEY = "local-ap-key-0123456789", "local-bl-key-0123456789"


@pytest.fixture
def paste(tmp_path):
    """``paste(text, shell)`` -> what the fake ``ap`` received; asserts nothing else ran."""
    bin_dir, work = tmp_path / "bin", tmp_path / "work"
    bin_dir.mkdir()
    work.mkdir()
    record = tmp_path / "ap-argv.json"
    fake = bin_dir / "ap"
    fake.write_text(f"#!{sys.executable}\n"
                    "import json, os, sys\n"
                    "with open(os.environ['AP_RECORD'], 'w', encoding='utf-8') as f:\n"
                    "    json.dump({'argv': sys.argv[1:], 'cluster': os.environ.get('AP_CLUSTER'),\n"
                    "               'key': os.environ.get('AP_API_KEY')}, f)\n")
    fake.chmod(0o755)

    def run(text: str, shell: str) -> dict:
        env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path), "LC_ALL": "C.UTF-8",
               "PYTHONUTF8": "1", "AP_RECORD": str(record), "AP_API_KEY": LOCAL_AP_KEY,
               "BENCHLOOP_API_KEY": LOCAL_BL_KEY}
        done = subprocess.run([shell, "-c", text], cwd=work, env=env, capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stderr) == (0, "")
        assert sorted(p.name for p in tmp_path.rglob("*pwned*")) == []  # no injected command ran
        assert os.listdir(work) == []
        return json.loads(record.read_text(encoding="utf-8"))

    return run


def printable(text: str) -> bool:
    return all(c == "\n" or c.isprintable() for c in text)


def test_a_hostile_group_pasted_into_a_shell_runs_only_ap_with_its_values(ap, paste, sandbox, monkeypatch):
    """Round three (injection, control bytes, masking, local secrets): every value of
    APG-HOSTILE tries to run a command; the printed text holds only printable characters and
    newlines; bash and sh hand `ap` exactly the group's values, secrets masked, `$AP_API_KEY`
    as written (the user's keys are in the environment of bl and of the shell)."""
    monkeypatch.setenv("AP_API_KEY", AP_KEY)
    monkeypatch.setenv("BENCHLOOP_API_KEY", sandbox.api_key)
    result = ap("APG-HOSTILE@hk-benchmark-dev")
    assert result.code == 0, result.err
    group = GROUPS["APG-HOSTILE"][1]
    ctx = group["submission_context"]
    params = {**ctx["params"], "nested": {"api_key": "sk***6789", "list": [{"password": "hu***ter2"}]},
              "aws_secret_access_key": "wJ***EY12", "db_url": "postgres://admin:***@db.internal:5432/evals"}
    overrides = {"env": {"OPENAI_API_KEY": "sk***6789", "password": "hu***ter2", "HOME": "/root"},
                 "containers": [{"env": [{"name": "DB_PASSWORD", "value": "hu***ter2"},
                                         {"name": "LOG_LEVEL", "value": "debug"}]}]}
    expected = ["job", "create", group["template"], "--dataset=" + group["dataset"],
                "--agenthub-ref", group["agenthub_revision"], "--concurrency", "4", "--suite-name=" + group["name"],
                "-q", group["queue_id"], "--batch-size", "50", "-p", params, "--overrides", overrides]
    assert SHELLS
    for shell in SHELLS:
        seen = paste(result.out, shell)
        argv = seen["argv"]
        assert [json.loads(a) if i in (14, 16) else a for i, a in enumerate(argv)] == expected, shell
        assert (seen["cluster"], seen["key"]) == ("hk-benchmark-dev", "***")
        assert LOCAL_AP_KEY not in json.dumps(argv) and LOCAL_BL_KEY not in json.dumps(argv)
    assert printable(result.out) and "\x1b" not in result.err
    for key in (AP_KEY, sandbox.api_key):
        assert key not in result.out + result.err
    assert "[warn] -p ap_key: $AP_API_KEY is left as written" in result.err


def test_a_hostile_profile_pasted_into_a_shell(ap, paste):
    """Round three: the profile's spec.template and name, and trials, are quoted or checked too."""
    result = ap("APG-HOSTILE-PROFILE@hk-benchmark-dev")
    assert (result.code, result.err) == (0, "")
    group, profile = GROUPS["APG-HOSTILE-PROFILE"][1], PROFILES[("prof-hostile", 1)]
    expected = ["job", "create", profile["spec"]["template"], f"--profile={profile['name']}:v1", "--trials", "3",
                "--suite-name", group["name"], "--concurrency", "2", "-q", group["queue_id"]]
    for shell in SHELLS:
        assert paste(result.out, shell)["argv"] == expected, shell


def test_control_characters_from_the_server_never_reach_the_terminal(bl, served, paste):
    """Round three (control bytes): a conceal sequence (ESC [8m) hid an executing $(...) on screen;
    OSC, CR, C1 and bidi controls went out raw too."""
    name = "run \x1b[8m$(touch pwned)\x1b[0m \x1b]0;title\x07 \r \x9b \u202e"
    server = served({**PLAIN, "name": name, "submission_context": {"params": {"note": "\x1b[2J\x85"}}})
    result = ap_cmd(bl, server, "G@c1")
    assert result.code == 0 and printable(result.out)
    for shell in SHELLS:
        argv = paste(result.out, shell)["argv"]
        assert argv[argv.index("--suite-name") + 1] == name
        assert json.loads(argv[argv.index("-p") + 1]) == {"note": "\x1b[2J\x85"}


def test_secrets_at_any_depth_are_masked(bl, served):
    """Round three (masking gaps): nested -p values, --overrides, an alphanumeric
    aws_secret_access_key and a URL's password were printed in clear."""
    server = served({**PLAIN, "submission_context": {
        "params": {"a": {"api_key": "sk-nested-0123456789"}, "aws_secret_access_key": "wJalrXUtnFEMIK7MDENGbPxRfiCYEX",
                   "db_url": "postgres://admin:hunter2pass@db:5432/x"},
        "overrides": {"env": {"OPENAI_API_KEY": "sk-override-0123456789", "password": "hunter2pass"}}}})
    result = ap_cmd(bl, server, "G@c1")
    assert result.code == 0
    for secret in ("sk-nested-0123456789", "wJalrXUtnFEMIK7MDENGbPxRfiCYEX", "hunter2pass", "sk-override-0123456789"):
        assert secret not in result.out
    assert ('-p \'{"a": {"api_key": "sk***6789"}, "aws_secret_access_key": "wJ***CYEX", '
            '"db_url": "postgres://admin:***@db:5432/x"}\'') in result.out
    assert '--overrides \'{"env": {"OPENAI_API_KEY": "sk***6789", "password": "hu***pass"}}\'' in result.out


def test_extra_arguments_with_control_characters_are_pasted_exactly(ap, paste):
    """Round three (control bytes): what the user adds is printed the same way."""
    result = ap("APG-DEBUG@debug", "--note", "a\x1b[8mb;c", "-x_y", "-1")
    assert result.code == 0 and printable(result.out)
    for shell in SHELLS:
        assert paste(result.out, shell)["argv"][-4:] == ["--note", "a\x1b[8mb;c", "-x_y", "-1"]


@pytest.fixture
def served():
    """``served(group, benchloop_cluster=None)``: a scripted AgentPlatform (and Benchloop) serving
    group ``G``; the servers stop after the test."""
    servers = []

    def serve(group: dict, benchloop_cluster: str | None = None):
        routes = {"/api/groups/G": json_reply(group)}
        if benchloop_cluster is not None:
            routes["/openapi/groups/G"] = json_reply({"group_id": "G", "cluster": benchloop_cluster})
        server = start_scripted(routes)
        servers.append(server)
        return server

    yield serve
    for server in servers:
        server.stop()


def ap_cmd(bl, server, *args: str):
    return bl("--retry", "0", "ap-cmd", *args, "--ap-base-url", server.url, "--ap-api-key", AP_KEY)


PLAIN = {"group_id": "G", "template": "swe-agent", "name": "n", "max_concurrency": 2, "queue_id": "q1",
         "submission_context": {"params": {"model": "m"}}}


@pytest.mark.parametrize(("change", "message"), [
    ({"max_concurrency": "2&&touch pwned"}, "max_concurrency '2&&touch pwned' is not a whole number (0 or more)"),
    ({"submission_context": {"batch_size": "$(touch pwned)", "params": {"model": "m"}}},
     "batch_size '$(touch pwned)' is not a whole number (0 or more)"),
    ({"max_concurrency": -1}, "max_concurrency '-1' is not a whole number (0 or more)"),
    ({"template": "-rf"}, "template '-rf' starts with '-': ap would read it as an option"),
    ({"queue_id": "--all"}, "queue_id '--all' starts with '-': ap would read it as an option"),
    ({"name": "a\x00b"}, "'a\\x00b' contains a NUL character, which no command argument can carry"),
])
def test_values_that_cannot_be_printed_safely_are_refused(bl, served, change, message):
    """Round three: numbers are numbers; a leading dash has no `=` form for the template and -q."""
    server = served({**PLAIN, **change})
    result = ap_cmd(bl, server, "G@c1")
    assert (result.code, result.out, result.err) == (1, "", f"[error] failed to build command: {message}\n")


def test_a_command_no_shell_can_run_is_refused(bl, served):
    """Round three (size): a 200 KB name and 5,000 params made a 764 KB command."""
    params = {f"param_{i}": "v" * 100 for i in range(5000)}
    server = served({**PLAIN, "name": "n" * 200_000, "submission_context": {"params": params}})
    result = ap_cmd(bl, server, "G@c1")
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith("[error] failed to build command: the command would be ")
    assert "more than the 131,072 a shell can run" in result.err and len(result.err) < 300


def test_a_cluster_with_crlf_from_benchloop_is_bad_data_not_network(bl, served):
    """Round three: it failed in the X-CLUSTER header and exited 4 ("network")."""
    server = served(PLAIN, benchloop_cluster="sg-prod-2\r\nX-Injected: 1")
    result = bl("--host", server.url, "--api-key", "bl-key", "--retry", "0", "ap-cmd", "G",
                "--ap-base-url", server.url, "--ap-api-key", AP_KEY)
    assert (result.code, result.out) == (1, "")
    assert result.err == ("[error] Benchloop group G records an invalid cluster 'sg-prod-2\\r\\nX-Injected: 1': "
                          "a cluster name is visible ASCII without spaces\n")
    assert [s.path for s in server.seen] == ["/openapi/groups/G"]  # nothing sent to AgentPlatform
    no_key = bl("--host", server.url, "--api-key", "bl-key", "--retry", "0", "ap-cmd", "G", "--ap-base-url", server.url)
    assert no_key.code == 2  # the missing key is still the first complaint (docs/contract.md 1.5 order)


@pytest.mark.parametrize("args", [["G@a\rb"], ["G", "--ap-cluster", "a b"], ["G", "--ap-cluster", "中"]])
def test_an_invalid_cluster_given_by_the_user_is_a_usage_error(bl, served, args):
    server = served(PLAIN)
    result = ap_cmd(bl, server, *args)
    assert (result.code, result.out) == (2, "")
    assert "invalid AgentPlatform cluster" in result.err and server.seen == []


def test_an_option_spelt_with_underscores_is_an_extra_argument_as_typed(bl, served):
    """Round three: Cyclopts read --suite_name as --suite-name; the contract (and the official
    client) pass it on as an extra that replaces the segment as typed."""
    server = served(PLAIN)
    result = ap_cmd(bl, server, "G@c1", "--suite_name", "X", "--batch_size=5")
    assert result.code == 0, result.err
    assert "  --suite_name X \\\n" in result.out and "--suite-name" not in result.out
    assert result.out.endswith("  --batch_size=5\n")
    before = ap_cmd(bl, server, "--suite_name", "X", "G@c1")  # an unknown option before the id, as --x would be
    assert before.code == 2 and before.err.endswith("Error: Unknown option: --suite_name.\n")
    key = ap_cmd(bl, server, "G@c1", "--ap_api_key", "sk-typed-0123456789")  # never printed as an extra
    assert (key.code, key.out) == (2, "") and "sk-typed" not in key.err
    assert key.err.endswith("Error: --ap_api_key is not passed to ap (it would be printed): write --ap-api-key\n")


def test_the_local_environment_never_reaches_the_command(bl, served, monkeypatch):
    """Round three (local secrets): `$AP_API_KEY` and `${BENCHLOOP_API_KEY}` in params used to be
    expanded, printing the user's keys in clear."""
    monkeypatch.setenv("AP_API_KEY", "users-ap-key-0123456789")
    monkeypatch.setenv("BENCHLOOP_API_KEY", "users-bl-key-0123456789")
    server = served({**PLAIN, "submission_context": {"params": {"a": "$AP_API_KEY", "b": "${BENCHLOOP_API_KEY}"}}})
    result = bl("--retry", "0", "ap-cmd", "G@c1", "--ap-base-url", server.url)
    assert result.code == 0
    assert "users-" not in result.out + result.err
    assert '-p \'{"a": "$AP_API_KEY", "b": "${BENCHLOOP_API_KEY}"}\'' in result.out
    assert result.err.splitlines() == [
        "[warn] -p a: $AP_API_KEY is left as written (bl does not expand variables from your environment)",
        "[warn] -p b: ${BENCHLOOP_API_KEY} is left as written (bl does not expand variables from your environment)"]
