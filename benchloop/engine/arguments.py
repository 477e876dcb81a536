"""Check a command's arguments and pick its dimension, before any request.

The command line (``commands.py``) and every other front end hand the values
they parsed to :func:`bind`, which applies the table's rules in the order the
contract fixes (docs/contract.md 1.4): ids are read (``-`` reads stdin, commas
split), integer lists and minimums are checked, the dimension is chosen from
the ids given (with the contract's messages), then choices and the id limit.
Every problem is a ``UsageError`` (exit 2) and nothing has been requested yet.
This module imports no command-line framework.
"""

from __future__ import annotations

import math
from typing import Any

from ..base.errors import UsageError
from ..base.ids import check_task_id, expand_ids
from ..table.model import DIMENSION_KINDS, Action, Option

STDIN = "-"


def _flags(dim: str) -> str:
    return DIMENSION_KINDS[dim].flags


def bind(action: Action, values: dict[str, Any], stdin_token: str = STDIN) -> tuple[str, list[str], dict[str, Any]]:
    """``(dimension, ids, options)`` of a call; ``values`` maps option names to what was given
    (missing names take the table's defaults; id options may be lists or one string)."""
    values = dict(values)
    for name, default in action.defaults.items():
        values.setdefault(name, default)
    if action.positional is not None:
        return _bind_positional(action, values, stdin_token)
    from_stdin = [name for name in ("group", "job") if stdin_token in _listed(values.get(name))]
    given = _given_ids(values, stdin_token)
    _check_values(action, values, stdin_token)
    try:
        dim = _dimension(action, given)
    except UsageError as exc:
        empty = [_flags(name) for name in from_stdin if not given.get(name)]
        if empty and str(exc).startswith("at least one"):
            flag = empty[0].split("/")[0]
            raise UsageError(f"no ids on stdin: '{flag} -' read an empty input; pipe ids in, e.g. "
                             f"echo ID1 ID2 | bl {' '.join(action.words)} {flag} -") from None
        raise
    _check_choices(action, values)
    if action.max_ids and len(given[dim]) > action.max_ids:
        raise UsageError(action.max_ids_message or f"at most {action.max_ids} id(s) allowed")
    if action.min_ids and len(given[dim]) < action.min_ids:  # ids are unique: -g A,A is one id
        raise UsageError(action.min_ids_message or f"at least {action.min_ids} different ids are required")
    return dim, given[dim], values


def _bind_positional(action: Action, values: dict[str, Any], stdin_token: str
                     ) -> tuple[str, list[str], dict[str, Any]]:
    """A one-id command whose id is given by position (``ap-cmd GROUP_ID[@CLUSTER]``): taken
    verbatim (no comma splitting, no stdin), then the minimums and choices."""
    opt = action.positional
    assert opt is not None
    raw = values.pop(opt.name, None)
    if isinstance(raw, (list, tuple)):
        raw = raw[0] if raw else None
    if raw is None or raw == "":
        raise UsageError(opt.message("required", f"Missing argument '{opt.metavar}'."))
    ident = "-" if raw == stdin_token else str(raw)
    _check_values(action, values, stdin_token)
    _check_choices(action, values)
    values.setdefault("extra_args", [])
    (dim,) = action.dimensions
    return dim, [ident], values


def unknown_values(action: Action, values: dict[str, Any]) -> list[str]:
    """Warnings for values of options with a documented set (``values:``) that are not in it:
    the value is still sent (the backend's set may grow), but a typo (``--status fail``) that
    would silently match nothing is named, with the closest known value."""
    out = []
    for opt in action.options:
        given = values.get(opt.name)
        if not opt.values or not isinstance(given, str) or given in opt.values:
            continue
        import difflib  # only for a value to warn about

        close = difflib.get_close_matches(given.lower(), opt.values, n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]}?" if close else ""
        out.append(f"{opt.flag} {given} is not one of the known values ({', '.join(opt.values)}){hint} "
                   "(sent as it is: the backend compares exactly)")
    return out


def _check_choices(action: Action, values: dict[str, Any]) -> None:
    for opt in action.options:
        if opt.type == "choice" and values.get(opt.name) not in opt.choices:
            raise UsageError(f"{opt.flag} must be one of {', '.join(opt.choices)}")


def _listed(values: Any) -> list[Any]:
    if isinstance(values, (list, tuple)):
        return list(values)
    return [] if values is None else [values]


def _stdin(values: Any, token: str) -> list[str]:
    if isinstance(values, str):
        values = [values]
    return ["-" if v == token else v for v in values or ()]


def _ints(opt: Option, values: Any, stdin_token: str) -> list[int]:
    """An integer list option: commas, repeats and stdin like ids; unique values."""
    if isinstance(values, int) and not isinstance(values, bool):
        values = [values]
    out: list[int] = []
    for token in expand_ids(_stdin([str(v) for v in values or ()], stdin_token), dedupe=False):
        try:
            number = int(token)
        except ValueError:
            raise UsageError(opt.message("invalid", "invalid {flag} value: {value}")
                             .format(flag=opt.flag, value=token)) from None
        if number in out:
            raise UsageError(opt.message("duplicate", f"duplicate {opt.flag} value: {number}"))
        out.append(number)
    return out


def _dimension(action: Action, given: dict[str, list[str]]) -> str:
    """Pick the dimension from the ids given, with the contract's usage messages."""
    dims = action.dimensions
    if given.get("group") and given.get("job"):
        raise UsageError("-g/--group and -j/--job are mutually exclusive")
    if "task" in dims:
        if given.get("task") and (given.get("group") or given.get("job")):
            raise UsageError("--task-id, -g/--group and -j/--job are mutually exclusive")
        if given.get("task"):
            return "task"
        if not (given.get("group") or given.get("job")):
            if dims["task"].option is not None and dims["task"].option.kind.many:
                raise UsageError("at least one --task-id is required")
            if set(dims) == {"task"} and "task" not in given:
                raise UsageError("Missing option '--task-id'.")
            raise UsageError("at least one -g/--group, -j/--job or --task-id is required")
    for name in ("job", "group"):
        if given.get(name) and name not in dims:
            takes = [d for d in ("group", "job", "task") if d in dims]
            kinds = " or ".join(f"{d} ids ({_flags(d)})" for d in takes) or "other ids"
            raise UsageError(f"{action.resource} takes {kinds}, not {_flags(name)}")
    for name in ("group", "job"):
        if given.get(name):
            return name
    if set(dims) == {"task"}:
        raise UsageError("at least one --task-id is required")
    if action.option("job") is None:
        raise UsageError("at least one -g/--group is required")
    if "job" in dims or "group" in dims:
        raise UsageError("at least one -g/--group or -j/--job is required")
    raise UsageError("no dimension given")


def _given_ids(kwargs: dict[str, Any], stdin_token: str) -> dict[str, list[str]]:
    """Pop the id options from ``kwargs``: {dimension: ids} (stdin read, commas split).  A
    download task's id is one path component; an option that takes one id (``--task-id T1``
    of the downloads) is taken as typed, stripped, without splitting."""
    given = {}
    for kind in DIMENSION_KINDS.values():
        if kind.option not in kwargs:
            continue
        raw = kwargs.pop(kind.option)
        if raw is None and kind.name == "task":
            continue  # not given ("Missing option '--task-id'." when it is the only dimension)
        if isinstance(raw, (list, tuple)) or kind.name != "task":
            ids = expand_ids(_stdin(raw, stdin_token))
        else:
            ids = [raw.strip()] if raw is not None and raw.strip() else []
        given[kind.name] = [check_task_id(t) for t in ids] if kind.name == "task" else ids
    return given


def _check_values(action: Action, kwargs: dict[str, Any], stdin_token: str) -> None:
    """Integer lists and minimums, before the ids are checked (the contract's order); numbers
    are finite and JMESPath options compile, so that nothing is requested in vain."""
    for opt in action.options:
        value = kwargs.get(opt.name)
        if opt.type == "ints":
            kwargs[opt.name] = _ints(opt, value, stdin_token)
        elif opt.type == "int" and opt.min is not None and value is not None and value < opt.min:
            raise UsageError(opt.message("min", f"{opt.flag} must be at least {opt.min}"))
        elif opt.type == "float" and value is not None and not math.isfinite(value):
            raise UsageError(opt.message("invalid", f"{opt.flag} must be a finite number, not {value}"))
        elif opt.type == "float" and opt.min is not None and value is not None and value < opt.min:
            raise UsageError(opt.message("min", f"{opt.flag} must be at least {opt.min}"))
        elif opt.type == "jmespath" and value is not None:
            _check_expression(opt, value)
        elif opt.type == "regex" and value is not None:
            _check_regex(opt, value)
        elif opt.path in OUTPUT_PATHS and value is not None:
            kwargs[opt.name] = OUTPUT_PATHS[opt.path](opt, value, stdin_token)


def _check_expression(opt: Option, text: str) -> None:
    """A usage error naming the option when ``text`` is not a JMESPath expression."""
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        jmespath.compile(text)
    except JMESPathError as exc:
        detail = " ".join(str(exc).split())  # one line: jmespath draws a caret under the expression
        raise UsageError(f"invalid {opt.flag} expression: {detail}") from None
    except RecursionError:
        raise UsageError(f"invalid {opt.flag} expression: nested too deeply to parse") from None


def _check_regex(opt: Option, text: str) -> None:
    """A usage error naming the option when ``text`` is not a regular expression."""
    import re

    try:
        re.compile(text)
    except (re.error, RecursionError, OverflowError) as exc:
        raise UsageError(f"invalid {opt.flag} regular expression {text!r}: {exc}") from None


def _output_file(opt: Option, value: Any, stdin_token: str) -> str:
    """A file an action writes (``path: file``, ``--report``), checked before any request: ``-``
    (stdout) as it is, else a path whose directory exists and that is no symlink or special file."""
    import os

    from ..base.files import user_file_problem

    path = os.fspath(value)
    if path in (stdin_token, "-"):
        return "-"
    problem = user_file_problem(path)
    if problem is not None:
        raise UsageError(f"cannot write {opt.flag} {path}: {problem} ({opt.flag} - prints it on stdout)")
    return path


def _output_dir(opt: Option, value: Any, stdin_token: str) -> str:
    """The directory of the files an action writes (``path: checked_dir``, ``--report-dir``),
    checked before any request as a file is: a directory, or a new one whose parent exists;
    never a file, symlink or special file."""
    import os

    from ..base.files import user_dir_problem

    path = os.fspath(value)
    problem = user_dir_problem(path)
    if problem is not None:
        raise UsageError(f"cannot write {opt.flag} {path}: {problem}")
    return path


def names_directory(value: str) -> bool:
    """Whether the value of a ``path: file_or_dir`` option (``bl view -o``) names a directory:
    it ends with a separator, or it is an existing directory, or it is a new name without an
    extension (``-o out``, as every command's ``-o DIR``); anything else names the file itself
    (``page.html``, ``page.txt``, an existing file)."""
    import os

    if value.endswith(("/", os.sep)):
        return True
    if os.path.lexists(value):
        return os.path.isdir(value)
    return not os.path.splitext(os.path.basename(value))[1]


def _output_file_or_dir(opt: Option, value: Any, stdin_token: str) -> str:
    """A file an action writes, or the directory where it names it (``path: file_or_dir``, ``bl
    view -o``), checked before any request: a directory (:func:`names_directory`) comes back
    ending with a separator and is made with its parents when missing, as an output root is;
    a file is checked as ``path: file``."""
    import os

    from ..base.files import user_dir_problem

    path = os.fspath(value)
    if not path or path in (stdin_token, "-") or not names_directory(path):  # "": the default
        return _output_file(opt, path, stdin_token)
    problem = user_dir_problem(path, parents=True, links=True)
    if problem is not None:
        raise UsageError(f"cannot write {opt.flag} {path}: {problem}")
    return path if path.endswith(("/", os.sep)) else path + os.sep


# What the table's ``path:`` kinds of an output check before any request (``dir``, an output
# root, is made as it is).
OUTPUT_PATHS = {"file": _output_file, "checked_dir": _output_dir, "file_or_dir": _output_file_or_dir}
