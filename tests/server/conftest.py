"""Fixtures shared by the language-server tests."""

from __future__ import annotations

import pytest

from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest.fixture(scope="module")
def model():
    """One scripted model server per test module; each test queues its own replies."""
    with ScriptedModelServer([]) as server:
        yield server
