"""The bodies of ``bl dataset sync``, ``info`` and ``sql`` (declared in the table's ``commands:``).

``sync`` runs the engine through a Python client made from the command's resolved
settings (the global ``--host``, ``--api-key``, ``--profile``, ``--concurrency``, ``--retry``,
``--timeout``), so its requests are exactly those of ``bl jobs table`` and ``bl trajectory
get``; it prints one JSON object per group synced (what it holds now) and exits 1 when a
group or a job failed (the rest is kept).  ``sql`` prints its rows through the formats of
every printing command (``engine.formats``); ``info`` prints one JSON object.
"""

from __future__ import annotations

import sys
from typing import Any

from ..base.errors import EXIT_FAILURE, EXIT_OK, UsageError
from . import store


def _emit(elements: list[Any], output: str, ctx: Any) -> None:
    from ..engine.formats import emit

    emit(sys.stdout, elements, output, ctx.options.get("pretty", True))


def _log(ctx: Any) -> Any:
    from ..base.log import Log

    options = ctx.options
    return Log(quiet=options["quiet"], verbose=options["verbose"], error_format=options["error_format"])


def _client(ctx: Any, log: Any) -> Any:
    from ..sdk import Client

    settings, options = ctx.settings_now(), ctx.options
    return Client(host=settings.host, api_key=settings.api_key, concurrency=options["concurrency"],
                  retry=options["retry"], timeout=options["timeout"], ca_bundle=options["ca_bundle"],
                  pretty=options["pretty"], progress=log.progress)


def sync_body(values: dict[str, Any], ctx: Any) -> int:
    from . import parquet, sync

    groups = [g for given in values.get("group") or () for g in str(given).split(",") if g.strip()]
    if not groups:
        raise UsageError("dataset sync needs at least one group: -g GROUP [-g MORE ...]")
    parquet.duckdb()  # the install hint before any request
    root = store.location(values.get("dataset"))
    store.read_manifest(root)  # a newer schema is refused before any request
    from ..base import errors
    from ..sdk import errors as sdk_errors

    log = _log(ctx)
    try:
        with _client(ctx, log) as client:
            report = sync.sync(client, root, groups, with_steps=values.get("with_tables") == "steps",
                               filters={k: values.get(k) for k in ("status", "template", "instance_id")},
                               scoring={k: values.get(k) for k in ("metric", "unit", "pass_threshold")},
                               note=log.note)
    except sdk_errors.AuthError as exc:  # the client's errors as the CLI's (their exit codes)
        raise errors.AuthError(str(exc)) from None
    except sdk_errors.UsageError as exc:
        raise UsageError(str(exc)) from None
    _emit([{"dataset": root, **group} for group in report.groups], "jsonl", ctx)
    for ident, message in report.failures:
        log.error(f"{ident}: {message}")
    log.flush()
    return EXIT_FAILURE if report.failures else EXIT_OK


def info_body(values: dict[str, Any], ctx: Any) -> int:
    from . import query

    _emit([query.info(store.location(values.get("dataset")))], "json", ctx)
    return EXIT_OK


def sql_body(values: dict[str, Any], ctx: Any) -> int:
    from . import query

    root = store.location(values.get("dataset"))
    if store.read_manifest(root) is None:
        raise UsageError(f"no dataset at {root}: bl dataset sync -g GROUP first (or --dataset DIR)")
    _emit(query.sql(root, values["query"]), values.get("output") or "json", ctx)
    return EXIT_OK
