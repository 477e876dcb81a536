"""The bash completion script."""

from __future__ import annotations

from .posix_shells import HEADER, WALK, helpers
from .words import Words

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


def script(words: Words) -> str:
    install = ("# Install: bl completion bash > ~/.local/share/bash-completion/completions/bl\n"
               "#      or: echo 'source <(bl completion bash)' >> ~/.bashrc\n\n")
    return (HEADER.format(comment="#", shell="bash") + install + helpers(words) + "\n"
            + BASH_MAIN.replace("__WALK__", WALK))


