"""The built-in commands (config, sandbox, describe, completion, mcp) and their options, as data.

Like ``GLOBAL_OPTIONS`` for the global options, one definition here feeds
everything that shows or parses a built-in command:

* the Cyclopts commands (``builtins.py`` builds their signatures from it);
* the help pages (``helptext.builtin_page``, answered on the fast path);
* shell completion (``completion.build_model``);
* ``python -m benchloop.sandbox``, which is ``bl sandbox serve`` under another
  name (``sandbox/__main__.py`` builds its argparse parser from the same entry).

Nothing is imported here, so the ``--help`` path stays light.

A command is either a group (``actions``: name -> command) or a leaf with
``help`` (one line, shown in lists), optional ``description`` (the paragraph of
its own help page; its first sentence is the completion description),
``notes`` (more paragraphs), ``positionals`` and ``options``.

Option keys (as in ``GLOBAL_OPTIONS``): ``name`` (the Python keyword),
``flags``, ``type`` (``str``, ``int``, ``float``, ``flag`` or ``choice``),
``default``, ``help``, ``choices`` (type ``choice``), ``metavar`` (the value's
placeholder on the help page).  Positional keys: ``name``, ``metavar``,
``help``, ``choices``, ``required``.
"""

from __future__ import annotations

from typing import Any

# The fault kinds of the sandbox (benchloop.sandbox.faults.RATE_KINDS; a test keeps them equal).
SANDBOX_FAULT_KINDS = ("status", "reset", "truncate", "429", "slow")

SANDBOX_MODULE = "python -m benchloop.sandbox"

_CONFIG_SET = {
    "help": "Store --api-key/--host/-o (and --profile NAME) in the config file; other content is kept.",
    "description": "Store values in the [profile] table (or [profiles.NAME]); other content of the file is "
                   "kept. These options are the command's own: given after 'config set', --api-key, --host, "
                   "-o, --config and --profile name what to write and where, not the global options.",
    "options": [
        {"name": "api_key", "flags": ["--api-key"], "type": "str", "default": None, "metavar": "KEY",
         "help": "API key to store."},
        {"name": "host", "flags": ["--host"], "type": "str", "default": None, "metavar": "URL",
         "help": "Backend base URL to store."},
        {"name": "output_dir", "flags": ["--output-dir", "-o"], "type": "str", "default": None, "metavar": "DIR",
         "help": "Default download root to store."},
        {"name": "config", "flags": ["--config"], "type": "str", "default": None, "metavar": "FILE",
         "help": "File to write (default ~/.benchloop/config.toml)."},
        {"name": "profile", "flags": ["--profile"], "type": "str", "default": None, "metavar": "NAME",
         "help": "Write [profiles.NAME] instead of [profile]."},
    ],
}

_SANDBOX_SERVE = {
    "help": "Serve the endpoint table from a deterministic synthetic dataset until interrupted.",
    "description": "Serve the endpoint table from a deterministic synthetic dataset until interrupted. "
                   "The first line on stdout is 'sandbox serving URL (api key: KEY)'; SIGTERM or Ctrl-C stops "
                   "the server.",
    "notes": [f"The same command runs as '{SANDBOX_MODULE} [OPTIONS]', with the same options."],
    "options": [
        {"name": "listen", "flags": ["--listen"], "type": "str", "default": "127.0.0.1", "metavar": "ADDRESS",
         "help": "Address to listen on."},
        {"name": "port", "flags": ["--port"], "type": "int", "default": 0, "metavar": "PORT",
         "help": "TCP port; 0 picks a free one (the first line shows the URL)."},
        {"name": "seed", "flags": ["--seed"], "type": "int", "default": 7,
         "help": "Dataset seed."},
        {"name": "groups", "flags": ["--groups"], "type": "int", "default": 3,
         "help": "Number of groups (G1..Gn)."},
        {"name": "jobs_per_group", "flags": ["--jobs-per-group"], "type": "int", "default": 40,
         "help": "Jobs in each group."},
        {"name": "tasks_per_group", "flags": ["--tasks-per-group"], "type": "int", "default": 25,
         "help": "Evaluation tasks in each group."},
        {"name": "api_key", "flags": ["--api-key"], "type": "str", "default": "sandbox-key", "metavar": "KEY",
         "help": "The key clients must send."},
        {"name": "latency_ms", "flags": ["--latency-ms"], "type": "float", "default": 0, "metavar": "MS",
         "help": "Delay before each answer, in milliseconds."},
        {"name": "fault_rate", "flags": ["--fault-rate"], "type": "float", "default": 0.0, "metavar": "RATE",
         "help": "Probability (0 to 1) that a request is faulted; a failed authentication never is."},
        {"name": "fault_seed", "flags": ["--fault-seed"], "type": "int", "default": 0,
         "help": "Seed of the fault decisions."},
        {"name": "fault_kinds", "flags": ["--fault-kinds"], "type": "str", "default": ",".join(SANDBOX_FAULT_KINDS),
         "metavar": "KIND,...", "help": f"Comma-separated fault kinds, some of: {', '.join(SANDBOX_FAULT_KINDS)}."},
        {"name": "no_range", "flags": ["--no-range"], "type": "flag", "default": False,
         "help": "Ignore Range headers on binary endpoints (no resume support)."},
        {"name": "artifact_bytes", "flags": ["--artifact-bytes"], "type": "int", "default": 4096,
         "help": "Size of each artifact in bytes."},
        {"name": "trajectory_steps", "flags": ["--trajectory-steps"], "type": "int", "default": 3,
         "help": "Steps per trajectory."},
        {"name": "export_waiting", "flags": ["--export-waiting"], "type": "int", "default": 1,
         "help": "'waiting_for_data' answers before a trace export runs."},
        {"name": "export_running", "flags": ["--export-running"], "type": "int", "default": 1,
         "help": "'running' status polls before a trace export succeeds."},
        {"name": "hostile", "flags": ["--hostile"], "type": "flag", "default": False,
         "help": "Add the group GHOSTILE and the task THOSTILE (hostile ids and file names)."},
    ],
}

MCP_MAX_CHARS = 60_000  # benchloop.mcp_server.results.DEFAULT_MAX_CHARS (a test keeps them equal)
MCP_WORKERS = 8  # benchloop.mcp_server.workers.DEFAULT_WORKERS (a test keeps them equal)
MCP_CALL_TIMEOUT = 120.0  # benchloop.mcp_server.workers.DEFAULT_CALL_TIMEOUT (a test keeps them equal)

_MCP_SERVE = {
    "help": "Serve the endpoint table as MCP tools for LLM agents (stdio, or --http PORT).",
    "description": "Serve the endpoint table as Model Context Protocol tools for LLM agents: one read-only tool "
                   "per printing action (metrics_get, jobs_get, ...), the artifacts listing and describe. It "
                   "speaks MCP over stdin/stdout until the client closes it, or the streamable HTTP transport "
                   "on 127.0.0.1 with --http. Settings (--host, --api-key, --profile, --timeout, --retry, "
                   "--concurrency) are the global options, resolved as for every command.",
    "notes": ["Needs the mcp extra: pip install 'benchloop-client[mcp]'. Writes and downloads are off unless "
              "enabled; tools reach only the configured backend and never show the API key. See docs/mcp.md.",
              "With --http every request needs 'Authorization: Bearer TOKEN': the token is BENCHLOOP_MCP_TOKEN, "
              "or one generated at start and shown once on stderr."],
    "options": [
        {"name": "http", "flags": ["--http"], "type": "int", "default": None, "metavar": "PORT",
         "help": "Serve the streamable HTTP transport on 127.0.0.1:PORT (0 picks a free one) instead of stdio."},
        {"name": "tools", "flags": ["--tools"], "type": "str", "default": None, "metavar": "NAME,...",
         "help": "Only the tools of these resources (comma-separated, e.g. metrics,jobs); describe stays."},
        {"name": "allow_writes", "flags": ["--allow-writes"], "type": "flag", "default": False,
         "help": "Also serve the actions that change the backend (report trigger, rsi trigger, brm run)."},
        {"name": "allow_downloads", "flags": ["--allow-downloads"], "type": "str", "default": None,
         "metavar": "DIR", "help": "Also serve the download actions; they write only under DIR."},
        {"name": "max_chars", "flags": ["--max-chars"], "type": "int", "default": MCP_MAX_CHARS, "metavar": "N",
         "help": "Budget of a tool result in characters: the text blocks together, and the structured content, "
                 "each fit it (data cut at an element boundary, notes shortened)."},
        {"name": "workers", "flags": ["--workers"], "type": "int", "default": MCP_WORKERS, "metavar": "N",
         "help": "Tool calls that run against the backend at once; another one is answered 'busy' at once "
                 "(describe and argument errors never wait for a worker)."},
        {"name": "call_timeout", "flags": ["--call-timeout"], "type": "float", "default": MCP_CALL_TIMEOUT,
         "metavar": "SECONDS", "help": "Deadline of one tool call, its requests and retries included; an overdue "
                                      "call is stopped and answered with an error."},
    ],
}

BUILTIN_COMMANDS: dict[str, dict[str, Any]] = {
    "config": {
        "help": "Show or edit the configuration file.",
        "actions": {
            "set": _CONFIG_SET,
            "show": {"help": "Print the effective configuration as JSON (the API key masked).",
                     "description": "Print the effective configuration as JSON (the API key masked). It "
                                    "follows the global options (--api-key, --host, -o, --config, --profile), "
                                    "the environment and the file, as every command does.",
                     "options": []},
            "path": {"help": "Print the path of the configuration file in use.",
                     "description": "Print the path of the configuration file in use. That is the global "
                                    "--config, else BENCHLOOP_CONFIG, else ~/.benchloop/config.toml.",
                     "options": []},
        },
    },
    "sandbox": {
        "help": "Run the local sandbox backend (for demos and tests).",
        "actions": {"serve": _SANDBOX_SERVE},
    },
    "describe": {
        "help": "Print the machine-readable command schema (or --openapi) as JSON.",
        "description": "Print every command of the table (or one resource / action) as one JSON document. "
                       "Its schema is spec/describe.schema.json.",
        "positionals": [
            {"name": "resource", "metavar": "RESOURCE", "help": "Only this resource."},
            {"name": "action", "metavar": "ACTION", "help": "Only this action of RESOURCE."},
        ],
        "options": [
            {"name": "openapi", "flags": ["--openapi"], "type": "flag", "default": False,
             "help": "Print the endpoint table as an OpenAPI 3.1 document instead."},
        ],
    },
    "completion": {
        "help": "Print a shell completion script (bash, zsh or fish).",
        "description": "Print a completion script for SHELL (bash, zsh or fish), generated from the endpoint "
                       "table. Regenerate it after upgrading bl.",
        "positionals": [
            {"name": "shell", "metavar": "SHELL", "choices": ["bash", "zsh", "fish"], "required": True,
             "help": "The shell to complete in: bash, zsh or fish."},
        ],
        "options": [],
    },
    "mcp": {
        "help": "Serve the endpoint table to LLM agents over the Model Context Protocol.",
        "actions": {"serve": _MCP_SERVE},
    },
}


def builtin_leaves() -> list[tuple[str, dict[str, Any]]]:
    """Every runnable built-in command: ("config set", body), ..., ("describe", body)."""
    out = []
    for name, command in BUILTIN_COMMANDS.items():
        if "actions" in command:
            out += [(f"{name} {action}", body) for action, body in command["actions"].items()]
        else:
            out.append((name, command))
    return out


def builtin_leaf(path: str) -> dict[str, Any]:
    """The command at a path such as "sandbox serve" or "describe"."""
    return dict(builtin_leaves())[path]
