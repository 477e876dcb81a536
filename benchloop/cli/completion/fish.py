"""The fish completion script."""

from __future__ import annotations

from collections.abc import Sequence

from .posix_shells import HEADER
from .words import Flag, Words, flags_of


def fq(text: str) -> str:
    """fish single-quoted word."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


FISH_FUNCTIONS = """\
function __bl_state --description 'Print the command path, then the positionals, one per line'
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmd ''
    set -l action ''
    set -l path ''
    set -l positionals
    set -l skip 0
    for word in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $word
            if not string match -q -- '*=*' $word; and __bl_takes_value "$path" $word
                set skip 1
            end
        else if test -z "$cmd"
            set cmd $word
            set path $word
        else if test -z "$action"; and test -n "$(__bl_actions $cmd)"
            set action $word
            set path "$cmd $word"
        else
            set -a positionals $word
        end
    end
    printf '%s\\n' "$path" $positionals
end

function __bl_at --argument-names want --description 'Is the command path WANT?'
    set -l state (__bl_state)
    test "$state[1]" = "$want"
end

function __bl_npos --argument-names want index --description 'At PATH with INDEX positionals given?'
    set -l state (__bl_state)
    test "$state[1]" = "$want"; and test (math (count $state) - 1) -eq $index
end

function __bl_pos --argument-names index --description 'Positional number INDEX (from 1)'
    set -l state (__bl_state)
    set -l n (math $index + 1)
    set -q state[$n]; and echo $state[$n]
end
"""



def _fish_option_lines(condition: str, options: Sequence[Flag]) -> list[str]:
    lines = []
    for opt in options:
        parts = [f"complete -c bl -n {fq(condition)}"]
        for flag in opt.flags:
            if flag.startswith("--"):
                parts.append(f"-l {flag[2:]}")
            elif len(flag) == 2:
                parts.append(f"-s {flag[1:]}")
            else:
                parts.append(f"-o {flag[1:]}")
        if opt.choices:
            parts.append(f"-x -a {fq(' '.join(opt.choices))}")
        elif opt.path == "dir":
            parts.append("-x -a '(__fish_complete_directories)'")
        elif opt.path == "file":
            parts.append("-r -F")
        elif opt.value:
            parts.append("-x")
        parts.append(f"-d {fq(opt.help)}")
        lines.append(" ".join(parts))
    return lines


def _fish_functions(words: Words) -> list[str]:
    """The helper functions: actions, table actions and value-taking flags per path."""
    out = [HEADER.format(comment="#", shell="fish").rstrip("\n"),
           "# Install: bl completion fish > ~/.config/fish/completions/bl.fish", "",
           "function __bl_actions --argument-names cmd", "    switch $cmd"]
    for name, body in words.commands.items():
        if body.actions:
            out += [f"        case {fq(name)}", f"            echo {' '.join(body.actions)}"]
    out += ["    end", "end", "", "function __bl_table_actions --argument-names resource", "    switch $resource"]
    for name in words.resource_names:
        out += [f"        case {fq(name)}", f"            echo {' '.join(words.table_actions[name])}"]
    out += ["    end", "end", "", "function __bl_takes_value --argument-names path flag", "    switch $path"]
    for path, leaf in words.leaves.items():
        flags = flags_of(leaf.options, value=True)
        if flags:
            out += [f"        case {fq(path)}", f"            contains -- $flag {' '.join(flags)}; and return 0"]
    out += ["    end", f"    contains -- $flag {' '.join(flags_of(words.globals, value=True))}", "end", "",
            FISH_FUNCTIONS, "complete -c bl -f", "complete -c bmcli -w bl", ""]
    return out


def script(words: Words) -> str:
    out = _fish_functions(words)
    out.append("# Commands and global options")
    for name, body in words.commands.items():
        out.append(f"complete -c bl -n \"__bl_at ''\" -a {fq(name)} -d {fq(body.help)}")
    out += _fish_option_lines("__bl_at ''", words.globals)
    for name, body in words.commands.items():
        if body.actions:
            out += ["", f"# {name}"]
            for action, help_text in body.actions.items():
                out.append(f"complete -c bl -n {fq('__bl_at ' + name)} -a {fq(action)} -d {fq(help_text)}")
    for path, leaf in words.leaves.items():
        out += ["", f"# {path}"]
        condition = f"__bl_at '{path}'"
        out += _fish_option_lines(condition, words.leaf_options(path))
        for index, pos in enumerate(leaf.positionals):
            cond = fq(f"__bl_npos '{path}' {index}")
            if pos.resources:
                out.append(f"complete -c bl -n {cond} -a {fq(' '.join(words.resource_names))}")
            elif pos.actions_of is not None:
                out.append(f"complete -c bl -n {cond} -a '(__bl_table_actions (__bl_pos {pos.actions_of + 1}))'")
            elif pos.words:
                out.append(f"complete -c bl -n {cond} -a {fq(' '.join(pos.words))}")
    return "\n".join(out) + "\n"


