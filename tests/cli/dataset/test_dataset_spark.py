"""Spark reads the dataset as it is (`make test-spark`: pyspark in its own venv, the system Java 17).

Opt-in: skipped unless pyspark can be imported (the ordinary test venv does not install it:
about a minute to install, 13 s to start).  Spark, in local mode, reads `DIR/jobs` and
`DIR/steps` as hive-partitioned Parquet (`group_id` discovered as the partition column), and
its values are those of `bl jobs table --output json`.
"""

from __future__ import annotations

import json

import pytest

pyspark = pytest.importorskip("pyspark")
pytest.importorskip("duckdb")

GROUPS = ("BASE", "CAND")


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=11, groups=1, jobs_per_group=4, tasks_per_group=3, compare_jobs=16)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[1]").appName("bl-dataset")
               .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    yield session
    session.stop()


def test_spark_reads_jobs_and_steps_as_jobs_table_and_trajectories_give(api, tmp_path, spark):
    root = str(tmp_path / "ds")
    ids = [w for g in GROUPS for w in ("-g", g)]
    assert api("dataset", "sync", "--dataset", root, *ids, "--with", "steps").code == 0
    expected = {(r["group_id"], r["job_id"]): r for r in json.loads(api("jobs", "table", *ids).out)}
    jobs = spark.read.parquet(root + "/jobs")
    got = {(r["group_id"], r["job_id"]): r.asDict() for r in jobs.collect()}
    assert set(got) == set(expected)
    for key, row in expected.items():
        for column, value in row.items():
            stored = got[key][column]
            assert (float(stored) == float(value)) if isinstance(value, (int, float)) and not isinstance(
                value, bool) else stored == value, (key, column)
    steps = spark.read.parquet(root + "/steps")
    counts = {r["group_id"]: r["count"] for r in steps.groupBy("group_id").count().collect()}
    stored = json.loads(api("dataset", "sql", "--dataset", root,
                            "SELECT group_id, count(*) AS n FROM steps GROUP BY ALL").out)
    assert counts == {r["group_id"]: r["n"] for r in stored} and set(counts) == set(GROUPS)
