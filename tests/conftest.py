"""Shared pytest setup: no network, a private cache dir, litellm kept offline."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
for _var in (
    "LSP_AGENT_MODEL",
    "LSP_AGENT_API_BASE",
    "LSP_AGENT_API_KEY",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
):
    os.environ.pop(_var, None)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own XDG cache so index databases never leak between tests."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    monkeypatch.setenv(
        "XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config"))
    )  # remembered permissions
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))  # last proposal, spend


@pytest.fixture(scope="session")
def litellm_imported() -> None:
    """litellm imported once per test process, before the first test that needs it (a first import takes seconds)."""
    from lsp_agent.agent.model import get_litellm

    get_litellm()
