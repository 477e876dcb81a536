"""Turn the table's resources into Cyclopts commands.

Every action gets the same generic handler; only its signature differs.  The
signature is built from the table's option definitions (``__signature__`` of
keyword-only parameters annotated with ``cyclopts.Parameter``), so help text,
choices, defaults and validation all come from the YAML.

Resources are built lazily: ``build.py`` registers ``benchloop.cli.commands:res__NAME``
for each resource and this module's ``__getattr__`` builds the sub-App on first
use, so ``bl metrics get`` never builds the other resources' commands.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from cyclopts import App, Parameter

from ..base.errors import UsageError
from ..engine.arguments import bind
from ..table.load import load_model
from ..table.model import Action
from .invocation import STDIN_TOKEN
from .parameters import POSITIONAL, context_parameter, option_parameter

EXTRA_TOKEN = "\x00extra:"  # in front of an option-like token that must reach the extra arguments as typed


def keep_extras_as_typed(name: str, tokens: list[str]) -> list[str]:
    """The tokens after an extra-arguments command (``ap-cmd``), with every option the command
    does not declare *as typed* behind ``EXTRA_TOKEN``.

    Cyclopts matches ``--suite_name`` to ``--suite-name`` (it reads ``_`` as ``-``), so it
    would take such a token as the command's own option; the contract passes it on as an
    extra argument that replaces its segment as typed (``--suite_name X``), as the official
    client does.  A token right after a declared option that takes a value is left to Cyclopts."""
    (action,) = load_model().resources[name].actions.values()
    flags = {flag for opt in action.options for flag in opt.flags}
    valued = {flag for opt in action.options if opt.type != "flag" for flag in opt.flags}
    out: list[str] = []
    for index, token in enumerate(tokens):
        typed = token.split("=", 1)[0]
        after_value = index > 0 and tokens[index - 1] in valued
        if token.startswith("-") and "_" in typed and typed not in flags and not after_value:
            token = EXTRA_TOKEN + token
        out.append(token)
    return out


def reads_stdin(values: dict[str, Any]) -> bool:
    """Whether an option's value is '-' (read from stdin)."""
    return any(v == STDIN_TOKEN or (isinstance(v, (list, tuple)) and STDIN_TOKEN in v) for v in values.values())


def _as_typed(token: str) -> str:
    return token[len(EXTRA_TOKEN):] if token.startswith(EXTRA_TOKEN) else token


def make_handler(action: Action):
    positional = action.positional

    def handler(*args, **kwargs):  # annotations come from __signature__
        ctx = kwargs.pop("ctx")
        if positional is not None:
            first = args[0] if args else None
            if first is not None and first.startswith(EXTRA_TOKEN):  # as Cyclopts says of --unknown there
                raise UsageError(f"Unknown option: {_as_typed(first)}.")
            kwargs[positional.name] = first
            args = args[1:]
        if action.extra_args:  # everything the command does not know, in order
            kwargs["extra_args"] = ["-" if a == STDIN_TOKEN else _as_typed(a) for a in args]
        if ctx.options.get("api_key") == STDIN_TOKEN and reads_stdin(kwargs):
            raise UsageError("stdin can give the API key (--api-key -) or ids/values ('-'), not both: "
                             "set the key with BENCHLOOP_API_KEY, a key command or the config file")
        dim, ids, options = bind(action, kwargs, stdin_token=STDIN_TOKEN)
        return ctx.run(action, dim, ids, options)

    params = [option_parameter(opt, checked_by_command=True, kind=POSITIONAL) for opt in action.options
              if opt.positional]  # missing: bind() says so with the table's message
    if action.extra_args:
        params.append(inspect.Parameter("extra_args", inspect.Parameter.VAR_POSITIONAL, annotation=Annotated[
            str, Parameter(name=["ARGS"], help="Other arguments, merged into the command line.",
                           allow_leading_hyphen=True)]))
    visible = action.visible_options  # an id option of a dimension the action lacks: parsed, not shown
    params += [option_parameter(opt, checked_by_command=True, show=opt in visible) for opt in action.options
               if not opt.positional]
    params.append(context_parameter())
    handler.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    handler.__name__ = "_".join(action.words).replace("-", "_")
    return handler


def build_resource(name: str) -> Any:
    resource = load_model().resources[name]
    if resource.command:
        # A one-action resource is a command of its own (`bl pull ...`).
        (action,) = resource.actions.values()
        return make_handler(action)
    sub = App(name=name, help=resource.help)
    for index, action in enumerate(resource.actions.values()):
        sub.command(make_handler(action), name=action.name, help=action.help, sort_key=index)
    return sub


def __getattr__(attr: str) -> App:
    if attr.startswith("res__"):
        name = attr[5:].replace("_", "-")
        if name in load_model().resources:
            built = build_resource(name)
            globals()[attr] = built
            return built
    raise AttributeError(attr)
