"""The OS keyring, through the ``keyring`` package (the ``keyring`` extra).

Only ``keys.py`` imports this module, and only when a key is to be read from or stored
in the keyring, so that ``bl`` without the extra works as long as no setting names the
keyring.  Every entry is under the service name ``benchloop-client``; the entry's name is
the value of ``api_key_keyring`` (``config set --api-key-keyring`` uses the profile's name).
"""

from __future__ import annotations

import keyring

SERVICE = "benchloop-client"


def get(name: str) -> str | None:
    return keyring.get_password(SERVICE, name)


def put(name: str, key: str) -> None:
    keyring.set_password(SERVICE, name, key)
