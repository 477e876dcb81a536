"""``python -m benchloop.sandbox``: ``bl sandbox serve`` under another name.

One command, one set of options: the parser below is built from the same
definition as ``bl sandbox serve`` (``commands: sandbox: serve`` in the table), ``--help``
prints the same page, and both hand the values to
:func:`serve.serve_options`.  argparse rather than the CLI keeps this entry
point free of Cyclopts; ``--host`` is still accepted as the older name of
``--listen`` (on ``bl``, ``--host`` is the global backend URL).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from benchloop.table.load import load_model

from .serve import serve_options

SANDBOX_MODULE = "python -m benchloop.sandbox"
ALIASES = {"listen": ["--host"]}  # older names, accepted but not shown


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # the same three lines as bl's usage errors
        sys.stderr.write(f"Usage: {SANDBOX_MODULE} [OPTIONS]\nTry '{SANDBOX_MODULE} --help' for help.\n"
                         f"Error: {message}\n")
        sys.exit(2)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=SANDBOX_MODULE, usage=f"{SANDBOX_MODULE} [OPTIONS]", add_help=False, allow_abbrev=False)
    for opt in load_model().command("sandbox serve").options:
        flags = [*opt.flags, *ALIASES.get(opt.name, ())]
        if opt.is_flag:
            p.add_argument(*flags, dest=opt.name, action="store_true")
        else:
            p.add_argument(*flags, dest=opt.name, default=opt.default, type=opt.kind.parse,
                           choices=opt.choices or None, metavar=opt.placeholder)
    p.add_argument("-h", "--help", action="store_true")
    return p


def help_page() -> str:
    from benchloop.cli.helppages import command_page

    return command_page(f"Usage: {SANDBOX_MODULE} [OPTIONS]", load_model().command("sandbox serve"), [
        "The same command as 'bl sandbox serve'; --host is accepted as an older name of --listen."])


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = vars(parser.parse_args(argv))
    if args.pop("help"):
        sys.stdout.write(help_page())
        return 0
    try:
        return serve_options(args)
    except ValueError as exc:
        parser.error(str(exc))


if __name__ == "__main__":
    sys.exit(main())
