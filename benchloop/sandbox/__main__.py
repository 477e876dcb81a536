"""``python -m benchloop.sandbox [OPTIONS]``: runs ``bl sandbox serve [OPTIONS]``.

There is one command and one parser: this entry point hands its arguments to the
command line's ``sandbox serve`` (its help page, its checks, its usage errors, which
name it as ``bl sandbox serve``).  ``--host`` is still accepted here as the older name
of ``--listen`` (on ``bl``, ``--host`` is the global backend URL).
"""

from __future__ import annotations

import sys


def _older_names(args: list[str]) -> list[str]:
    """``--host X`` / ``--host=X`` as ``--listen``."""
    return ["--listen" if a == "--host" else "--listen=" + a[len("--host="):] if a.startswith("--host=") else a
            for a in args]


def main(argv: list[str] | None = None) -> int:
    from benchloop.cli.app import run

    args = _older_names(list(sys.argv[1:] if argv is None else argv))
    return run("bl", ["sandbox", "serve", *args], exit_process=argv is None)


if __name__ == "__main__":
    sys.exit(main())
