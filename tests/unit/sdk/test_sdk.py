"""The Python client (docs/python.md) beyond CLI parity (that is tests/contract/test_sdk_parity.py).

* imports: ``import benchloop`` and ``Client()`` import no command-line
  framework (Cyclopts, rich), and ``import benchloop`` not even the client;
* settings are resolved as the CLI resolves them (arguments, environment,
  file, profiles) and checked before any request;
* every error class: ``UsageError`` (a ``ValueError``, before any request),
  ``UnknownArgument`` (also a ``TypeError``), ``AuthError`` (and the client
  works again after it), ``NetworkError``, ``PartialFailure``;
* ``iter``: the same items as ``--all`` over adversarial pages (duplicates,
  ties, moving totals, re-scans), one page at a time, in constant memory;
* downloads: ``DownloadResult`` paths, skipped files and failures;
* a library is quiet: nothing on stdout or stderr, log records on the
  ``benchloop`` logger, progress through the callback;
* one connection pool per client: sequential calls share one connection,
  threads share the client safely; ``close()`` closes it.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import API_KEY, ROOT, final_files, js

import benchloop
from benchloop.engine.pagination import (
    PaginationError,
    iter_task_scan,
    iter_unique_scan,
    task_scan,
    unique_scan,
)


@pytest.fixture
def client(sandbox):
    with benchloop.Client(host=sandbox.url, api_key=sandbox.api_key, retry=0) as bl:
        yield bl


# ------------------------------------------------------------------ imports
_IMPORTS = r"""
import json, sys
import benchloop
after_import = sorted(m for m in sys.modules if m.split(".")[0] in ("cyclopts", "rich", "httpx")
                      or m == "benchloop.sdk")
client = benchloop.Client(host=sys.argv[1], api_key="k")
after_client = sorted({m.split(".")[0] for m in sys.modules} & {"cyclopts", "rich"})
print(json.dumps([after_import, after_client]))
"""


def test_import_and_client_do_not_import_the_cli_framework(sandbox):
    done = subprocess.run([sys.executable, "-c", _IMPORTS, sandbox.url], capture_output=True, text=True,
                          env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    after_import, after_client = json.loads(done.stdout)
    assert after_import == []  # not even the client: it is loaded on first use
    assert after_client == []
    assert done.stderr == ""


def test_public_names():
    for name in ("Client", "BenchloopError", "UsageError", "AuthError", "NetworkError", "PartialFailure",
                 "DownloadResult"):
        assert name in dir(benchloop) and getattr(benchloop, name) is getattr(benchloop.sdk, name)
    for name in ("UsageError", "AuthError", "NetworkError", "PartialFailure"):
        assert issubclass(getattr(benchloop, name), benchloop.BenchloopError)
    assert issubclass(benchloop.UsageError, ValueError)
    assert issubclass(benchloop.UnknownArgument, TypeError)
    with pytest.raises(AttributeError):
        benchloop.NoSuchThing  # noqa: B018


# ----------------------------------------------------------------- settings
def test_settings_come_from_the_environment(sandbox, monkeypatch):
    monkeypatch.setenv("BENCHLOOP_HOST", sandbox.url)
    monkeypatch.setenv("BENCHLOOP_API_KEY", sandbox.api_key)
    with benchloop.Client(retry=0) as bl:
        assert bl.host == sandbox.url
        assert bl.report.get(job="G1-J0001")[0]["job_id"] == "G1-J0001"


def test_settings_from_a_profile_of_the_config_file(sandbox, tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text(f'[profile]\nhost = "http://127.0.0.1:9"\n\n[profiles.sb]\nhost = "{sandbox.url}"\n'
                      f'api_key = "{sandbox.api_key}"\noutput_dir = "{tmp_path / "out"}"\n')
    config.chmod(0o600)
    with benchloop.Client(config=config, profile="sb", retry=0) as bl:
        assert (bl.host, bl.profile, bl.output_dir) == (sandbox.url, "sb", str(tmp_path / "out"))
        result = bl.metrics.download(job="G1-J0001")
        assert result.paths == [str(tmp_path / "out" / "G1-J0001_run_metrics.json")]
    monkeypatch.setenv("BENCHLOOP_PROFILE", "sb")
    with benchloop.Client(config=str(config), host="http://127.0.0.1:1") as bl:
        assert bl.host == "http://127.0.0.1:1"  # an argument wins over the file


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"host": "ftp://x"}, "invalid backend URL 'ftp://x': expected http://HOST[:PORT][/PATH] or https://HOST[:PORT][/PATH]"),
    ({"concurrency": 0}, 'Invalid value "0" for --concurrency. Must be >= 1.'),
    ({"api_key": "k\u00e9y"}, "the API key has characters an HTTP header cannot carry"),
    ({"ca_bundle": "/nonexistent.pem"}, "CA bundle not found: /nonexistent.pem (from --ca-bundle)"),
    ({"profile": "nope"}, "unknown profile 'nope'"),
])
def test_bad_settings_are_usage_errors(kwargs, message):
    with pytest.raises(benchloop.UsageError) as caught:
        benchloop.Client(**kwargs)
    assert message in str(caught.value)


# ------------------------------------------------------------------- errors
@pytest.mark.parametrize(("call", "message"), [
    (lambda bl: bl.metrics.get(), "at least one -g/--group or -j/--job is required"),
    (lambda bl: bl.metrics.get(group="G1", job="J1"), "-g/--group and -j/--job are mutually exclusive"),
    # A method offers only the ids its resource takes (no ``job`` keyword on jobs.get).
    (lambda bl: bl.jobs.get(job="J1"), "jobs.get() got an unexpected keyword argument 'job'"),
    (lambda bl: bl.jobs.get(group="G1", page_size=0), "--page-size must be at least 1"),
    (lambda bl: bl.jobs.get(group="G1", page="x"), 'Invalid value for --page: unable to convert "x" into int.'),
    (lambda bl: bl.trajectory.download(task_id="a/b"), "--task-id must not contain path separators"),
    (lambda bl: bl.brm.run(group=["G1", "G2"], steps=[10]), "brm run requires exactly one -g/--group"),
    (lambda bl: bl.brm.run(group="G1", steps="10,x"), "invalid --steps value: x"),
    (lambda bl: bl.jobs.iter(group="G1", page_size=0), "--page-size must be at least 1"),
    (lambda bl: bl.metrics.get(job="-"), "'-' (read stdin) is a command-line form"),
    (lambda bl: bl.jobs.get(group="G1", all="yes"), "--all takes True or False"),
])
def test_invalid_arguments_raise_before_any_request(client, sandbox, call, message):
    sandbox.reset_stats()
    with pytest.raises(benchloop.UsageError) as caught:
        call(client)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert sandbox.stats.get("requests", 0) == 0


def test_unknown_keyword(client):
    with pytest.raises(benchloop.UnknownArgument) as caught:
        client.metrics.get(jobs="J1")
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, benchloop.UsageError)
    assert "metrics.get() got an unexpected keyword argument 'jobs'" in str(caught.value)
    with pytest.raises(TypeError):
        client.metrics.get("G1")  # keywords only


def test_auth_error_and_the_client_still_works_after_it(sandbox):
    with benchloop.Client(host=sandbox.url, api_key="wrong-key", retry=0) as bl:
        for _ in range(2):  # the 401 cancelled the first call only
            with pytest.raises(benchloop.AuthError):
                bl.report.get(job=["G1-J0001", "G1-J0002", "G1-J0003"])
        with pytest.raises(benchloop.AuthError):
            list(bl.jobs.iter(group="G1"))


def test_network_error(closed_port):
    with benchloop.Client(host=f"http://127.0.0.1:{closed_port}", api_key=API_KEY, retry=0) as bl:
        with pytest.raises(benchloop.NetworkError) as caught:
            bl.metrics.get(job=["J1", "J2"])
        assert [ident for ident, _ in caught.value.failures] == ["J1", "J2"]
        assert all(message.startswith("network: ") for _, message in caught.value.failures)
        assert caught.value.results == []
        with pytest.raises(benchloop.NetworkError):
            next(bl.jobs.iter(group="G1"))


def test_partial_failure(client):
    with pytest.raises(benchloop.PartialFailure) as caught:
        client.report.get(job="G1-J0001,NOPE,G1-J0002")
    error = caught.value
    assert [r["job_id"] for r in error.results] == ["G1-J0001", "G1-J0002"]
    assert error.failures == [("NOPE", 'API error 404: {"error": "job not found: NOPE"}')]
    assert "1 failed: NOPE: API error 404" in str(error)


def test_iter_of_an_unknown_group_fails_after_the_probe(client):
    with pytest.raises(benchloop.PartialFailure) as caught:
        list(client.metrics.iter(group="NOPE"))
    assert caught.value.failures[0][0] == "NOPE" and "404" in caught.value.failures[0][1]


# --------------------------------------------------------------------- iter
def test_iter_yields_what_all_collects(client):
    every = client.jobs.get(group="G1", all=True, status="failed")[0]["jobs"]
    assert list(client.jobs.iter(group="G1", status="failed")) == every
    two = client.tasks.get(group=["G1", "G2"], all=True, page_size=7)
    assert list(client.tasks.iter(group=["G1", "G2"], page_size=7)) == two[0]["tasks"] + two[1]["tasks"]
    detail = client.metrics.get(group="G2", scope="detail")[0]["detail"]["metrics"]
    assert list(client.metrics.iter(group="G2")) == detail


def test_iter_fetches_one_page_at_a_time(client, sandbox):
    sandbox.reset_stats()
    items = client.jobs.iter(group="G1", page_size=10)
    assert sandbox.stats.get("job_list", 0) == 0  # nothing before the first item is asked for
    first = [next(items) for _ in range(10)]
    assert sandbox.stats["job_list"] == 1
    first.append(next(items))
    assert sandbox.stats["job_list"] == 2
    assert len(first) + len(list(items)) == 40


def _adversarial_jobs() -> list[dict]:
    # Ties on created_at across page boundaries, and duplicates served twice.
    rows = [{"job_id": f"A{i:03d}", "created_at": f"2026-01-01T00:00:{i // 4:02d}"} for i in range(30)]
    return rows[:12] + rows[10:13] + rows[12:]


def test_iter_over_adversarial_pages_matches_the_cli(origins, bl):
    rows = _adversarial_jobs()

    def answer(path, query):
        skip, limit = int(query.get("skip", 0)), int(query.get("limit", 50))
        return js({"total": 30, "jobs": rows[skip:skip + limit]})

    origin = origins(answer)
    cli = bl("--host", origin.url, "--api-key", API_KEY, "--retry", "0", "jobs", "get", "-g", "G1", "--all",
             "--page-size", "5")
    assert cli.code == 0, cli.err
    expected = json.loads(cli.out)[0]["jobs"]
    assert len(expected) == 30
    with benchloop.Client(host=origin.url, api_key=API_KEY, retry=0) as client:
        assert list(client.jobs.iter(group="G1", page_size=5)) == expected
    requests = [s.target for s in origin.seen]
    assert all(target.startswith("/openapi/jobs?group_id=G1&skip=") for target in requests)


_item = st.builds(lambda n, t: {"job_id": f"J{n}", "created_at": f"t{t}"}, st.integers(0, 25), st.integers(0, 4))


@settings(max_examples=150, deadline=None)
@given(pages=st.lists(st.lists(_item, max_size=6), min_size=1, max_size=8),
       total=st.one_of(st.none(), st.integers(0, 30)), size=st.integers(1, 7), tie=st.booleans())
def test_iter_modes_give_the_scans_items(pages, total, size, tie):
    """Any page sequence (skip ignored or not, totals wrong or missing): same items or same error."""
    def fetch(skip, limit):
        page = pages[min(skip // max(size, 1), len(pages) - 1)] if skip else pages[0]
        body = {"jobs": page}
        if total is not None:
            body["total"] = total
        return body

    for scan, walk, extra in ((unique_scan, iter_unique_scan, {"tie_key": "created_at"} if tie else {}),
                              (task_scan, iter_task_scan, {})):
        args = {"page_size": size, "collection": "jobs", "id_keys": ["job_id"], **extra}
        try:
            expected = scan(fetch, **args).items
        except PaginationError as exc:
            expected = str(exc)
        try:
            got = list(walk(fetch, **args))
        except PaginationError as exc:
            got = str(exc)
        assert got == expected


def test_iter_keeps_only_the_ids(tmp_path):
    """100,000 items of ~2 kB (200 MB if kept): the walk's peak stays near one page plus the ids."""
    pages, size = 200, 500

    def fetch(skip, limit):
        n = skip // size
        if n >= pages:
            return {"total": pages * size, "jobs": []}
        return {"total": pages * size,
                "jobs": [{"job_id": f"J{n * size + i}", "blob": "x" * 2000 + str(i)} for i in range(size)]}

    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_unique_scan(fetch, page_size=size, collection="jobs", id_keys=["job_id"]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == pages * size
    assert peak < 25 * 1024 * 1024, peak


# ---------------------------------------------------------------- downloads
def test_download_result_paths_and_skipped(client, tmp_path):
    out = tmp_path / "out"
    result = client.report.download(group="G1", output_dir=out)
    assert result.failures == [] and result.skipped == []
    assert sorted(result.paths) == sorted(str(out / rel) for rel in final_files(out))
    assert str(out / "G1_report.md") in result.paths
    again = client.report.download(group="G1", output_dir=str(out), skip_existing=True)
    assert again.paths == [] and sorted(again.skipped) == sorted(result.paths)


def test_download_failures_keep_what_was_written(client, tmp_path):
    with pytest.raises(benchloop.PartialFailure) as caught:
        client.trajectory.download(job=["G1-J0001", "NOPE"], output_dir=tmp_path)
    result = caught.value.results
    assert isinstance(result, benchloop.DownloadResult)
    assert result.paths == [str(tmp_path / "G1-J0001_trajectory.json")]
    assert [ident for ident, _ in result.failures] == ["NOPE"] == [i for i, _ in caught.value.failures]


def test_listing_instead_of_files(client, tmp_path):
    listing = client.artifacts.download(job="G1-J0001", list_only=True, output_dir=tmp_path)
    assert isinstance(listing, list) and listing and listing[0]["job_id"] == "G1-J0001"
    assert final_files(tmp_path) == {}


def test_command_resource_is_callable(client, tmp_path):
    result = client.pull(job="G1-J0001", sections="metrics", output_dir=tmp_path)
    assert result.paths == [str(tmp_path / "G1-J0001_run_metrics.json")]


# -------------------------------------------------------------------- quiet
def test_a_library_prints_nothing(sandbox, capfd, caplog, tmp_path):
    lines: list[str] = []
    config = tmp_path / "config.toml"
    config.write_text("[profile]\n")
    config.chmod(0o644)  # the CLI warns on stderr; the client logs it
    caplog.set_level(logging.DEBUG, logger="benchloop")
    with benchloop.Client(host=sandbox.url, api_key=sandbox.api_key, config=config, progress=lines.append,
                          retry=0) as bl:
        bl.jobs.download(group=["G1", "G2"], output_dir=tmp_path / "out")
        bl.metrics.get(group="G1")
        with pytest.raises(benchloop.PartialFailure):
            bl.report.get(job="NOPE")
    captured = capfd.readouterr()
    assert (captured.out, captured.err) == ("", "")
    assert "group job-list downloads: total=2 groups" in lines
    assert any(line.startswith("group jobs G1: 40/40 jobs") for line in lines)
    messages = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "benchloop"]
    assert (logging.INFO, f"wrote {tmp_path / 'out' / 'G1' / 'job_list.json'} (40 jobs)") in messages
    assert any(level == logging.WARNING and "readable by other users" in m for level, m in messages)
    assert not any(sandbox.api_key in m for _, m in messages)


def test_a_library_prints_nothing_when_logging_is_not_configured(sandbox, tmp_path):
    # Without a handler of the user's, Python's last resort printed a library's warnings on
    # stderr ("BASE: 9 of 160 jobs have no score..."); the package's NullHandler keeps it quiet.
    config = tmp_path / "config.toml"
    config.write_text("[profile]\n")
    config.chmod(0o644)  # a warning: the file is readable by other users
    script = ("import benchloop, sys\n"
              "with benchloop.Client(host=sys.argv[1], api_key=sys.argv[2], config=sys.argv[3], retry=0) as bl:\n"
              "    bl.metrics.get(group='G1')\n")
    done = subprocess.run([sys.executable, "-c", script, sandbox.url, sandbox.api_key, str(config)],
                          capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")


# ------------------------------------------------------- connections, threads
def test_sequential_calls_share_one_connection(sandbox):
    sandbox.reset_stats()
    with benchloop.Client(host=sandbox.url, api_key=sandbox.api_key, retry=0) as bl:
        for n in range(1, 41):
            assert bl.metrics.get(job=f"G1-J{n:04d}")[0]["job_id"] == f"G1-J{n:04d}"
    assert sandbox.stats["job_metrics"] == 40
    assert sandbox.stats["connections"] == 1


def test_threads_share_one_client(sandbox):
    sandbox.reset_stats()
    threads, calls = 8, 15
    errors: list[BaseException] = []
    seen: dict[int, list[str]] = {}

    with benchloop.Client(host=sandbox.url, api_key=sandbox.api_key, retry=0) as bl:
        expected = {n: bl.report.get(job=f"G2-J{n:04d}") for n in range(1, calls + 1)}
        barrier = threading.Barrier(threads)

        def work(index: int) -> None:
            try:
                barrier.wait()
                got = []
                for n in range(1, calls + 1):
                    assert bl.report.get(job=f"G2-J{n:04d}") == expected[n]
                    got.append(next(bl.jobs.iter(group="G3", page_size=5))["job_id"])
                files = bl.metrics.download(job=f"G1-J{index + 1:04d}", output_dir=f"{sandbox_dir}/{index}")
                assert len(files.paths) == 1
                seen[index] = got
            except BaseException as exc:  # reported below
                errors.append(exc)

        sandbox_dir = os.environ.get("HOME", "/tmp")
        workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        http = bl._rt._http
    assert errors == []
    assert len({tuple(v) for v in seen.values()}) == 1
    # One HTTP client for every thread; at most one connection per thread in a request at once.
    assert http is not None and http.closed
    assert sandbox.stats["connections"] <= threads + 1


def test_close(sandbox):
    bl = benchloop.Client(host=sandbox.url, api_key=sandbox.api_key)
    bl.report.get(job="G1-J0001")
    bl.close()
    assert bl._rt._http.closed
    with pytest.raises(benchloop.BenchloopError, match="closed"):
        bl.report.get(job="G1-J0001")


# ------------------------------------------------------------------ offline
def test_describe_and_queries_need_no_backend_and_fail_as_usage_errors():
    """``sdk.offline``: what the MCP server's describe tool and query argument use."""
    from benchloop.sdk import offline

    document = offline.describe("metrics", "get")
    assert list(document["resources"]) == ["metrics"] and "get" in document["resources"]["metrics"]["actions"]
    with pytest.raises(benchloop.UsageError, match="unknown resource 'nope'"):
        offline.describe("nope")
    query = offline.compile_query("[].id")
    assert query.expression == "[].id" and query.search([{"id": 1}, {"id": 2}]) == [1, 2]
    assert offline.compile_query(None) is None and offline.compile_query("") is None
    with pytest.raises(benchloop.UsageError, match="invalid --query expression"):
        offline.compile_query("[")
    with pytest.raises(benchloop.UsageError, match="--query failed"):
        offline.compile_query("length(@)").search(5)


def test_the_resolved_key_is_an_attribute_and_never_in_the_repr(sandbox, monkeypatch):
    monkeypatch.setenv("BENCHLOOP_API_KEY", sandbox.api_key)
    with benchloop.Client(host=sandbox.url) as bl:  # the key from the environment, as resolved
        assert bl.api_key == sandbox.api_key and sandbox.api_key not in repr(bl)
