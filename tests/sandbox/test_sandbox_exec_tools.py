"""The exec tools called directly: arguments, timeout cap, cwd, and the scratch copy's lifetime."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.tools.exec_tools import exec_tools, run_command, run_python
from lsp_agent.tools.registry import ToolContext, ToolError
from lsp_agent.workspace.overlay import Overlay


def context(project: Path, **settings: object) -> ToolContext:
    """A tool context over `project` with its own overlay."""
    return ToolContext(root=project, overlay=Overlay(project), settings=Settings(**settings))


def test_exec_tools_need_the_exec_permission() -> None:
    assert {t.name: t.permission for t in exec_tools()} == {
        "run_python": "exec",
        "run_command": "exec",
        "run_tests": "exec",
    }


def test_timeout_is_capped_by_the_setting(project: Path) -> None:
    ctx = context(project, exec_timeout=1.0)
    out = run_python(ctx, "import time\ntime.sleep(30)", timeout=600)
    assert "killed: wall-clock timeout of 1 s" in out
    with pytest.raises(ToolError, match="positive"):
        run_python(ctx, "print(1)", timeout=0)


def test_cwd_must_be_a_workspace_directory(project: Path) -> None:
    ctx = context(project)
    assert "calc.py" in run_command(ctx, ["ls"], cwd="pkg")
    with pytest.raises(ToolError, match="not a directory"):
        run_command(ctx, ["ls"], cwd="notes.txt")
    with pytest.raises(ValueError, match="outside|escape|leaves"):
        run_command(ctx, ["ls"], cwd="../..")


def test_scratch_copy_goes_away_with_the_run(project: Path) -> None:
    ctx = context(project)
    assert run_python(ctx, "print('hi')").startswith("exit status: 0")
    base = ctx.extras["sandbox"].scratch.base
    assert base.is_dir()
    del ctx
    gc.collect()
    assert not base.exists()
