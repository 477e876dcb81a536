"""One tool call, run through the Python client: the CLI's checks, engine and messages.

``Runner.call(name, arguments)`` never raises: every problem is a tool error
(``Reply.is_error``) whose text is what the CLI would say - the usage error
(``Error: ...``), the failure summary of the ids that failed (``[error] 1
id(s) failed:`` and one line per id, after the JSON of the ids that worked),
the authentication or network error.  Arguments are the action's options by
name; they are checked by the client exactly as the CLI checks its flags
(``arguments.bind``), ``query`` is compiled before any request as ``--query``
is, and a download's ``output_dir`` must stay under the server's download
directory.  The API key is masked in every text.  Nothing here imports the
MCP SDK.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from typing import Any

from ..base.errors import UsageError as InternalUsageError
from ..engine import formats
from ..table.model import Spec
from . import results
from .tools import DESCRIBE, DOWNLOAD, Tool, attribute, gate_message

LOGGER = logging.getLogger("benchloop.mcp")


@dataclass
class Reply:
    """A tool result: text blocks, the structured content, and whether it is an error."""

    texts: list[str]
    structured: dict[str, Any] | None = None
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


class CallError(Exception):
    """A problem with a call, reported as a tool error with this message."""


class Runner:
    def __init__(self, client: Any, spec: Spec, served: list[Tool], every: list[Tool], *,
                 max_chars: int = results.DEFAULT_MAX_CHARS, download_dir: str | None = None,
                 secrets: tuple[str, ...] = (), toolsets: set[str] | None = None,
                 allow_writes: bool = False):
        self.client = client
        self.spec = spec
        self.tools = {t.name: t for t in served}
        self.every = {t.name: t for t in every}
        self.max_chars = max_chars
        self.download_dir = os.path.realpath(download_dir) if download_dir else None
        self.secrets = tuple(s for s in secrets if s)
        self.toolsets = toolsets
        self.allow_writes = allow_writes

    # ------------------------------------------------------------ entry
    def call(self, name: str, arguments: Any) -> Reply:
        try:
            return self._call(name, arguments)
        except CallError as exc:
            return self.error(str(exc))
        except Exception as exc:  # never crash the server: the agent gets the error, stderr the traceback
            LOGGER.error("tool %s failed unexpectedly", name, exc_info=True)
            return self.error(f"[error] unexpected error: {type(exc).__name__}: {exc}")

    def error(self, message: str) -> Reply:
        return Reply([self.mask(message)], None, True)

    def mask(self, text: str) -> str:
        return results.mask(text, self.secrets)

    # ----------------------------------------------------------- checks
    def tool(self, name: str) -> Tool:
        tool = self.tools.get(name)
        if tool is not None:
            return tool
        known = self.every.get(name)
        if known is not None:
            raise CallError(gate_message(known, self.toolsets, self.allow_writes, self.download_dir is not None))
        raise CallError(f"unknown tool {name!r}; this server has: {', '.join(self.tools)}")

    def arguments(self, tool: Tool, arguments: Any) -> tuple[dict[str, Any], str | None]:
        """The client's keywords and the query, checked (unknown names, query type)."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise CallError(f"Error: the arguments of {tool.name} must be an object")
        unknown = [k for k in arguments if k not in tool.accepted]
        if unknown:
            raise CallError(f"Error: {tool.name} got an unexpected argument {unknown[0]!r} "
                            f"(takes {', '.join(tool.input_schema['properties'])})")
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

    # ------------------------------------------------------------- call
    def _call(self, name: str, arguments: Any) -> Reply:
        tool = self.tool(name)
        values, query_text = self.arguments(tool, arguments)
        try:
            query = formats.compile_query(query_text)
        except InternalUsageError as exc:
            raise CallError(f"Error: {exc}") from None
        if tool.kind == DESCRIBE:
            return self.describe(tool, values, query, query_text)
        if tool.kind == DOWNLOAD:
            target = self.target(values.pop("output_dir", None))
            if tool.action.option("output_dir") is not None:
                values["output_dir"] = target
        values.update(tool.fixed)
        return self.run(tool, values, query, query_text)

    def describe(self, tool: Tool, values: dict[str, Any], query: Any, query_text: str | None) -> Reply:
        from ..surface.describe import describe_spec

        resource, action = values.get("resource"), values.get("action")
        if action is not None and resource is None:
            raise CallError("Error: give resource with action")
        for name, value in (("resource", resource), ("action", action)):
            if value is not None and not isinstance(value, str):
                raise CallError(f"Error: {name} must be a string")
        try:
            document = describe_spec(self.spec, resource, action)
        except InternalUsageError as exc:
            raise CallError(f"Error: {exc}") from None
        return self.reply(tool, document, query, query_text, [])

    def run(self, tool: Tool, values: dict[str, Any], query: Any, query_text: str | None) -> Reply:
        from .. import sdk as benchloop

        action = tool.action
        method = getattr(getattr(self.client, attribute(action.resource)), attribute(action.name))
        failures: list[tuple[str, str]] = []
        try:
            value = method(**values)
        except benchloop.UsageError as exc:
            raise CallError(f"Error: {exc}") from None
        except benchloop.AuthError as exc:
            raise CallError(f"[error] authentication error: {exc}") from None
        except (benchloop.PartialFailure, benchloop.NetworkError) as exc:
            value, failures = exc.results, exc.failures
            if isinstance(exc, benchloop.NetworkError):
                failures = [*failures, ("", "could not reach the backend; check the URL and the network")]
        if isinstance(value, benchloop.DownloadResult):
            value = {"directory": values.get("output_dir", self.download_dir), "paths": value.paths,
                     "skipped": value.skipped}
        return self.reply(tool, value, query, query_text, failures)

    # ----------------------------------------------------------- result
    def reply(self, tool: Tool, value: Any, query: Any, query_text: str | None,
              failures: list[tuple[str, str]]) -> Reply:
        if query is not None:
            value = query.search(value)
        size = len(results.dumps(value))
        value, cuts = results.cut(value, self.max_chars)
        texts = [self.mask(results.dumps(value))]
        structured: dict[str, Any] = {"result": value}
        if cuts:
            pages = tool.action is not None and tool.action.option("page") is not None
            note, sentence = results.truncation(cuts, size, self.max_chars, query_text, pages)
            structured["truncated"] = note
            texts.append(sentence)
        if failures:
            real = [(i, m) for i, m in failures if i]
            noun = "pull step(s)" if tool.action is not None and tool.action.compose is not None else "id(s)"
            lines = [f"[error] {len(real)} {noun} failed:"] + [f"[error]   - {i}: {m}" for i, m in real]
            lines += [f"[error] {m}" for i, m in failures if not i]
            texts.append(self.mask("\n".join(lines)))
            structured["failures"] = [{"id": self.mask(i), "message": self.mask(m)} for i, m in real]
        if self.secrets and any(s in texts[0] for s in self.secrets):
            structured = json.loads(self.mask(json.dumps(structured, ensure_ascii=False)))
        return Reply(texts, structured, bool(failures))
