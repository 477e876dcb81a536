"""`bl completion bash|zsh|fish`: scripts generated from the endpoint table.

Each script is pinned with a snapshot.  Bash is checked for real: the script
is sourced in a bash process and the completion function is called with
simulated COMP_WORDS/COMP_CWORD.  zsh (with stubbed completion builtins) and
fish (``complete -C``) get the same check when those shells are installed.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from benchloop.cli.completion import SHELLS, completion_script
from benchloop.table.load import load_spec

SPEC = load_spec()

# (words typed so far, the word being completed) -> the expected candidates
CASES = [
    (["bl"], "", [*SPEC["resources"], "config", "sandbox", "describe", "completion", "mcp"]),
    (["bl"], "me", ["metrics", "metadata"]),
    (["bl", "metrics"], "", ["get", "download"]),
    (["bl", "metrics", "get"], "--s", ["--scope"]),
    (["bl", "metrics", "get"], "--scope", ["--scope"]),
    (["bl", "metrics", "get", "--scope"], "", ["overall", "detail", "all"]),
    (["bl", "--host", "http://h", "metrics", "get", "-g", "G1", "--scope"], "d", ["detail"]),
    (["bl", "overview", "get", "--scope"], "", ["summary", "tasks", "all"]),
    (["bl", "pull"], "--w", ["--with"]),
    (["bl", "describe"], "tr", ["trajectory"]),
    (["bl", "describe", "report"], "", ["get", "download", "trigger"]),
    (["bl", "completion"], "", ["bash", "zsh", "fish"]),
    (["bl", "--error-format"], "", ["text", "json"]),
    (["bl", "config"], "", ["set", "show", "check", "path"]),
    (["bmcli", "jobs", "get"], "--pa", ["--page", "--page-size"]),
    (["bl", "metrics", "get", "-g"], "", []),
]


@pytest.fixture(scope="module")
def scripts() -> dict[str, str]:
    return {shell: completion_script(shell) for shell in SHELLS}


@pytest.mark.parametrize("shell", SHELLS)
def test_script_snapshot(bl, text_snapshot, shell):
    result = bl("completion", shell)
    assert result.code == 0, result.err
    assert result.err == ""
    assert result.out == completion_script(shell)
    assert result.out == text_snapshot


@pytest.mark.parametrize("shell", SHELLS)
def test_script_covers_the_table(scripts, shell):
    script = scripts[shell]
    for rname, resource in SPEC["resources"].items():
        assert rname in script
        for aname, action in resource["actions"].items():
            assert aname in script
            for opt in action["options"]:
                if opt.get("positional"):  # ap-cmd's GROUP_ID: no flag to complete
                    continue
                long = next(f for f in opt["flags"] if f.startswith("--"))
                assert (long[2:] if shell == "fish" else long) in script
                for choice in opt.get("choices") or ():
                    assert choice in script


def test_unknown_shell_is_a_usage_error(bl):
    result = bl("completion", "tcsh")
    assert result.code == 2
    assert result.out == ""
    assert "Error:" in result.err


def _run(argv: list[str], stdin: str) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _check(outputs: list[str]) -> None:
    assert len(outputs) == len(CASES)
    for (words, cur, expected), line in zip(CASES, outputs, strict=True):
        got = line.split()
        assert sorted(got) == sorted(expected), (words, cur, got)


def test_bash_completes_for_real(scripts, tmp_path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    path = tmp_path / "bl.bash"
    path.write_text(scripts["bash"], encoding="utf-8")
    lines = [f"source {path}"]
    for words, cur, _ in CASES:
        quoted = " ".join(f"'{w}'" for w in [*words, cur])
        lines.append(f"COMP_WORDS=({quoted}); COMP_CWORD={len(words)}; _bl; echo \"${{COMPREPLY[*]}}\"")
    lines.append("complete -p bl bmcli >&2")
    out = _run([bash, "--norc", "--noprofile"], "\n".join(lines) + "\n")
    _check(out.splitlines())


def test_zsh_completes_with_stubbed_builtins(scripts, tmp_path):
    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed")
    path = tmp_path / "_bl"
    path.write_text(scripts["zsh"], encoding="utf-8")
    # _describe/compadd are compsys builtins: stub them to print the candidates (filtered by prefix,
    # as the real ones do), and compdef (called when the file is sourced).
    lines = [
        "compdef() { :; }",
        'typeset -ga OUT',
        '_describe() { local -a items=("${(@P)4}"); local i; for i in $items; do i=${i%%:*};'
        ' [[ $i == ${cur}* ]] && OUT+=($i); done }',
        'compadd() { shift; local i; for i in "$@"; do [[ $i == ${cur}* ]] && OUT+=($i); done }',
        "_files() { :; }",
        "_message() { :; }",
        f"source {path}",
    ]
    for words, cur, _ in CASES:
        quoted = " ".join(f"'{w}'" for w in [*words, cur])
        lines.append(f"OUT=(); words=({quoted}); CURRENT={len(words) + 1}; _bl; print -r -- \"${{OUT[*]}}\"")
    out = _run([zsh, "-f"], "\n".join(lines) + "\n")
    _check(out.splitlines())


def test_fish_completes_for_real(scripts, tmp_path):
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed")
    path = tmp_path / "bl.fish"
    path.write_text(scripts["fish"], encoding="utf-8")
    lines = [f"source {path}"]
    for words, cur, _ in CASES:
        line = " ".join([*words, cur])
        lines.append(f"echo (complete -C'{line}' | string replace -r '\\t.*' '')")
    out = _run([fish, "--no-config"], "\n".join(lines) + "\n")
    _check(out.splitlines())
