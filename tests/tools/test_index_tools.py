"""search_code and find_symbol against a real WorkspaceIndex, and their behaviour without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.tools.registry import ToolContext
from lsp_agent.workspace.overlay import Overlay

try:
    from lsp_agent.index import IndexConfig, WorkspaceIndex
except ImportError:  # pragma: no cover - only while the index room has not landed
    WorkspaceIndex = None  # type: ignore[assignment,misc]

needs_index = pytest.mark.skipif(
    WorkspaceIndex is None, reason="lsp_agent.index.WorkspaceIndex not available yet"
)


@pytest.fixture
def indexed(workspace: Path, tmp_path: Path):
    """A ToolContext whose index was refreshed over the workspace."""
    index = WorkspaceIndex(workspace, IndexConfig(), db_path=tmp_path / "index.db")
    index.refresh()
    ctx = ToolContext(root=workspace, overlay=Overlay(workspace), index=index)
    yield ctx
    index.close()


def test_without_an_index_both_tools_say_so(ctx, call):
    for name, args in (("search_code", {"query": "greet"}), ("find_symbol", {"name": "greet"})):
        res = call(ctx, name, args)
        assert not res.ok
        assert f"{name} is unavailable: no workspace index is loaded" in res.output
        assert "search_text" in res.output


def test_search_code_returns_ranked_chunks_with_numbered_lines(indexed, call):
    res = call(indexed, "search_code", query="helper function returning 42", top_k="3")
    assert res.ok
    first = res.output.split("\n\n")[0]
    assert first.startswith("1. src/pkg/util.py:1-2")
    assert "1: def helper():" in first and "2:     return 42" in first


def test_search_code_sees_overlay_edits(indexed, call):
    call(
        indexed,
        "write_file",
        path="src/billing.py",
        content="def compute_invoice_total(items):\n    return 0\n",
    )
    call(indexed, "delete_file", path="src/pkg/util.py")
    res = call(indexed, "search_code", query="compute invoice total")
    assert res.ok and res.output.startswith("1. src/billing.py:1-2")
    assert "src/pkg/util.py" not in call(indexed, "search_code", query="helper 42").output


def test_search_code_validates_top_k(indexed, call):
    res = call(indexed, "search_code", query="greet", top_k=0)
    assert not res.ok and "'top_k' must be at least 1" in res.output


def test_find_symbol_lists_definitions_and_references(indexed, call):
    res = call(indexed, "find_symbol", name="greet")
    assert res.ok
    out = res.output
    assert out.startswith("Definitions of greet (1):\n  src/app.py:6-7 function greet")
    assert "References (" in out and "src/app.py:12:" in out
    missing = call(indexed, "find_symbol", name="no_such_symbol_anywhere")
    assert missing.ok and "No symbol named 'no_such_symbol_anywhere'" in missing.output


def test_find_symbol_follows_lines_moved_by_edits_in_the_run(indexed, call):
    call(
        indexed,
        "edit_file",
        path="src/app.py",
        old_text='"""The app."""\n',
        new_text='"""The app."""\n# one\n# two\n',
    )
    out = call(indexed, "find_symbol", name="greet").output
    assert "  src/app.py:8-9 function greet  [line as edited in this run]" in out
    assert "src/app.py:14: return greet(" in out
    call(
        indexed,
        "edit_file",
        path="src/app.py",
        old_text="        return greet(",
        new_text="        return salute(",
    )
    out = call(indexed, "find_symbol", name="greet").output
    assert "this line may have moved or gone" in out
    call(indexed, "delete_file", path="src/app.py")
    assert call(indexed, "find_symbol", name="greet").output.startswith("No symbol named 'greet'")
