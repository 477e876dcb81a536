"""Built-in commands that are not backend resources: config, sandbox, describe, completion, mcp.

Their options are data (``builtin_options.BUILTIN_COMMANDS``, which also
gives the help pages and shell completion); this module turns each entry into
a Cyclopts command, a generic handler whose ``__signature__`` is built from
that data, as ``commands.py`` does for the table's actions.  ``cli.py``
registers ``config_app``, ``sandbox_app``, ``describe_command``,
``completion_command`` and ``mcp_app`` lazily.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

from cyclopts import App, Parameter

from ..base.errors import UsageError
from .builtin_options import BUILTIN_COMMANDS, builtin_leaf

_HINTS = {"str": str, "int": int, "float": float, "flag": bool}


def _hint(spec: dict[str, Any]) -> Any:
    if spec.get("choices"):
        hint: Any = Literal[tuple(spec["choices"])]
    else:
        hint = _HINTS[spec.get("type", "str")]
    return hint | None if spec.get("default") is None and not spec.get("required") else hint


def parameters(leaf: dict[str, Any]) -> list[inspect.Parameter]:
    """The Cyclopts signature of a built-in command, from its data."""
    params = []
    for pos in leaf.get("positionals", ()):
        default = inspect.Parameter.empty if pos.get("required") else None
        params.append(inspect.Parameter(pos["name"], inspect.Parameter.POSITIONAL_ONLY, default=default,
                                        annotation=Annotated[_hint(pos), Parameter(help=pos["help"])]))
    for opt in leaf["options"]:
        extra: dict[str, Any] = {"negative": "", "show_default": False} if opt["type"] == "flag" else {}
        params.append(inspect.Parameter(
            opt["name"], inspect.Parameter.KEYWORD_ONLY, default=opt["default"],
            annotation=Annotated[_hint(opt), Parameter(name=opt["flags"], help=opt["help"], **extra)]))
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None,
                                    annotation=Annotated[Any, Parameter(parse=False)]))
    return params


def _command(path: str, body: Callable[[dict[str, Any], Any], int]) -> Callable[..., int]:
    """A Cyclopts command for the built-in at ``path``: ``body(values, ctx)`` gets every option by name."""
    leaf = builtin_leaf(path)
    names = [pos["name"] for pos in leaf.get("positionals", ())]

    def handler(*args, ctx=None, **kwargs):  # no annotations here: Cyclopts reads them from __signature__
        values = {opt["name"]: opt["default"] for opt in leaf["options"]}
        values.update({name: None for name in names})
        values.update(zip(names, args, strict=False))  # the positionals given
        values.update(kwargs)
        return body(values, ctx)

    handler.__signature__ = inspect.Signature(parameters(leaf))  # type: ignore[attr-defined]
    handler.__name__ = path.replace(" ", "_")
    handler.__doc__ = leaf.get("description") or leaf["help"]
    return handler


def _group(name: str, bodies: dict[str, Callable[[dict[str, Any], Any], int]]) -> App:
    group = BUILTIN_COMMANDS[name]
    app = App(name=name, help=group["help"], help_format="plaintext")
    for index, (action, body) in enumerate(bodies.items()):
        app.command(_command(f"{name} {action}", body), name=action,
                    help=group["actions"][action]["help"], sort_key=index)
    return app


# ------------------------------------------------------------------ config
def config_set(values: dict[str, Any], ctx: Any) -> int:
    from ..base.log import Log
    from ..settings.config import check_set_values, config_path, write_config

    stored = {key: values[key] for key in ("host", "api_key", "output_dir") if values[key] is not None}
    if not stored:
        raise UsageError("provide at least one of --api-key/--host/--output-dir")
    check_set_values(stored)  # nothing that no later command could use
    path = config_path(values["config"] or (ctx.options["config"] if ctx else None))
    write_config(path, stored, values["profile"])
    where = f" (profile {values['profile']})" if values["profile"] else ""
    Log(quiet=bool(ctx and ctx.options["quiet"])).info(f"wrote config to {path}{where}")
    return 0


def config_show(values: dict[str, Any], ctx: Any) -> int:
    from ..base.files import dumps
    from ..settings.config import mask, mask_url, resolve

    opts = ctx.options
    settings = resolve(opts["api_key"], opts["host"], opts["output_dir"], opts["config"], opts["profile"])
    sys.stdout.write(dumps({
        "config_file": str(settings.config_file),
        "profile": settings.profile,
        "host": mask_url(settings.host),
        "api_key": mask(settings.api_key),
        "output_dir": settings.output_dir,
    }, opts["pretty"]))
    return 0


def config_path_cmd(values: dict[str, Any], ctx: Any) -> int:
    from ..settings.config import config_path

    sys.stdout.write(f"{config_path(ctx.options['config'])}\n")
    return 0


# ----------------------------------------------------------------- sandbox
def sandbox_serve(values: dict[str, Any], ctx: Any) -> int:
    from ..sandbox.serve import serve_options

    try:
        return serve_options(values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# ------------------------------------------------------ describe, completion
def describe_body(values: dict[str, Any], ctx: Any) -> int:
    from ..surface.describe import describe

    return describe(values["resource"], values["action"], openapi=values["openapi"], ctx=ctx)


def completion_body(values: dict[str, Any], ctx: Any) -> int:
    from .completion import completion_script

    sys.stdout.write(completion_script(values["shell"]))
    return 0


# --------------------------------------------------------------------- mcp
def mcp_serve(values: dict[str, Any], ctx: Any) -> int:
    from ..mcp_server.serve import serve

    return serve(values, ctx.options if ctx else {})


config_app = _group("config", {"set": config_set, "show": config_show, "path": config_path_cmd})
sandbox_app = _group("sandbox", {"serve": sandbox_serve})
describe_command = _command("describe", describe_body)
completion_command = _command("completion", completion_body)
mcp_app = _group("mcp", {"serve": mcp_serve})
