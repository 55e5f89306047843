"""Fixtures for the tool tests: a small workspace, a ToolContext over it and a helper that runs one call."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from lsp_agent.tools.registry import ToolContext, ToolLimits, ToolResult, default_registry
from lsp_agent.workspace.overlay import Overlay

APP_PY = '''"""The app."""

import os


def greet(name):
    return f"hello {name}"


class Greeter:
    def run(self):
        return greet(os.environ.get("USER", "you"))
'''


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with source, docs, an ignored build dir and a hidden dir."""
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP_PY)
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "src" / "pkg" / "util.py").write_text("def helper():\n    return 42\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# Guide\n\nCall greet to say hello.\n")
    (root / "README.md").write_text("Hello project\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("greet = 1\n")
    (root / "debug.log").write_text("hello from the log\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "secret.py").write_text("greet = 2\n")
    return root


@pytest.fixture
def make_ctx(workspace: Path) -> Callable[..., ToolContext]:
    """Build a ToolContext over the workspace with optional limits."""

    def make(root: Path | None = None, **limits: int) -> ToolContext:
        base = root or workspace
        return ToolContext(root=base, overlay=Overlay(base), limits=ToolLimits(**limits))

    return make


@pytest.fixture
def ctx(make_ctx: Callable[..., ToolContext]) -> ToolContext:
    return make_ctx()


@pytest.fixture
def call() -> Callable[..., ToolResult]:
    """Run one tool call through the real registry (validation, worker thread, error handling)."""
    registry = default_registry()

    def run(
        ctx: ToolContext, name: str, arguments: dict | str | None = None, /, **kwargs: object
    ) -> ToolResult:
        args = arguments if arguments is not None else kwargs
        return asyncio.run(registry.execute(name, args, ctx))

    return run
