"""``--query``: a JMESPath expression applied to the whole output array, as the AWS CLI does.

With a query the output waits for every id (the expression sees the whole array).
"""

from __future__ import annotations

from typing import Any

from ...base.errors import UsageError


def compile_query(expression: str | None) -> Any:
    """The compiled expression (None without one); a usage error names what is wrong."""
    if not expression:
        return None
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise UsageError(f"invalid --query expression: {exc}") from None
