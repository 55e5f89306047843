"""Fixtures for sandbox tests: a small project with a failing test, a sandbox, its overlay.

Helpers the tests import live in sandbox_helpers.py (a module named `conftest` collides with other rooms').
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import CALC, TEST_CALC, copy_mode_isolation

from lsp_agent.sandbox.isolation import current_isolation
from lsp_agent.sandbox.session import Sandbox
from lsp_agent.workspace.overlay import Overlay


@pytest.fixture
def no_pytest_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest runs in the sandbox load no plugins: the tiny project needs none, and they start faster."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A tiny package whose test fails until add() is fixed."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    (root / "notes.txt").write_text("keep me\n")
    (root / ".gitignore").write_text("build/\n")
    return root


@pytest.fixture(params=["auto", "copy"])
def sandbox(request: pytest.FixtureRequest, project: Path) -> Iterator[Sandbox]:
    """A sandbox over `project`: the best mechanism here, and the plain-copy fallback."""
    isolation = current_isolation() if request.param == "auto" else copy_mode_isolation()
    box = Sandbox(project, isolation=isolation, memory_mib=512)
    yield box
    box.close()


@pytest.fixture
def overlay(project: Path) -> Overlay:
    """The run's overlay over `project`."""
    return Overlay(project)
