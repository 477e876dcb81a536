"""One tool call, run through the Python client: the CLI's checks, engine and messages.

The MCP server is a layer above the Python client (``benchloop.sdk``): a call is a method of
a ``benchloop.Client``, ``describe`` and ``query`` are the client's ``offline`` functions,
and nothing here reaches the engine, the settings or the HTTP stack directly
(tests/contract/test_layers.py: mcp_server imports only sdk, table and base).

A call has two halves, so that nothing local ever waits behind the network:

* :meth:`Runner.prepare` is local and quick: the arguments are checked as the
  CLI checks its flags (``values_for`` and ``arguments.bind`` of the Python
  client), ``query`` is compiled, a download's ``output_dir`` must stay under
  the server's download directory, ``describe`` is answered.  It returns a
  :class:`Reply` (an answer or a usage error) or a :class:`Job` to run;
* :meth:`Runner.execute` runs a job on one of the workers (``workers.py``),
  through that worker's ``benchloop.Client``.

Neither raises: every problem is a tool error (``Reply.is_error``) whose text
is what the CLI would say - the usage error (``Error: ...``, naming the tool's
arguments instead of the CLI's flags), the failure summary of the ids that
failed (``[error] 1 id(s) failed:`` and one line per id, after the JSON of the
ids that worked), the authentication or network error.  Input nested too
deeply (arguments, a query) is a usage error, not a crash.  Every reply is made
to fit the budget (``--max-chars``) and has the API key masked in every
channel (:meth:`Runner.finish`).  Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..base.masking import known, scrub, scrub_value
from ..sdk.errors import UsageError
from ..sdk.offline import compile_query, describe
from ..table.model import Spec
from . import budget
from .tools import DESCRIBE, DOWNLOAD, Tool, attribute, gate_message
from .workers import DEFAULT_CALL_TIMEOUT, DEFAULT_WORKERS, Ticket, Workers

LOGGER = logging.getLogger("benchloop.mcp")
# Arrays and objects inside one argument: ids are one level; anything deeper than this is refused
# before it reaches code that walks it recursively.
MAX_ARGUMENT_DEPTH = 8


@dataclass
class Reply:
    """A tool result: text blocks, the structured content, and whether it is an error."""

    texts: list[str]
    structured: dict[str, Any] | None = None
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Job:
    """A checked call that needs the backend: what one worker runs."""

    tool: Tool
    values: dict[str, Any]
    query: Any
    query_text: str | None


class CallError(Exception):
    """A problem with a call, reported as a tool error with this message."""


def nesting(value: Any, limit: int) -> int:
    """How deeply arrays and objects nest in ``value`` (0 for a scalar); stops counting past ``limit``.
    Iterative, so a value nested thousands deep is measured, not a RecursionError."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def argument_words(tool: Tool) -> Callable[[str], str]:
    """A function that rewrites a CLI message for the tool: its flags (``-g/--group``, ``--scope``,
    ``--task-id``) become the tool's argument names (``group``, ``scope``, ``task_id``)."""
    names: dict[str, str] = {"--query": "query"}
    if tool.action is not None:
        for opt in tool.action.options:
            flags = [f for f in opt.flags if f.startswith("-")]
            if not flags:
                continue
            names["/".join(flags)] = opt.name
            names["/".join(sorted(flags, key=len))] = opt.name  # "-g/--group", as the CLI's messages write it
            for flag in flags:
                names[flag] = opt.name
            if opt.negative:
                names[opt.negative] = f"{opt.name}=false"
    ordered = sorted(names, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(f) for f in ordered) + r")(?![\w-])")
    return lambda text: pattern.sub(lambda m: names[m.group(1)], text)


class Runner:
    def __init__(self, make_client: Callable[[], Any], spec: Spec, served: list[Tool], every: list[Tool], *,
                 max_chars: int = budget.DEFAULT_MAX_CHARS, download_dir: str | None = None,
                 secrets: tuple[str, ...] = (), toolsets: set[str] | None = None, allow_writes: bool = False,
                 workers: int = DEFAULT_WORKERS, call_timeout: float = DEFAULT_CALL_TIMEOUT,
                 first_client: Any = None):
        self.spec = spec
        self.tools = {t.name: t for t in served}
        self.every = {t.name: t for t in every}
        self.max_chars = max_chars
        self.download_dir = os.path.realpath(download_dir) if download_dir else None
        self.secrets = known(*secrets)
        self.toolsets = toolsets
        self.allow_writes = allow_writes
        self.call_timeout = call_timeout
        self.workers = Workers(make_client, workers, first_client)
        self._words = {name: argument_words(tool) for name, tool in self.every.items()}

    def close(self) -> None:
        self.workers.close()

    # ------------------------------------------------------------ entry
    def prepare(self, name: str, arguments: Any) -> Reply | Job:
        """The local half of a call: an answer (describe, a usage error) or the job to run."""
        return self._guarded(name, lambda: self._prepare(name, arguments))

    def call(self, name: str, arguments: Any) -> Reply:
        """One call, synchronously (scripts and tests): its local half, then its network half on
        a free worker ("busy" when there is none)."""
        prepared = self.prepare(name, arguments)
        if isinstance(prepared, Reply):
            return prepared
        ticket = self.workers.acquire()
        return self.busy() if ticket is None else self.run(ticket, prepared)

    def run(self, ticket: Ticket, job: Job) -> Reply:
        """The network half, on the ticket's worker (in the calling thread; ``server.run_job`` puts
        it in a thread under the call's deadline)."""
        reply = self._guarded(job.tool.name, lambda: self.workers.run(ticket, lambda client: self.execute(job, client)))
        assert isinstance(reply, Reply)
        return reply

    def busy(self) -> Reply:
        count = self.workers.count
        return self.error(f"[error] busy: all {count} workers of this server are running other calls to the "
                          f"backend; try again when one of them has finished (bl mcp serve --workers {count} "
                          "sets how many calls run at once)")

    def overdue(self, job: Job) -> Reply:
        kept = " Files written before the deadline stay." if job.tool.kind == DOWNLOAD else ""
        return self.error(f"[error] deadline: {job.tool.name} took longer than {self.call_timeout:g} s and was "
                          f"stopped (bl mcp serve --call-timeout SECONDS).{kept} Ask for less at a time (fewer "
                          "ids, one page, a query) or try again later.")

    def _guarded(self, name: str, work: Callable[[], Reply | Job]) -> Reply | Job:
        try:
            outcome = work()
        except CallError as exc:
            return self.error(str(exc))
        except RecursionError:
            LOGGER.warning("tool %s: input or answer nested too deeply", name)
            return self.error(f"[error] {name}: the data is nested too deeply to handle (an answer of the "
                              "backend or a query result with thousands of levels)")
        except Exception as exc:  # never crash the server: the agent gets the error, stderr the traceback
            LOGGER.error("tool %s failed unexpectedly", name, exc_info=True)
            return self.error(f"[error] unexpected error: {type(exc).__name__}: {exc}")
        return self.finish(outcome) if isinstance(outcome, Reply) else outcome

    def error(self, message: str) -> Reply:
        return self.finish(Reply([message], None, True))

    def finish(self, reply: Reply) -> Reply:
        """Every channel masked and within the budget: the last step of every reply."""
        texts = [scrub(t, self.secrets) for t in reply.texts]
        structured = scrub_value(reply.structured, self.secrets)
        if sum(len(t) for t in texts) > self.max_chars:  # an error text (a result was composed to fit)
            texts = [budget.fit_text("\n".join(texts), self.max_chars)]
        return Reply(texts, structured, reply.is_error, reply.meta)

    # ----------------------------------------------------------- checks
    def tool(self, name: Any) -> Tool:
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is not None:
            return tool
        known = self.every.get(name) if isinstance(name, str) else None
        if known is not None:
            raise CallError(gate_message(known, self.toolsets, self.allow_writes, self.download_dir is not None))
        raise CallError(f"unknown tool {budget.clip(str(name), 100)!r}; this server has: {', '.join(self.tools)}")

    def arguments(self, tool: Tool, arguments: Any) -> tuple[dict[str, Any], str | None]:
        """The client's keywords and the query, checked (nesting, unknown names, query type)."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise CallError(f"Error: the arguments of {tool.name} must be an object")
        unknown = [k for k in arguments if k not in tool.accepted]
        if unknown:
            raise CallError(f"Error: {tool.name} got an unexpected argument {budget.clip(unknown[0], 100)!r} "
                            f"(takes {', '.join(tool.input_schema['properties'])})")
        for key, value in arguments.items():
            if nesting(value, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
                raise CallError(f"Error: argument {key} is nested too deeply (more than {MAX_ARGUMENT_DEPTH} "
                                "levels of arrays and objects); see the tool's input schema")
        values = {k: v for k, v in arguments.items() if v is not None}
        query = values.pop("query", None)
        if query is not None and not isinstance(query, str):
            raise CallError("Error: query must be a string (a JMESPath expression)")
        return values, query

    def target(self, given: Any) -> str:
        """The directory a download writes to: DIR, or a relative path under it."""
        root = self.download_dir
        if root is None:  # pragma: no cover - download tools are served only with a directory
            raise CallError("Error: downloads are not enabled (--allow-downloads DIR)")
        if given in (None, "", "."):
            return root
        if not isinstance(given, str):
            raise CallError("Error: output_dir must be a string (a path relative to the download directory)")
        parts = given.replace("\\", "/").split("/")
        if os.path.isabs(given) or given.startswith(("/", "\\")) or ".." in parts or "\x00" in given:
            raise CallError(f"Error: output_dir must be a relative path under the download directory, "
                            f"without '..': {given!r}")
        target = os.path.realpath(os.path.join(root, given))
        if os.path.commonpath([root, target]) != root:
            raise CallError(f"Error: output_dir {given!r} leads outside the download directory")
        return target

    def usage(self, tool: Tool, exc: BaseException) -> CallError:
        """A usage error of the Python client, in the words of the tool's arguments."""
        return CallError(f"Error: {self._words[tool.name](str(exc))}")

    def compile_query(self, tool: Tool, text: str | None) -> Any:
        try:
            return compile_query(text)
        except UsageError as exc:
            raise self.usage(tool, exc) from None
        except RecursionError:
            raise CallError("Error: invalid query expression: nested too deeply to parse") from None

    def check(self, tool: Tool, values: dict[str, Any]) -> None:
        """The Python client's checks of the values (types, ids, choices, minimums, exclusions)
        before a worker is taken, so that a wrong call is answered at once, never queued."""
        from .. import sdk as benchloop
        from ..sdk.methods import bind_call, sdk_options, values_for

        action = tool.table_action
        try:
            bind_call(action, values_for(tool.name, sdk_options(action), values))
        except benchloop.UsageError as exc:
            raise self.usage(tool, exc) from None

    # ------------------------------------------------------------- call
    def _prepare(self, name: str, arguments: Any) -> Reply | Job:
        tool = self.tool(name)
        values, query_text = self.arguments(tool, arguments)
        query = self.compile_query(tool, query_text)
        if tool.kind == DESCRIBE:
            return self.describe(tool, values, query, query_text)
        if tool.kind == DOWNLOAD:
            target = self.target(values.pop("output_dir", None))
            if tool.table_action.option("output_dir") is not None:
                values["output_dir"] = target
        values.update(tool.fixed)
        self.check(tool, values)
        return Job(tool, values, query, query_text)

    def describe(self, tool: Tool, values: dict[str, Any], query: Any, query_text: str | None) -> Reply:
        resource, action = values.get("resource"), values.get("action")
        if action is not None and resource is None:
            raise CallError("Error: give resource with action")
        for name, value in (("resource", resource), ("action", action)):
            if value is not None and not isinstance(value, str):
                raise CallError(f"Error: {name} must be a string")
        try:
            document = describe(resource, action, spec=self.spec)
        except UsageError as exc:
            raise CallError(f"Error: {exc}") from None
        return self.reply(tool, document, query, query_text, [])

    def execute(self, job: Job, client: Any) -> Reply:
        from .. import sdk as benchloop

        tool, values = job.tool, dict(job.values)
        action = tool.table_action
        method = getattr(getattr(client, attribute(action.resource)), attribute(action.name))
        failures: list[tuple[str, str]] = []
        try:
            value = method(**values)
        except benchloop.UsageError as exc:
            raise self.usage(tool, exc) from None
        except benchloop.AuthError as exc:
            raise CallError(f"[error] authentication error: {exc}") from None
        except (benchloop.PartialFailure, benchloop.NetworkError) as exc:
            value, failures = exc.results, exc.failures
            if isinstance(exc, benchloop.NetworkError):
                failures = [*failures, ("", "could not reach the backend; check the URL and the network")]
        if isinstance(value, benchloop.DownloadResult):
            value = {"directory": values.get("output_dir", self.download_dir), "paths": value.paths,
                     "skipped": value.skipped, "placeholders": value.placeholders}
        return self.reply(tool, value, job.query, job.query_text, failures)

    # ----------------------------------------------------------- result
    def reply(self, tool: Tool, value: Any, query: Any, query_text: str | None,
              failures: list[tuple[str, str]]) -> Reply:
        if query is not None:
            try:
                value = query.search(value)
            except UsageError as exc:  # the expression fails on this answer (a type error)
                raise self.usage(tool, exc) from None
        # Masked before it is measured and cut, so the note describes what is shown.
        value = scrub_value(value, self.secrets)
        failures = [(scrub(i, self.secrets), scrub(m, self.secrets)) for i, m in failures]
        noun = "pull step(s)" if tool.action is not None and tool.action.compose is not None else "id(s)"
        pages = tool.action is not None and tool.action.option("page") is not None
        texts, structured = budget.compose(value, failures, noun, self.max_chars, query_text, pages)
        return self.finish(Reply(texts, structured, bool(failures)))

