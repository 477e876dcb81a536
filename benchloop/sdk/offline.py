"""What the Python client answers without a backend: the table described, a query compiled.

``describe`` is ``bl describe``'s document (every resource, action, option and output
shape of the endpoint table); ``compile_query`` compiles a JMESPath expression as
``--query`` does, and its ``search`` fails as ``--query`` fails.  Both raise the client's
``UsageError`` with the CLI's message.  A front end above the client (the MCP server's
``describe`` tool and ``query`` argument) uses these instead of the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base import errors as internal
from .errors import UsageError

if TYPE_CHECKING:
    from ..table.model import Spec


def describe(resource: str | None = None, action: str | None = None, *, spec: Spec | None = None) -> dict[str, Any]:
    """The endpoint table as ``bl describe [RESOURCE [ACTION]]`` prints it (as Python values)."""
    from ..surface.describe import describe_spec
    from ..table.load import load_model

    try:
        return describe_spec(spec if spec is not None else load_model(), resource, action)
    except internal.UsageError as exc:
        raise UsageError(str(exc)) from None


class Query:
    """A compiled JMESPath expression whose ``search`` fails with the client's ``UsageError``
    (a function given the wrong type, a recursion too deep), as ``--query`` fails."""

    def __init__(self, compiled: Any):
        self._compiled = compiled
        self.expression: str = compiled.expression

    def search(self, value: Any) -> Any:
        try:
            return self._compiled.search(value)
        except internal.UsageError as exc:
            raise UsageError(str(exc)) from None


def compile_query(expression: str | None) -> Query | None:
    """``expression`` compiled as ``--query`` compiles it (None without one)."""
    from ..engine.formats.query import compile_query as compile_cli_query

    try:
        compiled = compile_cli_query(expression)
    except internal.UsageError as exc:
        raise UsageError(str(exc)) from None
    return Query(compiled) if compiled is not None else None
