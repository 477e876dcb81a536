"""Id input: repeatable options, commas, '-' for stdin (docs/contract.md 7).

Each value is split on commas, tokens are trimmed, empty tokens dropped and
duplicates removed keeping the first occurrence.  A value that is exactly '-'
reads all of stdin and splits it on whitespace (no comma split there); a token of
stdin that is a JSON string (``"G1-J0032"``, a line of ``--output jsonl``) is that
string, so the tool's own JSON output can be piped back in.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO


def expand_ids(values: Iterable[str] | None, stdin: TextIO | None = None, dedupe: bool = True) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()

    def add(token: str) -> None:
        if token and (not dedupe or token not in seen):
            seen.add(token)
            out.append(token)

    for value in values or ():
        if value == "-":
            stream = stdin if stdin is not None else sys.stdin
            data = stream.read() if stream is not None else ""
            for token in data.split():
                add(json_string(token))
            continue
        for token in value.split(","):
            add(token.strip())
    return out


def json_string(token: str) -> str:
    """The string a token spells as JSON (``"G1-J0032"`` -> ``G1-J0032``), else the token."""
    if len(token) >= 2 and token[0] == token[-1] == '"':
        import json

        try:
            value = json.loads(token)
        except ValueError:
            return token
        if isinstance(value, str):
            return value.strip()
    return token


def quoted(ident: str) -> bool:
    """Whether an id still carries the quotes of JSON output (``"G1-J0032"``)."""
    return len(ident) >= 2 and ident[0] == ident[-1] and ident[0] in "\"'"


def check_task_id(value: str) -> str:
    """A download-task id is one path component: reject separators and dot names."""
    from .errors import UsageError

    value = value.strip()
    if value in (".", "..") or any(ch in value for ch in "/\\\0"):
        raise UsageError("--task-id must not contain path separators")
    return value
