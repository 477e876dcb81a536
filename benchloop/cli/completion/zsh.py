"""The zsh completion script."""

from __future__ import annotations

from .posix_shells import HEADER, WALK, helpers, sq
from .words import Words


def _zsh_items(words: Words) -> str:
    """Functions printing 'word:description' lines for zsh's _describe."""
    lines = ["_bl_command_items() {", "    print -rl --"]
    for name, body in words.commands.items():
        lines[-1] += f" {sq(name + ':' + body.help)}"
    lines += ["}", "", "_bl_action_items() {", '    case "$1" in']
    for name, body in words.commands.items():
        if body.actions:
            items = " ".join(sq(f"{a}:{h}") for a, h in body.actions.items())
            lines.append(f"        {sq(name)}) print -rl -- {items} ;;")
    lines += ["    esac", "}", "", "_bl_option_items() {", '    case "$1" in']
    paths = [("", words.globals)] + [(p, words.leaf_options(p)) for p in words.leaves]
    for path, options in paths:
        items = " ".join(sq(f"{flag}:{opt.help}") for opt in options for flag in opt.flags)
        lines.append(f"        {sq(path)}) print -rl -- {items} ;;")
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


def script(words: Words) -> str:
    install = ("# Install: bl completion zsh > \"${fpath[1]}/_bl\"   (then restart zsh)\n"
               "#      or: echo 'source <(bl completion zsh)' >> ~/.zshrc   (after compinit)\n\n")
    return ("#compdef bl bmcli\n" + HEADER.format(comment="#", shell="zsh") + install
            + helpers(words) + "\n" + _zsh_items(words) + "\n" + ZSH_MAIN.replace("__WALK__", WALK))


