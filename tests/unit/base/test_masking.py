"""One masking policy (base/masking.py): what counts as a secret and how it is shown.

The config, the log, the HTTP client's error texts, ap-cmd, the MCP server and the pages of
``bl compare`` and ``bl view`` mask through it; each layer's own tests show it in use there
(test_config_safety, test_hostile, test_ap_rebuild, test_mcp_*, test_view).  Here: the policy
and its one named variant, and a check that no other module writes a mask of its own.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from support import ROOT

from benchloop.base import masking
from benchloop.base.log import Log
from benchloop.transport.decoding import redact

PACKAGE = ROOT / "benchloop"


@pytest.mark.parametrize(("key", "policy", "ap_cmd"), [
    ("abcdef", "***", "***"),
    ("abcdefg", "***", "ab***defg"),                  # ap-cmd: the official client's 6 of 7
    ("abcdefghijklmno", "***", "ab***lmno"),
    ("abcdefghijklmnop", "ab***mnop", "ab***mnop"),   # 16 and more: at most 6 shown
])
def test_a_key_shows_at_most_six_characters_and_never_most_of_it(key, policy, ap_cmd):
    assert masking.shown_key(key) == policy
    assert masking.shown_key(key, masking.AP_CMD) == ap_cmd
    assert masking.shown_key(None) is None and masking.shown_key("") == ""


@pytest.mark.parametrize(("url", "policy", "ap_cmd"), [
    ("https://me:s3cret@backend.example/x", "https://***@backend.example/x", "https://me:***@backend.example/x"),
    ("https://token@backend.example", "https://***@backend.example", "https://token@backend.example"),
    ("https://a@b@host/p?q=@", "https://***@host/p?q=@", "https://a@b@host/p?q=@"),
    ("https://host/a:b@c", "https://host/a:b@c", "https://host/a:b@c"),
    ("see pg://u:p@db and https://x.org", "see pg://***@db and https://x.org", "see pg://u:***@db and https://x.org"),
    ("no url", "no url", "no url"),
])
def test_a_url_shows_no_user_info_and_ap_cmd_keeps_the_user_name(url, policy, ap_cmd):
    assert masking.shown_url(url) == policy
    assert masking.shown_url(url, masking.AP_CMD) == ap_cmd
    assert masking.shown_url(policy) == policy  # masking twice changes nothing


def test_only_keys_long_enough_are_looked_for():
    assert masking.known("abc", None, "", "abcd", "abcd", "k" * 40) == ("abcd", "k" * 40)


@pytest.mark.parametrize("key", ["plain-key-1234", 'key"with"quotes', "key\\slash", "key\x1bescape", "clé-ü-1234"])
def test_a_key_is_scrubbed_in_every_form_an_encoding_gives_it(key):
    text = f"raw {key} json {json.dumps(key)} ascii-json {json.dumps(key, ensure_ascii=False)}"
    scrubbed = masking.scrub(text, (key,))
    assert key not in scrubbed and json.dumps(key)[1:-1] not in scrubbed
    assert json.dumps(key, ensure_ascii=False)[1:-1] not in scrubbed
    body = json.dumps({"error": f"bad key {key}"}).encode()
    assert key.encode() not in redact(body, key) and b"***" in redact(body, key)
    log = Log()  # the log's lines: masked before and after escaping control characters
    log.secrets = (key,)
    cleaned = log.clean(f"[error] {json.dumps(key)} {key}")
    assert key not in cleaned and "\x1b" not in cleaned and cleaned.count("***") == 2


def test_a_json_value_is_scrubbed_in_strings_and_object_keys():
    value = {"secret-key": ["a secret-key b", {"k": "secret-key"}], "n": 1, "t": True}
    assert masking.scrub_value(value, ("secret-key",)) == {"***": ["a *** b", {"k": "***"}], "n": 1, "t": True}
    assert masking.scrub_value(value, ()) is value


@pytest.mark.parametrize(("name", "value", "secret"), [
    ("api_key", "x", True), ("OPENAI_API_KEY", "sk-1", True), ("max_token", 4096, False), ("token", "abc", True),
    ("notion_key", "plainvalue", False), ("notion_key", "ntn_123", True), ("key_path", "${HOME}", False),
])
def test_what_counts_as_a_secret_by_its_name(name, value, secret):
    assert masking.is_sensitive(name, value) is secret


def _string_constants(path: Path) -> list[str | bytes]:
    """The string constants of a module's code (its docstrings left out: they may quote a mask)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, (str, bytes)) and id(node) not in docstrings]


# transport/urls.py masks an httpx.URL's user info in place (``shown_url``: the same rule, on the
# parsed URL it already holds); the sandbox is a backend, not a client.
OWN_MASKS = {"base/masking.py", "transport/urls.py"}


def test_no_module_writes_a_mask_of_its_own():
    """Every ``***`` that bl prints comes from base/masking.py."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in OWN_MASKS or rel.startswith("sandbox/"):
            continue
        found += [(rel, c) for c in _string_constants(path) if ("***" if isinstance(c, str) else b"***") in c]
    assert found == []
