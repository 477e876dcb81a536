"""Secrets: what counts as one and how it is shown, one policy for every layer.

The config (``bl config show``, messages naming a host), the stderr log, the HTTP
client's error texts, ``ap-cmd``, the MCP server and the pages of ``bl compare`` and
``bl view`` all mask through this module, so a rule changes in one place.

What is a secret:

* the keys of a call: the API key of each service, the MCP server's HTTP token.
  ``known`` keeps those of ``MIN_KEY`` characters or more: masking a shorter one would
  garble ordinary text, and no real key is that short;
* the user info of a URL (``user:password@``): a user name can be a token too;
* a value whose name says it is one (``api_key``, ``*_password``, ``credentials``...),
  or that looks like a key (``sk-...``; 20+ characters mixing letters, digits and
  ``_-/+=``): ``is_sensitive``, ``looks_secret``.  A ``$VAR`` reference is not a secret
  (it is printed as written and never expanded).

How it is shown: ``***``.

* A known key, wherever it appears: in text (``scrub``), in the strings and object keys
  of a JSON value (``scrub_value``), in raw bytes (``scrub_bytes``: an error body before
  it is decoded), also in the forms an encoding gives it (``forms``: JSON-escaped, its
  control characters escaped), so a key with a quote, a backslash or a control character
  is never shown either.  The match is literal: a transform of the key (reversed, sliced,
  base64) is not recognised.
* A key shown to tell which one it is (``bl config show``): ``shown_key`` keeps its first
  2 and last 4 characters when it has 16 or more (so at most 6, never most of a key),
  else only ``***``.
* A URL: its whole user info as ``***@`` (``shown_url``).

One named variant, ``AP_CMD``: ``ap-cmd`` masks the secrets of the command it prints as
the official client did, for compatibility with what its users paste and compare: the
first 2 and last 4 characters of any value longer than 6 (``hunter22`` -> ``hu***er22``)
and only the password of a URL (``postgres://admin:***@db``).  It differs from the policy
in those two numbers and in keeping the user name; everything else is the same.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from .hiding import JSON_TEXT, LINE

if TYPE_CHECKING:
    from typing import Any

MASK = "***"
MIN_KEY = 4  # a key shorter than this is not looked for in text (it would garble it)


class Variant:
    """How much of a secret a masking shows.

    ``partial_from``: a secret of at least this many characters keeps its first 2 and last
    4 (a shorter one is only ``***``); ``keeps_url_user``: a URL keeps its user name and
    shows only its password as ``***`` (else the whole user info is ``***``).
    """

    __slots__ = ("keeps_url_user", "name", "partial_from")

    def __init__(self, name: str, partial_from: int, keeps_url_user: bool) -> None:
        self.name = name
        self.partial_from = partial_from
        self.keeps_url_user = keeps_url_user

    def __repr__(self) -> str:
        return f"<masking variant {self.name}>"


POLICY = Variant("bl", partial_from=16, keeps_url_user=False)
# ap-cmd's, as the official client printed its commands (README "Differences").
AP_CMD = Variant("ap-cmd", partial_from=7, keeps_url_user=True)


# ------------------------------------------------------------ what is a secret
def known(*keys: str | None) -> tuple[str, ...]:
    """The keys to look for in text: each given one of ``MIN_KEY`` characters or more, once."""
    return tuple(dict.fromkeys(k for k in keys if k and len(k) >= MIN_KEY))


SECRET_PREFIXES = ("ntn_", "sk-", "sk_", "AKIA", "ASIA", "AIza", "ghp_", "github_pat_", "GOCSPX-", "xoxb-")
SECRET_NAMES = {"api_key", "apikey", "secret", "password", "auth", "authorization", "credential", "credentials",
                "private_key", "client_secret"}
SECRET_SUFFIXES = ("_api_key", "_apikey", "_secret", "_password", "_credential", "_credentials", "_private_key",
                   "_client_secret")
SECRET_WORDS = {"secret", "password", "passwd"}  # anywhere in a name: aws_secret_access_key, db_password_2
# Patterns are compiled at their first use (``re``'s cache), not at every start: the log imports this.
_ENV_REF = r"^\$\w+$|^\$\{[^}]+\}$"


def is_env_ref(value: Any) -> bool:
    """``$VAR`` or ``${VAR}``: a reference, printed as written (never expanded, never masked)."""
    return isinstance(value, str) and bool(re.match(_ENV_REF, value))


def key_words(key: str) -> list[str]:
    """The words of a name: ``modelApiKey`` and ``model-api-key`` -> model, api, key."""
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key)
    return re.findall(r"[a-z0-9]+", snake.lower())


def looks_plain(value: Any) -> bool:
    """A number or a boolean (a ``*_token`` setting such as ``max_token`` is no secret)."""
    if isinstance(value, (bool, int, float)):
        return True
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        float(value.strip())
    except ValueError:
        return False
    return True


def looks_secret(value: Any) -> bool:
    """A known key prefix, or 20+ characters mixing letters, digits and one of ``_-/+=``."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if not text or is_env_ref(text):
        return False
    if text.startswith(SECRET_PREFIXES):
        return True
    return (len(text) >= 20 and bool(re.search(r"[A-Za-z]", text)) and bool(re.search(r"\d", text))
            and bool(re.search(r"[_\-/+=]", text)))


def is_sensitive(key: str, value: Any = None) -> bool:
    """Whether the value of a field named ``key`` is a secret."""
    lower = key.lower()
    words = key_words(key)
    if lower in SECRET_NAMES or lower.endswith(SECRET_SUFFIXES):
        return True
    if "credential" in words or "credentials" in words:
        return True
    if SECRET_WORDS.intersection(words):
        return not isinstance(value, (bool, int, float))
    if lower == "token" or lower.endswith("_token"):
        return not looks_plain(value)
    if "key" in words:
        return looks_secret(value)
    return False


# ----------------------------------------------------- a known key, wherever it is
_FORMS: dict[str, tuple[str, ...]] = {}


def forms(secret: str) -> tuple[str, ...]:
    """The ways ``secret`` can appear in text: as itself, JSON-escaped (ASCII or not), its
    control characters escaped (a stderr line, JSON text on a terminal); the longest first.
    Worked out once per secret (every progress line of a fan-out is scrubbed)."""
    known_forms = _FORMS.get(secret)
    if known_forms is not None:
        return known_forms
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    found = {secret, escaped, escaped.translate(LINE), escaped.translate(JSON_TEXT), json.dumps(secret)[1:-1],
             secret.translate(LINE)}
    found.discard("")
    # The secret itself first (it is what is there before any escaping), then the longer forms.
    known_forms = _FORMS[secret] = (secret, *sorted(found - {secret}, key=len, reverse=True))
    return known_forms


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every form of every secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            for form in forms(secret):
                if form in text:
                    text = text.replace(form, MASK)
    return text


def scrub_value(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` with every secret masked in its strings and object keys (a new value)."""
    if not secrets:
        return value
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, list):
        return [scrub_value(v, secrets) for v in value]
    if isinstance(value, dict):
        return {scrub(str(k), secrets): scrub_value(v, secrets) for k, v in value.items()}
    return value


def scrub_bytes(content: bytes, secrets: tuple[str, ...]) -> bytes:
    """``content`` (UTF-8, not decoded yet) with every form of every secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            for form in forms(secret):
                content = content.replace(form.encode("utf-8", "surrogatepass"), MASK.encode())
    return content


# ------------------------------------------------------------ a key, a URL shown
def shown_key(secret: str | None, variant: Variant = POLICY) -> str | None:
    """A key as shown to tell which one it is: ``ab***wxyz`` when long enough (``variant``),
    else ``***``; no key (None, '') stays as it is."""
    if not secret:
        return secret
    return f"{secret[:2]}{MASK}{secret[-4:]}" if len(secret) >= variant.partial_from else MASK


# scheme://USERINFO@ (or //USERINFO@): everything up to the last @ before the path.
_USERINFO = r"(?P<head>(?:\b[A-Za-z][A-Za-z0-9+.-]*:)?//)(?P<userinfo>[^/?#]*)@"
# scheme://user:PASSWORD@ - the password of a URL (a DSN such as postgres://u:p@h/db)
_PASSWORD = r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/?#@:\s]*:)(?P<password>[^/?#@\s]+)(?=@)"


def shown_url(text: str, variant: Variant = POLICY) -> str:
    """``text`` with the user info of every URL in it masked: the whole of it as ``***@``
    (``AP_CMD``: only the password, ``user:***@``)."""
    if variant.keeps_url_user:
        return re.sub(_PASSWORD, lambda m: m.group("head") + MASK, text)
    if "@" not in text:
        return text
    return re.sub(_USERINFO, lambda m: m.group("head") + MASK + "@", text)


# A base URL's scheme and the slashes after it (either way round; http: and https: without
# any), then its user info up to the last @ (or %40, or a fullwidth ＠: read as one by some
# URL readers) before the path.
_HEAD = r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*:[/\\]+|https?:)?"
_AT = r"(?:@|%40|\uff20)"
_BASE_USERINFO = re.compile(_HEAD + r"[^/?#]*" + _AT, re.IGNORECASE)  # the authority's user info
_ANY_USERINFO = re.compile(_HEAD + r".*" + _AT, re.IGNORECASE | re.DOTALL)  # up to any @ at all


def shown_base_url(value: str) -> str:
    """A backend base URL as messages and ``config show`` give it: its user info masked (all
    before the authority's last ``@``, ``%40`` or ``＠``), in any form a user may have typed
    (``u:p@host``, ``http:u:p@host``, ``http://u:p%40host``), valid or not.  An ``@`` only
    after a ``/`` masks all before it too (``http://u:pa/ss@host`` is user info to some
    readers): a path with an ``@`` is shown masked rather than a password shown."""
    def masked(match: re.Match[str]) -> str:
        return (match.group("head") or "") + MASK + "@"

    shown, found = _BASE_USERINFO.subn(masked, value, count=1)
    return shown if found else _ANY_USERINFO.sub(masked, value, count=1)
