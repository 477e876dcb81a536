"""Id parsing, safe path components and JSON formatting (property tests included)."""

from __future__ import annotations

import io
import json
import os
from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchloop.base import jsontext
from benchloop.base.files import atomic_write, join_under, safe_component
from benchloop.base.ids import expand_ids
from benchloop.base.jsontext import dumps, write_json_array


def test_expand_ids_splits_trims_dedups_in_order():
    assert expand_ids(["J1, J2", "J2,,J3 ", " J1"]) == ["J1", "J2", "J3"]


def test_expand_ids_stdin_is_whitespace_split_once():
    stdin = io.StringIO("J2,J3\n  J4\tJ1\n")
    assert expand_ids(["J1", "-", "J5", "-"], stdin=stdin) == ["J1", "J2,J3", "J4", "J5"]


def test_expand_ids_spaced_dash_is_a_literal_id():
    assert expand_ids([" - "]) == ["-"]


@given(st.lists(st.text(alphabet="ab,-  \t", max_size=8), max_size=6))
def test_expand_ids_property_no_empty_no_duplicates(values):
    values = [v for v in values if v != "-"]
    out = expand_ids(values)
    assert len(out) == len(set(out))
    assert all(tok and tok == tok.strip() and "," not in tok for tok in out)


@settings(max_examples=300)
@given(st.text(min_size=0, max_size=300))
def test_safe_component_never_escapes(tmp_path_factory, value):
    root = str(tmp_path_factory.mktemp("root", numbered=True))
    component = safe_component(value)
    assert component not in ("", ".", "..")
    assert "/" not in component and "\\" not in component and "\0" not in component
    assert len(component.encode("utf-8")) <= 200
    path = join_under(root, os.path.join("G", component))
    assert os.path.realpath(path).startswith(os.path.realpath(root) + os.sep)


def test_safe_component_keeps_ordinary_ids():
    assert safe_component("G1-J0001") == "G1-J0001"
    assert safe_component("../x") == "..%2Fx"
    assert safe_component("..") == "%2E%2E"
    assert safe_component("a%2Fb") == "a%252Fb"  # injective: '%' itself is encoded


def test_join_under_refuses_escape(tmp_path):
    import pytest

    with pytest.raises(ValueError):
        join_under(str(tmp_path), "../outside")


def test_json_formatting_matches_contract():
    value = {"a": [1, {"b": "é"}], "c": {}, "d": []}
    assert dumps(value) == '{\n  "a": [\n    1,\n    {\n      "b": "é"\n    }\n  ],\n  "c": {},\n  "d": []\n}\n'
    assert dumps(value, pretty=False) == '{"a":[1,{"b":"é"}],"c":{},"d":[]}\n'


def test_a_lone_surrogate_is_written_as_its_escape_and_reads_back_the_same():
    value = {"k\ud800": ["\udfff", "é\U0001f600", "ok"]}
    assert dumps(value, pretty=False) == '{"k\\ud800":["\\udfff","é\U0001f600","ok"]}\n'
    for pretty in (True, False):
        text = dumps(value, pretty)
        assert text.encode("utf-8") and json.loads(text) == value  # valid UTF-8, same string back


@given(st.lists(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                             lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                             max_leaves=8), max_size=4), st.booleans())
def test_streamed_array_equals_one_shot_dump(elements, pretty):
    out = io.StringIO()
    write_json_array(out, elements, pretty)
    assert out.getvalue() == dumps(elements, pretty)
    assert json.loads(out.getvalue()) == elements


@contextmanager
def _small_limits():
    """Write piecewise at a few items, so small examples take every path."""
    with mock.patch.object(jsontext, "LONG", 2), mock.patch.object(jsontext, "_ITEMS", 2), \
            mock.patch.object(jsontext, "_BATCH", 8):
        yield


any_text = st.text(st.characters(exclude_categories=()), max_size=4)  # lone surrogates included
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | any_text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
        any_text | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False), inner, max_size=4),
    max_leaves=25)


def _escaped(text):
    """json.dumps's text with each lone surrogate written as its escape (what bl writes)."""
    return "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans(), st.booleans())
def test_the_text_of_long_listings_written_piecewise_is_json_dumps_text(value, pretty, whole):
    """A long listing (or a document holding one two levels down) is written batch by batch,
    never as one string: the bytes are json.dumps's (contract 3.1), whatever the value."""
    doc = [value] if whole and not isinstance(value, list) else value
    with _small_limits():
        out = io.StringIO()
        jsontext.write(out, doc, pretty, whole=whole)
        one_shot = jsontext.dumps(doc, pretty)
    expected = _escaped(json.dumps(doc, indent=2 if pretty else None, ensure_ascii=False,
                                   separators=None if pretty else (",", ":"))) + "\n"
    assert out.getvalue() == expected
    assert one_shot == expected


def test_an_element_holding_a_long_listing_two_levels_down_is_written_piecewise():
    jobs = [{"job_id": f"J{i}", "n": i} for i in range(jsontext.LONG + 5)]
    element = {"group_id": "G", "detail": {"total": len(jobs), "metrics": jobs}}
    assert jsontext.is_big(element) and not jsontext.is_big({"a": {"b": {"c": jobs}}})
    pieces = list(jsontext.chunks([element], True, whole=True))
    assert len(pieces) > 5  # piece by piece, not one string
    assert "".join(pieces) == json.dumps([element], indent=2, ensure_ascii=False)


def test_atomic_write_leaves_no_temp_and_replaces(tmp_path):
    target = tmp_path / "d" / "f.json"
    atomic_write(str(target), "one")
    atomic_write(str(target), "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]


def test_join_under_refuses_dot_segments_and_absolute_paths(tmp_path):
    for bad in ("..", "sub/..", "sub/../..", ".", "a//b", "/etc/passwd", ""):
        with pytest.raises(ValueError):
            join_under(str(tmp_path), bad)
    assert join_under(str(tmp_path), "G1/J1.json") == os.path.join(str(tmp_path), "G1/J1.json")


def test_a_symlink_planted_at_the_temp_name_is_never_followed(tmp_path):
    # Temp names are unpredictable (O_EXCL): a file planted at the old fixed name is never used.
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (tmp_path / ".out.json.tmp").symlink_to(victim)
    atomic_write(str(tmp_path / "out.json"), "new")
    assert victim.read_text() == "keep me"
    assert (tmp_path / "out.json").read_text() == "new"
    assert (tmp_path / ".out.json.tmp").is_symlink()


def test_a_leftover_of_a_live_writer_is_not_taken_over(tmp_path):
    # A temp file whose lock is held (a live writer) is never swept, truncated or reused.
    import fcntl

    from benchloop.base import files as writers

    theirs = tmp_path / ".out.json.%tmp-0123456789abcdef.tmp"
    theirs.write_text("theirs, being written")
    with open(theirs) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        writers._swept.discard(str(tmp_path))
        atomic_write(str(tmp_path / "out.json"), "ours")
    assert theirs.read_text() == "theirs, being written"
    assert (tmp_path / "out.json").read_text() == "ours"


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_umask_is_read_without_changing_it(mask):
    from benchloop.base import files as writers

    saved = os.umask(mask)
    try:
        assert writers._umask_mode() == 0o666 & ~mask
        assert _current_umask() == mask
    finally:
        os.umask(saved)
