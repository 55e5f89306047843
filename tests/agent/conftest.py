"""Fixtures for agent tests: litellm imported once, a small workspace (helpers live in agent_support)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def _litellm_once(litellm_imported: None) -> None:
    """Every agent test goes through litellm: imported once per test process."""


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
