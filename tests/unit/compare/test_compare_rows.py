"""The flat job table (benchloop.compare.rows): one row per job, columns declared as data.

Rows are built from the payloads the sandbox really sends (benchloop.sandbox.
payloads) and from the contract's shapes: run metrics as strings of numbers,
as an object or a one-element list; eval metrics as a one-element list.
"""

from __future__ import annotations

import json

import jmespath
import pytest
from compare_cases import COLUMNS, HAND_BASELINE, payloads, table_rows
from hypothesis import example, given, settings
from hypothesis import strategies as st

from benchloop.compare import rows as R
from benchloop.compare.rows import ColumnError
from benchloop.sandbox import payloads as sandbox_payloads

JOB = {"job_id": "G1-J0001", "group_id": "G1", "created_at": "2026-07-01T00:00:00", "template": "t",
       "status": "succeeded", "instance_id": "django__django-1001"}


def element(run_metrics, metrics=None, tokenized=None):
    return {"job_id": "G1-J0001",
            "metrics": metrics if metrics is not None else [{"type": "eval", "data": {"task_score": 0.85}}],
            "run_metrics": run_metrics, "tokenized_metrics": tokenized}


def test_a_row_has_every_declared_column_in_order_with_numbers_typed():
    [row] = table_rows("G1", [JOB], [element([{"duration_s": "12.5", "tokens_sent": "100",
                                             "tool_error_count": "0"}],
                                           tokenized=[{"llm_calls": 3, "tokenizer_output_total": 42}])])
    assert list(row) == [c["name"] for c in COLUMNS]
    assert row["job_id"] == "G1-J0001" and row["group_id"] == "G1"
    assert row["instance"] == row["instance_id"] == "django__django-1001"
    assert (row["score"], row["pass"]) == (0.85, True)
    assert row["duration_s"] == 12.5 and isinstance(row["duration_s"], float)
    assert row["tokens_sent"] == 100 and isinstance(row["tokens_sent"], int)
    assert row["tool_error_count"] == 0
    assert (row["llm_calls"], row["tokenizer_output_total"]) == (3, 42)
    assert row["api_call_count"] is None  # absent: null, the column is still there


def test_run_metrics_as_an_object_or_a_one_element_list_give_the_same_row():
    run = {"duration_s": "12.5", "api_call_count": "7"}
    as_list = table_rows("G1", [JOB], [element([run])])
    as_object = table_rows("G1", [JOB], [element(run)])
    numbers = table_rows("G1", [JOB], [element({"duration_s": 12.5, "api_call_count": 7})])
    assert as_list == as_object == numbers
    assert as_list[0]["duration_s"] == 12.5 and as_list[0]["api_call_count"] == 7


def test_a_one_element_list_value_is_unwrapped():
    columns = [{"name": "resolved", "from": "metrics.metrics[?type=='eval'].data.resolved", "type": "boolean"},
               {"name": "data", "from": "metrics.metrics[0].data", "type": "json"}]
    [row] = table_rows("G1", [JOB], [element({}, metrics=[{"type": "eval", "data": {"resolved": True}}])],
                     columns=columns)
    assert row == {"resolved": True, "data": {"resolved": True}}


def test_job_without_metrics_is_in_the_table_unscored():
    other = dict(JOB, job_id="G1-J0002")
    rows = table_rows("G1", [JOB, other], [element({})])
    assert [r["job_id"] for r in rows] == ["G1-J0001", "G1-J0002"]
    assert (rows[1]["score"], rows[1]["pass"], rows[1]["duration_s"]) == (None, None, None)
    # metrics of a job that is not in the job list add no row
    assert len(table_rows("G1", [JOB], [element({}), dict(element({}), job_id="G9-J1")])) == 1


def test_rows_are_plain_scalars_a_data_frame_takes_as_they_are():
    jobs, metrics = payloads("G1", HAND_BASELINE)
    rows = table_rows("G1", jobs, metrics)
    keys = [list(r) for r in rows]
    assert all(k == keys[0] for k in keys)
    for row in rows:
        for value in row.values():
            assert value is None or type(value) in (str, int, float, bool)
    json.dumps(rows, allow_nan=False)  # no NaN or inf anywhere


def test_sandbox_job_metrics_are_read_by_the_default_columns():
    job = {"job_id": "G1-J0003", "group_id": "G1", "n": 3, "created_at": "2026-07-01T00:00:00",
           "template": "swe-bench-verified", "status": "failed", "instance_id": "flask__flask-1001",
           "score": 0.25, "duration_s": 42.5, "num_turns": 7, "output_total": 1234, "context_peak": 8192,
           "salt": 12345}
    entry, metrics = sandbox_payloads.job_summary(job), sandbox_payloads.job_metrics(job)
    [row] = table_rows("G1", [entry], [metrics])
    facts = sandbox_payloads.run_facts(job)
    assert (row["score"], row["pass"], row["instance"]) == (0.25, False, "flask__flask-1001")
    assert row["duration_s"] == facts["duration_s"]
    assert row["tool_error_count"] == facts["tool_error_count"]
    assert row["tokens_sent"] == facts["tokens_sent"]
    assert row["llm_calls"] == facts["llm_calls"]


@pytest.mark.parametrize("value,expected", [
    ("django-1", "django-1"), (17, "17"), (1.5, "1.5"), (True, "true"), (["a"], "a"),
    ({"repo": "x", "n": 1}, '{"n":1,"repo":"x"}'), (None, None), ("", None),
])
def test_instance_key_is_text(value, expected):
    assert R.instance_key(value) == expected


def test_unit_and_metric_are_expressions():
    job = dict(JOB, meta={"task": {"name": "t-7"}})
    [row] = table_rows("G1", [job], [element({}, metrics=[{"type": "eval", "data": {"task_score": "0.3"}},
                                                        {"type": "judge", "data": {"score": 0.9}}])],
                     unit="meta.task.name", metric="metrics[?type=='judge'].data.score | [0]",
                     pass_threshold=0.8)
    assert (row["instance"], row["score"], row["pass"]) == ("t-7", 0.9, True)


@pytest.mark.parametrize("kind,value,expected", [
    ("number", "12.5", 12.5), ("number", "100", 100), ("number", " 7 ", 7), ("number", "x", None),
    ("number", "nan", None), ("number", True, 1), ("number", [3], 3), ("number", {"a": 1}, None),
    ("string", "a", "a"), ("string", 5, "5"), ("string", {"b": 1, "a": 2}, '{"a":2,"b":1}'),
    ("boolean", "true", True), ("boolean", 0, False), ("boolean", "yes", None), ("boolean", 2, None),
    ("json", {"a": [1]}, {"a": [1]}), ("json", [[1, 2]], [1, 2]),
])
def test_convert(kind, value, expected):
    assert R.convert(value, kind) == expected


EXPRESSIONS = [
    "a", "a.b", "a.b.c", "a.b.c.d", '"a".b', "@", "a[0]", "a[-1].b", "a[5]", "a[*].b", "a[].b", "a[][]",
    "a[?b=='x'].c", "a[?b!='x'].c | [0]", "a[?b > `1`]", "a[?b <= `2`].b", "a[?b < 'x']", "a[?b].c",
    "a.b | [0]", "a | b", "`3`", "'lit'", "a[*].b[*].c", "a[*][0]", "b[?type=='eval'].data.task_score | [0]",
    "a || b", "a || b || c", "a.b || `0`", "d || a[0]",
    # not compiled by us (fall back to jmespath): the same answers by construction
    "length(a)", "a[0:2]", "{x: a}", "[a, b]", "!a", "a && b", "length(a) || b",
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3, allow_nan=False) | st.sampled_from(["x", "y", "eval"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "c", "d", "type", "data", "task_score"]),
                                                               inner, max_size=4),
    max_leaves=12)


DOCS = [
    {"a": [{"b": "x", "c": 1}, {"b": "x"}, {"b": "y", "c": 2}, {"b": 2, "c": 3}, {"b": 1}, [5], 7]},
    {"a": {"b": {"c": [1, {"d": 2}]}}, "b": [{"type": "eval", "data": {"task_score": 0.5}},
                                            {"type": "judge", "data": {}}]},
    {"a": [[{"b": 1}, [2, [3]]], {"b": [{"c": 1}, {"c": None}]}], "b": False},
    {"a": "text", "b": ""}, {"a": None}, {}, [], "x", 0, None,
]


@settings(max_examples=300, deadline=None)
@given(doc=json_values)
@example(doc=DOCS[0])
@example(doc=DOCS[1])
@example(doc=DOCS[2])
@example(doc=DOCS[3])
@example(doc=DOCS[4])
@example(doc=DOCS[5])
@example(doc=DOCS[6])
@example(doc=DOCS[7])
def test_compiled_expressions_read_like_jmespath(doc):
    for expression in EXPRESSIONS:
        fast = R.compile_expression(expression, "test")
        try:
            expected = jmespath.search(expression, doc)
        except Exception as exc:  # noqa: BLE001 - jmespath refuses (a function on a wrong type)
            with pytest.raises(type(exc)):
                fast(doc)
            continue
        assert fast(doc) == expected, (expression, doc)
        assert type(fast(doc)) is type(expected), (expression, doc)


@pytest.mark.parametrize("columns,message", [
    ([{"name": "a", "from": "job.a", "type": "number"}, {"name": "a", "from": "job.b"}], "declared twice"),
    ([{"name": "a", "from": "job.a", "type": "float"}], "type must be one of"),
    ([{"name": "a", "type": "number"}], "needs 'from'"),
    ([{"from": "job.a"}], "needs a name"),
    ([{"name": "a", "from": "job.[", "type": "number"}], "invalid column 'a' expression"),
])
def test_bad_column_definitions_are_refused(columns, message):
    with pytest.raises(ColumnError, match=message):
        R.check_columns(columns)


def test_fields_choose_and_order_columns():
    picked = R.select_columns(COLUMNS, ["score", "job_id"])
    assert [c["name"] for c in picked] == ["score", "job_id"]
    [row] = table_rows("G1", [JOB], [element({})], columns=picked)
    assert row == {"score": 0.85, "job_id": "G1-J0001"}
    with pytest.raises(ColumnError, match="unknown field 'nope'; the columns are: group_id, job_id"):
        R.select_columns(COLUMNS, ["nope"])


def test_bad_metric_or_unit_expression_names_the_option():
    with pytest.raises(ColumnError, match="invalid --metric expression"):
        table_rows("G1", [JOB], [], metric="metrics[")
    with pytest.raises(ColumnError, match="invalid --unit expression"):
        table_rows("G1", [JOB], [], unit="")
