"""What a command is handed as ``ctx``: the resolved global options and the run around it.

The meta app's launcher (``build.py``) parses the global options, and every command
that declares a ``ctx`` parameter (``Parameter(parse=False)``) gets an
:class:`Invocation`: the settings the global options resolve to, the runtime a table
command runs in, and the advice printed after a failed run.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

# A bare "-" on the command line ("values from stdin") is handed to Cyclopts as this token:
# Cyclopts reads a lone "-" as an option, so `-g -` would be "-g requires an argument".
STDIN_TOKEN = "\x00stdin"


class Invocation:
    """The resolved global options, handed to every command handler as ``ctx``."""

    def __init__(self, prog: str, options: dict[str, Any], app: Any = None):
        self.profile_values: dict[str, Any] = {}
        self.app = app  # the root Cyclopts app (completion scripts are generated from it)
        self.prog = prog
        self.options = options

    def key_given(self) -> tuple[str | None, str | None]:
        """``(key, origin)`` of the global ``--api-key``: ``--api-key -`` reads it from stdin (once)."""
        key = self.options["api_key"]
        if key == STDIN_TOKEN:
            from ..settings.keys import STDIN_ORIGIN, read_stdin_key

            self.options["api_key"] = key = read_stdin_key(sys.stdin)
            self.options["api_key_origin"] = STDIN_ORIGIN
        return key, self.options.get("api_key_origin")

    def settings_now(self, keep_key_error: bool = False):
        """The resolved settings of the global options (as every command resolves them;
        ``keep_key_error``: a key source that gives no key is noted, not raised)."""
        from ..settings import session

        opts = self.options
        key, origin = self.key_given()
        return session.settings(api_key=key, host=opts["host"], output_dir=opts["output_dir"],
                                config=opts["config"], profile=opts["profile"], ca_bundle=opts["ca_bundle"],
                                api_key_origin=origin, keep_key_error=keep_key_error)

    def runtime(self, keep_key_error: bool = False):
        from ..base.log import Log
        from ..settings import session

        opts = self.options
        settings = self.settings_now(keep_key_error)
        self.profile_values = settings.values
        self.settings = settings
        log = Log(quiet=opts["quiet"], verbose=opts["verbose"], error_format=opts["error_format"])
        log.defer_json = True  # one JSON error object per command: printed after the advice (``run``)
        return session.runtime(settings, log, timeout=opts["timeout"], retry=opts["retry"],
                               concurrency=opts["concurrency"], pretty=opts["pretty"], ca_bundle=opts["ca_bundle"],
                               stdout=sys.stdout)

    def run(self, action: Any, dim: str, ids: list[str], opts: dict[str, Any]) -> int:
        from ..engine.command import run
        from . import update_check

        rt = self.runtime()
        check = update_check.start(self.profile_values)
        code = None
        try:
            code = run(rt, action, dim, ids, opts)
            return code
        finally:
            rt.close()
            self.other_service = bool(rt.failed_services) and "benchloop" not in rt.failed_services
            self.explain(rt.log, code)
            rt.log.flush()
            message = check.notice() if check else None
            if message and not self.options["quiet"]:
                sys.stderr.write(message + "\n")

    def explain(self, log: Any, code: int | None) -> None:
        """After a run: what a person needs to act on a missing key or a network failure (the
        host and where it came from), and the per-file lines a terminal did not show."""
        from ..base.errors import EXIT_AUTH
        from ..settings.config import mask_url

        settings = None if self.other_service else self.settings  # advice about Benchloop only
        if settings is not None and code == EXIT_AUTH and not settings.api_key:
            log.error("no API key is configured, so none was sent; set one with "
                      "'bl config set --api-key KEY' or the BENCHLOOP_API_KEY environment variable")
        elif settings is not None and code == EXIT_AUTH:
            log.error(f"{mask_url(settings.host)} refused the API key from {settings.source('api_key')}; "
                      "check that it is the key of this backend")
        elif settings is not None and (log.network_failed or code == 4):
            log.error(f"network errors talking to {mask_url(settings.host)} (host from {settings.source('host')}); "
                      "check the URL and the network" + ("" if log.verbose else " (-v shows each retry)"))
        hidden = log.hidden_summary()
        if hidden and code is not None:
            log.info(hidden)

    settings: Any = None
    other_service = False  # the run failed on another service (AgentPlatform), not on Benchloop
