"""Benchmark suite of ``bl``: ``python -m benchmarks`` (``make bench``).

What it measures, side by side in one run on one machine (issues 3 and 6):

1. ``startup``  - ``bl --version``, ``bl --help``, ``bl metrics --help``,
   ``bl metrics get --help`` and ``bl metrics get -j G1-J0001`` against the
   floor ``python -c pass`` (the interpreter of the venv that runs ``bl``),
   the import floor ``python -c "import cyclopts, httpx"`` (issue 25:
   ``metrics get -j`` within 1.25x) and the code of commit 093c5df, from
   ``git archive`` (issue 25: help pages at least as fast as there).
2. ``fanout-trajectory`` / ``fanout-report`` - ``trajectory download -j -``
   over 2,000 ids and ``report download -g`` over a 2,000-job group, with
   20 ms injected latency, at the default concurrency (5) and at 16, beside
   the floor (:mod:`benchmarks.floor_client`: a keep-alive ``http.client``
   thread pool doing the same per-job work) in the same run; ``bl``'s wall
   time and CPU are reported as ratios to the floor's (issue 25: wall within
   1.1x) and to the latency bound N x 20 ms / concurrency.
3. ``cpu`` - user+sys CPU of ``bl trajectory get -j -`` over 1,000 ids at zero
   latency, against the floor (issue 25: marginal CPU per 1,000 requests
   within 2x) and :mod:`benchmarks.baseline_client` (a fresh ``httpx.Client``
   per request, as the official client does; at least 20x less CPU).
4. ``mem-export`` / ``mem-jobs`` (the *big* scenarios, skipped by ``--quick``)
   - peak RSS of ``trajectory download -g`` on a >= 1 GB (uncompressed) trace
   export and of ``jobs download -g`` on a 100,000-job group.
5. ``sdk`` - the Python client: start-up, 1,000 calls in one process.
6. ``scale`` - ``jobs get --all`` and ``trajectory download -g`` on a group of
   2,000 and of 20,000 jobs: time per 1,000 jobs and peak RSS at both sizes.

Why subprocesses everywhere: what users feel is the whole process (interpreter
start, imports, the work, exit), and ``os.wait4`` gives exactly that process's
CPU time and peak RSS.  The sandbox backend runs in its own process
(:mod:`benchmarks.sandbox_launcher`) so its CPU and memory are never counted
as the client's.  ``BENCH_PEER=/path/to/bl`` runs every scenario with another
build of the CLI too and adds its ratio to ``bl`` (``BENCH_PEER_LABEL`` says
what it is, e.g. the commit before a change, for before/after figures
measured side by side).

Timings live here, never in pass/fail tests (``tests/test_perf_facts.py``
holds the facts: imports, connection reuse).
"""
