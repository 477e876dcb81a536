"""Built-in commands that are not backend resources: ``config`` and ``sandbox``."""

from __future__ import annotations

import sys
from typing import Annotated, Any

from cyclopts import App, Parameter

from .errors import UsageError

config_app = App(name="config", help="Show or edit the configuration file.", help_format="plaintext")


@config_app.command(name="set")
def config_set(
    *,
    api_key: Annotated[str | None, Parameter(name="--api-key", help="API key to store.")] = None,
    host: Annotated[str | None, Parameter(name="--host", help="Backend base URL to store.")] = None,
    output_dir: Annotated[str | None, Parameter(name=["--output-dir", "-o"], help="Default download root to store.")] = None,
    config: Annotated[str | None, Parameter(name="--config", help="File to write (default ~/.benchloop/config.toml).")] = None,
    profile: Annotated[str | None, Parameter(name="--profile", help="Write [profiles.NAME] instead of [profile].")] = None,
    ctx: Annotated[Any, Parameter(parse=False)] = None,
) -> int:
    """Store values in the [profile] table (or [profiles.NAME]); other content of the file is kept."""
    from .config import config_path, write_config
    from .log import Log

    values = {k: v for k, v in (("host", host), ("api_key", api_key), ("output_dir", output_dir)) if v is not None}
    if not values:
        raise UsageError("provide at least one of --api-key/--host/--output-dir")
    path = config_path(config or (ctx.options["config"] if ctx else None))
    write_config(path, values, profile)
    where = f" (profile {profile})" if profile else ""
    Log(quiet=bool(ctx and ctx.options["quiet"])).info(f"wrote config to {path}{where}")
    return 0


@config_app.command(name="show")
def config_show(*, ctx: Annotated[Any, Parameter(parse=False)] = None) -> int:
    """Print the effective configuration as JSON (the API key masked)."""
    from .config import mask, resolve
    from .writers import dumps

    opts = ctx.options
    settings = resolve(opts["api_key"], opts["host"], opts["output_dir"], opts["config"], opts["profile"])
    sys.stdout.write(dumps({
        "config_file": str(settings.config_file),
        "profile": settings.profile,
        "host": settings.host,
        "api_key": mask(settings.api_key),
        "output_dir": settings.output_dir,
    }, opts["pretty"]))
    return 0


@config_app.command(name="path")
def config_path_cmd(*, ctx: Annotated[Any, Parameter(parse=False)] = None) -> int:
    """Print the path of the configuration file in use."""
    from .config import config_path

    sys.stdout.write(f"{config_path(ctx.options['config'])}\n")
    return 0


sandbox_app = App(name="sandbox", help="Run the local sandbox backend (for demos and tests).",
                  help_format="plaintext")


@sandbox_app.command(name="serve")
def sandbox_serve(
    *,
    host: Annotated[str, Parameter(name="--listen", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, Parameter(name="--port", help="Port (0 picks a free one).")] = 8765,
    seed: Annotated[int, Parameter(name="--seed", help="Dataset seed.")] = 7,
    groups: Annotated[int, Parameter(name="--groups", help="Number of groups.")] = 3,
    jobs_per_group: Annotated[int, Parameter(name="--jobs-per-group", help="Jobs in each group.")] = 40,
    tasks_per_group: Annotated[int, Parameter(name="--tasks-per-group", help="Evaluation tasks in each group.")] = 25,
    api_key: Annotated[str, Parameter(name="--api-key", help="The key clients must send.")] = "sandbox-key",
    latency_ms: Annotated[int, Parameter(name="--latency-ms", help="Delay before each answer.")] = 0,
    ctx: Annotated[Any, Parameter(parse=False)] = None,
) -> int:
    """Serve the endpoint table from a deterministic synthetic dataset until interrupted."""
    from .sandbox.serve import serve

    serve(host, port, seed, groups, jobs_per_group, tasks_per_group, api_key, latency_ms)
    return 0
