"""`bl completion bash|zsh|fish`: shell completion scripts generated from the table.

Why not Cyclopts' own completion: the scripts here are plain data (which commands,
actions, options, option values) rendered into small templates, one module per shell
(``bash``, ``zsh``, ``fish``; bash and zsh share their POSIX ``case`` functions in
``posix``), so they need nothing at completion time: no Python start, no `bl` call per
keystroke.  Everything comes from the model (``words.gather``): the table's resources,
the global options and the built-in commands, so a resource added to the YAML
completes as soon as the script is regenerated.

All three scripts walk the words before the cursor the same way: options that take a
value skip that value; the first plain word is the command, the next one its action
(when the command has actions); later words are positionals (``bl describe RESOURCE
ACTION``, ``bl completion SHELL``).  Choice options complete their values
(``--scope``), options that name a directory or a file (``-o``, ``--config``) complete
paths.
"""

from __future__ import annotations

from collections.abc import Callable

from ...table.load import load_model
from ...table.model import Spec
from . import bash, fish, zsh
from .words import Words, gather

SCRIPTS: dict[str, Callable[[Words], str]] = {"bash": bash.script, "zsh": zsh.script, "fish": fish.script}
SHELLS = tuple(SCRIPTS)


def completion_script(shell: str, spec: Spec | None = None) -> str:
    return SCRIPTS[shell](gather(spec if spec is not None else load_model()))
