"""The local dataset of runs (benchloop/dataset/): `bl dataset sync|info|sql`, `bl compare --dataset`.

Against the sandbox over loopback: the Parquet files are read back by DuckDB and Polars
(independent readers) and checked against a recomputation from `bl jobs table --output
json`; `bl compare --dataset` is checked against the backend's comparison with the
sandbox's request counter; a sync killed with SIGKILL is checked to leave a readable
dataset that the next sync completes.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import API_KEY

duckdb = pytest.importorskip("duckdb")
polars = pytest.importorskip("polars")

from benchloop.dataset import steps as step_rows  # noqa: E402
from benchloop.dataset import store  # noqa: E402
from benchloop.table.load import load_model  # noqa: E402
from benchloop.table.model import StepPart  # noqa: E402

GROUPS = ("BASE", "CAND", "CAND2")


@pytest.fixture(scope="module")
def sandbox(make_sandbox):
    return make_sandbox(seed=11, groups=1, jobs_per_group=4, tasks_per_group=3, compare_jobs=24, live_jobs=6)


@pytest.fixture
def root(tmp_path) -> Path:
    return tmp_path / "ds"


def sync(api, root: Path, *args: str):
    return api("dataset", "sync", "--dataset", str(root), *[w for g in GROUPS for w in ("-g", g)], *args)


def job_columns() -> list[str]:
    part = next(iter(load_model().resources["jobs"].actions["table"].dimensions["group"].parts.values()))
    return [c.name for c in part.params.columns("columns")]


def same(left, right) -> bool:
    if isinstance(left, (int, float)) and isinstance(right, (int, float)) and not isinstance(left, bool):
        return float(left) == float(right)
    return left == right


def test_sync_writes_hive_partitions_that_duckdb_and_polars_read_as_jobs_table_gives(api, root):
    result = sync(api, root)
    assert result.code == 0, result.err
    synced = [json.loads(line) for line in result.out.splitlines()]
    assert [s["group_id"] for s in synced] == list(GROUPS)
    for group in GROUPS:
        assert (root / "jobs" / f"group_id={group}" / "part-0.parquet").is_file()
        assert (root / "runs" / f"group_id={group}" / "part-0.parquet").is_file()
    table = api("jobs", "table", *[w for g in GROUPS for w in ("-g", g)], "--output", "json")
    assert table.code == 0, table.err
    expected = {(r["group_id"], r["job_id"]): r for r in json.loads(table.out)}
    columns = job_columns()

    con = duckdb.connect()
    cursor = con.execute(f"SELECT * FROM read_parquet('{root}/jobs/*/*.parquet', hive_partitioning=true)")
    names = [d[0] for d in cursor.description]
    by_duckdb = {(r["group_id"], r["job_id"]): r for r in (dict(zip(names, v, strict=True)) for v in cursor.fetchall())}
    by_polars = {(r["group_id"], r["job_id"]): r
                 for r in polars.read_parquet(str(root / "jobs"), hive_partitioning=True).to_dicts()}
    assert set(by_duckdb) == set(expected) == set(by_polars)
    assert set(names) == set(columns)
    for key, row in expected.items():
        for column in columns:
            assert same(by_duckdb[key][column], row.get(column)), (key, column)
            assert same(by_polars[key][column], row.get(column)), (key, column)
    # The declared types, not guessed ones: numbers are doubles, pass a nullable boolean.
    kinds = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{root}/jobs/*/*.parquet')")
             .fetchall()}
    assert kinds["score"] == "DOUBLE" and kinds["pass"] == "BOOLEAN" and kinds["job_id"] == "VARCHAR"

    # runs: one row per group, counts by status as the job rows say.
    runs = {r["group_id"]: r for r in polars.read_parquet(str(root / "runs"), hive_partitioning=True).to_dicts()}
    for group in GROUPS:
        rows = [r for r in expected.values() if r["group_id"] == group]
        counts: dict[str, int] = {}
        for r in rows:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        assert json.loads(runs[group]["status_counts"]) == counts
        assert runs[group]["jobs"] == len(rows)
        final = set(load_model().statuses["job"].final)
        assert runs[group]["finished"] == all(r["status"] in final for r in rows)


def test_sql_pass_rates_equal_compare_and_compare_dataset_makes_no_request(api, root, sandbox):
    assert sync(api, root).code == 0
    backend = api("compare", "-g", "BASE", "-g", "CAND", "-g", "CAND2")
    assert backend.code == 0, backend.err
    sandbox.reset_stats()
    local = api("compare", "-g", "BASE", "-g", "CAND", "-g", "CAND2", "--dataset", str(root))
    assert local.code == 0, local.err
    assert sandbox.stats["requests"] == 0
    assert local.out == backend.out  # the same figures, to the last digit (and byte)
    per_instance = api("dataset", "sql", "--dataset", str(root),
                       "SELECT group_id, avg(p) AS pass_rate FROM (SELECT group_id, instance, avg(pass::int) AS p "
                       "FROM jobs WHERE pass IS NOT NULL GROUP BY ALL) GROUP BY ALL ORDER BY group_id")
    assert per_instance.code == 0, per_instance.err
    rates = {r["group_id"]: r["pass_rate"] for r in json.loads(per_instance.out)}
    for comparison in json.loads(backend.out):
        for group in comparison["groups"]:
            assert math.isclose(rates[group["group_id"]], group["pass_rate"], rel_tol=1e-12)


def test_compare_dataset_reads_the_rows_in_batches_as_it_gathers_them(api, root, monkeypatch):
    """The stored rows come from DuckDB a batch at a time into the per-instance aggregator the
    backend's rows go to: batches of 5 (cut anywhere in an instance's jobs) give the same bytes."""
    from benchloop.dataset import rows

    assert sync(api, root).code == 0
    backend = api("compare", "-g", "BASE", "-g", "CAND", "--by", "template")
    fetched: list[int] = []
    real = rows._rows

    def counted(connection, relation, *args):
        class Counting:
            def fetchmany(self, size):
                got = relation.fetchmany(size)
                fetched.append(len(got))
                return got
        return real(connection, Counting(), *args)

    monkeypatch.setattr(rows, "BATCH", 5)
    monkeypatch.setattr(rows, "_rows", counted)
    local = api("compare", "-g", "BASE", "-g", "CAND", "--by", "template", "--dataset", str(root))
    assert local.code == 0 and backend.code == 0, local.err + backend.err
    assert local.out == backend.out
    assert max(fetched) == 5 and sum(fetched) == 48  # 2 x 24 jobs, never more than a batch at a time
    stream = rows.stream_rows(str(root), "BASE", ["job_id", "score"], {}, lambda _m: None)
    assert next(stream)["job_id"] and len(list(stream)) == 23


def analyses_reading_the_dataset() -> list:
    """Every action of the table that takes --dataset and reads its groups' job rows."""
    found = []
    for resource in load_model().resources.values():
        for action in resource.actions.values():
            parts = [part for dim in action.dimensions.values() for part in dim.parts.values()]
            if any(o.name == "dataset" for o in action.options) and any(
                    isinstance(part, StepPart) and part.step.name == "job_rows" for part in parts):
                found.append(action)
    return found


def test_every_analysis_of_runs_reads_the_dataset(api, root, sandbox):
    """compare, noise, plan and trend (whatever the table gives --dataset): the figures of the
    backend to the last byte, and not one request."""
    actions = analyses_reading_the_dataset()
    assert {"compare", "trend"} <= {a.resource for a in actions}
    assert sync(api, root).code == 0
    groups = [w for g in GROUPS for w in ("-g", g)]
    for action in actions:
        backend = api(*action.words, *groups)
        assert backend.code == 0, (action.words, backend.err)
        sandbox.reset_stats()
        local = api(*action.words, *groups, "--dataset", str(root))
        assert local.code == 0, (action.words, local.err)
        assert sandbox.stats["requests"] == 0, action.words
        assert local.out == backend.out, action.words
        assert json.loads(local.out), action.words


def test_compare_dataset_refuses_rows_scored_otherwise_and_groups_not_synced(api, root, sandbox):
    assert sync(api, root).code == 0
    sandbox.reset_stats()
    other = api("compare", "-g", "BASE", "-g", "CAND", "--dataset", str(root), "--pass-threshold", "0.9")
    assert other.code == 2 and "--pass-threshold" in other.err
    missing = api("compare", "-g", "BASE", "-g", "REPO-CAND", "--dataset", str(root))
    assert missing.code == 2 and "REPO-CAND" in missing.err
    assert sandbox.stats["requests"] == 0


def test_steps_one_row_per_trajectory_step_and_a_second_sync_fetches_no_finished_job(api, root, sandbox, backend):
    assert sync(api, root, "--with", "steps").code == 0
    got = polars.read_parquet(str(root / "steps"), hive_partitioning=True)
    jobs = json.loads(api("jobs", "table", "-g", "BASE", "--fields", "job_id,status").out)
    for job in jobs[:5]:  # each job's rows are its trajectory's steps, in order
        answer = backend(f"/openapi/jobs/{job['job_id']}/trajectory", source="trace")
        rows = got.filter(polars.col("job_id") == job["job_id"]).to_dicts()
        expected = step_rows.rows("BASE", job["job_id"], answer)
        assert len(rows) == len(expected) == len(answer["trajectory"])
        assert [r["step"] for r in rows] == [e["step"] for e in expected]
        assert [r["tool"] for r in rows] == [e["tool"] for e in expected]
        assert [json.loads(r["arguments"]) if r["arguments"] else None for r in rows] == [
            e["arguments"] for e in expected]
        assert all(len(r["text"] or "") <= step_rows.TEXT_CHARS for r in rows)
    final = set(load_model().statuses["job"].final)
    sandbox.reset_stats()
    assert sync(api, root, "--with", "steps").code == 0
    finished = sum(1 for g in GROUPS for j in json.loads(api("jobs", "table", "-g", g, "--fields", "status").out)
                   if j["status"] in final)
    total = sum(len(json.loads(api("jobs", "table", "-g", g, "--fields", "status").out)) for g in GROUPS)
    fetched = sandbox.stats["job_trajectory"]
    assert fetched == total - finished  # only the jobs that may still change
    again = polars.read_parquet(str(root / "steps"), hive_partitioning=True)
    assert again.sort(["group_id", "job_id", "position"]).equals(got.sort(["group_id", "job_id", "position"]))


def test_info_says_where_and_what(api, root, bl, monkeypatch, tmp_path):
    assert sync(api, root).code == 0
    info = json.loads(bl("dataset", "info", "--dataset", str(root)).out)[0]
    assert info["dataset"] == str(root) and info["schema_version"] == store.SCHEMA_VERSION
    assert info["tables"]["jobs"]["groups"] == len(GROUPS)
    assert info["tables"]["jobs"]["rows"] == sum(g["jobs"] for g in info["groups"])
    monkeypatch.setenv("BENCHLOOP_DATASET", str(root))
    assert json.loads(bl("dataset", "info").out)[0]["dataset"] == str(root)
    monkeypatch.delenv("BENCHLOOP_DATASET")
    import platformdirs

    assert json.loads(bl("dataset", "info").out)[0]["dataset"] == os.path.join(
        platformdirs.user_data_dir("benchloop", appauthor=False), "dataset")


def test_a_newer_schema_is_refused_before_any_request(api, root, sandbox, bl):
    assert sync(api, root).code == 0
    manifest = root / store.MANIFEST
    manifest.write_text(json.dumps({"schema_version": store.SCHEMA_VERSION + 1}))
    sandbox.reset_stats()
    for result in (sync(api, root), bl("dataset", "sql", "--dataset", str(root), "SELECT 1"),
                   api("compare", "-g", "BASE", "-g", "CAND", "--dataset", str(root))):
        assert result.code == 2, result.err
        assert "newer" in result.err and result.out == ""
    assert sandbox.stats["requests"] == 0


def test_sql_prints_through_the_output_formats_and_a_bad_query_is_a_usage_error(api, root, bl):
    assert sync(api, root).code == 0
    csv = bl("dataset", "sql", "--dataset", str(root), "--output", "csv",
             "SELECT group_id, count(*) AS n FROM jobs GROUP BY ALL ORDER BY 1")
    assert csv.code == 0 and csv.out.splitlines()[0] == "group_id,n"
    assert [line.split(",")[0] for line in csv.out.splitlines()[1:]] == list(GROUPS)
    empty_steps = bl("dataset", "sql", "--dataset", str(root), "SELECT count(*) AS n FROM steps")
    assert json.loads(empty_steps.out) == [{"n": 0}]
    bad = bl("dataset", "sql", "--dataset", str(root), "SELECT nope FROM jobs")
    assert bad.code == 2 and "nope" in bad.err and bad.out == ""


def test_without_duckdb_the_install_hint_and_exit_2(api, root, monkeypatch, sandbox):
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb raises ImportError
    sandbox.reset_stats()
    result = sync(api, root)
    assert result.code == 2
    assert "pip install 'benchloop-client[data]'" in result.err
    assert sandbox.stats["requests"] == 0


@pytest.mark.serial
def test_a_sync_killed_mid_way_leaves_a_readable_dataset_and_the_next_completes_it(make_sandbox, tmp_path):
    slow = make_sandbox(seed=11, groups=1, jobs_per_group=4, tasks_per_group=3, compare_jobs=24, latency_ms=25)
    root = tmp_path / "ds"
    env = {**os.environ, "BENCHLOOP_NO_UPDATE_CHECK": "1"}
    command = [sys.executable, "-m", "benchloop", "--host", slow.url, "--api-key", API_KEY, "--concurrency", "2",
               "dataset", "sync", "--dataset", str(root), *[w for g in GROUPS for w in ("-g", g)]]
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    before = duckdb.connect().execute(
        f"SELECT * FROM read_parquet('{root}/jobs/*/*.parquet') ORDER BY group_id, job_id").fetchall()

    process = subprocess.Popen([*command, "--with", "steps"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=env)
    first_done = Path(store.state_path(str(root), GROUPS[0]))  # written after its steps partition
    deadline = time.monotonic() + 60
    while not first_done.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    # Killed mid-sync (the groups run two at a time: a group beside the first may be done too).
    done = [g for g in GROUPS if Path(store.state_path(str(root), g)).exists()]
    assert GROUPS[0] in done and len(done) < len(GROUPS)
    assert not all((root / "steps" / f"group_id={g}" / store.PART).exists() for g in GROUPS)
    # Readable as it was: every partition whole.
    after = duckdb.connect().execute(
        f"SELECT * FROM read_parquet('{root}/jobs/*/*.parquet') ORDER BY group_id, job_id").fetchall()
    assert after == before
    polars.read_parquet(str(root / "runs"), hive_partitioning=True)

    slow.reset_stats()
    rerun = subprocess.run([*command, "--with", "steps"], capture_output=True, text=True, env=env, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    counts = duckdb.connect().execute(
        f"SELECT group_id, count(DISTINCT job_id) FROM read_parquet('{root}/steps/*/*.parquet', "
        "hive_partitioning=true) GROUP BY ALL ORDER BY 1").fetchall()
    assert [g for g, _ in counts] == list(GROUPS)
    # The steps of the groups done before the kill were kept: their finished jobs were not fetched again.
    final = set(load_model().statuses["job"].final)
    rows = duckdb.connect().execute(
        f"SELECT group_id, status FROM read_parquet('{root}/jobs/*/*.parquet', hive_partitioning=true)").fetchall()
    kept = sum(1 for g, s in rows if g in done and s in final)
    assert slow.stats["job_trajectory"] == len(rows) - kept
    # Only the partitions in the tables' folders (what a reader of DIR/jobs is given), and
    # the killed run's temp files gone.
    for table in store.TABLES:
        assert {p.name for p in (root / table).rglob("*") if p.is_file()} == {store.PART}
    assert [p for p in root.rglob("*") if p.is_file() and "%tmp-" in p.name] == []


def test_jobs_that_change_are_fetched_again_until_they_are_finished(api, root, live, sandbox):
    def sync_live():
        sandbox.reset_stats()
        result = api("dataset", "sync", "--dataset", str(root), "-g", "GLIVE", "--with", "steps")
        assert result.code == 0, result.err
        return sandbox.stats["job_trajectory"]

    size = live.size
    assert sync_live() == size  # every job is new
    assert sync_live() == size  # running: may still change
    live.advance(2)
    assert sync_live() == size  # two changed (now finished), the others still running
    assert sync_live() == size - 2  # the two finished ones are kept from now on
    live.advance(size)
    assert sync_live() == size - 2
    assert sync_live() == 0
    runs = polars.read_parquet(str(root / "runs"), hive_partitioning=True).to_dicts()
    assert runs[0]["finished"] is True and runs[0]["final_jobs"] == size


def test_the_python_client_syncs_queries_and_names_the_files(sandbox, root):
    import benchloop

    with benchloop.Client(host=sandbox.url, api_key=API_KEY, retry=0) as client:
        synced = client.dataset.sync(["BASE", "CAND"], dataset=root)
        assert [s["group_id"] for s in synced] == ["BASE", "CAND"]
        rows = client.dataset.sql("SELECT group_id, count(*) AS n FROM jobs GROUP BY ALL ORDER BY 1", dataset=root)
        expected = [{"group_id": g, "n": len(client.jobs.table(group=[g]))} for g in ("BASE", "CAND")]
        assert rows == expected
        assert client.dataset.path("jobs", dataset=root) == str(root / "jobs")
        frame = polars.read_parquet(client.dataset.path("jobs", dataset=root), hive_partitioning=True)
        assert frame.height == sum(r["n"] for r in expected)
        with pytest.raises(benchloop.PartialFailure) as failed:
            client.dataset.sync(["BASE", "NO-SUCH-GROUP"], dataset=root)
        assert [s["group_id"] for s in failed.value.results] == ["BASE"]
        assert [ident for ident, _ in failed.value.failures] == ["NO-SUCH-GROUP"]
        with pytest.raises(benchloop.UsageError):
            client.dataset.sql("SELECT nope", dataset=root)


def test_group_ids_hive_would_mistype_or_cannot_hold_keep_their_text(tmp_path):
    """A partition value is text in every reader: "007" stays "007" (the column is stored in the
    file too), and a "/" or "=" is percent-encoded in the folder name, decoded back."""
    from benchloop.dataset import parquet, query

    root = str(tmp_path / "ds")
    store.ensure(root)
    columns = [("group_id", "string"), ("job_id", "string"), ("score", "number")]
    for group in ("007", "a/b=c"):
        parquet.write(store.partition(root, "jobs", group), columns, [{"group_id": group, "job_id": "J1", "score": 1}],
                      store.staging(root))
    assert store.groups(root) == ["007", "a/b=c"]
    assert sorted(r["group_id"] for r in query.sql(root, "SELECT group_id FROM jobs")) == ["007", "a/b=c"]
    read = polars.read_parquet(os.path.join(root, "jobs"), hive_partitioning=True)
    assert sorted(read["group_id"].to_list()) == ["007", "a/b=c"]
    assert all(name.startswith("group_id=") and "/" not in name[9:] for name in os.listdir(os.path.join(root, "jobs")))
