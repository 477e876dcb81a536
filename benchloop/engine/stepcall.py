"""What a named step may use: :class:`StepCall`, a narrow, typed view of the pipeline.

A step (``engine/steps/``) is domain logic only: it gets its part's typed ``with:``
values (``params``), the id, the options, where its output goes, and functions that
make requests through the engine with the endpoints its ``with:`` names (rendered from
the table's templates: a step never builds a URL, a query or a body).  It never sees
the pipeline, the template context or the HTTP client.  Every step is annotated with
this protocol and mypy checks that the pipeline provides it (``pipeline.PipelineCall``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ..table.model import StepArgs
from .outcomes import Outcome


class StepLog(Protocol):
    """The lines a step may write on stderr."""

    def info(self, message: str) -> None: ...
    def note(self, message: str) -> None: ...  # advice for people: always ``[info]``
    def warn(self, message: str) -> None: ...
    def file(self, verb: str, path: str, note: str = "") -> None: ...
    def touched(self, kind: str, path: str) -> None: ...
    def per_file(self, message: str) -> None: ...


class Counter(Protocol):
    def step(self, detail: str, ok: bool = True, error: BaseException | None = None) -> None: ...


class StepCall(Protocol):
    ident: str  # the id being processed (a group, a job, a download task)
    dimension: str  # "group", "job" or "task"
    params: StepArgs  # the part's ``with:`` values, typed by the step's declaration
    options: dict[str, Any]  # the command's option values
    dest: str | None  # the final path when the action writes files (the step writes it), else None
    input: Any  # what the part's waiter produced, if it has one
    root: str  # the output root
    files: bool  # the action writes files (False: the value is printed)
    pretty: bool  # JSON files are indented
    streams: bool  # the value is printed as it is read: a step may give its rows page by page

    @property
    def log(self) -> StepLog:
        """Where the step's lines go (stderr)."""
        ...

    def request(self, key: str, **variables: Any) -> Any:
        """The JSON answer of the endpoint named by ``with.<key>``, its templates rendered from the
        id, the options, earlier parts and ``variables``."""
        ...

    def has_key(self, key: str) -> bool:
        """Whether the service of ``with.<key>``'s endpoint has an API key configured."""
        ...

    def require_key(self, key: str) -> None:
        """A usage error (the service's own message) when that service has no API key."""
        ...

    def download(self, url: str, dest: str) -> int:
        """Stream an absolute URL (an export the backend produced) into ``dest``."""
        ...

    def fetch_file(self, key: str, dest: str, on_bytes: Callable[[int], None] | None = None,
                   size: int | None = None, **variables: Any) -> str | None:
        """Download ``with.<key>`` into ``dest`` under the part's ``missing`` rule; None, or why
        the rule's placeholder was saved instead.  ``size``: the object's size announced before
        (a listing's): a body of another size fails and nothing is saved."""
        ...

    def items(self, body: Any, **variables: Any) -> list[dict[str, Any]]:
        """The entries of ``body`` that the part's ``items:`` selects."""
        ...

    def earlier(self, part: str) -> Any:
        """The answer of an earlier part of the same id."""
        ...

    def enumerate(self, key: str) -> list[str]:
        """Every id the enumeration named by ``with.<key>`` lists for this id."""
        ...

    def iterate(self, key: str) -> Iterable[dict[str, Any]]:
        """The items of the enumeration ``with:`` names at ``key``, read as they are iterated
        (its first page asked now): a ``pagination.Streamed``.  Only when ``streams``."""
        ...

    def scan(self, key: str) -> list[dict[str, Any]]:
        """Every item (the whole entry, not only its id) that the enumeration named by ``with.<key>``
        lists for this id: every page, as its pagination walks them (one request per page)."""
        ...

    def map(self, items: list[str], work: Callable[[str], Any]) -> list[Outcome]:
        """``work`` for every item on the command's worker pool, outcomes in input order."""
        ...

    def counter(self, label: str, unit: str, verb: str, total: int | None = None, eta: bool = False) -> Counter:
        """A progress counter; without ``total``, one shared by every id of the command."""
        ...

    def byte_progress(self, label: str, count: int) -> Any:
        """A progress bar of bytes over ``count`` downloads (``log.ByteProgress``)."""
        ...

    def render(self, template: str) -> str:
        """A label template of the table (``{group} artifacts``) with this id's values."""
        ...

    def path(self, relative: str) -> str:
        """A path under the output root (it can never escape it)."""
        ...

    def skip(self, path: str, size: int | None = None) -> bool:
        """True (and the "skip existing" line) when ``--skip-existing`` leaves ``path`` alone; never
        when ``size`` is given and the file there has another size (it is fetched again)."""
        ...
