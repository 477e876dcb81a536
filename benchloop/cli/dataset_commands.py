"""The bodies of ``bl dataset sync``, ``info`` and ``sql`` (declared in the table's ``commands:``).

``sync`` runs through a Python client made from the command's resolved settings (the
global ``--host``, ``--api-key``, ``--profile``, ``--concurrency``, ``--retry``,
``--timeout``): ``client.dataset.sync``, whose requests are exactly those of ``bl jobs
table`` and ``bl trajectory get``.  It prints one JSON line per group synced (what the
dataset holds of it now) and exits 1 when a group or a job failed (the rest is kept).
``sql`` prints its rows through the formats of every printing command
(``engine.formats``); ``info`` prints one JSON object.
"""

from __future__ import annotations

import sys
from typing import Any

from ..base.errors import EXIT_FAILURE, EXIT_OK, AuthError, UsageError


def _emit(elements: list[Any], output: str, ctx: Any) -> None:
    from ..engine.formats import emit

    emit(sys.stdout, elements, output, ctx.options["pretty"])


def _log(ctx: Any) -> Any:
    from ..base.log import Log

    options = ctx.options
    return Log(quiet=options["quiet"], verbose=options["verbose"], error_format=options["error_format"])


def sync_body(values: dict[str, Any], ctx: Any) -> int:
    from ..dataset import parquet, store
    from ..sdk import Client
    from ..sdk import errors as sdk

    groups = [g.strip() for given in values.get("group") or () for g in str(given).split(",") if g.strip()]
    if not groups:
        raise UsageError("dataset sync needs at least one group: -g GROUP [-g MORE ...]")
    parquet.duckdb()  # the install hint before any request
    root = store.location(values.get("dataset"))
    store.read_manifest(root)  # a newer schema is refused before any request
    log = _log(ctx)
    settings, options = ctx.settings_now(), ctx.options
    failures: list[tuple[str, str]] = []
    try:
        with Client(host=settings.host, api_key=settings.api_key, concurrency=options["concurrency"],
                    retry=options["retry"], timeout=options["timeout"], ca_bundle=options["ca_bundle"],
                    pretty=options["pretty"], progress=log.progress) as client:
            try:
                synced = client.dataset.sync(
                    groups, with_steps=values.get("with_tables") == "steps", dataset=root,
                    **{k: values.get(k) for k in ("status", "template", "instance_id", "metric", "unit",
                                                  "pass_threshold")})
            except sdk.PartialFailure as exc:
                synced, failures = exc.results, exc.failures
    except sdk.AuthError as exc:  # the client's errors as the CLI's (their exit codes)
        raise AuthError(str(exc)) from None
    except sdk.UsageError as exc:
        raise UsageError(str(exc)) from None
    _emit(synced, "jsonl", ctx)
    for ident, message in failures:
        log.error(f"{ident}: {message}")
    log.flush()
    return EXIT_FAILURE if failures else EXIT_OK


def info_body(values: dict[str, Any], ctx: Any) -> int:
    from ..dataset import query, store

    _emit([query.info(store.location(values.get("dataset")))], "json", ctx)
    return EXIT_OK


def sql_body(values: dict[str, Any], ctx: Any) -> int:
    from ..dataset import query, store

    root = store.location(values.get("dataset"))
    if store.read_manifest(root) is None:
        raise UsageError(f"no dataset at {root}: bl dataset sync -g GROUP first (or --dataset DIR)")
    _emit(query.sql(root, values["query"]), values.get("output") or "json", ctx)
    return EXIT_OK
