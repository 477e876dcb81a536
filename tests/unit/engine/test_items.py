"""The table's ``items:`` and ``missing:`` features (benchloop/items.py, Pipeline.fetch_file).

``items:`` selects the entries of an answer: a collection field or every
object under a key anywhere in the tree, with required and unique fields,
added fields (templates) and shell-glob filters from options.  A YAML-only
listing command built on it runs against the sandbox at the end.
"""

from __future__ import annotations

import json
import shutil

import pytest
from support import ROOT

from benchloop.base.errors import StepError
from benchloop.cli import commands
from benchloop.engine.items import select
from benchloop.table import load as specload
from benchloop.table.model import Items, ItemsFilter
from benchloop.table.templates import Context

LISTING = {"artifacts": [{"name": "a.tgz", "url": "u1"}, {"name": "b.log"}, "odd", {"name": "c.tgz"}]}


def test_collection_entries_get_added_fields_and_filters():
    items = Items(collection="artifacts", add={"job_id": "{job}", "group_id": "{group}"},
                  filter=ItemsFilter("name", "include", "exclude"))
    ctx = Context({"job": "J1", "group": None})
    picked = select(items, LISTING, ctx, {"include": "*.tgz", "exclude": "c*"})
    assert picked == [{"name": "a.tgz", "url": "u1", "job_id": "J1"}]  # no group_id: it renders to null
    everything = select(items, LISTING, ctx.child(group="G1"), {})
    assert [e.get("name") for e in everything] == ["a.tgz", "b.log", None, "c.tgz"]
    assert everything[2] == {"value": "odd", "job_id": "J1", "group_id": "G1"}
    assert LISTING["artifacts"][0] == {"name": "a.tgz", "url": "u1"}  # the answer itself is not changed


def test_a_missing_collection_is_empty_and_a_wrong_one_fails():
    items = Items(collection="artifacts", label="artifact listing")
    assert select(items, {}, Context({}), {}) == []
    assert select(items, [1, 2], Context({}), {}) == []
    with pytest.raises(StepError, match="artifact listing must carry 'artifacts' as a list"):
        select(items, {"artifacts": {"name": "x"}}, Context({}), {})


def test_find_walks_the_tree_with_required_and_unique_fields():
    tree = {"steps": [{"trace_media": {"oss_uri": "oss://a/1.png", "mime_type": "image/png"}},
                      {"deep": [{"trace_media": {"oss_uri": "oss://a/1.png"}}, {"trace_media": {"oss_uri": ""}}]},
                      {"trace_media": "not an object"}, {"trace_media": {"oss_uri": "oss://b/2"}}]}
    items = Items(find="trace_media", require="oss_uri", unique="oss_uri")
    assert [e["oss_uri"] for e in select(items, tree, Context({}), {})] == ["oss://a/1.png", "oss://b/2"]


LISTING_RESOURCE = """
  artifact-names:
    help: Artifact listings of jobs, filtered by name.
    actions:
      get:
        help: Print each job's listed artifacts whose name matches.
        writer: stdout
        options: {include: include, exclude: exclude}
        dimensions:
          job:
            element: part
            parts:
              listing:
                request: job_artifacts
                items:
                  collection: artifacts
                  add: {job_id: "{job}"}
                  filter: {field: name, include: include, exclude: exclude}
"""


@pytest.fixture
def listing_table(tmp_path, monkeypatch):
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    shutil.copy(ROOT / "spec" / "benchloop.schema.json", spec_dir)
    text = (ROOT / "spec" / "benchloop.yaml").read_text(encoding="utf-8")
    (spec_dir / "benchloop.yaml").write_text(text.rstrip("\n") + "\n" + LISTING_RESOURCE, encoding="utf-8")
    monkeypatch.setenv("BENCHLOOP_SPEC_DIR", str(spec_dir))
    monkeypatch.setenv("BENCHLOOP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(specload, "_MEMO", {})
    yield
    vars(commands).pop("res__artifact_names", None)


def test_a_yaml_only_listing_part(listing_table, api, backend):
    result = api("artifact-names", "get", "-j", "G1-J0001,G1-J0002", "--include", "*.tgz")
    assert result.code == 0, result.err
    expected = [[{**entry, "job_id": job} for entry in backend(f"/openapi/jobs/{job}/artifacts")["artifacts"]
                 if entry.get("name", "").endswith(".tgz")] for job in ("G1-J0001", "G1-J0002")]
    assert json.loads(result.out) == expected
    assert any(expected)
