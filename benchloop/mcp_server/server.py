"""The glue to the ``mcp`` SDK: a low-level server whose tools are the generated ones.

The SDK's low-level ``Server`` takes the tool list and the call handler as
plain callables, which fits tools generated from data (explicit JSON Schemas,
no Python function per tool).  A call is answered in two steps
(``runner.py``): its local half (argument checks, ``describe``) runs in a
thread of its own small pool, so it never waits behind the network; its
network half takes one of the runner's workers (``workers.py``) or is
answered "busy" at once, and runs under the call's deadline
(``--call-timeout``).  When the deadline passes, or the client cancels the
call (``notifications/cancelled``, a timeout on its side) or goes away (stdin
closed, HTTP session ended), the worker's requests are aborted and the worker
is free again as soon as its thread returns.

On the wire: over HTTP every request needs the bearer token, and a message
nested too deeply for the SDK's parser is flattened so that its call gets an
answer (``guards.py``).  This is the only module of benchloop that imports
``mcp``; it is imported by ``bl mcp serve`` only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server

from ..version import __version__
from . import guards
from .runner import Job, Reply, Runner
from .tools import ENVELOPE, Tool, wire

LOGGER = logging.getLogger("benchloop.mcp")
INSTRUCTIONS = ("Tools of the benchmark-analysis backend, generated from the bl command line: each tool returns "
                "what the bl command of the same name prints (compact JSON). Give ids as arrays of strings "
                "(commas inside a string split ids too); use query (JMESPath) to select fields and to ask for the "
                "rest of a result cut to the size budget. " + ENVELOPE + " Call describe for the whole command "
                "schema, with every field's meaning.")
LOCAL_THREADS = 4  # threads for the local half of calls (checks, describe): never shared with network calls
GRACE = 5.0  # seconds an overdue call's worker gets to stop before the deadline error is sent anyway


def mcp_tool(tool: Tool) -> types.Tool:
    """The SDK's tool: the wire form ``tools.wire`` gives (so the sizes docs/mcp.md states are
    what a client receives)."""
    return types.Tool.model_validate(wire(tool))


def result(reply: Reply) -> types.CallToolResult:
    content: list[Any] = [types.TextContent(type="text", text=text) for text in reply.texts]
    return types.CallToolResult(content=content, structured_content=reply.structured, is_error=reply.is_error)


class _Limiters:
    """The two thread pools' limiters, made in the event loop at the first call."""

    def __init__(self, workers: int):
        self.workers = workers
        self.local: anyio.CapacityLimiter | None = None
        self.network: anyio.CapacityLimiter | None = None

    def get(self) -> tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]:
        if self.local is None or self.network is None:
            self.local = anyio.CapacityLimiter(LOCAL_THREADS)
            # Never the limiting factor: a call holds a token only while it holds a worker.
            self.network = anyio.CapacityLimiter(self.workers)
        return self.local, self.network


async def run_job(runner: Runner, job: Job, network: anyio.CapacityLimiter) -> Reply:
    """The network half of a call on a free worker, under its deadline; "busy" if none is free."""
    ticket = runner.workers.acquire()
    if ticket is None:
        return runner.busy()
    reply: Reply | None = None
    with anyio.move_on_after(runner.call_timeout) as deadline:
        try:
            reply = await anyio.to_thread.run_sync(runner.run, ticket, job, abandon_on_cancel=True,
                                                   limiter=network)
        except anyio.get_cancelled_exc_class():
            # The deadline passed, the client cancelled the call or went away: stop the worker's requests.
            # Its thread returns soon after and frees the worker; nobody waits for it here.
            runner.workers.cancel(ticket)
            if not deadline.cancel_called:
                LOGGER.info("tool %s: cancelled by the client; its requests were stopped", job.tool.name)
            raise
    if reply is not None and not deadline.cancelled_caught:
        return reply
    with anyio.move_on_after(GRACE):  # give the worker a moment, so it is free when the answer arrives
        while not runner.workers.finished(ticket):
            await anyio.sleep(0.02)
    LOGGER.warning("tool %s: stopped after the %gs deadline", job.tool.name, runner.call_timeout)
    return runner.overdue(job)


def build_server(runner: Runner) -> Server:
    """The MCP server of the runner's tools."""
    listed = [mcp_tool(tool) for tool in runner.tools.values()]
    schemas = {tool.name: dict(tool.input_schema) for tool in runner.tools.values()}
    limiters = _Limiters(runner.workers.count)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        local, network = limiters.get()
        prepared = await anyio.to_thread.run_sync(runner.prepare, params.name, params.arguments, limiter=local)
        if isinstance(prepared, Reply):
            return result(prepared)
        return result(await run_job(runner, prepared, network))

    return Server("benchloop", version=__version__, title="bl (benchloop-client)", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=schemas.get)


# ------------------------------------------------------------------ stdio
class DeepMessages:
    """The stdio transport's read stream, with messages too deep for the SDK's parser recovered.

    The SDK hands a line it cannot parse to the server as an exception, which
    is logged and never answered.  A pydantic ``json_invalid`` error carries
    the line; when the cause is the parser's depth limit, the line is parsed
    again with its deepest parts replaced by null (``guards.flatten_deep``)."""

    def __init__(self, inner: Any):
        self._inner = inner

    def __getattr__(self, name: str) -> Any:  # last_context and the like
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        return recover_deep(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> DeepMessages:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> DeepMessages:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


def recover_deep(item: Any) -> Any:
    """A message for a line the parser refused as too deep; anything else unchanged."""
    errors = getattr(item, "errors", None)  # a pydantic ValidationError (pydantic comes with the SDK)
    if not isinstance(item, Exception) or not callable(errors):
        return item
    try:
        (error,) = errors(include_url=False)
    except (TypeError, ValueError):
        return item
    line = error.get("input")
    if error.get("type") != "json_invalid" or "recursion limit" not in str(error.get("msg")) \
            or not isinstance(line, str):
        return item
    from mcp.shared.message import SessionMessage

    try:
        message = types.jsonrpc_message_adapter.validate_json(guards.flatten_deep(line), by_name=False)
    except Exception:  # still not a message: the SDK reports the original error
        return item
    return SessionMessage(message)


async def serve_stdio(server: Server) -> None:
    """Serve over stdin/stdout until the client closes stdin (stdout carries protocol messages only:
    while serving, the SDK points file descriptor 1 at stderr and keeps the wire private)."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(DeepMessages(read_stream), write_stream, server.create_initialization_options())


# ------------------------------------------------------------------- HTTP
class Gate:
    """ASGI middleware in front of the SDK's app: the bearer token, then deep bodies flattened.

    Every connection is checked (only the lifespan passes).  An HTTP request
    without the token gets 401 with ``WWW-Authenticate: Bearer`` and never
    reaches the SDK; a POST body is read (up to the SDK's own size limit) and,
    when it nests too deeply, flattened with ``guards.flatten_deep``."""

    def __init__(self, app: Any, token: str, max_body: int):
        self.app = app
        self.token = token
        self.max_body = max_body

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), None)
        if not guards.authorized(header, self.token):
            if scope["type"] == "http":
                await self.refuse(send)
            else:  # a websocket (the SDK serves none): closed unaccepted
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope.get("method") == "POST":
            scope, receive = await self.flattened(scope, receive)
        await self.app(scope, receive, send)

    async def refuse(self, send: Callable[..., Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
            "code": -32001, "message": "Unauthorized: send the token of bl mcp serve as 'Authorization: Bearer "
                                       "TOKEN' (it is shown on its stderr at start, or set by BENCHLOOP_MCP_TOKEN)"}})
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="bl mcp serve"')]})
        await send({"type": "http.response.body", "body": body.encode()})

    async def flattened(self, scope: dict[str, Any], receive: Callable[..., Any]) -> tuple[dict[str, Any], Any]:
        """The request with its body read and, if it nests too deeply, flattened; a body over
        the size limit is passed on as it came (the SDK refuses it)."""
        chunks, size, complete, trailing = [], 0, False, None
        while True:
            message = await receive()
            if message["type"] != "http.request":
                trailing = message
                break
            body = message.get("body", b"")
            chunks.append(body)
            size += len(body)
            if not message.get("more_body", False):
                complete = True
                break
            if size > self.max_body:
                break
        body = b"".join(chunks)
        if complete and guards.maybe_deep(body):
            text = body.decode("utf-8", "replace")
            flat = guards.flatten_deep(text)
            if flat is not text:
                body = flat.encode("utf-8")
                headers = [(k, v) for k, v in scope.get("headers", ()) if k != b"content-length"]
                scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        queued = [{"type": "http.request", "body": body, "more_body": not complete}]
        if trailing is not None:
            queued.append(trailing)

        async def replay() -> Any:
            return queued.pop(0) if queued else await receive()

        return scope, replay


async def serve_http(server: Server, port: int, announce: Callable[[str], None], token: str) -> None:
    """Serve the streamable HTTP transport on 127.0.0.1:PORT (0: a free port) until interrupted;
    every request must carry ``Authorization: Bearer <token>``."""
    import uvicorn
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

    app = Gate(server.streamable_http_app(host="127.0.0.1"), token, DEFAULT_MAX_REQUEST_BODY_SIZE)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False,
                            log_level="warning", lifespan="on")
    web = uvicorn.Server(config)

    async def tell() -> None:
        while not web.started:
            await anyio.sleep(0.02)
        bound = web.servers[0].sockets[0].getsockname()[1] if web.servers else port
        announce(f"http://127.0.0.1:{bound}/mcp")

    async with anyio.create_task_group() as group:
        group.start_soon(tell)
        await web.serve()
        group.cancel_scope.cancel()
