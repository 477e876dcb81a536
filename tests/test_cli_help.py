"""Help, version and the "no action" behaviour of `bl` (CONTRACT.md 1.1).

Help texts are pinned with syrupy snapshots (COLUMNS=100 comes from conftest),
one per resource and per resource/action of the endpoint table, so any change
of an option, a help string or the layout shows up in review.
"""

from __future__ import annotations

import pytest

from benchloop import __version__
from benchloop.specload import load_spec

SPEC = load_spec()
# A resource marked `command: true` is a single command (`bl pull ...`), not a group of actions.
RESOURCES = [res for res, body in SPEC["resources"].items() if not body.get("command")]
ACTIONS = [(res, action) for res, body in SPEC["resources"].items() for action in body["actions"]]


def argv(resource: str, action: str) -> list[str]:
    return [resource] if SPEC["resources"][resource].get("command") else [resource, action]
BUILTIN_ACTIONS = [("config", "set"), ("config", "show"), ("config", "path")]


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
        if hidden.get(opt["name"]):
            # An id option of an unsupported dimension is parsed (for a precise usage
            # error) but not advertised.
            assert opt["flags"][0] not in result.out, opt["flags"]
            continue
        assert opt["flags"][0] in result.out, opt["flags"]
    assert result.out == text_snapshot


@pytest.mark.parametrize(("resource", "action"), BUILTIN_ACTIONS,
                         ids=[f"{r}-{a}" for r, a in BUILTIN_ACTIONS])
def test_builtin_action_help(bl, text_snapshot, resource, action):
    result = bl(resource, action, "--help")
    assert result.code == 0
    usage = result.out.splitlines()[0]
    assert usage.startswith("Usage: bl") and f" {resource} {action} " in usage
    assert result.out == text_snapshot


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
