"""Fixtures for agent tests: litellm imported once, a small workspace (helpers live in agent_support)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.agent.model import get_litellm


@pytest.fixture(scope="session", autouse=True)
def _litellm_once():
    """Import litellm once per test process."""
    get_litellm()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A tiny Python project."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text(
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    )
    (root / "README.md").write_text("# proj\nA calculator.\n")
    return root
