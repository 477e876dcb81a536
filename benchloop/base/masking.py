"""Secrets masked in text and in JSON values: every occurrence replaced by ``***``.

This is the MCP server's masking (``mcp_server/budget.py``: ``mask``, ``mask_value``,
docs/mcp.md "The key is never shown"), here at the ground floor so that every layer can
use the one policy: the HTML report of ``bl compare`` (mailed around) masks the API key a
backend echoed inside an id exactly as an MCP tool's result does.  It is a literal
replacement, in strings and in object keys: a transform of the secret (reversed, sliced,
encoded) is not recognised.
"""

from __future__ import annotations

from typing import Any

MASK = "***"


def mask(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, MASK)
    return text


def mask_value(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` with every secret masked in its strings and object keys (a new value)."""
    if not secrets:
        return value
    if isinstance(value, str):
        return mask(value, secrets)
    if isinstance(value, list):
        return [mask_value(v, secrets) for v in value]
    if isinstance(value, dict):
        return {mask(str(k), secrets): mask_value(v, secrets) for k, v in value.items()}
    return value
