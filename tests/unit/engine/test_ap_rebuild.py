"""The pure pieces of ap-cmd's reconstruction (benchloop/steps/ap_rebuild.py), one rule at a time."""

from __future__ import annotations

import pytest

from benchloop.base import masking
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
    # round three: secret words anywhere in the name, whatever the value looks like
    ("aws_secret_access_key", "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12", True), ("db_password_2", "x", True),
    ("secretName", "abc", True), ("secret_count", 3, False), ("password_required", True, False),
])
def test_is_sensitive(key, value, sensitive):
    assert masking.is_sensitive(key, value) is sensitive


@pytest.mark.parametrize(("value", "masked"), [("abcdef", "***"), ("abcdefg", "ab***defg"), ("", "***")])
def test_mask(value, masked):
    """ap-cmd's variant of the one policy: the official client's first 2 and last 4 of any value
    longer than 6 characters (bl's own policy keeps them for 16 or more only)."""
    assert r.mask_tree({"password": value}) == {"password": masked}
    if value:
        assert masking.shown_key(value, masking.AP_CMD) == masked
    assert masking.shown_key("abcdefg") == "***" and masking.shown_key("abcdefghijklmnop") == "ab***mnop"


def test_show_params_never_expands_the_environment(monkeypatch):
    """Round three: a ``$VAR`` from the server stays as written (it used to be expanded from the
    local environment, so ``"$AP_API_KEY"`` printed the user's key)."""
    monkeypatch.setenv("SECRET_HOME", "/h")
    monkeypatch.setenv("AP_API_KEY", "the-users-own-key-123")
    shown = r.show_params({"api_key": "sk-12345678", "home": "$SECRET_HOME", "user_key": "sk-abcdefgh",
                           "steal": "${AP_API_KEY}", "n": "中"}, user_keys={"user_key"})
    assert shown == ('\'{"api_key": "sk***5678", "home": "$SECRET_HOME", "user_key": "sk-abcdefgh", '
                     '"steal": "${AP_API_KEY}", "n": "中"}\'')
    assert r.env_references({"home": "$SECRET_HOME", "x": "a $B", "y": "${C}", "z": 1}) == [
        "-p home: $SECRET_HOME is left as written (bl does not expand variables from your environment)",
        "-p y: ${C} is left as written (bl does not expand variables from your environment)"]


# ------------------------------------------------------- round three: quoting
INJECTIONS = ["swe-agent;touch pwned", "q1|touch pwned", "2&&touch pwned", "$(touch pwned)", "`touch pwned`",
              "a\ntouch pwned", "it's", "${HOME}", "x > y", "#c", "*", "~root", "a\\b", "中文 x"]


@pytest.mark.parametrize("value", INJECTIONS)
def test_quote_makes_one_word_of_any_printable_value(value):
    import shlex

    assert shlex.split(r.quote(value)) == [value]


@pytest.mark.parametrize(("value", "quoted"), [
    ("n\x1b[8m", "n\"$(printf '\\033')\"'[8m'"),
    ("\r", "\"$(printf '\\015')\""),
    ("a\x9bb", "a\"$(printf '\\302\\233')\"b"),
    ("\u202eevil", "\"$(printf '\\342\\200\\256')\"evil"),
    ("t\tx y", "t\"$(printf '\\011')\"'x y'"),
])
def test_quote_writes_control_characters_as_printf_escapes(value, quoted):
    text = r.quote(value)
    assert text == quoted
    assert all(c == "\n" or c.isprintable() for c in text)


@pytest.mark.parametrize("value", ["a\x00b", "\ud800"])
def test_quote_refuses_what_no_argument_can_carry(value):
    with pytest.raises(r.BuildError):
        r.quote(value)


def test_json_word_escapes_what_a_terminal_would_act_on():
    value = {"t": "\x1b]0;x\x07\x9b\u202e\x7f\x00\U000e0001 中"}
    text = r.json_word(value)
    assert text.isprintable()
    import json
    import shlex

    assert json.loads(shlex.split(text)[0]) == value


@pytest.mark.parametrize(("value", "segment"), [
    ("d", "--dataset d"), ("-d", "--dataset=-d"), ("--x y", "--dataset='--x y'"), (" -d", "--dataset ' -d'"),
])
def test_a_leading_dash_is_joined_with_equals(value, segment):
    assert r.option("--dataset", value) == segment


def test_a_positional_or_short_option_value_with_a_leading_dash_is_refused():
    assert r.positional("swe-agent", "template") == "swe-agent"
    with pytest.raises(r.BuildError, match="^queue_id '-x' starts with '-': ap would read it as an option$"):
        r.positional("-x", "queue_id")


@pytest.mark.parametrize(("value", "number"), [(4, 4), ("4", 4), (0, 0), ("007", 7), (4.0, 4)])
def test_whole_number(value, number):
    assert r.whole_number(value, "trials") == number


@pytest.mark.parametrize("value", ["2&&id", "$(id)", "1 2", -1, "-1", 2.5, True, None, "", "٣", {"a": 1}])
def test_whole_number_refuses_anything_else(value):
    with pytest.raises(r.BuildError, match="is not a whole number"):
        r.whole_number(value, "max_concurrency")


def test_check_size():
    fits = "x" * r.MAX_COMMAND_BYTES
    assert r.check_size(fits) is fits
    with pytest.raises(r.BuildError, match="^the command would be 131,073 bytes, more than the 131,072"):
        r.check_size(fits + "x")
    with pytest.raises(r.BuildError):
        r.check_size("中" * (r.MAX_COMMAND_BYTES // 3 + 1))  # bytes, not characters


@pytest.mark.parametrize(("name", "valid"), [
    ("eval-hk-prod-1", True), ("debug", True), ("a\r\nX: y", False), ("a b", False), ("", False), ("中", False),
])
def test_valid_cluster(name, valid):
    assert r.valid_cluster(name) is valid


# ------------------------------------------------------- round three: masking
def test_mask_tree_masks_at_any_depth():
    value = {"a": {"api_key": "sk-123456789", "list": [{"password": "hunter2hunter2"}]},
             "env": {"OPENAI_API_KEY": "sk-zzzzzzzzz", "password": "pw123456", "HOME": "/root"},
             "containers": [{"name": "DB_PASSWORD", "value": "hunter2hunter2"}, {"name": "LOG", "value": "debug"}],
             "aws_secret_access_key": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY12",
             "db_url": "postgres://admin:hunter2@db:5432/x", "ref": "$AP_API_KEY", "n": 3}
    assert r.mask_tree(value) == {
        "a": {"api_key": "sk***6789", "list": [{"password": "hu***ter2"}]},
        "env": {"OPENAI_API_KEY": "sk***zzzz", "password": "pw***3456", "HOME": "/root"},
        "containers": [{"name": "DB_PASSWORD", "value": "hu***ter2"}, {"name": "LOG", "value": "debug"}],
        "aws_secret_access_key": "wJ***EY12", "db_url": "postgres://admin:***@db:5432/x", "ref": "$AP_API_KEY",
        "n": 3}


def test_mask_tree_shows_what_the_user_typed():
    value = {"env": {"OPENAI_API_KEY": "sk-mine-12345", "password": "theirs-123"}, "api_key": "sk-mine-67890"}
    assert r.mask_tree(value, {"env": {"OPENAI_API_KEY": "sk-mine-12345"}, "api_key": "sk-mine-67890"}) == {
        "env": {"OPENAI_API_KEY": "sk-mine-12345", "password": "th***-123"}, "api_key": "sk-mine-67890"}


@pytest.mark.parametrize(("text", "masked"), [
    ("postgres://admin:hunter2@db:5432/x", "postgres://admin:***@db:5432/x"),
    ("redis://:s3cret@cache:6379/0", "redis://:***@cache:6379/0"),
    ("see mysql://u:p:q@h and https://x.org/a:b@c", "see mysql://u:***@h and https://x.org/a:b@c"),
    ("https://user@host/x", "https://user@host/x"), ("postgres://admin:***@db", "postgres://admin:***@db"),
])
def test_mask_url(text, masked):
    assert masking.shown_url(text, masking.AP_CMD) == masked
    assert r.mask_tree({"url": text}) == {"url": masked}


def test_masking_twice_changes_nothing():
    """merge_params masks a ``-p`` object that was printed (masked) already."""
    once = r.mask_tree({"api_key": "sk-123456789", "u": "pg://a:b@c", "x": {"secret": "abcdefgh"}})
    assert r.mask_tree(once) == once


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
        "--concurrency 4", "-q 'q 1'", "--batch-size 100", "--dataset d1", "-p '{\"b\": 1}'", "--overrides '{\"s\": 2}'"]
    same = r.Changes(trials=1, concurrency=2, batch_size=200, agenthub_ref="rev0", dataset="d0")
    assert r.profile_segments(group, PROFILE, same, 200)[:4] == [
        "ap job create t", "--profile prof:v2", "--suite-name 's n'", "-q 'q 1'"]


def test_plain_segments_order():
    group = {"template": "t", "agenthub_revision": "r", "max_concurrency": 0, "name": "n", "queue_id": "q",
             "submission_context": {"batch_size": 200, "trials": 9}}
    assert r.plain_segments(group, {"a": "b"}, "d/s", r.Changes(), 200, {"x": 1}) == [
        "ap job create t", "--dataset d/s", "--agenthub-ref r", "--concurrency 0", "--suite-name n", "-q q",
        "-p '{\"a\": \"b\"}'", "--overrides '{\"x\": 1}'"]


def test_segments_quote_every_server_value():
    """Round three: the template, -q, --concurrency, --batch-size and --trials were printed bare."""
    group = {"template": "t;touch p", "max_concurrency": "4", "name": "-n", "queue_id": "q|x", "dataset": "-d",
             "submission_context": {"batch_size": "50"}}
    assert r.plain_segments(group, {}, "-d", r.Changes(), 200, None) == [
        "ap job create 't;touch p'", "--dataset=-d", "--concurrency 4", "--suite-name=-n", "-q 'q|x'",
        "--batch-size 50"]
    profile = {"name": "-p $(x)", "version": 1, "spec": {"template": "s|t", "trials": 1}}
    assert r.profile_segments({"submission_context": {"trials": "3"}}, profile, r.Changes(), 200) == [
        "ap job create 's|t'", "--profile='-p $(x):v1'", "--trials 3"]
    with pytest.raises(r.BuildError, match="^trials '3;x' is not a whole number"):
        r.profile_segments({"submission_context": {"trials": "3;x"}}, profile, r.Changes(), 200)
    for bad in ({"max_concurrency": "2&&x"}, {"submission_context": {"batch_size": "$(x)"}}, {"template": "-rf"},
                {"queue_id": "-q"}):
        with pytest.raises(r.BuildError):
            r.plain_segments({**group, **bad}, {}, "", r.Changes(), 200, None)


def test_overrides_are_masked_like_params():
    segments = r.plain_segments({"template": "t"}, {"a": {"token": "abc-secret"}}, "", r.Changes(), 200,
                                {"env": {"OPENAI_API_KEY": "sk-0123456789"}})
    assert segments[1:] == ['-p \'{"a": {"token": "ab***cret"}}\'',
                            '--overrides \'{"env": {"OPENAI_API_KEY": "sk***6789"}}\'']


def test_option_key_and_segment_key():
    assert r.option_key("--suite_name=X") == "suite-name" and r.option_key("-q") == "q" and r.option_key("x") is None
    assert r.segment_key("--dataset=-d") == "dataset" and r.segment_key("ap job create t") is None
    assert r.merge_extras(["ap job create t", "--dataset=-d"], ["--dataset", "e"]) == ["ap job create t", "--dataset e"]


def test_check_extras_refuses_ap_cmds_own_options_spelt_with_underscores():
    r.check_extras(["--suite_name", "x", "--my_flag"])
    with pytest.raises(ValueError, match="^--ap_api_key is not passed to ap \\(it would be printed\\): write --ap-api-key$"):
        r.check_extras(["--ap_api_key=sk-typed-123"])


def test_extras_are_quoted_like_everything_else():
    assert r.merge_extras(["ap job create t"], ["--note", "a\x1bb"]) == [
        "ap job create t", "--note a\"$(printf '\\033')\"b"]


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
