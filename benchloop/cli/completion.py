"""`bl completion bash|zsh|fish`: shell completion scripts generated from the table.

Why not Cyclopts' own completion: the scripts here are plain data (which
commands, actions, options, option values) rendered into small templates, one
per shell, so they need nothing at completion time: no Python start, no
`bl` call per keystroke.  Everything comes from the compiled endpoint table,
``GLOBAL_OPTIONS`` and the built-in commands' data (``builtin_options``), so a resource
added to the YAML completes as soon as the script is regenerated.

All three scripts share one model and the same walk over the words before the
cursor: options that take a value skip that value; the first plain word is
the command, the next one its action (when the command has actions); later
words are positionals (``bl describe RESOURCE ACTION``, ``bl completion SHELL``).
Choice options complete their values (``--scope``), ``-o/--output-dir``
completes directories and ``--config`` files.
"""

from __future__ import annotations

import re
from typing import Any

from ..table.model import Option, Spec, load_model
from ..table.model import global_options as model_globals

SHELLS = ("bash", "zsh", "fish")
HELP_FLAGS = ["--help", "-h"]
DIR_OPTIONS = {"output_dir"}
FILE_OPTIONS = {"config"}


# -------------------------------------------------------------------- model
def _summary(text: str | None) -> str:
    """First sentence of a help text, on one line."""
    text = " ".join((text or "").split())
    end = re.search(r"\.\s+(?=[A-Z])", text)  # not "e.g. '...'"
    return text[: end.start() + 1] if end else text


def _table_option(opt: Option | dict[str, Any]) -> dict[str, Any]:
    if isinstance(opt, dict):
        opt = Option.from_data(opt)
    return {
        "flags": list(opt.flags) + ([opt.negative] if opt.negative else []),
        "value": opt.takes_value,
        "choices": list(opt.choices),
        "path": "dir" if opt.name in DIR_OPTIONS else "file" if opt.name in FILE_OPTIONS else "",
        "help": _summary(opt.help),
    }


def _help_option() -> dict[str, Any]:
    return {"flags": list(HELP_FLAGS), "value": False, "choices": [], "path": "", "help": "Show help."}


def _builtin_leaf(leaf: dict[str, Any]) -> dict[str, Any]:
    """Options and positionals of a built-in command, from its data (``builtin_options``)."""
    positionals: list[dict[str, Any]] = []
    for pos in leaf.get("positionals", ()):
        if pos.get("choices"):
            positionals.append({"words": list(pos["choices"])})
        elif pos["name"] == "resource":
            positionals.append({"resources": True})
        elif pos["name"] == "action":
            positionals.append({"actions_of": len(positionals) - 1})
        else:
            positionals.append({"words": []})
    return {"help": _summary(leaf.get("description") or leaf["help"]), "positionals": positionals,
            "options": [_table_option(opt) for opt in leaf["options"]] + [_help_option()], "globals": False}


def build_model(spec: Spec) -> dict[str, Any]:
    """Commands, actions, leaves (command paths with options) and global options."""
    from .builtin_options import BUILTIN_COMMANDS

    global_options = [_table_option(opt) for opt in model_globals()]
    global_options += [_help_option(),
                       {"flags": ["--version"], "value": False, "choices": [], "path": "", "help": "Print the version.",
                        "root_only": True}]
    commands: dict[str, dict[str, Any]] = {}
    leaves: dict[str, dict[str, Any]] = {}
    for rname, resource in spec.resources.items():
        actions = {} if resource.command else {a: _summary(body.help) for a, body in resource.actions.items()}
        commands[rname] = {"help": _summary(resource.help), "actions": actions}
        for action in resource.actions.values():
            leaves[" ".join(action.words)] = {
                "help": _summary(action.help), "positionals": [], "globals": True,
                "options": [_table_option(o) for o in action.options] + [_help_option()],
            }
    for name, command in BUILTIN_COMMANDS.items():
        if "actions" not in command:
            leaves[name] = _builtin_leaf(command)
            commands[name] = {"help": leaves[name]["help"], "actions": {}}
            continue
        commands[name] = {"help": _summary(command["help"]), "actions": {}}
        for sub, body in command["actions"].items():
            leaves[f"{name} {sub}"] = _builtin_leaf(body)
            commands[name]["actions"][sub] = leaves[f"{name} {sub}"]["help"]
    return {"globals": global_options, "commands": commands, "leaves": leaves}


# ------------------------------------------------------------------ helpers
def _sq(text: str) -> str:
    """POSIX single-quoted word (bash, zsh)."""
    return "'" + text.replace("'", "'\\''") + "'"


def _fq(text: str) -> str:
    """fish single-quoted word."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _flags(options: list[dict[str, Any]], value: bool | None = None) -> list[str]:
    out: list[str] = []
    for opt in options:
        if value is None or opt["value"] == value:
            out += [f for f in opt["flags"] if f not in out]
    return out


def _leaf_options(model: dict[str, Any], path: str) -> list[dict[str, Any]]:
    leaf = model["leaves"][path]
    own = leaf["options"]
    if not leaf["globals"]:
        return own
    taken = set(_flags(own))
    return own + [g for g in model["globals"] if not taken & set(g["flags"]) and not g.get("root_only")]


def _choice_rows(model: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(path, flag, choices) for every option with choices; '*' is any path (globals)."""
    rows = []
    for path in model["leaves"]:
        for opt in model["leaves"][path]["options"]:
            for flag in opt["flags"] if opt["choices"] else ():
                rows.append((path, flag, opt["choices"]))
    for opt in model["globals"]:
        for flag in opt["flags"] if opt["choices"] else ():
            rows.append(("*", flag, opt["choices"]))
    return rows


def _path_flags(model: dict[str, Any], kind: str) -> list[str]:
    flags: list[str] = []
    for opt in model["globals"] + [o for leaf in model["leaves"].values() for o in leaf["options"]]:
        if opt["path"] == kind:
            flags += [f for f in opt["flags"] if f not in flags]
    return flags


HEADER = """\
{comment} {shell} completion for bl and bmcli.
{comment} Generated from the endpoint table by `bl completion {shell}`; regenerate after upgrading bl.
"""


# --------------------------------------------------------------- bash / zsh
def _posix_helpers(model: dict[str, Any]) -> str:
    """Data functions shared by the bash and zsh scripts (both read POSIX `case`)."""
    commands = model["commands"]
    lines = [f"_bl_commands() {{ echo {_sq(' '.join(commands))}; }}", "",
             "_bl_actions() {", '    case "$1" in']
    for name, body in commands.items():
        if body["actions"]:
            lines.append(f"        {_sq(name)}) echo {_sq(' '.join(body['actions']))} ;;")
    lines += ["    esac", "}", "", "# Flags of a command path ('' is the root: the global options).",
              "_bl_options() {", '    case "$1" in',
              f"        '') echo {_sq(' '.join(_flags(model['globals'])))} ;;"]
    for path in model["leaves"]:
        lines.append(f"        {_sq(path)}) echo {_sq(' '.join(_flags(_leaf_options(model, path))))} ;;")
    lines += ["        *) echo '--help -h' ;;", "    esac", "}", "",
              "# Does FLAG take a value under PATH?  (Global options are accepted everywhere.)",
              "_bl_takes_value() {", "    local flags", '    case "$1" in']
    for path, leaf in model["leaves"].items():
        flags = _flags(leaf["options"], value=True)
        if flags:
            lines.append(f"        {_sq(path)}) flags={_sq(' '.join(flags))} ;;")
    lines += ["        *) flags='' ;;", "    esac",
              f"    flags=\" $flags {' '.join(_flags(model['globals'], value=True))} \"",
              '    [[ "$flags" == *" $2 "* ]]', "}", "",
              "_bl_choices() {", '    case "$1|$2" in']
    for path, flag, choices in _choice_rows(model):
        pattern = f"*{_sq('|' + flag)}" if path == "*" else _sq(f"{path}|{flag}")
        lines.append(f"        {pattern}) echo {_sq(' '.join(choices))} ;;")
    lines += ["    esac", "}", "", "_bl_path_kind() {", '    case "$1" in']
    for kind in ("dir", "file"):
        flags = _path_flags(model, kind)
        if flags:
            lines.append(f"        {'|'.join(_sq(f) for f in flags)}) echo {kind} ;;")
    lines += ["    esac", "}", "", "# Words for positional argument number $2 of PATH ($3: the first positional).",
              "_bl_positionals() {", '    case "$1|$2" in']
    for path, leaf in model["leaves"].items():
        for index, pos in enumerate(leaf["positionals"]):
            pattern = _sq(f"{path}|{index}")
            if pos.get("resources"):
                lines.append(f"        {pattern}) echo {_sq(' '.join(model['resource_names']))} ;;")
            elif "actions_of" in pos:
                lines.append(f'        {pattern}) _bl_table_actions "$3" ;;')
            elif pos.get("words"):
                lines.append(f"        {pattern}) echo {_sq(' '.join(pos['words']))} ;;")
    lines += ["    esac", "}", "", "_bl_table_actions() {", '    case "$1" in']
    for name in model["resource_names"]:
        words = list(model["table_actions"][name])
        lines.append(f"        {_sq(name)}) echo {_sq(' '.join(words))} ;;")
    lines += ["    esac", "}", ""]
    return "\n".join(lines)


_WALK = """\
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

BASH_MAIN = """\
_bl() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" action="" path="" word choices
    local -a words=("${COMP_WORDS[@]}") positionals=()
    local -i i=1 cword=$COMP_CWORD
    (( cword > 0 )) && prev="${COMP_WORDS[cword-1]}"
    COMPREPLY=()
__WALK__
    if [[ "$prev" == -* && "$prev" != *=* ]] && (( cword - 1 > 0 )) && _bl_takes_value "$path" "$prev"; then
        choices="$(_bl_choices "$path" "$prev")"
        if [[ -n "$choices" ]]; then
            COMPREPLY=($(compgen -W "$choices" -- "$cur"))
        else
            case "$(_bl_path_kind "$prev")" in
                dir) COMPREPLY=($(compgen -d -- "$cur")) ;;
                file) COMPREPLY=($(compgen -f -- "$cur")) ;;
            esac
        fi
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_bl_options "$path")" -- "$cur"))
    elif [[ -z "$cmd" ]]; then
        COMPREPLY=($(compgen -W "$(_bl_commands)" -- "$cur"))
    elif [[ -z "$action" && -n "$(_bl_actions "$cmd")" ]]; then
        COMPREPLY=($(compgen -W "$(_bl_actions "$cmd")" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$(_bl_positionals "$path" "${#positionals[@]}" "${positionals[0]}")" -- "$cur"))
    fi
    return 0
}

complete -F _bl bl bmcli
"""


def bash_script(model: dict[str, Any]) -> str:
    install = ("# Install: bl completion bash > ~/.local/share/bash-completion/completions/bl\n"
               "#      or: echo 'source <(bl completion bash)' >> ~/.bashrc\n\n")
    return (HEADER.format(comment="#", shell="bash") + install + _posix_helpers(model) + "\n"
            + BASH_MAIN.replace("__WALK__", _WALK))


def _zsh_items(model: dict[str, Any]) -> str:
    """Functions printing 'word:description' lines for zsh's _describe."""
    lines = ["_bl_command_items() {", "    print -rl --"]
    for name, body in model["commands"].items():
        lines[-1] += f" {_sq(name + ':' + body['help'])}"
    lines += ["}", "", "_bl_action_items() {", '    case "$1" in']
    for name, body in model["commands"].items():
        if body["actions"]:
            items = " ".join(_sq(f"{a}:{h}") for a, h in body["actions"].items())
            lines.append(f"        {_sq(name)}) print -rl -- {items} ;;")
    lines += ["    esac", "}", "", "_bl_option_items() {", '    case "$1" in']
    paths = [("", model["globals"])] + [(p, _leaf_options(model, p)) for p in model["leaves"]]
    for path, options in paths:
        items = " ".join(_sq(f"{flag}:{opt['help']}") for opt in options for flag in opt["flags"])
        lines.append(f"        {_sq(path)}) print -rl -- {items} ;;")
    lines += ["        *) print -rl -- '--help:Show help.' '-h:Show help.' ;;", "    esac", "}", ""]
    return "\n".join(lines)


ZSH_MAIN = """\
_bl() {
    local cur="${words[CURRENT]}" prev="${words[CURRENT-1]}" cmd="" action="" path="" word choices
    local -a positionals items
    local -i i=2 cword=$CURRENT
__WALK__
    if [[ "$prev" == -* && "$prev" != *=* ]] && (( cword > 2 )) && _bl_takes_value "$path" "$prev"; then
        choices="$(_bl_choices "$path" "$prev")"
        if [[ -n "$choices" ]]; then
            compadd -- ${=choices}
        else
            case "$(_bl_path_kind "$prev")" in
                dir) _files -/ ;;
                file) _files ;;
                *) _message 'value' ;;
            esac
        fi
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        items=("${(@f)$(_bl_option_items "$path")}")
        _describe -t options 'option' items
    elif [[ -z "$cmd" ]]; then
        items=("${(@f)$(_bl_command_items)}")
        _describe -t commands 'bl command' items
    elif [[ -z "$action" && -n "$(_bl_actions "$cmd")" ]]; then
        items=("${(@f)$(_bl_action_items "$cmd")}")
        _describe -t commands "bl $cmd action" items
    else
        choices="$(_bl_positionals "$path" "${#positionals[@]}" "${positionals[1]}")"
        [[ -n "$choices" ]] && compadd -- ${=choices}
    fi
    return 0
}

if [[ "${zsh_eval_context[-1]}" == loadautofunc ]]; then
    _bl "$@"
else
    compdef _bl bl bmcli
fi
"""


def zsh_script(model: dict[str, Any]) -> str:
    install = ("# Install: bl completion zsh > \"${fpath[1]}/_bl\"   (then restart zsh)\n"
               "#      or: echo 'source <(bl completion zsh)' >> ~/.zshrc   (after compinit)\n\n")
    return ("#compdef bl bmcli\n" + HEADER.format(comment="#", shell="zsh") + install
            + _posix_helpers(model) + "\n" + _zsh_items(model) + "\n" + ZSH_MAIN.replace("__WALK__", _WALK))


# --------------------------------------------------------------------- fish
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


def _fish_option_lines(condition: str, options: list[dict[str, Any]]) -> list[str]:
    lines = []
    for opt in options:
        parts = [f"complete -c bl -n {_fq(condition)}"]
        for flag in opt["flags"]:
            if flag.startswith("--"):
                parts.append(f"-l {flag[2:]}")
            elif len(flag) == 2:
                parts.append(f"-s {flag[1:]}")
            else:
                parts.append(f"-o {flag[1:]}")
        if opt["choices"]:
            parts.append(f"-x -a {_fq(' '.join(opt['choices']))}")
        elif opt["path"] == "dir":
            parts.append("-x -a '(__fish_complete_directories)'")
        elif opt["path"] == "file":
            parts.append("-r -F")
        elif opt["value"]:
            parts.append("-x")
        parts.append(f"-d {_fq(opt['help'])}")
        lines.append(" ".join(parts))
    return lines


def _fish_functions(model: dict[str, Any]) -> list[str]:
    """The helper functions: actions, table actions and value-taking flags per path."""
    out = [HEADER.format(comment="#", shell="fish").rstrip("\n"),
           "# Install: bl completion fish > ~/.config/fish/completions/bl.fish", "",
           "function __bl_actions --argument-names cmd", "    switch $cmd"]
    for name, body in model["commands"].items():
        if body["actions"]:
            out += [f"        case {_fq(name)}", f"            echo {' '.join(body['actions'])}"]
    out += ["    end", "end", "", "function __bl_table_actions --argument-names resource", "    switch $resource"]
    for name in model["resource_names"]:
        out += [f"        case {_fq(name)}", f"            echo {' '.join(model['table_actions'][name])}"]
    out += ["    end", "end", "", "function __bl_takes_value --argument-names path flag", "    switch $path"]
    for path, leaf in model["leaves"].items():
        flags = _flags(leaf["options"], value=True)
        if flags:
            out += [f"        case {_fq(path)}", f"            contains -- $flag {' '.join(flags)}; and return 0"]
    out += ["    end", f"    contains -- $flag {' '.join(_flags(model['globals'], value=True))}", "end", "",
            FISH_FUNCTIONS, "complete -c bl -f", "complete -c bmcli -w bl", ""]
    return out


def fish_script(model: dict[str, Any]) -> str:
    out = _fish_functions(model)
    out.append("# Commands and global options")
    for name, body in model["commands"].items():
        out.append(f"complete -c bl -n \"__bl_at ''\" -a {_fq(name)} -d {_fq(body['help'])}")
    out += _fish_option_lines("__bl_at ''", model["globals"])
    for name, body in model["commands"].items():
        if body["actions"]:
            out += ["", f"# {name}"]
            for action, help_text in body["actions"].items():
                out.append(f"complete -c bl -n {_fq('__bl_at ' + name)} -a {_fq(action)} -d {_fq(help_text)}")
    for path, leaf in model["leaves"].items():
        out += ["", f"# {path}"]
        condition = f"__bl_at '{path}'"
        out += _fish_option_lines(condition, _leaf_options(model, path))
        for index, pos in enumerate(leaf["positionals"]):
            cond = _fq(f"__bl_npos '{path}' {index}")
            if pos.get("resources"):
                out.append(f"complete -c bl -n {cond} -a {_fq(' '.join(model['resource_names']))}")
            elif "actions_of" in pos:
                out.append(f"complete -c bl -n {cond} -a '(__bl_table_actions (__bl_pos {pos['actions_of'] + 1}))'")
            elif pos.get("words"):
                out.append(f"complete -c bl -n {cond} -a {_fq(' '.join(pos['words']))}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ command
def completion_script(shell: str, spec: Spec | None = None) -> str:
    spec = spec if spec is not None else load_model()
    model = build_model(spec)
    model["resource_names"] = list(spec.resources)
    model["table_actions"] = {name: list(res.actions) for name, res in spec.resources.items()}
    render = {"bash": bash_script, "zsh": zsh_script, "fish": fish_script}[shell]
    return render(model)
