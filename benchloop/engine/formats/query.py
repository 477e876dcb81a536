"""``--query``: a JMESPath expression applied to the whole output array, as the AWS CLI does.

With a query the output waits for every id (the expression sees the whole array).  An
expression that does not parse, or fails on the data (a function given the wrong type,
recursion too deep), is a usage error with JMESPath's message: the expression is what
must change, so it is exit 2, never "unexpected error".
"""

from __future__ import annotations

from typing import Any

from ...base.errors import UsageError


def compile_query(expression: str | None) -> Query | None:
    """The compiled expression (None without one); a usage error names what is wrong."""
    if not expression:
        return None
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return Query(jmespath.compile(expression))
    except JMESPathError as exc:
        raise UsageError(f"invalid --query expression: {exc}") from None
    except RecursionError:
        raise UsageError("invalid --query expression: nested too deeply to parse") from None


class Query:
    """A compiled ``--query`` whose ``search`` turns JMESPath's run-time errors into usage errors."""

    def __init__(self, compiled: Any):
        self.compiled = compiled
        self.expression: str = getattr(compiled, "expression", "")

    def search(self, value: Any) -> Any:
        from jmespath.exceptions import JMESPathError, JMESPathTypeError

        try:
            return self.compiled.search(value)
        except JMESPathTypeError as exc:
            raise UsageError(f"--query failed: {_type_error(exc)}") from None
        except JMESPathError as exc:
            raise UsageError(f"--query failed: {exc}") from None
        except RecursionError:
            raise UsageError("--query failed: the expression nests too deeply to evaluate") from None


def _type_error(exc: Any) -> str:
    """JMESPath's type-error message with the offending value cut short (it is the data, which
    can be the whole output) and escaped (``repr``: server text never drives the terminal)."""
    shown = repr(exc.current_value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return (f"In function {exc.function_name}(), invalid type for value: {shown}, expected one of: "
            f"{exc.expected_types}, received: \"{exc.actual_type}\"")
