"""Console-script entry point: answers ``--version`` before importing anything else.

Everything else is delegated to ``benchloop.cli.app``.  Keeping this module tiny
keeps ``bl --version`` close to the interpreter's own start-up time.
"""

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from .version import __version__

        try:
            sys.stdout.write(f"bmcli {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # `bl --version | true`: quiet, exit 141, as every command
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        sys.exit(0)
    from .cli.app import main as run

    run()
