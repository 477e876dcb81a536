"""The glue to the ``mcp`` SDK: a low-level server whose tools are the generated ones.

The SDK's low-level ``Server`` takes the tool list and the call handler as
plain callables, which fits tools generated from data (explicit JSON Schemas,
no Python function per tool).  A call runs in a worker thread (the engine is
synchronous), so one slow call never blocks the others.  This is the only
module of benchloop that imports ``mcp``; it is imported by ``bl mcp serve``
only.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server

from ..version import __version__
from .runner import Reply, Runner
from .tools import Tool

LOGGER = logging.getLogger("benchloop.mcp")
INSTRUCTIONS = ("Tools of the benchmark-analysis backend, generated from the bl command line: each tool returns "
                "what the bl command of the same name prints (compact JSON). Give ids as arrays of strings; use "
                "query (JMESPath) to select fields and to ask for the rest of a result cut to the size budget. "
                "Call describe for the whole command schema.")


def mcp_tool(tool: Tool) -> types.Tool:
    return types.Tool(name=tool.name, title=tool.title, description=tool.description,
                      input_schema=dict(tool.input_schema), output_schema=tool.output_schema,
                      annotations=types.ToolAnnotations(**tool.annotations))


def result(reply: Reply) -> types.CallToolResult:
    content: list[Any] = [types.TextContent(type="text", text=text) for text in reply.texts]
    return types.CallToolResult(content=content, structured_content=reply.structured, is_error=reply.is_error)


def build_server(runner: Runner) -> Server:
    """The MCP server of the runner's tools."""
    listed = [mcp_tool(tool) for tool in runner.tools.values()]
    schemas = {tool.name: dict(tool.input_schema) for tool in runner.tools.values()}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        reply = await anyio.to_thread.run_sync(runner.call, params.name, params.arguments)
        return result(reply)

    return Server("benchloop", version=__version__, title="bl (benchloop-client)", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=schemas.get)


async def serve_stdio(server: Server) -> None:
    """Serve over stdin/stdout until the client closes stdin (stdout carries protocol messages only:
    while serving, the SDK points file descriptor 1 at stderr and keeps the wire private)."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(server: Server, port: int, announce: Any) -> None:
    """Serve the streamable HTTP transport on 127.0.0.1:PORT (0: a free port) until interrupted."""
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
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
