"""The JSON text of bl is the same bytes with orjson as with the standard library alone.

base/jsontext.py writes and reads JSON through orjson when it is installed and
through ``json`` otherwise (or for what orjson writes or reads differently).
Both paths must give identical bytes and identical values: on every answer the
sandbox gives for the table's GET endpoints, and on hostile values (integers
beyond 64 bits, NaN and infinities, tiny floats, lone surrogates, keys that are
not strings, deep nesting).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchloop.base import jsontext
from benchloop.sandbox.routing import load_endpoints

orjson = pytest.importorskip("orjson")


def stdlib_loads(text):
    return json.loads(text)


def same_value(a, b) -> bool:
    """Equal, NaN included, and of the same types all the way down (1 is not 1.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def check_text(value) -> None:
    for pretty in (True, False):
        expected = jsontext.stdlib_text(value, pretty)
        assert jsontext.encode(value, pretty) == expected
        fast = jsontext._fast_text(value, pretty)
        assert fast is None or fast == expected


# -- the sandbox's answers ---------------------------------------------------------
GETS = [e for e in load_endpoints().values() if e.method == "GET" and e.service == "benchloop"]


def test_the_table_has_get_endpoints_to_check():
    assert len(GETS) >= 10


@pytest.fixture(scope="module")
def answers(make_sandbox):
    import httpx

    sb = make_sandbox(groups=2, jobs_per_group=30, tasks_per_group=10, trajectory_steps=0)
    bodies = []
    with httpx.Client(base_url=sb.url, headers={"X-API-Key": sb.api_key}) as client:
        for endpoint in GETS:
            path = endpoint.path
            for name in ("group_id", "groupId", "gid"):
                path = path.replace("{" + name + "}", "G1")
            path = path.replace("{job_id}", "G1-J0001").replace("{jobId}", "G1-J0001")
            if "{" in path:
                path = path.split("{")[0].rstrip("/") or "/"
                path = path + "/G1-J0001" if path.endswith("jobs") else path + "/G1"
            response = client.get(path, params={"group_id": "G1", "limit": 1000})
            if response.status_code == 200 and "json" in response.headers.get("content-type", ""):
                bodies.append((endpoint.name, response.content))
    return bodies


def test_the_sandbox_answers_read_and_write_the_same_both_ways(answers):
    assert len(answers) >= len(GETS) // 2, [name for name, _ in answers]
    for name, raw in answers:
        value = jsontext.loads(raw)
        assert same_value(value, stdlib_loads(raw)), name
        check_text(value)
        # an answer with every value of the sandbox as a field: the text of a composed element
        check_text({"group_id": "G1", "answer": value, "items": [value, value]})


# -- hostile values ------------------------------------------------------------------
HOSTILE_FLOATS = [float("nan"), float("inf"), -float("inf"), 1e-5, -3.3e-5, 1e-7, 5e-324, 1e16, 1e-4,
                  0.1, -0.0, 1.7976931348623157e308, 7.788572753751125e-06]
HOSTILE_INTS = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -2**63, -2**63 - 1, 10**40, -10**40]
HOSTILE_STRINGS = ["\ud800", "a\udfffb", "\u2028\u2029", "caf\u00e9 \U0001f600", "\x00\x1f\x7f", "1e-5", "0.00001",
                   "null", "e-1"]


@pytest.mark.parametrize("value", HOSTILE_FLOATS + HOSTILE_INTS + HOSTILE_STRINGS, ids=repr)
def test_hostile_scalars_are_written_as_the_stdlib_writes_them(value):
    check_text(value)
    check_text({"k": value, "list": [value, {"deep": [value]}]})


def test_keys_that_are_not_strings_and_odd_types():
    check_text({1: "a", 2.5: "b", False: "c", None: "d"})
    check_text({"t": (1, 2, (3,))})
    check_text(json.loads("[" * 30 + "1" + "]" * 30))
    with pytest.raises(TypeError):
        jsontext.encode({"when": object()}, True)


def test_nesting_beyond_orjson_s_limit_is_written_all_the_same():
    value: list = []
    for _ in range(400):
        value = [value]
    check_text(value)


@pytest.mark.parametrize("raw", [
    b"18446744073709551616", b"-9223372036854775809", b"[18446744073709551615, 1]", b"NaN", b"[Infinity, -Infinity]",
    b"1e400", b'"\\ud800"', b'{"a": 1, "a": 2}', b"[1.0, 1E2, 1e-7, -0]", b'"\\u0000"',
    "\ufeff[1]".encode(), '[1, "\u00e9"]'.encode("utf-16"), b"[1,]", b"", b"\xff\xfe", b"[" * 2000 + b"]" * 2000,
    b"0.123456789012345678901234", b" [ 1 ] ",
], ids=repr)
def test_hostile_texts_are_read_as_the_stdlib_reads_them(raw):
    try:
        expected = stdlib_loads(raw)
    except (ValueError, RecursionError) as exc:
        with pytest.raises(type(exc)):
            jsontext.loads(raw)
        return
    assert same_value(jsontext.loads(raw), expected)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_any_value_gives_the_same_text_both_ways(value):
    check_text(value)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_any_text_is_read_the_same_both_ways(value):
    for text in (jsontext.stdlib_text(value, True), json.dumps(value), json.dumps(value, ensure_ascii=False)):
        raw = text.encode("utf-8", "surrogatepass")
        try:
            expected = stdlib_loads(raw)
        except ValueError:
            with pytest.raises(ValueError):
                jsontext.loads(raw)
            continue
        assert same_value(jsontext.loads(raw), expected)


def test_orjson_is_what_writes_an_ordinary_answer():
    """The fast path is taken for the ordinary case (else this module tests nothing of it)."""
    value = {"job_id": "G1-J0001", "score": 0.5, "steps": [{"n": 1, "text": "caf\u00e9", "none": None}]}
    assert jsontext._fast_text(value, True) == json.dumps(value, indent=2, ensure_ascii=False)


def _odd_floats_one_by_one(value) -> bool:
    """The walk value by value (what ``_odd_floats`` computes a container at a time)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif kind is float:
            if not math.isfinite(item) or (item and -1e-4 < item < 1e-4):
                return True
        elif kind not in (str, int, bool) and item is not None:
            return True
    return False


class _Text(str):
    pass


@settings(max_examples=400, deadline=None)
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3) | st.builds(_Text, st.text(max_size=2)),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4)
    | st.lists(children, max_size=3).map(tuple),
    max_leaves=20))
def test_the_walk_for_odd_floats_finds_what_a_walk_value_by_value_finds(value):
    assert jsontext._odd_floats(value) == _odd_floats_one_by_one(value)


@pytest.mark.parametrize("value", HOSTILE_FLOATS, ids=repr)
def test_every_float_written_otherwise_makes_the_text_suspect(value):
    text = orjson.dumps([value])
    if text.decode() != json.dumps([value]).replace(" ", ""):
        assert jsontext._suspect(text)


def test_text_like_swe_bench_is_not_an_exponent():
    assert not jsontext._suspect(b'[{"template":"swe-bench-lite","n":1.5e+300}]')
    assert jsontext._suspect(b'[1e-7]') and jsontext._suspect(b'[0.00001]') and jsontext._suspect(b'[null]')


@settings(max_examples=300, deadline=None)
@given(st.lists(json_values, max_size=6))
def test_lines_are_each_value_s_text_and_a_newline(values):
    assert jsontext.lines(values) == "".join(jsontext.stdlib_text(v, False) + "\n" for v in values)
