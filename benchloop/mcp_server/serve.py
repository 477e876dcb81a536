"""``bl mcp serve``: check the options, resolve the settings, serve until the client leaves.

Settings (host, key, profile, config, timeout, retry, concurrency, CA bundle)
are the global options, resolved exactly as for every other command; a bad one
is a usage error (exit 2) before anything is served.  Without the ``mcp``
extra the command says how to install it and exits 2.  Log lines go to
stderr (never stdout: over stdio it carries protocol messages only), the API
key and the HTTP token masked.  With ``--http`` the bearer token comes from
``BENCHLOOP_MCP_TOKEN`` or is generated and shown once on stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from ..base.errors import EXIT_INTERRUPTED, UsageError
from ..base.masking import known, scrub
from . import budget, guards
from .workers import DEFAULT_CALL_TIMEOUT, DEFAULT_WORKERS

INSTALL = "pip install 'benchloop-client[mcp]'"
MAX_WORKERS = 256


def require_sdk() -> None:
    """Exit 2 with the install line when the ``mcp`` SDK (2.x) is missing."""
    try:
        import mcp.server.lowlevel  # noqa: F401
    except ImportError:
        raise UsageError(f"bl mcp serve needs the MCP SDK, an optional extra: {INSTALL}") from None


class _MaskingFormatter(logging.Formatter):
    def __init__(self, secrets: tuple[str, ...]):
        super().__init__("[%(levelname)s] %(name)s: %(message)s")
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record), self.secrets)


def configure_logging(options: dict[str, Any], secrets: tuple[str, ...]) -> logging.Handler:
    """Every log record (ours, the client's, the SDK's) on stderr, masked; -q errors only, -v debug."""
    level = logging.ERROR if options.get("quiet") else logging.DEBUG if options.get("verbose") else logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_MaskingFormatter(secrets))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    for name in ("benchloop", "mcp", "uvicorn", "uvicorn.error", "httpx"):
        logging.getLogger(name).setLevel(level)
    return handler


def _options(values: dict[str, Any]) -> dict[str, Any]:
    max_chars = values.get("max_chars")
    if max_chars is None or max_chars < budget.MIN_MAX_CHARS:
        raise UsageError(f"--max-chars must be at least {budget.MIN_MAX_CHARS}")
    port = values.get("http")
    if port is not None and not 0 <= port <= 65535:
        raise UsageError("--http must be a TCP port (0 to 65535; 0 picks a free one)")
    workers = values.get("workers", DEFAULT_WORKERS)
    if workers is None or not 1 <= workers <= MAX_WORKERS:
        raise UsageError(f"--workers must be between 1 and {MAX_WORKERS}")
    call_timeout = values.get("call_timeout", DEFAULT_CALL_TIMEOUT)
    if call_timeout is None or not call_timeout > 0 or call_timeout == float("inf"):
        raise UsageError("--call-timeout must be a number of seconds above 0")
    return {**values, "workers": workers, "call_timeout": float(call_timeout)}


def download_root(given: str | None) -> str | None:
    if given is None:
        return None
    if not given.strip():
        raise UsageError("--allow-downloads needs a directory")
    path = os.path.abspath(os.path.expanduser(given))
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"--allow-downloads: not a directory: {given}")
    os.makedirs(path, exist_ok=True)
    return path


def build_runner(values: dict[str, Any], options: dict[str, Any], extra_secrets: tuple[str, ...] = ()) -> Any:
    """The runner of the served tools; its workers' clients have the global options' settings.
    ``extra_secrets`` are masked like the API key (the HTTP token)."""
    from .. import sdk as benchloop
    from ..table.load import load_model
    from .runner import Runner
    from .tools import all_tools, parse_tools, parse_toolsets, select, served_resources

    values = _options(values)
    spec = load_model()
    if values.get("tools") is not None and values.get("toolsets") is not None:
        raise UsageError("--tools picks resources instead of --toolsets: give one of them")
    try:
        toolsets = parse_tools(spec, values.get("tools"))
        if toolsets is None:
            toolsets = served_resources(spec, parse_toolsets(spec, values.get("toolsets")))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    directory = download_root(values.get("allow_downloads"))
    # A request never outlives the call it belongs to (a hung connect cannot be aborted, only timed out).
    timeout = min(float(options.get("timeout", 300.0)), values["call_timeout"])
    key = options.get("api_key")

    def make_client() -> Any:
        return benchloop.Client(host=options.get("host"), api_key=key,
                                profile=options.get("profile"), config=options.get("config"),
                                concurrency=options.get("concurrency", 5), retry=options.get("retry", 4),
                                timeout=timeout,
                                # Downloads go under DIR whatever the configured download root.
                                output_dir=directory or options.get("output_dir"),
                                ca_bundle=options.get("ca_bundle"), pretty=options.get("pretty", True))

    try:
        first = make_client()  # the first worker's: bad settings are a usage error before serving
    except benchloop.UsageError as exc:
        raise UsageError(str(exc)) from None
    # The key as the first client resolved it: a key command or the keyring is asked once, not
    # again by every worker.
    key = first.api_key
    every = all_tools(spec)
    served = select(every, allow_writes=bool(values.get("allow_writes")), allow_downloads=directory is not None,
                    toolsets=toolsets)
    secrets = known(key, *extra_secrets)
    return Runner(make_client, spec, served, every, max_chars=values["max_chars"], download_dir=directory,
                  secrets=secrets, toolsets=toolsets, allow_writes=bool(values.get("allow_writes")),
                  workers=values["workers"], call_timeout=values["call_timeout"], first_client=first)


def serve(values: dict[str, Any], options: dict[str, Any]) -> int:
    """Run ``bl mcp serve`` with its own option ``values`` and the global ``options``."""
    require_sdk()
    import anyio

    from .server import build_server, serve_http, serve_stdio

    port = values.get("http")
    token, generated = guards.server_token() if port is not None else ("", False)
    runner = build_runner(values, options, (token,) if token else ())
    handler = configure_logging(options, runner.secrets)
    log = logging.getLogger("benchloop.mcp")
    server = build_server(runner)
    log.info("serving %d tools: %s", len(runner.tools), ", ".join(runner.tools))
    try:
        if port is None:
            anyio.run(serve_stdio, server)
        else:
            if not generated and len(token) < guards.WEAK_TOKEN:
                log.warning("%s is shorter than %d characters: a guessable token", guards.TOKEN_ENV,
                            guards.WEAK_TOKEN)

            def announce(url: str) -> None:
                lines = [f"mcp serving {url} ({len(runner.tools)} tools)"]
                if generated:  # shown once, here; set BENCHLOOP_MCP_TOKEN to choose it
                    lines.append(f"mcp token: {token} (clients send 'Authorization: Bearer <token>'; "
                                 f"set {guards.TOKEN_ENV} to choose it)")
                else:
                    lines.append(f"mcp token: from {guards.TOKEN_ENV} (clients send 'Authorization: Bearer "
                                 "<token>')")
                sys.stderr.write("".join(line + "\n" for line in lines))
                sys.stderr.flush()

            anyio.run(serve_http, server, port, announce, token)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        runner.close()
        logging.getLogger().removeHandler(handler)
    return 0
