"""`bl mcp serve`: the endpoint table as Model Context Protocol tools for LLM agents.

It is a layer above the Python client: it imports only ``benchloop.sdk`` (every call
is a ``benchloop.Client`` method; ``describe`` and ``query`` are ``sdk.offline``), the
table's model (for the tool schemas) and ``base`` (tests/contract/test_layers.py holds that).

The package is split so that most of it needs no MCP SDK:

* ``tools``: the tools, generated from the typed model of the table (pure data:
  names, descriptions, JSON Schemas, which tools are writes or downloads);
* ``budget``: what a tool returns (the CLI's JSON, cut at an element boundary
  when it exceeds the budget, with a note on how to ask for the rest; every
  channel within the budget, the key masked);
* ``runner``: one tool call - checked locally, then run through the Python
  client (``benchloop.Client``), the same argument checks and engine as the
  CLI, errors as tool errors;
* ``workers``: the workers that run calls against the backend, each with its
  own client, so one call can be stopped alone (deadline, cancel, busy);
* ``guards``: the bearer token of ``--http`` and the flattening of JSON nested
  too deeply for the SDK's parser;
* ``server``: the glue to the ``mcp`` SDK (the low-level server, the deadline
  and cancel, stdio and streamable HTTP), the only module that imports it;
* ``serve``: the ``bl mcp serve`` command.

The SDK is an optional extra (``pip install 'benchloop-client[mcp]'``) and is
imported only when the command runs.  See docs/mcp.md.
"""
