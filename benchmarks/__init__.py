"""Benchmark suite of ``bl``: ``python -m benchmarks`` (``make bench``).

Performance measured where users are (issue 32), side by side in one run on
one machine, with the official client ``benchloop_client`` 0.2.25 as the peer
(:mod:`benchmarks.official` installs it into a cached venv; ``BENCH_OFFICIAL``
overrides; without it the run says so and measures ``bl`` alone):

1. ``startup`` (:mod:`.startup`) - ``python -c pass``, ``python -c "import
   httpx"``, and ``--version``, ``--help``, ``metrics --help``, ``metrics get
   -j G1-J0001`` of ``bl`` and of the official client.  Targets: ``bl metrics
   get -j`` no slower than the official client's (issue 32); ``bl --help`` and
   ``bl metrics --help`` at least 2x faster than its (issue 36); ``bl
   --version`` within 1.5x of ``python -c pass`` (issue 36).
2. ``fanout-trajectory`` (:mod:`.fanout`) - ``trajectory download -j -`` of
   1,000 trajectories from a sandbox 50 ms away (every answer, and every new
   connection once), at ``--concurrency`` 16 and at the default, bl and the
   official client interleaved.  Target: the fan-out's span (the sandbox's
   first request to its last answer) within 1.05x of n x RTT / concurrency.
3. ``cpu`` (:mod:`.cpu`) - client CPU per request of ``bl trajectory get -j -``
   without latency: marginal CPU within 2.5x of a keep-alive ``http.client``
   loop's (:mod:`benchmarks.floor_client`), and far below a fresh
   ``httpx.Client`` per request (:mod:`benchmarks.baseline_client`).
7. ``mem-export`` / ``mem-jobs`` (:mod:`.memory`; the *big* scenarios, skipped
   by ``--quick``) - peak RSS on a >= 1 GB trace export and a 100,000-job group.
4. ``sdk`` (:mod:`.sdk`) - the Python client: start-up, 1,000 calls in one process.
5. ``scale`` and 6. ``compare`` (:mod:`.groups`) - big groups stay flat;
   ``bl compare`` on two 20,000-job groups.

Why subprocesses everywhere: what users feel is the whole process (interpreter
start, imports, the work, exit), and ``os.wait4`` gives exactly that process's
CPU time and peak RSS.  The sandbox backend runs in its own process
(:mod:`benchmarks.sandbox_launcher`) so its CPU and memory are never counted
as the client's.  ``BENCH_PEER=/path/to/bl`` runs the scenarios with another
build of the CLI too (``BENCH_PEER_LABEL`` says what it is).

Timings live here, never in pass/fail tests (``tests/contract/test_perf_facts.py``
holds the facts: imports, connection reuse).
"""
