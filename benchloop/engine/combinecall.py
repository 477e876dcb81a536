"""What a named combine may use (:class:`CombineCall`) and what it gives back (:class:`Combined`).

Most commands print one element per id, each as soon as it is known.  A few need the
values of every id together: ``bl compare`` compares every group with the first one,
``bl jobs table`` prints the rows of every group as one flat table.  An action names
its combine in the table (``combine: NAME``, with typed ``with:`` values declared under
``combines:``); the implementation is a function of ``engine/combines/`` registered by
name.  The command line, the Python client and the MCP server all run it the same way
(``combining.py``), after every id has finished.

A combine is pure: it gets the values the ids produced, the options and its ``with:``
values, never the pipeline or an HTTP client.  What it returns may carry, besides the
elements, formats it renders itself (``--output table`` of ``bl compare`` is a summary
for people, not the generic table) and files that its options ask for (``--report
FILE.html``): the engine prints and writes them, so a file that cannot be written never
costs the printed result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

from msgspec import Struct, field

from ..base.errors import BenchloopError
from ..table.model import Column, StepArgs
from ..table.outputs import Output
from .stepcall import StepLog


class CombineCall(Protocol):
    ids: list[str]  # every id of the command, in the order given
    values: list[tuple[str, Any]]  # (id, value) of every id that succeeded, in that order
    failed: list[str]  # the ids that failed (their failures are in the summary and the exit code)
    options: dict[str, Any]  # the command's option values
    params: StepArgs  # the combine's ``with:`` values, typed by its declaration

    @property
    def log(self) -> StepLog:
        """Where the combine's lines go (stderr)."""
        ...

    @property
    def secrets(self) -> tuple[str, ...]:
        """The API keys of the call, masked in what is made for people to share (``--report``)."""
        ...

    @property
    def root(self) -> str:
        """The output root (the command's ``-o/--output-dir``, else the global one): where a file
        the user did not name goes."""
        ...

    def run(self, resource: str, values: dict[str, Any]) -> Ran:
        """Run another command of the table (a one-action resource, ``view``) with these option
        values, as the command line would - its requests through the engine, its combine, its
        files written - and say what it wrote (``bl compare --report-dir`` writes a ``bl view``
        page per changed instance).  A 401 stops everything, as anywhere else."""
        ...


class Ran(NamedTuple):
    """What a command run by a combine wrote, its failures (``(id, message)``), and the values
    its ids fetched (``(id, value)``, in the order given: ``bl compare --why`` reads the trials
    ``bl view`` fetched)."""

    paths: list[str]
    failures: list[tuple[str, str]]
    values: tuple[tuple[str, Any], ...] = ()


class CombineError(BenchloopError):
    """Nothing can be combined (a ``--metric`` that scores no job): the command fails (exit 1)
    before anything is printed.  ``problems`` are ``(id, message)`` pairs, the first the
    Python client's failure; a message may hold a hint on further lines."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("\n".join(message for _, message in problems))
        self.problems = problems
        self.ident = problems[0][0]


def _empty() -> Mapping[str, Callable[[], Any]]:
    return MappingProxyType({})


# What a file of a combine is made of: its text at once, or piece by piece (a page of a
# 5,000-step trajectory is written without ever being one string).
Content = str | Iterable[str]


def rows_shape(columns: Iterable[Column]) -> Output:
    """What one row is when a combine prints rows of columns its ``with:`` declares (``{name,
    from, type}``): one field per column, typed, in the table's order."""
    from ..table import outputs

    return outputs.each_row(outputs.of_columns(tuple(columns), outputs.Schemas()))


def declared_rows(columns: Iterable[Column], documents: Iterable[Any]) -> list[dict[str, Any]]:
    """One row per document: each column's ``from`` (JMESPath) read from it, typed as the
    column says (null when it cannot be)."""
    from ..compare.rows import compile_expression, converter

    readers = [(c.name, compile_expression(c.source, f"column {c.name!r}"), converter(c.type)) for c in columns]
    return [{name: convert(read(doc)) for name, read, convert in readers} for doc in documents]


class Combined(Struct, frozen=True):
    """What a combine made of the ids' values.

    ``elements`` are what every front end gets (printed in the ``--output`` format, after
    ``--query``; the Python client's list; the MCP tool's result).  ``renderings`` maps an
    ``--output`` name to the text the combine renders itself for it (used when no
    ``--query`` is given; called only when that format is asked for).  ``files`` maps a
    path its options named to the text to write there (atomically, after printing; a path
    the user named: never a symlink or special file replaced, no directory made).  ``page``
    is text printed instead of the elements (``--report -``).  ``declared``: the elements
    are the combine's declared output (false: another shape, ``--per-instance``'s rows, whose
    columns the flat formats find by looking); ``shape``: what the elements are when they are
    rows of columns the table declares in the combine's ``with:`` (``bl compare --why --output
    csv``: :func:`rows_shape`).  ``opens``: the files, once written, are opened
    in the user's browser (``bl view --open``).  ``state``, ``state_line`` and ``settled`` are
    what a watch reads (an action's ``watch:``, ``engine/watching.py``): a change of ``state``
    is reported with ``state_line`` on stderr, and ``settled`` ends the watch (``bl compare
    --watch``: each candidate's sequential verdict; every one reached).
    ``failures``: ``(path, message)`` of what the
    combine could not make (a page of ``--report-dir``): each is said as an error when the files
    are written, and is a failure of the command (exit 1) that costs nothing else.

    An action that writes files (``writer: files``, ``bl view``) runs its combine too: the
    files are written (and nothing printed), or, when the combine makes none, its ``page`` or
    its elements are printed (``bl view --output text``); the Python client returns the path
    of the first file written.
    """

    elements: list[Any]
    renderings: Mapping[str, Callable[[], str]] = field(default_factory=_empty)
    files: Mapping[str, Callable[[], Content]] = field(default_factory=_empty)
    page: Callable[[], str] | None = None
    declared: bool = True
    shape: Output | None = None
    opens: bool = False
    state: str | None = None
    state_line: str | None = None
    settled: bool = False
    failures: tuple[tuple[str, str], ...] = ()
