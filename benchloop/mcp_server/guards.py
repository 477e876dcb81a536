"""What stands before the MCP SDK on the wire: the bearer token of ``--http`` and deep JSON.

* **The token.**  ``bl mcp serve --http`` serves the operator's key to any
  process that can reach 127.0.0.1, so every HTTP request must carry
  ``Authorization: Bearer TOKEN``.  The token comes from ``BENCHLOOP_MCP_TOKEN``
  or is generated at start (256 random bits) and shown once on stderr; it is
  compared in constant time.  The SDK's Host/Origin checks (DNS rebinding)
  still run after this one.
* **Deep JSON.**  The SDK's JSON parser refuses a message nested more than
  about 200 levels and then drops it (stdio) or answers a bare parse error
  (HTTP), so the caller never learns which call failed or why.
  :func:`flatten_deep` replaces every array or object nested deeper than
  ``MESSAGE_DEPTH`` by ``null``: the message then parses, keeps its id and
  tool name, and the runner answers its call with a tool error ("nested too
  deeply"), since the arguments it sees are still far deeper than any tool
  accepts.

Nothing here imports the MCP SDK; ``server.py`` plugs these in.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets

TOKEN_ENV = "BENCHLOOP_MCP_TOKEN"
WEAK_TOKEN = 16  # a token given through the environment shorter than this gets a warning
# Arrays/objects deeper than this in one JSON-RPC message are replaced by null before parsing: deep enough
# for the envelope (message, params, arguments) and any real argument, far below the parser's limit.
MESSAGE_DEPTH = 64
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def flatten_deep(text: str, limit: int = MESSAGE_DEPTH) -> str:
    """``text`` (JSON) with every array or object opening below ``limit`` levels replaced by ``null``.

    Strings are skipped whole, so brackets inside them do not count.  Text
    that is not balanced JSON is returned unchanged (the parser will say what
    is wrong with it)."""
    depth, start, last, pieces = 0, -1, 0, []
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
            if depth == limit + 1:
                start = match.start()
        else:
            if depth == limit + 1 and start >= 0:
                pieces += [text[last:start], "null"]
                last, start = match.end(), -1
            depth -= 1
            if depth < 0:
                return text
    if depth or start >= 0:
        return text
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def maybe_deep(text: str | bytes, limit: int = MESSAGE_DEPTH) -> bool:
    """Cheap test: could ``text`` nest deeper than ``limit``? (more opening brackets than that)"""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{") > limit
    return text.count("[") + text.count("{") > limit


# ------------------------------------------------------------------- token
def server_token() -> tuple[str, bool]:
    """``(token, generated)``: ``BENCHLOOP_MCP_TOKEN`` if set, else a new random one."""
    given = os.environ.get(TOKEN_ENV, "").strip()
    if given:
        return given, False
    return secrets.token_urlsafe(32), True


def authorized(header: bytes | None, token: str) -> bool:
    """True when an ``Authorization`` header value carries ``Bearer <token>`` (constant-time)."""
    if not header:
        return False
    scheme, _, given = header.decode("latin-1").strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8", "replace"), token.encode("utf-8"))
