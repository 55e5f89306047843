"""Workspace index: tree-sitter chunks and symbols, BM25 (+ optional vectors) search, SQLite persistence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsp_agent.index.models import IndexConfig, IndexStats, SearchHit, SymbolHit

if TYPE_CHECKING:
    from lsp_agent.index.workspace_index import WorkspaceIndex

__all__ = ["IndexConfig", "IndexStats", "SearchHit", "SymbolHit", "WorkspaceIndex"]


def __getattr__(name: str) -> Any:
    """WorkspaceIndex on first use, so index worker processes do not import numpy and SQLite code."""
    if name == "WorkspaceIndex":
        from lsp_agent.index.workspace_index import WorkspaceIndex

        return WorkspaceIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
