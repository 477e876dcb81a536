"""Shared by transport's module tests: no proxy setting of the environment reaches them (a
proxy set on the machine would route the loopback requests elsewhere)."""

from __future__ import annotations

import pytest

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch):
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch
