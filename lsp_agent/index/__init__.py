"""Workspace index: tree-sitter chunks and symbols, BM25 (+ optional vectors) search, SQLite persistence."""

from lsp_agent.index.models import IndexConfig, IndexStats, SearchHit, SymbolHit
from lsp_agent.index.workspace_index import WorkspaceIndex

__all__ = ["IndexConfig", "IndexStats", "SearchHit", "SymbolHit", "WorkspaceIndex"]
