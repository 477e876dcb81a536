"""What a shell completes, gathered from the model: commands, actions, options, positionals.

A small view of the model shaped for the scripts: every runnable command path (a
table action such as ``jobs get``, or a built-in such as ``config set``) with its
options and positionals, the global options, and the commands with their actions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...table.model import Command, Option, Spec

HELP_FLAGS = ("--help", "-h")


def summary(text: str | None) -> str:
    """First sentence of a help text, on one line."""
    text = " ".join((text or "").split())
    end = re.search(r"\.\s+(?=[A-Z])", text)  # not "e.g. '...'"
    return text[: end.start() + 1] if end else text


@dataclass(frozen=True)
class Flag:
    """One option as a shell sees it."""

    flags: tuple[str, ...]
    value: bool  # takes a value
    choices: tuple[str, ...] = ()
    path: str = ""  # "dir" or "file": complete paths
    help: str = ""
    root_only: bool = False  # only before the command (--version)

    @classmethod
    def of(cls, opt: Option) -> Flag:
        return cls(opt.all_flags, opt.takes_value, opt.choices if opt.kind.choices else (), opt.path or "",
                   summary(opt.help))


HELP = Flag(HELP_FLAGS, False, help="Show help.")
VERSION = Flag(("--version",), False, help="Print the version.", root_only=True)


@dataclass(frozen=True)
class Positional:
    words: tuple[str, ...] = ()
    resources: bool = False  # the table's resources
    actions_of: int | None = None  # the actions of the resource given as positional number N


@dataclass(frozen=True)
class Leaf:
    """A runnable command path: its options, positionals, and whether global options apply."""

    help: str
    options: tuple[Flag, ...]
    positionals: tuple[Positional, ...] = ()
    globals: bool = True


@dataclass(frozen=True)
class Group:
    help: str
    actions: dict[str, str] = field(default_factory=dict)  # action -> help


@dataclass(frozen=True)
class Words:
    globals: tuple[Flag, ...]
    commands: dict[str, Group]
    leaves: dict[str, Leaf]
    resource_names: tuple[str, ...]
    table_actions: dict[str, tuple[str, ...]]

    def leaf_options(self, path: str) -> list[Flag]:
        """A leaf's own options, then the global ones it does not shadow."""
        leaf = self.leaves[path]
        own = list(leaf.options)
        if not leaf.globals:
            return own
        taken = set(flags_of(own))
        return own + [g for g in self.globals if not taken & set(g.flags) and not g.root_only]

    def choice_rows(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """(path, flag, choices) for every option with choices; '*' is any path (globals)."""
        rows = [(path, flag, opt.choices) for path, leaf in self.leaves.items()
                for opt in leaf.options for flag in (opt.flags if opt.choices else ())]
        rows += [("*", flag, opt.choices) for opt in self.globals for flag in (opt.flags if opt.choices else ())]
        return rows

    def path_flags(self, kind: str) -> list[str]:
        flags: list[str] = []
        for opt in [*self.globals, *(o for leaf in self.leaves.values() for o in leaf.options)]:
            if opt.path == kind:
                flags += [f for f in opt.flags if f not in flags]
        return flags


def flags_of(options: list[Flag] | tuple[Flag, ...], value: bool | None = None) -> list[str]:
    out: list[str] = []
    for opt in options:
        if value is None or opt.value == value:
            out += [f for f in opt.flags if f not in out]
    return out


def _builtin_leaf(command: Command) -> Leaf:
    positionals: list[Positional] = []
    for arg in command.arguments:
        if arg.choices:
            positionals.append(Positional(words=arg.choices))
        elif arg.name == "resource":
            positionals.append(Positional(resources=True))
        elif arg.name == "action":
            positionals.append(Positional(actions_of=len(positionals) - 1))
        else:
            positionals.append(Positional())
    return Leaf(summary(command.description or command.help), (*map(Flag.of, command.options), HELP),
                tuple(positionals), globals=False)


def gather(spec: Spec) -> Words:
    commands: dict[str, Group] = {}
    leaves: dict[str, Leaf] = {}
    for rname, resource in spec.resources.items():
        actions = {} if resource.command else {a: summary(body.help) for a, body in resource.actions.items()}
        commands[rname] = Group(summary(resource.help), actions)
        for action in resource.actions.values():
            leaves[" ".join(action.words)] = Leaf(summary(action.help), (*map(Flag.of, action.options), HELP))
    for name, command in spec.commands.items():
        if not command.actions:
            leaves[name] = _builtin_leaf(command)
            commands[name] = Group(leaves[name].help)
            continue
        group = commands[name] = Group(summary(command.help))
        for sub, body in command.actions.items():
            leaves[body.path] = _builtin_leaf(body)
            group.actions[sub] = leaves[body.path].help
    return Words(globals=(*map(Flag.of, spec.global_options), HELP, VERSION), commands=commands, leaves=leaves,
                 resource_names=tuple(spec.resources),
                 table_actions={name: tuple(res.actions) for name, res in spec.resources.items()})
