"""Every resource and action through the Python client gives what the CLI gives.

The cases are generated from the typed model: every action of the table, for
every dimension it takes, with ids of the sandbox, plus hand-written option
variants.  Each case runs as ``bl ...`` (in-process, the real entry point) and
as ``Client`` method over the same sandbox, and the results must agree:

* exit 0: the method returns the CLI's JSON array as Python values (printing
  actions), or writes the same files with the same bytes (downloads: CLI into
  one root, the client into another);
* exit 1: ``PartialFailure`` whose ``failures`` are the ids and messages of
  the CLI's failure summary, and whose ``results`` are what the CLI printed
  or wrote;
* exit 2: ``UsageError`` with the CLI's message; exit 4: ``NetworkError``.

A new action of the table is covered without touching this file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support import cli_words, comparable_files, final_files

import benchloop
from benchloop.sdk.methods import attribute, sdk_options
from benchloop.table.load import load_model
from benchloop.table.model import Action

SPEC = load_model()
IDS = {"group": "G1", "job": ["G1-J0001", "G1-J0002", "NOPE"], "task": "T1"}
TASK_LISTS = {"brm": ["uid-G1-1"]}  # brm's --task-id is a list of behaviour task uids

# Option variants beyond the defaults: (resource, action, dimension, extra keywords).
VARIANTS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("metrics", "get", "group", {"scope": "overall"}),
    ("metrics", "get", "group", {"scope": "detail"}),
    ("metrics", "get", "group", {"scope": "bogus"}),
    ("metrics", "download", "group", {"scope": "detail"}),
    ("overview", "get", "group", {"scope": "summary"}),
    ("jobs", "get", "group", {"page": 2, "page_size": 7, "status": "failed"}),
    ("jobs", "get", "group", {"all": True, "status": "failed"}),
    ("jobs", "get", "group", {"all": True, "page_size": 3, "template": "swe"}),
    ("jobs", "get", "group", {"page": 0}),
    ("jobs", "download", "group", {"page_size": 9, "status": "passed"}),
    ("tasks", "get", "group", {"all": True, "page_size": 4}),
    ("tasks", "get", "group", {"search": "T000", "status": "failed"}),
    ("report", "trigger", "group", {"include_passed": True}),
    ("trajectory", "download", "task", {"task_id": "T3"}),
    ("metadata", "download", "task", {"task_id": "T2"}),
    ("artifacts", "download", "job", {"list_only": True, "include": "*.tgz"}),
    ("artifacts", "download", "group", {"list_only": True}),
    ("artifacts", "download", "group", {"exclude": "*.log"}),
    ("artifacts", "download", "task", {"list_only": True}),
    ("pull", "pull", "group", {"sections": ["metrics", "report", "jobs"]}),
    ("pull", "pull", "job", {"sections": "metrics,trajectory"}),
    ("pull", "pull", "group", {"sections": ["bogus"]}),
    ("brm", "get", "task", {"scope": "status"}),
    ("brm", "run", "group", {"steps": [10, 20]}),
    ("brm", "run", "group", {"steps": [10, 10]}),
]


def _dimension_ids(action: Action, dim: str) -> dict[str, Any]:
    option = {"group": "group", "job": "job", "task": "task_id"}[dim]
    if action.waits:  # the live group, finished: G1's running jobs never finish
        return {option: "GLIVE"}
    if dim == "task" and action.resource in TASK_LISTS:
        return {option: TASK_LISTS[action.resource]}
    return {option: IDS[dim]}


def _cases() -> list[Any]:
    cases = []
    for action in SPEC.actions:
        if action.writer == "text":  # ap-cmd prints a command line: not part of the Python client yet
            continue
        for dim in action.dimensions:
            cases.append(pytest.param(action, _dimension_ids(action, dim),
                                      id=f"{action.resource}-{action.name}-{dim}"))
    for resource, name, dim, extra in VARIANTS:
        action = SPEC.action(resource, name)
        words = "-".join(f"{k}={v}" for k, v in extra.items() if k != "task_id")
        cases.append(pytest.param(action, {**_dimension_ids(action, dim), **extra},
                                  id=f"{resource}-{name}-{dim}-{words or extra.get('task_id')}"))
    return cases


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    # Its own sandbox: triggers and brm runs change the backend's state.
    sandbox = make_sandbox(seed=7, groups=3, jobs_per_group=40, tasks_per_group=25, live_jobs=4)
    sandbox.live.advance(4)
    return sandbox


@pytest.fixture
def client(sandbox):
    with benchloop.Client(host=sandbox.url, api_key=sandbox.api_key, retry=0) as bl:
        yield bl


def _normalized(value: Any, action: Action) -> Any:
    if action.resource == "brm" and action.name == "run":
        # Every run creates a new behaviour task: its uid is the only difference.
        return json.loads(re.sub(r"uid-\d+", "uid-N", json.dumps(value)))
    return value


def _summary(err: str) -> list[tuple[str, str]]:
    return re.findall(r"^\[error\]   - (.+?): (.*)$", err, re.M)


@pytest.mark.parametrize(("action", "kwargs"), _cases())
def test_client_agrees_with_the_cli(action, kwargs, api, client, tmp_path):
    cli_root, sdk_root = tmp_path / "cli", tmp_path / "sdk"
    files = action.writes_files(kwargs)
    words = cli_words(action, kwargs) + (["-o", str(cli_root)] if files else [])
    cli = api(*words)
    resource = getattr(client, attribute(action.resource))
    method = getattr(resource, attribute(action.name))
    sdk_kwargs = {**kwargs, **({"output_dir": str(sdk_root)} if files else {})}
    assert set(kwargs) <= {o.name for o in sdk_options(action)}

    if cli.code == 2:
        with pytest.raises(benchloop.UsageError) as caught:
            method(**sdk_kwargs)
        assert cli.err.strip().splitlines()[-1] == f"Error: {caught.value}"
        return
    if cli.code == 0:
        result = method(**sdk_kwargs)
        failures: list[tuple[str, str]] = []
    else:
        assert cli.code == 1, cli.err
        with pytest.raises(benchloop.PartialFailure) as caught:
            method(**sdk_kwargs)
        result, failures = caught.value.results, caught.value.failures
        # Failures are listed as they happen (ids run concurrently): the same ones, in any order.
        assert sorted(failures) == sorted(_summary(cli.err))
    if files:
        assert isinstance(result, benchloop.DownloadResult)
        assert result.failures == failures
        assert comparable_files(sdk_root) == comparable_files(cli_root)
        written = {str(Path(p).relative_to(sdk_root)) for p in result.paths}
        assert written == set(final_files(sdk_root)), "paths lists every file written"
    else:
        assert isinstance(result, list)
        assert _normalized(result, action) == _normalized(json.loads(cli.out), action)


def test_every_action_is_a_method(client):
    for resource in SPEC.resources.values():
        if all(action.writer == "text" for action in resource.actions.values()):
            # A command line to paste into a shell (ap-cmd) is not offered to scripts.
            assert not hasattr(client, attribute(resource.name))
            assert attribute(resource.name) not in client.resources
            continue
        bound = getattr(client, attribute(resource.name))
        for action in resource.actions.values():
            method = getattr(bound, attribute(action.name))
            assert callable(method)
            assert method.__doc__.startswith(action.help)
        if resource.command:
            assert callable(bound)
