"""A keyring backend for the tests: entries in a JSON file (``FAKE_KEYRING_FILE``), never the OS's.

``keyring`` picks it in a child process from ``PYTHON_KEYRING_BACKEND=fake_keyring.FileKeyring``
(with tests/ on ``PYTHONPATH``); in this process ``keyring.set_keyring(FileKeyring())``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend


class FileKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    @property
    def path(self) -> Path:
        return Path(os.environ["FAKE_KEYRING_FILE"])

    def _entries(self) -> dict[str, str]:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._entries().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._entries()
        entries[f"{service}/{username}"] = password
        self.path.write_text(json.dumps(entries), encoding="utf-8")

    def delete_password(self, service: str, username: str) -> None:
        entries = self._entries()
        entries.pop(f"{service}/{username}", None)
        self.path.write_text(json.dumps(entries), encoding="utf-8")
