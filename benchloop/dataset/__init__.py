"""The local dataset of runs: hive-partitioned Parquet files, queried through embedded DuckDB.

``bl dataset sync`` keeps what the backend says about groups on this machine, so that an
analysis over many runs (a trend, a noise floor, a comparison) reads them here instead of
fetching every job again.  The layout is plain hive-partitioned Parquet that DuckDB,
Polars, pandas (pyarrow), Spark and Trino read as it is (docs/dataset.md)::

    DIR/dataset.json                        schema version, the tool that wrote it
    DIR/jobs/group_id=G/part-0.parquet      the `bl jobs table` rows of group G
    DIR/steps/group_id=G/part-0.parquet     one row per trajectory step (--with steps)
    DIR/runs/group_id=G/part-0.parquet      one row: when synced, finished, counts by status
    DIR/state/group_id=G.json               which jobs' steps are stored, and as of which row

Modules: ``store`` (where it lives, the schema version, atomic partitions), ``parquet``
(writing a partition through DuckDB), ``steps`` (trajectory answers as step rows),
``sync`` (the incremental sync, every request through the engine by way of the Python
client), ``query`` (``bl dataset sql`` and ``info``), ``rows`` (``bl compare --dataset``); the CLI bodies are
``cli.dataset_commands``, the Python client's ``client.dataset`` is ``sdk.dataset``.
DuckDB is the optional ``data`` extra (``pip install 'benchloop-client[data]'``).
"""

from __future__ import annotations

INSTALL = "pip install 'benchloop-client[data]'"
