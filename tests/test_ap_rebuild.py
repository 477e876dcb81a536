"""The pure pieces of ap-cmd's reconstruction (benchloop/steps/ap_rebuild.py), one rule at a time."""

from __future__ import annotations

import pytest

from benchloop.engine.steps import ap_rebuild as r


@pytest.mark.parametrize(("raw", "expected"), [
    ("G1", ("G1", None)), ("G1@hk-test", ("G1", "hk-test")), ("a@b@c", ("a@b", "c")), ("G1@", ("G1", None)),
])
def test_split_target(raw, expected):
    assert r.split_target(raw) == expected


@pytest.mark.parametrize(("value", "quoted"), [
    ("prof:v2", "prof:v2"), ("a b", "'a b'"), ("it's", "'it'\"'\"'s'"), ("", "''"), ("swe-bench/test", "swe-bench/test"),
])
def test_quote_only_when_needed(value, quoted):
    assert r.quote(value) == quoted


@pytest.mark.parametrize(("key", "value", "sensitive"), [
    ("api_key", "x", True), ("model_api_key", "x", True), ("db_password", "x", True), ("myCredential", "x", True),
    ("client_secret", "x", True), ("token", "12345", False), ("token", "abc", True), ("max_token", 4096, False),
    ("access_token", "tok-1", True), ("notion_key", "plainvalue", False), ("notion_key", "ntn_123", True),
    ("openaiKey", "sk-abc", True), ("cache_key", "a1-b2c3d4e5f6g7h8i9j0k", True), ("model", "sk-abc", False),
    ("key_path", "${HOME}", False),
])
def test_is_sensitive(key, value, sensitive):
    assert r.is_sensitive(key, value) is sensitive


@pytest.mark.parametrize(("value", "masked"), [("abcdef", "***"), ("abcdefg", "ab***defg"), ("", "***")])
def test_mask(value, masked):
    assert r.mask(value) == masked


def test_show_params(monkeypatch):
    monkeypatch.setenv("SECRET_HOME", "/h")
    shown = r.show_params({"api_key": "sk-12345678", "home": "$SECRET_HOME", "user_key": "sk-abcdefgh",
                           "n": "中"}, user_keys={"user_key"})
    assert shown == '\'{"api_key": "sk***5678", "home": "/h", "user_key": "sk-abcdefgh", "n": "中"}\''
    assert r.show_params({"home": "$SECRET_HOME"}, expand_env=False) == '\'{"home": "$SECRET_HOME"}\''


@pytest.mark.parametrize(("a", "b", "equal"), [
    ("0.5", 0.5, True), (0.5, "0.5", True), ("true", True, True), ('{"a": 1}', {"a": 1}, True), ("60", 60, True),
    ("x", 1, False), ("1", "1.0", False),
])
def test_loosely_equal(a, b, equal):
    assert r.loosely_equal(a, b) is equal


@pytest.mark.parametrize(("value", "default", "differs"), [
    ("60", 60, False), ("60.0", 60, False), ("61", 60, True), ("true", True, False), ("x", None, True),
    ("abc", "abc", False), ("abc", 3, True),
])
def test_differs_from_default(value, default, differs):
    assert r.differs_from_default(value, default) is differs


def test_overrides_vs_profile():
    assert r.overrides_vs_profile({"a": 1, "b": 2}, {"a": 1}) == {"b": 2}
    assert r.overrides_vs_profile({"a": 1}, {"a": 1}) is None
    assert r.overrides_vs_profile(None, {"a": 1}) is None


def test_overrides_vs_template_splits_sidecars():
    template = {"timeout": 10, "sidecars": {"s": {"resources": {"cpu": "1"}, "image": "i:1"}}}
    overrides = {"timeout": 10, "x": 1, "sidecars": {"s": {"resources": {"cpu": "2"}, "image": "i:1"},
                                                      "t": {"image": "t:1"}}}
    assert r.overrides_vs_template(overrides, template) == {
        "x": 1, "sidecar_resources": {"s": {"cpu": "2"}}, "sidecars": {"t": {"image": "t:1"}}}
    assert r.overrides_vs_template({"timeout": 10}, template) is None


def test_infer_params_with_and_without_a_schema():
    env = {"model": "m2", "MAX_TURNS": "60", "REGION": "r", "INSTANCE_ID": "i", "TOOLS": "all", "X": "1"}
    schema = {"model": {"default": "m1"}, "max_turns": {"default": 60}, "region": {"default": "r", "required": True},
              "instance_id": {}, "tools": {"mapping": {}}, "absent": {"default": 1}}
    per = ("instance_id", "dataset", "split", "docker_image")
    assert r.infer_params(env, schema, per) == {"model": "m2", "region": "r"}
    assert r.infer_params(env, {}, per) == {"model": "m2", "MAX_TURNS": "60", "REGION": "r", "TOOLS": "all", "X": "1"}


def test_apply_changes():
    group = {"name": "a", "submission_context": {"params": {"p": 1}, "overrides": {"r": {"cpu": 1, "mem": 2}}}}
    changed = r.apply_changes(group, r.Changes(suite_name="b", batch_size=5, params={"q": 2},
                                               overrides={"r": {"cpu": 3}}))
    assert changed["name"] == "b"
    assert changed["submission_context"] == {"params": {"p": 1, "q": 2}, "overrides": {"r": {"cpu": 3, "mem": 2}},
                                             "batch_size": 5}
    assert group["submission_context"]["overrides"] == {"r": {"cpu": 1, "mem": 2}}  # the group is not changed
    with pytest.raises(r.BuildError, match="--params must be a JSON object, not list"):
        r.apply_changes(group, r.Changes(params=[1]))


def test_parse_json_option():
    assert r.parse_json_option(None) is None and r.parse_json_option('{"a": 1}') == {"a": 1}
    with pytest.raises(ValueError, match="^invalid JSON: "):
        r.parse_json_option("{")


PROFILE = {"name": "prof", "version": 2, "spec": {"template": "t", "agenthub_revision": "rev0", "concurrency": 2,
                                                   "dataset": "d0", "trials": 1, "params": {"a": 0.5},
                                                   "overrides": {"r": 1}}}


def test_profile_segments_order_and_diffs():
    group = {"agenthub_revision": "rev1", "name": "s n", "max_concurrency": 4, "queue_id": "q 1", "dataset": "d1",
             "submission_context": {"trials": 3, "batch_size": 100, "params": {"a": "0.5", "b": 1},
                                    "overrides": {"r": 1, "s": 2}}}
    assert r.profile_segments(group, PROFILE, r.Changes(), 200) == [
        "ap job create t", "--profile prof:v2", "--agenthub-ref rev1", "--trials 3", "--suite-name 's n'",
        "--concurrency 4", "-q q 1", "--batch-size 100", "--dataset d1", "-p '{\"b\": 1}'", "--overrides '{\"s\": 2}'"]
    same = r.Changes(trials=1, concurrency=2, batch_size=200, agenthub_ref="rev0", dataset="d0")
    assert r.profile_segments(group, PROFILE, same, 200)[:4] == [
        "ap job create t", "--profile prof:v2", "--suite-name 's n'", "-q q 1"]


def test_plain_segments_order():
    group = {"template": "t", "agenthub_revision": "r", "max_concurrency": 0, "name": "n", "queue_id": "q",
             "submission_context": {"batch_size": 200, "trials": 9}}
    assert r.plain_segments(group, {"a": "b"}, "d/s", r.Changes(), 200, {"x": 1}) == [
        "ap job create t", "--dataset d/s", "--agenthub-ref r", "--concurrency 0", "--suite-name n", "-q q",
        "-p '{\"a\": \"b\"}'", "--overrides '{\"x\": 1}'"]


def test_group_extras():
    assert r.group_extras(["-a", "1", "--b", "--c", "x", "pos", "-"]) == [["-a", "1"], ["--b"], ["--c", "x"],
                                                                         ["pos"], ["-"]]


def test_merge_extras():
    segments = ["ap job create t", "--trials 3", "--batch_size 5", "-p '{\"a\": \"1\", \"api_key\": \"sk***5678\"}'"]
    merged = r.merge_extras(segments, ["-trials", "5", "--batch-size", "7", "-p", '{"b": "sk-12345678"}',
                                       "--show-secrets", "--new", "a b", "word", "--params", "{}"])
    assert merged == ["ap job create t", "-trials 5", "--batch-size 7",
                      "-p '{\"a\": \"1\", \"api_key\": \"sk***5678\", \"b\": \"sk-12345678\"}'",
                      "--new 'a b'", "word", "--params '{}'"]  # --params names no segment (the official way)
    assert r.merge_extras(["-p '{\"a\": 1}'"], ["-p", "[1]"]) == ["-p '[1]'"]  # not an object: replaced


def test_render():
    assert r.render("c d", ["ap job create t", "-q q"]) == (
        "export AP_CLUSTER='c d'\nexport AP_API_KEY=***\n\nap job create t \\\n  -q q")
