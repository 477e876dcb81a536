"""ap-cmd against the official client 0.2.25, both run on the sandbox (opt-in).

Set ``BENCHLOOP_OFFICIAL_BL`` to the official client's ``bl`` (installed in a
scratch virtualenv: ``python3 -m venv /tmp/official && /tmp/official/bin/pip
install benchloop_client==0.2.25``); every case must give the same stdout and
exit code from both.  Skipped otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

OFFICIAL = os.environ.get("BENCHLOOP_OFFICIAL_BL")
pytestmark = pytest.mark.skipif(not OFFICIAL, reason="BENCHLOOP_OFFICIAL_BL is not set")
KEY = "ap-sandbox-key"


def cases(url: str) -> list[tuple[list[str], dict[str, str]]]:
    ap = ["--ap-api-key", KEY, "--ap-base-url", url]
    bench = {"BENCHLOOP_HOST": url, "BENCHLOOP_API_KEY": "official-key"}
    return [
        (["ap-cmd", "APG-PROFILE", *ap], bench),
        (["ap-cmd", "APG-PROFILE", *ap, "--trials", "1", "--concurrency", "2", "--batch-size", "200",
          "--params", '{"temperature": 0.5, "new": "sk-abcdef123456"}'], bench),
        (["ap-cmd", "APG-PROFILE", "--ap-api-key", KEY], {**bench, "AP_BASE_URL": url}),
        (["ap-cmd", "APG-PARAMS", *ap, "--ap-cluster", "HK-TEST"], {}),
        (["ap-cmd", "APG-PARAMS@SG-PROD-2", *ap, "--ap-cluster", "hk-test", "--overrides", '{"timeout": 100}'], {}),
        (["ap-cmd", "APG-PARAMS", *ap], {"AP_CLUSTER": "sg-prod-2"}),
        (["ap-cmd", "APG-SAMPLE@hk-prod-2", *ap, "-q", "newq", "-concurrency", "16", "-p", '{"x": "y"}',
          "--extra", "v 1", "pos"], {}),
        (["ap-cmd", "APG-SAMPLE@hk-prod-2", *ap, "--trials", "9", "--dataset", "d x",
          "--params", '{"model_api_key": "sk-visible-key"}'], {}),
        (["ap-cmd", "APG-REMOTE@wlcb-prod-1", *ap], {}),
        (["ap-cmd", "APG-NOTEMPLATE@hz-prod-1", *ap, "--show-secrets"], {}),
        (["ap-cmd", "APG-EMPTY@pre-release-1", *ap], {}),
        (["ap-cmd", "APG-DEBUG@debug", *ap, "--suite-name", "new name"], {}),
        (["ap-cmd", "APG-PARAMS@sg-prod-2", *ap, "--suite_name", "X", "--batch_size=5"], {}),
        (["ap-cmd", "APG-NONE@hz-prod-1", *ap], {}),
        (["ap-cmd", "APG-NONE", *ap, "--ap-cluster", "x"], {}),
        (["ap-cmd", "APG-NONE", *ap, "--params", "{bad"], {"AP_CLUSTER": "hk-test"}),
        (["ap-cmd", "APG-PROFILE@eval-hk-prod-1", *ap, "--params", "{bad"], {}),
        (["ap-cmd", "APG-PROFILE@eval-hk-prod-1", *ap, "--params", "[1]"], {}),
        (["ap-cmd", "APG-BARE@hk-test", *ap], {}),
        (["ap-cmd", "APG-DEBUG@debug", "--ap-base-url", url, "--ap-api-key", "wrong"], {}),
        (["ap-cmd", "APG-DEBUG@debug", "--ap-base-url", url, "--ap-api-key", "expired-x"], {}),
        (["ap-cmd", "APG-DEBUG@debug", "--ap-base-url", url], {}),
        (["ap-cmd", "APG-DEBUG", "--ap-api-key", "x", "--ap-base-url", url], {}),
        (["ap-cmd", "APG-SAMPLE", *ap], bench),
        (["--retry", "0", "ap-cmd", "APG-DEBUG@debug", "--ap-base-url", "http://127.0.0.1:9", "--ap-api-key", "x"], {}),
    ]


def run(exe: list[str], args: list[str], env: dict[str, str]) -> tuple[int, str]:
    done = subprocess.run([*exe, *args], capture_output=True, text=True, env=env, timeout=120)
    return done.returncode, done.stdout


def test_same_stdout_and_exit_code_as_the_official_client(make_sandbox, tmp_path):
    sandbox = make_sandbox(api_key="official-key")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AP_", "BENCHLOOP", "BENCHMARK"))}
    # AP_SANDBOX_HOME stays unset: the official client expands "${AP_SANDBOX_HOME}" from the
    # environment (bl never does, docs/contract.md 8), and leaves an unset one as written.
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), BENCHLOOP_NO_UPDATE_CHECK="1")
    ours = [sys.executable, "-m", "benchloop"]
    different = []
    for args, extra in cases(sandbox.url):
        theirs, mine = run([OFFICIAL], args, {**env, **extra}), run(ours, args, {**env, **extra})
        if theirs != mine:
            different.append((args, theirs, mine))
    assert different == []


def test_what_the_official_client_printed_for_a_hostile_group(make_sandbox, tmp_path):
    """The deliberate differences of round three (docs/contract.md 8), seen on the official client:
    its APG-HOSTILE command runs injected commands when pasted, and prints the user's own
    AP_API_KEY that a group param names; bl's runs none and prints no key."""
    sandbox = make_sandbox(api_key="official-key")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AP_", "BENCHLOOP", "BENCHMARK"))}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), BENCHLOOP_NO_UPDATE_CHECK="1",
               AP_API_KEY=KEY)  # the key the user has in the environment
    args = ["ap-cmd", "APG-HOSTILE@hk-benchmark-dev", "--ap-base-url", sandbox.url]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ap").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "ap").chmod(0o755)
    ran = {}
    for name, exe in (("official", [OFFICIAL]), ("bl", [sys.executable, "-m", "benchloop"])):
        code, out = run(exe, args, env)
        assert code == 0
        work = tmp_path / name
        work.mkdir()
        subprocess.run(["bash", "-c", out], cwd=work, capture_output=True, timeout=60,
                       env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path)})
        ran[name] = (sorted(p.name for p in work.iterdir()), KEY in out)
    assert ran["official"][0] and ran["official"][1]  # pwned-* files; the key in clear
    assert ran["bl"] == ([], False)
