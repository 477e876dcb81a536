"""Benchmark suite of ``bl``: ``python -m benchmarks`` (``make bench``).

What it measures, side by side in one run on one machine (issues 3 and 6):

1. ``startup``  - ``bl --version``, ``bl --help``, ``bl metrics --help``,
   ``bl metrics get --help`` and ``bl metrics get -j G1-J0001`` against the
   floor ``python -c pass`` (the interpreter of the venv that runs ``bl``).
2. ``fanout-trajectory`` / ``fanout-report`` - ``trajectory download -j -``
   over 2,000 ids and ``report download -g`` over a 2,000-job group, with
   20 ms injected latency, against the latency bound N x 20 ms / concurrency,
   at the default concurrency and at 8, 16 and 32 (targets: within 1.2x of
   the bound at the default, within 1.3x at 16).
3. ``cpu`` - user+sys CPU of ``bl trajectory get -j -`` over 1,000 ids at zero
   latency, against :mod:`benchmarks.baseline_client` (a fresh
   ``httpx.Client`` per request, as the official client does; target: at
   least 20x less CPU per 1,000 requests).
4. ``mem-export`` / ``mem-jobs`` (the *big* scenarios, skipped by ``--quick``)
   - peak RSS of ``trajectory download -g`` on a >= 1 GB (uncompressed) trace
   export and of ``jobs download -g`` on a 100,000-job group.

Why subprocesses everywhere: what users feel is the whole process (interpreter
start, imports, the work, exit), and ``os.wait4`` gives exactly that process's
CPU time and peak RSS.  The sandbox backend runs in its own process
(:mod:`benchmarks.sandbox_launcher`) so its CPU and memory are never counted
as the client's.  ``BENCH_PEER=/path/to/bl`` runs every scenario with another
build of the CLI too and adds its ratio to ``bl``.

Timings live here, never in pass/fail tests (``tests/test_perf_facts.py``
holds the facts: imports, connection reuse).
"""
