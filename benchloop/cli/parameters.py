"""A table option as a Cyclopts parameter: the one place an option meets the parser.

Every option of the table (a global option, a resource action's, a built-in command's)
becomes a keyword-only ``inspect.Parameter`` annotated with ``cyclopts.Parameter``;
the commands' signatures (``__signature__``) are lists of these, so help text,
choices, defaults and completion all come from the YAML.

Two kinds of check:

* ``checked_by_command``: a resource action's options (and ``describe``'s RESOURCE).  ``engine.arguments.bind``
  checks choices and minimums after the ids, in the contract's order and with the
  table's messages (docs/contract.md 1.4), so the parser hands the text over as
  typed: choices are a ``Literal`` (Cyclopts shows and completes them) read by a
  converter that does not check them, and lists stay strings (``-`` and commas are
  resolved by ``bind``).  Cyclopts lacks a way to offer choices it does not enforce;
  this converter is the smallest way to get one.
* otherwise (global and built-in options): Cyclopts checks choices and minimums.

An option that names a file or a directory (``path:``) is a ``Path`` to Cyclopts,
so shells complete paths, and reaches the command as the text typed.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any, Literal

from cyclopts import Group, Parameter

from ..table.model import Option

KEYWORD = inspect.Parameter.KEYWORD_ONLY
POSITIONAL = inspect.Parameter.POSITIONAL_ONLY


def _as_typed(type_: Any, tokens: Any) -> str:
    """Converter: the value as typed (the command checks it)."""
    return tokens[0].value


def _all_as_typed(type_: Any, tokens: Any) -> list[str]:
    """Converter: every value of a repeated option as typed (commas are split by ``bind``)."""
    return [token.value for token in tokens]


def _hint(opt: Option, choices: tuple[str, ...], checked_by_command: bool,
          optional: bool) -> tuple[Any, dict[str, Any]]:
    kind = opt.kind
    if kind.is_flag:
        return bool, {"negative": opt.negative or "", "show_default": bool(opt.negative)}
    if not checked_by_command:
        if opt.path:
            return (Path | None if optional else Path), {"converter": _as_typed}
        return kind.hint(choices, optional=optional), {}
    # ``Literal[...] | str``: the choices for the help page and the shells, any text for the
    # parse (Cyclopts checks a value against its hint with pydantic whenever pydantic is loaded).
    one: Any = Literal[choices] | str if choices else str
    if kind.many:
        return list[one] | None, {"negative": "", "converter": _all_as_typed,
                                  **({"metavar": "CHOICE..."} if choices else {})}
    if choices or opt.path:
        extra = {"converter": _as_typed, **({"metavar": "CHOICE"} if choices else {})}
        one = Path if opt.path and not choices else one
        return (one | None if optional else one), extra
    return (kind.parse | None if optional else kind.parse), {}


def option_parameter(opt: Option, *, checked_by_command: bool = False, group: Group | None = None,
                     kind: Any = KEYWORD, show: bool = True, choices: tuple[str, ...] | None = None,
                     ) -> inspect.Parameter:
    """The Cyclopts parameter of ``opt`` (a positional when ``kind`` is POSITIONAL).

    ``show`` False keeps it off the help page and out of completion (still parsed);
    ``choices`` (default: the option's own) are what the help page and the shells offer."""
    choices = opt.choices if choices is None else choices
    optional = opt.default is None and not opt.required
    hint, extra = _hint(opt, choices, checked_by_command, optional)
    if group is not None:
        extra["group"] = group
    if not show:
        extra["show"] = False
    if not opt.is_flag and not choices:
        extra["metavar"] = opt.metavar  # the table's placeholder (KEY, URL, SECONDS, ID...) over STR
    if not checked_by_command and opt.min is not None:
        from cyclopts import validators

        extra["validator"] = validators.Number(gte=opt.min)
    if kind is POSITIONAL:
        # Cyclopts renders a parameter's name as rich markup: "[@CLUSTER]" would be a style tag.
        name = [opt.placeholder.replace("[", "\\[")] if opt.placeholder else None
        default = inspect.Parameter.empty if opt.required else None
        return inspect.Parameter(opt.name, POSITIONAL, default=default, annotation=Annotated[
            hint, Parameter(name=name, help=opt.help, allow_leading_hyphen=False, **extra)])
    return inspect.Parameter(opt.name, KEYWORD, default=opt.default_value,
                             annotation=Annotated[hint, Parameter(name=list(opt.flags), help=opt.help, **extra)])


def context_parameter() -> inspect.Parameter:
    """``ctx``: the invocation (``invocation.Invocation``), given by the launcher, never parsed."""
    return inspect.Parameter("ctx", KEYWORD, default=None, annotation=Annotated[Any, Parameter(parse=False)])
