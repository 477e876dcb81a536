"""Help, version and the "no action" behaviour of `bl` (docs/contract.md 1.1).

Help pages are Cyclopts' own, rendered from the command tree the table builds.  They
are pinned with syrupy snapshots (COLUMNS=100 comes from conftest), one per resource,
per resource/action of the endpoint table and per built-in command, so any change of
an option, a help string or the layout shows up in review.
"""

from __future__ import annotations

import json
import re

import pytest

from benchloop import __version__
from benchloop.table.load import load_model, load_spec

SPEC = load_spec()
MODEL = load_model()
# A resource marked `command: true` is a single command (`bl pull ...`), not a group of actions.
RESOURCES = [res for res, body in SPEC["resources"].items() if not body.get("command")]
ACTIONS = [(res, action) for res, body in SPEC["resources"].items() for action in body["actions"]]


def argv(resource: str, action: str) -> list[str]:
    return [resource] if SPEC["resources"][resource].get("command") else [resource, action]


# Every built-in page: the groups (config, sandbox) and every runnable built-in command.
BUILTIN_PAGES = [[name] for name, command in MODEL.commands.items() if command.actions] + [
    leaf.path.split() for leaf in MODEL.command_leaves]
# Every help page of bl: root, resources, table actions, built-ins.
ALL_PAGES = [[], *([r] for r in RESOURCES), *(argv(r, a) for r, a in ACTIONS), *BUILTIN_PAGES]


def test_table_has_the_contract_resources():
    # The parametrisation below must not silently shrink to nothing.
    assert {"metrics", "overview", "jobs", "tasks", "report"} <= set(RESOURCES)
    assert ("metrics", "get") in ACTIONS and ("report", "trigger") in ACTIONS


def test_root_help(bl, text_snapshot):
    result = bl("--help")
    assert result.code == 0
    assert result.err == ""
    assert result.out.startswith("Usage: bl")
    for resource in SPEC["resources"]:
        assert resource in result.out
    for flag in ("--api-key", "--host", "--output-dir", "--no-pretty", "--timeout", "--retry",
                 "--concurrency", "--verbose", "--quiet", "--config", "--version"):
        assert flag in result.out
    assert result.out == text_snapshot


@pytest.mark.parametrize("resource", RESOURCES)
def test_resource_help(bl, text_snapshot, resource):
    result = bl(resource, "--help")
    assert result.code == 0
    assert result.err == ""
    usage = result.out.splitlines()[0]
    assert usage.startswith("Usage: bl") and f" {resource} " in usage
    for action in SPEC["resources"][resource]["actions"]:
        assert action in result.out
    assert result.out == text_snapshot


@pytest.mark.parametrize(("resource", "action"), ACTIONS, ids=[f"{r}-{a}" for r, a in ACTIONS])
def test_action_help(bl, text_snapshot, resource, action):
    words = argv(resource, action)
    result = bl(*words, "--help")
    assert result.code == 0
    assert result.err == ""
    usage = result.out.splitlines()[0]
    assert usage.startswith("Usage: bl") and f" {' '.join(words)} " in usage
    spec_action = SPEC["resources"][resource]["actions"][action]
    hidden = {"job": "job" not in spec_action["dimensions"], "group": "group" not in spec_action["dimensions"]}
    for opt in spec_action["options"]:
        if opt.get("positional"):  # shown by its metavar (ap-cmd's GROUP_ID[@CLUSTER])
            assert opt["metavar"] in result.out
            continue
        if hidden.get(opt["name"]):
            # An id option of an unsupported dimension is parsed (for a precise usage
            # error) but not advertised.
            assert opt["flags"][0] not in result.out, opt["flags"]
            continue
        assert opt["flags"][0] in result.out, opt["flags"]
    assert result.out == text_snapshot


@pytest.mark.parametrize("words", BUILTIN_PAGES, ids=["-".join(w) for w in BUILTIN_PAGES])
def test_builtin_help(bl, text_snapshot, words):
    # Built-ins have the same pages as the table's commands: Cyclopts' own.
    result = bl(*words, "--help")
    assert result.code == 0
    assert result.err == ""
    usage = result.out.splitlines()[0]
    assert usage.startswith(f"Usage: bl {' '.join(words)} ")
    assert result.out == text_snapshot


# ------------------------------------------------------------ flags listed once
_ROW = re.compile(r"^│ (-\S+(?: -\S+)*)")
_PANEL = re.compile(r"^╭─ (.+?) ─")


def listed_flags(page: str, panel: str | None = None) -> list[str]:
    """The flags of every option row of a help page ('│ --output-dir -o DIR  ...'), in order;
    of one panel ('Parameters', 'Global options') when given."""
    flags, current = [], None
    for line in page.splitlines():
        if m := _PANEL.match(line):
            current = m.group(1)
        elif (m := _ROW.match(line)) and panel in (None, current):
            flags += [word for word in m.group(1).split() if word.startswith("-")]
    return flags


def test_listed_flags_reads_rows():
    page = ("╭─ Parameters ───╮\n│ --group -g ID...  Group.   │\n│ --all  All. │\n│        -not-a-row │\n"
            "╰────╯\n╭─ Global options ─╮\n│ --pretty --no-pretty  Pretty. │\n╰─╯\n")
    assert listed_flags(page) == ["--group", "-g", "--all", "--pretty", "--no-pretty"]
    assert listed_flags(page, "Global options") == ["--pretty", "--no-pretty"]


@pytest.mark.parametrize("words", ALL_PAGES, ids=["-".join(w) or "root" for w in ALL_PAGES])
def test_no_help_page_lists_a_flag_twice(bl, words):
    result = bl(*words, "--help")
    assert result.code == 0, result.err
    flags = listed_flags(result.out)
    assert flags  # the rows were read (every page lists the global options)
    assert len(flags) == len(set(flags)), sorted(f for f in flags if flags.count(f) > 1)


GLOBAL_FLAGS = [flag for opt in MODEL.global_options for flag in opt.all_flags]


@pytest.mark.parametrize("path", [leaf.path for leaf in MODEL.command_leaves])
def test_builtin_pages_list_their_own_options_then_the_global_ones_they_leave(bl, path):
    # A built-in's own --api-key (config set, sandbox serve) is the only --api-key row of its
    # page: after the command the flag is the command's (Cyclopts' fallthrough: the child wins).
    leaf = MODEL.command(path)
    page = bl(*path.split(), "--help").out
    own = [flag for opt in leaf.options for flag in opt.all_flags]
    assert sorted(listed_flags(page, "Parameters")) == sorted(own)
    assert listed_flags(page, "Global options") == [
        flag for opt in MODEL.global_options if not set(opt.all_flags) & set(own) for flag in opt.all_flags]


def test_config_set_and_sandbox_serve_show_api_key_once(bl):
    for words in (["config", "set"], ["sandbox", "serve"]):
        page = bl(*words, "--help").out
        assert listed_flags(page).count("--api-key") == 1
    config_set = listed_flags(bl("config", "set", "--help").out)
    for flag in ("--host", "-o", "--output-dir", "--config", "--profile"):
        assert config_set.count(flag) == 1
    assert "--timeout" in config_set and "--error-format" in config_set  # the global ones it leaves


@pytest.mark.parametrize("words", [["metrics", "download"], ["ap-cmd"]], ids=["download", "ap-cmd"])
def test_a_command_that_shadows_a_global_option_lists_its_own(bl, words):
    page = bl(*words, "--help").out
    own = listed_flags(page, "Parameters")
    assert {"-o", "--output-dir"} <= set(own) if words[0] == "metrics" else {"-q", "--concurrency"} <= set(own)
    assert not set(own) & set(listed_flags(page, "Global options"))
    assert "--retry" in listed_flags(page, "Global options")  # the others are still there


def test_help_follows_the_terminal_width(bl, monkeypatch):
    wide = bl("metrics", "get", "--help").out
    monkeypatch.setenv("COLUMNS", "70")
    narrow = bl("metrics", "get", "--help").out
    assert max(len(line) for line in wide.splitlines()) == 100
    assert max(len(line) for line in narrow.splitlines()) == 70


# ------------------------------------------------------------ runnable built-ins
def test_describe_without_arguments_is_not_its_help(bl):
    result = bl("--no-pretty", "describe")
    assert result.code == 0
    assert json.loads(result.out)["program"] == "bl"


def test_completion_without_a_shell_is_a_usage_error(bl):
    result = bl("completion")
    assert result.code == 2
    assert result.out == ""
    assert "Error:" in result.err


# ------------------------------------- sandbox serve = python -m benchloop.sandbox
def test_sandbox_module_help_is_the_bl_page(bl, capsys):
    from benchloop.sandbox.__main__ import main as module_main

    bl_page = bl("sandbox", "serve", "--help").out
    assert module_main(["--help"]) == 0
    assert capsys.readouterr().out == bl_page
    assert bl_page.startswith("Usage: bl sandbox serve [OPTIONS]\n")


def test_sandbox_module_has_no_parser_of_its_own():
    # Issue 36: one parser; the module hands its arguments to `bl sandbox serve`.
    import ast
    from pathlib import Path

    import benchloop.sandbox.__main__ as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                for alias in node.names} | {node.module for node in ast.walk(tree)
                                             if isinstance(node, ast.ImportFrom) and node.module}
    assert "argparse" not in imported and "benchloop.cli.app" in imported


def test_sandbox_fault_kinds_are_the_sandbox_ones():
    from benchloop.sandbox.faults import RATE_KINDS

    fault_kinds = next(o for o in MODEL.command("sandbox serve").options if o.name == "fault_kinds")
    assert tuple(fault_kinds.default.split(",")) == RATE_KINDS


SERVE_ARGS = ["--port", "0", "--seed", "3", "--groups", "2", "--jobs-per-group", "4", "--tasks-per-group", "1",
              "--compare-jobs", "8",
              "--api-key", "k9", "--latency-ms", "2.5", "--connect-latency-ms", "4",
              "--fault-rate", "0.25", "--fault-seed", "5",
              "--fault-kinds", "status, 429", "--no-range", "--artifact-bytes", "10", "--trajectory-steps", "2",
              "--export-waiting", "0", "--export-running", "0", "--hostile", "--live-jobs", "3", "--live-compare", "6",
              "--live-pace", "0.5",
              "--scale-jobs", "9"]


@pytest.fixture
def served(monkeypatch):
    """Calls of sandbox.serve.serve (nothing is served)."""
    from benchloop.sandbox import serve as serve_module

    calls: list[dict] = []
    monkeypatch.setattr(serve_module, "serve", lambda **kwargs: calls.append(kwargs) or 0)
    return calls


def test_both_sandbox_entry_points_serve_the_same(bl, served):
    from benchloop.sandbox.__main__ import main as module_main

    assert bl("sandbox", "serve", "--listen", "::1", *SERVE_ARGS).code == 0
    assert module_main(["--listen", "::1", *SERVE_ARGS]) == 0
    assert module_main(["--host", "::1", *SERVE_ARGS]) == 0  # the older name of --listen
    assert served[0] == served[1] == served[2]
    assert served[0] == {
        "host": "::1", "port": 0, "seed": 3, "groups": 2, "jobs_per_group": 4, "tasks_per_group": 1,
        "api_key": "k9", "latency_ms": 2.5, "connect_latency_ms": 4.0, "fault_rate": 0.25, "fault_seed": 5,
        "fault_kinds": ("status", "429"),
        "range_support": False, "artifact_bytes": 10, "trajectory_steps": 2, "export_waiting": 0,
        "export_running": 0, "hostile": True, "compare_jobs": 8, "live_jobs": 3, "live_compare": 6,
        "live_pace": 0.5,
        "live_unsigned": 0, "scale_jobs": 9}


def test_both_sandbox_entry_points_share_the_defaults(bl, served):
    from benchloop.sandbox.__main__ import main as module_main

    assert bl("sandbox", "serve").code == 0
    assert module_main([]) == 0
    assert served[0] == served[1]
    assert (served[0]["host"], served[0]["port"]) == ("127.0.0.1", 0)


@pytest.mark.parametrize(("args", "message"), [
    (["--fault-rate", "1.5"], "--fault-rate must be between 0 and 1"),
    (["--fault-kinds", "status,nope"], "--fault-kinds must name some of"),
    (["--port", "70000"], "--port must be between 0 and 65535"),
    (["--groups", "-1"], "--groups must not be negative"),
    (["--compare-jobs", "-1"], "--compare-jobs must not be negative"),
    (["--live-compare", "-1"], "--live-compare must not be negative"),
])
def test_both_sandbox_entry_points_refuse_the_same_values(bl, served, capsys, args, message):
    from benchloop.sandbox.__main__ import main as module_main

    result = bl("sandbox", "serve", *args)
    assert result.code == 2 and message in result.err
    assert module_main(args) == 2
    err = capsys.readouterr().err
    assert err == result.err and err.startswith("Usage: bl sandbox serve [OPTIONS]\n")
    assert served == []


def test_bl_sandbox_serve_has_no_host_option(bl, served):
    # On bl, --host is the global backend URL (before the resource); the listen address is --listen.
    assert "--host" not in listed_flags(bl("sandbox", "serve", "--help").out, "Parameters")


def test_help_is_the_same_after_global_options(bl):
    plain = bl("metrics", "get", "--help")
    with_globals = bl("--no-pretty", "-q", "metrics", "get", "--help")
    assert with_globals.code == 0
    assert with_globals.out == plain.out


def test_version(bl):
    result = bl("--version")
    assert result.code == 0
    assert result.out == f"bmcli {__version__}\n"
    assert result.err == ""


def test_version_wins_over_a_command(bl):
    result = bl("--version", "metrics", "get", "-j", "J1")
    assert result.code == 0
    assert result.out == f"bmcli {__version__}\n"


def test_no_arguments_prints_help_and_exits_2(bl):
    result = bl()
    assert result.code == 2
    assert result.out == bl("--help").out


@pytest.mark.parametrize("resource", RESOURCES)
def test_resource_without_action_prints_help_and_exits_2(bl, resource):
    result = bl(resource)
    assert result.code == 2
    text = result.out + result.err
    assert "Usage:" in text
    for action in SPEC["resources"][resource]["actions"]:
        assert action in text
    assert "Traceback" not in text


@pytest.mark.parametrize("resource", RESOURCES)
def test_resource_without_action_prints_the_resource_help(bl, resource):
    result = bl(resource)
    assert result.code == 2
    assert result.out == bl(resource, "--help").out


def test_config_without_action_exits_2(bl):
    result = bl("config")
    assert result.code == 2
    assert result.out == bl("config", "--help").out
    for action in ("set", "show", "path"):
        assert action in result.out
