"""The locate tool against a real WorkspaceIndex through the registry, and without an index."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.tools.registry import ToolContext
from lsp_agent.workspace.overlay import Overlay

TRACE = """greet crashes when USER is unset

Traceback (most recent call last):
  File "/home/me/ws/src/app.py", line 7, in greet
    return f"hello {name}"
"""


@pytest.fixture
def indexed(workspace: Path, tmp_path: Path):
    """A ToolContext whose index was refreshed over the workspace."""
    index = WorkspaceIndex(workspace, IndexConfig(), db_path=tmp_path / "index.db")
    index.refresh()
    yield ToolContext(root=workspace, overlay=Overlay(workspace), index=index)
    index.close()


def test_locate_lists_files_symbols_and_reasons(indexed, call) -> None:
    res = call(indexed, "locate", task=TRACE, limit="2")
    assert res.ok, res.output
    lines = res.output.splitlines()
    assert lines[1].startswith("1. src/app.py (score ")
    assert "greet (line 6)" in lines[2]
    assert "traceback line 7" in lines[3]
    assert not any(line.startswith("3.") for line in lines)


def test_locate_leaves_out_files_deleted_in_the_run(indexed, call) -> None:
    assert "src/pkg/util.py" in call(indexed, "locate", task="helper returning 42").output
    call(indexed, "delete_file", path="src/pkg/util.py")
    res = call(indexed, "locate", task="helper returning 42")
    assert "src/pkg/util.py" not in res.output.split("(ranked as indexed")[0]
    assert "changed in this run" not in res.output  # a deletion is not a change to re-rank


def test_locate_without_an_index_or_task_says_what_to_do(ctx, indexed, call) -> None:
    res = call(ctx, "locate", task="anything")
    assert not res.ok and "locate is unavailable: no workspace index is loaded" in res.output
    res = call(indexed, "locate", task="  ")
    assert not res.ok and "task is empty" in res.output
