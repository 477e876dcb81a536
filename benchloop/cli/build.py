"""The Cyclopts app of `bl`: one ordinary tree, built from the table.

* The table's resources and the built-in commands are the root app's commands,
  registered lazily as ``"module:attr"`` strings: ``commands.__getattr__`` builds a
  resource's sub-App (``builtin_commands.__getattr__`` a built-in) when Cyclopts first
  resolves it, so a start assembles only the command it runs.  Their help line, group
  and order are given at registration, so the root help page resolves none of them.
* The global options are the parameters of the meta app's default command (the
  launcher).  Cyclopts' default ``parse_mode="fallthrough"`` accepts them after the
  action too (docs/contract.md 8.31), and a command's own option of the same name wins
  there (``config set --host``, a download's ``-o``, ``ap-cmd -q``).
* Help, ``--version`` and completion scripts are Cyclopts' own (``help_format``
  plaintext: no markdown parser at start-up).
"""

from __future__ import annotations

import inspect
from typing import Annotated

from cyclopts import App, Group, Parameter

from ..table.load import load_model
from ..version import __version__
from .help_panels import OwnOptionsFirst

ROOT_HELP = ("Fetch and download benchmark analysis data (metrics, trajectories, reports, job and task lists, "
             "artifacts, analyses) by group id, job id or download-task id. Printing actions write one JSON "
             "array on stdout; download actions write files. Logs and progress go to stderr.")
EPILOGUE = ("Exit codes: 0 ok, 1 some id failed, 2 usage, 3 authentication, 4 network, 124 a wait timed out, "
            "130 interrupted, 141 stdout closed, 143 terminated.")
# Defined here, where every start imports them (a Group first met in a lazily built module
# would be unknown to the root help page).
RESOURCES = Group("Resources", sort_key=1)
BUILTINS = Group("Built-in commands", sort_key=2)
GLOBAL = Group("Global options", sort_key=50)


def _global_parameters() -> list[inspect.Parameter]:
    from .parameters import option_parameter

    return [option_parameter(opt, group=GLOBAL) for opt in load_model().global_options]


def page_help(*paragraphs: str | None) -> str:
    """A command's help: its one-line summary, then the paragraphs of its own page."""
    return "\n\n".join(p for p in paragraphs if p)


def build_app(prog: str = "bl") -> App:
    """The app of ``prog``: run it through its meta app (``app.meta``)."""
    spec = load_model()
    app = App(
        name=prog,
        help=ROOT_HELP,
        help_epilogue=EPILOGUE,  # on every page (each inherits it)
        version=f"bmcli {__version__}",
        version_format="plaintext",
        help_format="plaintext",
        help_formatter=OwnOptionsFirst(GLOBAL.name),
        suppress_keyboard_interrupt=False,  # dispatch prints the summary and exits 130
        exit_on_error=False,  # dispatch turns Cyclopts' errors into exit 2
        print_error=False,  # ... and prints them as the contract's usage errors (errors.py)
        result_action="return_value",  # a command's return value is its exit code
    )
    # The help given here is the command's page text too (its first paragraph is its line in the
    # list above), so a lazy command is listed without being built.
    for index, (name, resource) in enumerate(spec.resources.items()):
        app.command(f"benchloop.cli.commands:res__{name.replace('-', '_')}", name=name,
                    help=page_help(resource.help, resource.description), group=RESOURCES, sort_key=index)
    for index, command in enumerate(spec.commands.values()):
        app.command(f"benchloop.cli.builtin_commands:cmd__{command.name}", name=command.name,
                    help=page_help(command.help, command.description, *command.notes), group=BUILTINS,
                    sort_key=100 + index)

    app.command("benchloop.cli.builtin_commands:install_completion", name="--install-completion",
                help="Install the shell completion script (bash, zsh or fish) for this shell and exit.")

    @app.command(name="help", show=False)
    def help_command(*words: str) -> int:
        """`bl help [RESOURCE [ACTION]]` is `bl [RESOURCE [ACTION]] --help`; an unknown word is a
        usage error, as `bl WORD` is."""
        found, _apps, unknown = app.parse_commands(list(words))
        if unknown:
            from ..base.errors import UsageError

            raise UsageError(f"Unknown command {unknown[0]!r}" + (f" of {' '.join(found)}" if found else "") + ".")
        app.help_print(list(words))
        return 0

    def launcher(*tokens, **options):  # no annotations: Cyclopts reads __signature__ (below)
        if not tokens:
            app.help_print([])
            return 2  # `bl` alone: the root page, as a usage error
        command, bound, ignored = app.parse_args(list(tokens))
        if command == app.help_print:  # a group without its action (`bl metrics`): its page, a usage error
            command(*bound.args, **bound.kwargs)
            return 2
        resolved = {opt.name: opt.default_value for opt in spec.global_options}
        resolved.update(options)
        if "ctx" not in ignored:
            return command(*bound.args, **bound.kwargs)
        from .invocation import Invocation

        return command(*bound.args, **bound.kwargs, ctx=Invocation(prog, resolved, app))

    launcher.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("tokens", inspect.Parameter.VAR_POSITIONAL,
                           annotation=Annotated[str, Parameter(show=False, allow_leading_hyphen=True)])]
        + _global_parameters())
    app.meta.default(launcher)
    return app
