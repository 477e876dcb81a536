"""The built-in commands (config, sandbox, describe, completion, mcp, dataset): their handlers.

Their arguments and options are data in the table (``commands:``; model
:class:`~benchloop.table.model.Command`), which also gives the help pages and shell
completion.  This module holds only what each one does: a body registered for its
path with :func:`builtin`, called with every option by name.  :func:`build` turns a
command of the model into a Cyclopts command, a generic handler whose
``__signature__`` comes from the model, as ``commands.py`` does for the table's
actions.  A test checks that every command of the table has a body and every body a
command.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

from cyclopts import Parameter

from ..base.errors import UsageError
from ..table.model import Command, Option

Body = Callable[[dict[str, Any], Any], int]
BODIES: dict[str, Body] = {}


def builtin(path: str) -> Callable[[Body], Body]:
    """Register the body of the built-in command at ``path`` ("config set", "describe")."""

    def register(body: Body) -> Body:
        BODIES[path] = body
        return body

    return register


# ---------------------------------------------------------------- Cyclopts
def _argument(arg: Option) -> inspect.Parameter:
    """A positional; ``describe``'s RESOURCE offers the table's resources (to the help page and
    the shells) and leaves an unknown one to ``describe``'s own message."""
    from ..table.load import load_model
    from .parameters import POSITIONAL, option_parameter

    if arg.name == "resource":
        return option_parameter(arg, kind=POSITIONAL, checked_by_command=True, choices=tuple(load_model().resources))
    return option_parameter(arg, kind=POSITIONAL)


def parameters(command: Command) -> list[inspect.Parameter]:
    """The Cyclopts signature of a built-in command, from the model."""
    from .parameters import context_parameter, option_parameter

    params = [_argument(arg) for arg in command.arguments]
    params += [option_parameter(opt) for opt in command.options]
    params.append(context_parameter())
    return params


def _handler(command: Command) -> Callable[..., int]:
    """A Cyclopts command for a leaf: its body gets every argument and option by name."""
    body = BODIES[command.path]
    names = [arg.name for arg in command.arguments]

    def handler(*args, ctx=None, **kwargs):  # no annotations: Cyclopts reads __signature__
        values = command.defaults
        values.update(zip(names, args, strict=False))  # the positionals given
        values.update(kwargs)
        return body(values, ctx)

    handler.__signature__ = inspect.Signature(parameters(command))  # type: ignore[attr-defined]
    handler.__name__ = command.path.replace(" ", "_")
    return handler


def build(command: Command) -> Any:
    """The Cyclopts command of a built-in: a handler, or an App of its actions."""
    from cyclopts import App

    if not command.actions:
        return _handler(command)
    from .build import page_help

    app = App(name=command.name, help=command.help)
    for index, action in enumerate(command.actions.values()):
        app.command(_handler(action), name=action.name, help=page_help(action.help, action.description, *action.notes),
                    sort_key=index)
    return app


def __getattr__(attr: str) -> Any:
    """``cmd__NAME``: the Cyclopts command of built-in NAME, built on first use (``cli.app``
    registers it lazily, as it does the table's resources)."""
    from ..table.load import load_model

    if attr.startswith("cmd__"):
        commands = load_model().commands
        if attr[5:] in commands:
            built = globals()[attr] = build(commands[attr[5:]])
            return built
    raise AttributeError(attr)


# ------------------------------------------------------------------ config
@builtin("config set")
def config_set(values: dict[str, Any], ctx: Any) -> int:
    from ..base.log import Log
    from ..settings.config import check_set_values, config_path, write_config
    from ..settings.keys import read_stdin_key, store_in_keyring
    from .invocation import STDIN_TOKEN

    if values["api_key"] == STDIN_TOKEN:
        values["api_key"] = read_stdin_key(sys.stdin)
    if values["api_key_keyring"] and not values["api_key"]:
        raise UsageError("--api-key-keyring keeps the key given with --api-key in the OS keyring: "
                         "add --api-key - to read it from stdin")
    if values["api_key_command"] is not None and values["api_key"]:
        raise UsageError("give the key (--api-key) or a command that prints it (--api-key-command), not both")
    stored = {key: values[key] for key in ("host", "api_key", "output_dir", "api_key_command")
              if values[key] is not None}
    if not stored:
        raise UsageError("provide at least one of --api-key/--api-key-command/--host/--output-dir")
    check_set_values(stored)  # nothing that no later command could use
    path = config_path(values["config"] or (ctx.options["config"] if ctx else None))
    if values["api_key_keyring"]:
        name = values["profile"] or "default"
        store_in_keyring(name, stored.pop("api_key"))
        stored["api_key_keyring"] = name
    write_config(path, stored, values["profile"])
    where = f" (profile {values['profile']})" if values["profile"] else ""
    log = Log(quiet=bool(ctx and ctx.options["quiet"]))
    if values["api_key_keyring"]:
        log.info(f"stored the API key in the OS keyring (benchloop-client, {stored['api_key_keyring']})")
    log.info(f"wrote config to {path}{where}")
    return 0


def _print(document: Any, query: str | None, pretty: bool) -> None:
    """A built-in command's JSON document on stdout, after its ``--query``."""
    from ..base.jsontext import dumps
    from ..engine.formats import compile_query

    compiled = compile_query(query)
    sys.stdout.write(dumps(compiled.search(document) if compiled is not None else document, pretty))


@builtin("config show")
def config_show(values: dict[str, Any], ctx: Any) -> int:
    from ..settings.config import mask, mask_url, resolve

    opts = ctx.options
    key, origin = ctx.key_given()
    # Not the checked settings: the command shows what is there, a value no command could use too.
    settings = resolve(key, opts["host"], opts["output_dir"], opts["config"], opts["profile"], api_key_origin=origin)
    _print({
        "config_file": str(settings.config_file),
        "profile": settings.profile,
        "host": mask_url(settings.host),
        "api_key": mask(settings.api_key),
        "output_dir": settings.output_dir,
        # Where each value came from (a flag, a variable, the file and its table, a key command,
        # the OS keyring, stdin, or the default), as `aws configure list` shows it.
        "sources": {key: settings.source(key) for key in ("host", "api_key", "output_dir")},
    }, values["query"], ctx.options["pretty"])
    return 0


@builtin("config check")
def config_check(values: dict[str, Any], ctx: Any) -> int:
    from ..engine.formats import compile_query
    from ..settings.check import check_services, explain

    compile_query(values["query"])  # a bad expression is a usage error before any request
    rt = ctx.runtime(keep_key_error=True)  # a key command that fails is a failed check
    try:
        results, code = check_services(rt, ctx.settings, ctx.options)
    finally:
        rt.close()
    _print(results, values["query"], ctx.options["pretty"])
    for result in results:
        line = explain(result)
        if line:
            rt.log.error(line)
    rt.log.flush()
    return code


@builtin("config path")
def config_path_cmd(values: dict[str, Any], ctx: Any) -> int:
    from ..settings.config import config_path

    sys.stdout.write(f"{config_path(ctx.options['config'])}\n")
    return 0


# ----------------------------------------------------------------- sandbox
@builtin("sandbox serve")
def sandbox_serve(values: dict[str, Any], ctx: Any) -> int:
    from ..sandbox.serve import serve_options

    try:
        return serve_options(values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# ------------------------------------------------------ describe, completion
@builtin("describe")
def describe_body(values: dict[str, Any], ctx: Any) -> int:
    from ..surface.describe import describe

    return describe(values["resource"], values["action"], openapi=values["openapi"], ctx=ctx)


@builtin("completion")
def completion_body(values: dict[str, Any], ctx: Any) -> int:
    """Cyclopts' completion script of the whole tree (every lazy command is built for it)."""
    sys.stdout.write(ctx.app.generate_completion(shell=values["shell"], prog_name=ctx.prog))
    return 0


def install_completion(shell=None, *, ctx=None):  # no annotations: Cyclopts reads __signature__
    """`bl --install-completion [SHELL]`: Cyclopts' own installer (``App.install_completion``: the
    script where the shell reads it, and a line in ~/.bashrc or ~/.zshrc that sources it)."""
    from cyclopts.completion.install import create_install_completion_command

    create_install_completion_command(ctx.app.install_completion, add_to_startup=True)(shell=shell)
    return 0


install_completion.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
    inspect.Parameter("shell", inspect.Parameter.POSITIONAL_ONLY, default=None, annotation=Annotated[
        Literal["bash", "zsh", "fish"] | None,
        Parameter(help="The shell (bash, zsh or fish); by default the one running bl.")]),
    inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None,
                      annotation=Annotated[Any, Parameter(parse=False)])])


# --------------------------------------------------------------------- mcp
@builtin("mcp serve")
def mcp_serve(values: dict[str, Any], ctx: Any) -> int:
    from ..mcp_server.serve import serve
    from .invocation import STDIN_TOKEN

    if ctx is not None and ctx.options.get("api_key") == STDIN_TOKEN:
        if values.get("http") is None:
            raise UsageError("--api-key - reads the key from stdin, which carries the MCP messages over stdio: "
                             "serve --http PORT, or set the key with BENCHLOOP_API_KEY or a key command")
        ctx.key_given()
    return serve(values, ctx.options if ctx else {})


# ----------------------------------------------------------------- dataset
@builtin("dataset sync")
def dataset_sync(values: dict[str, Any], ctx: Any) -> int:
    from .dataset_commands import sync_body

    return sync_body(values, ctx)


@builtin("dataset info")
def dataset_info(values: dict[str, Any], ctx: Any) -> int:
    from .dataset_commands import info_body

    return info_body(values, ctx)


@builtin("dataset sql")
def dataset_sql(values: dict[str, Any], ctx: Any) -> int:
    from .dataset_commands import sql_body

    return sql_body(values, ctx)
