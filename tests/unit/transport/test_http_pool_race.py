"""No request ever waits for a pooled connection (encode/httpcore#1110).

httpcore 1.0.9's connection pool can close a connection it has already handed
to a waiting request - to make room when the pool is at ``max_connections``,
or as surplus keep-alive - and a request that started on it meanwhile hangs
until its read timeout although the server answered.  Both closes need a full
pool.  The transport's own pool (``benchloop/transport/_pool.py``) never
queues a request and has no limit (proxies use httpcore's pool, unlimited):
the request slots (``--concurrency`` per worker pool, nested pools included)
are what bound the connections.  docs/reliability.md described the stall this caused under
``pull`` with faults.

1. ``test_no_request_waits_for_a_pooled_connection``: 24 requests that can only
   be answered once all 24 reached the server (a barrier in the route).  One
   queued request and the barrier breaks - which a pool of ``pool + 2``
   connections, the configuration before, always does.
2. ``test_pull_under_faults_never_stalls_and_never_drops_a_connection``: the
   conditions of the stall - ``pull`` with two sections side by side, a
   backend and an object store (another origin, as presigned artifact URLs
   are), 30 % ``slow`` or ``reset`` faults, several fault seeds, a short
   ``--timeout`` so that a stalled request shows as ``timed out`` within
   seconds.  Besides "no stall, same files as a fault-free run" it checks the
   precondition of the race on the servers' side: with ``slow`` faults (which
   close nothing) no origin ever sees more connections than the client has
   request slots, i.e. the client never dropped a healthy connection to make
   room.  With ``max_connections = pool_size + 2`` it does, in almost every
   run, and the test fails.
"""

from __future__ import annotations

import threading
import time

import pytest
from support import RecordingLog, final_files, leftovers, run_inprocess

from benchloop.sandbox import start_sandbox
from benchloop.sandbox.scripted import Reply, json_reply, start_scripted
from benchloop.transport.client import Http

pytestmark = pytest.mark.serial  # timing: run alone (see the Makefile)

KEY = "race-key-0123"
CONCURRENCY = 8
SECTIONS = ("report", "artifacts")  # the two sections that fan out over the jobs, side by side
GROUPS = "G1,G2"
TIMEOUT_S = 10  # a stalled request fails after this; a healthy run's slowest answer takes ~0.1 s (a slow fault ~1 s), and a loaded 2-core CI machine can be several times slower




def test_no_request_waits_for_a_pooled_connection():
    n = 24
    barrier = threading.Barrier(n, timeout=10)

    def gate(_seen) -> Reply:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return json_reply({"error": "not every request reached the server"}, 500)
        return json_reply({"ok": True})

    with start_scripted({"/gate": gate}) as srv:
        http = Http(srv.url, KEY, 20, 0, 1, RecordingLog())  # pool=1: the size callers pass for --concurrency 1
        results: list[object] = []

        def one() -> None:
            try:
                results.append(http.request_json("GET", "/gate"))
            except Exception as exc:  # noqa: BLE001 - reported below
                results.append(repr(exc))

        threads = [threading.Thread(target=one) for _ in range(n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        http.close()
        connections = srv.connections
    assert results == [{"ok": True}] * n
    assert connections == n


@pytest.fixture(scope="module")
def origins():
    common = dict(seed=11, groups=2, jobs_per_group=80, artifact_bytes=2048, export_waiting=0,
                  export_running=0, api_key=KEY)
    with start_sandbox(**common) as store, \
            start_sandbox(**common, object_store_url=store.url, redirect_artifacts=True) as backend:
        yield backend, store


def _pull(backend, root, retry: int):
    return run_inprocess("--host", backend.url, "--api-key", KEY, "--timeout", str(TIMEOUT_S), "--retry", str(retry),
                         "--concurrency", str(CONCURRENCY), "-q", "-o", str(root),
                         "pull", "-g", GROUPS, "--with", ",".join(SECTIONS))


@pytest.fixture(scope="module")
def reference(origins, tmp_path_factory):
    backend, store = origins
    for sb in (backend, store):
        sb.configure_faults(0.0)
    root = tmp_path_factory.mktemp("reference")
    result = _pull(backend, root, 0)
    assert result.code == 1, result.err  # the dataset's own failures (unsigned artifacts), nothing else
    return result, final_files(root)


@pytest.mark.parametrize("kind, seed", [(kind, seed) for kind in ("slow", "reset") for seed in (1, 2, 3)])
def test_pull_under_faults_never_stalls_and_never_drops_a_connection(origins, reference, tmp_path, kind, seed):
    backend, store = origins
    for sb in (backend, store):
        sb.configure_faults(0.3, seed=seed, kinds=(kind,))
        sb.reset_stats()
    started = time.monotonic()
    result = _pull(backend, tmp_path, retry=0 if kind == "slow" else 1)
    elapsed = time.monotonic() - started
    stats = {"backend": backend.stats, "object store": store.stats}
    for sb in (backend, store):
        sb.configure_faults(0.0)

    assert "timed out" not in result.err, f"a request waited for its whole --timeout: {result.err[-3000:]}"
    assert elapsed < 60, elapsed
    assert leftovers(tmp_path) == []
    if kind == "slow":
        # Slow answers are complete answers: the run is the fault-free run.
        assert (result.code, result.err) == (reference[0].code, reference[0].err), (stats, result.err[-3000:])
        assert final_files(tmp_path) == reference[1]
        slots = CONCURRENCY * len(SECTIONS)
        for name, st in stats.items():
            assert st["fault:slow"] > 0, name
            # Nothing here closes a connection (no reset, no truncation, no idle
            # expiry within the run), so every connection beyond the number of
            # request slots and the downloads' own (each request of a download goes on
            # a new connection) was a healthy one the client dropped to make room.
            downloads = st.get("job_artifact_download", 0) + st.get("_oss", 0)
            assert st["connections"] <= slots + downloads, (name, st["connections"], slots, downloads)
    else:
        assert result.code in (0, 1, 4), result.err
        assert sum(st.get("fault:reset", 0) for st in stats.values()) > 0
