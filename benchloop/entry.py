"""Console-script entry point: answers ``--version`` before importing anything else.

Everything else is delegated to ``benchloop.cli.app``.  Keeping this module tiny
keeps ``bl --version`` close to the interpreter's own start-up time (the rule of
when the version is the answer is ``cli.fast_version``'s).
"""

import sys


def main() -> None:
    from .cli.fast_version import VERSION_LINE, asks_for_version

    if asks_for_version(sys.argv[1:]):
        try:
            sys.stdout.write(VERSION_LINE + "\n")
            sys.stdout.flush()
        except BrokenPipeError:  # `bl --version | true`: quiet, exit 141, as every command
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        sys.exit(0)
    from .cli.app import main as run

    run()
