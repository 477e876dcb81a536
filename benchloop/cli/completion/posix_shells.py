"""What the bash and zsh scripts share: data functions written as POSIX ``case`` statements
and the walk over the words before the cursor."""

from __future__ import annotations

from .words import Words, flags_of

HEADER = """\
{comment} {shell} completion for bl and bmcli.
{comment} Generated from the endpoint table by `bl completion {shell}`; regenerate after upgrading bl.
"""


def sq(text: str) -> str:
    """POSIX single-quoted word (bash, zsh)."""
    return "'" + text.replace("'", "'\\''") + "'"


def helpers(words: Words) -> str:
    """Data functions shared by the bash and zsh scripts (both read POSIX `case`)."""
    commands = words.commands
    lines = [f"_bl_commands() {{ echo {sq(' '.join(commands))}; }}", "",
             "_bl_actions() {", '    case "$1" in']
    for name, body in commands.items():
        if body.actions:
            lines.append(f"        {sq(name)}) echo {sq(' '.join(body.actions))} ;;")
    lines += ["    esac", "}", "", "# Flags of a command path ('' is the root: the global options).",
              "_bl_options() {", '    case "$1" in',
              f"        '') echo {sq(' '.join(flags_of(words.globals)))} ;;"]
    for path in words.leaves:
        lines.append(f"        {sq(path)}) echo {sq(' '.join(flags_of(words.leaf_options(path))))} ;;")
    lines += ["        *) echo '--help -h' ;;", "    esac", "}", "",
              "# Does FLAG take a value under PATH?  (Global options are accepted everywhere.)",
              "_bl_takes_value() {", "    local flags", '    case "$1" in']
    for path, leaf in words.leaves.items():
        flags = flags_of(leaf.options, value=True)
        if flags:
            lines.append(f"        {sq(path)}) flags={sq(' '.join(flags))} ;;")
    lines += ["        *) flags='' ;;", "    esac",
              f"    flags=\" $flags {' '.join(flags_of(words.globals, value=True))} \"",
              '    [[ "$flags" == *" $2 "* ]]', "}", "",
              "_bl_choices() {", '    case "$1|$2" in']
    for path, flag, choices in words.choice_rows():
        pattern = f"*{sq('|' + flag)}" if path == "*" else sq(f"{path}|{flag}")
        lines.append(f"        {pattern}) echo {sq(' '.join(choices))} ;;")
    lines += ["    esac", "}", "", "_bl_path_kind() {", '    case "$1" in']
    for kind in ("dir", "file"):
        flags = words.path_flags(kind)
        if flags:
            lines.append(f"        {'|'.join(sq(f) for f in flags)}) echo {kind} ;;")
    lines += ["    esac", "}", "", "# Words for positional argument number $2 of PATH ($3: the first positional).",
              "_bl_positionals() {", '    case "$1|$2" in']
    for path, leaf in words.leaves.items():
        for index, pos in enumerate(leaf.positionals):
            pattern = sq(f"{path}|{index}")
            if pos.resources:
                lines.append(f"        {pattern}) echo {sq(' '.join(words.resource_names))} ;;")
            elif pos.actions_of is not None:
                lines.append(f'        {pattern}) _bl_table_actions "$3" ;;')
            elif pos.words:
                lines.append(f"        {pattern}) echo {sq(' '.join(pos.words))} ;;")
    lines += ["    esac", "}", "", "_bl_table_actions() {", '    case "$1" in']
    for name in words.resource_names:
        lines.append(f"        {sq(name)}) echo {sq(' '.join(words.table_actions[name]))} ;;")
    lines += ["    esac", "}", ""]
    return "\n".join(lines)


WALK = """\
    # Walk the words before the cursor: skip option values, find command, action, positionals.
    while (( i < cword )); do
        word="${words[i]}"
        if [[ "$word" == -* ]]; then
            if [[ "$word" != *=* ]] && _bl_takes_value "$path" "$word"; then (( i++ )); fi
        elif [[ -z "$cmd" ]]; then
            cmd="$word"; path="$word"
        elif [[ -z "$action" && -n "$(_bl_actions "$cmd")" ]]; then
            action="$word"; path="$cmd $word"
        else
            positionals+=("$word")
        fi
        (( i++ ))
    done"""

