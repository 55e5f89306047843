"""Fixtures for the index tests: a copy of a small real-looking project and an index over it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex, languages

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def shop_repo(tmp_path: Path) -> Path:
    """A writable copy of tests/index/fixtures/shop."""
    dest = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", dest)
    return dest


@pytest.fixture
def shop_index(shop_repo: Path) -> Iterator[WorkspaceIndex]:
    """The shop, indexed."""
    index = WorkspaceIndex(shop_repo, IndexConfig())
    index.refresh()
    yield index
    index.close()


@pytest.fixture
def query_dir(tmp_path: Path, monkeypatch) -> Iterator[Path]:
    """A private queries/ folder; the language caches are cleared before and after."""
    caches = (
        languages.language_specs,
        languages._extension_map,
        languages._detectors,
        languages.load_language,
        languages.full_query,
    )
    monkeypatch.setattr(languages, "QUERY_DIR", tmp_path)
    for cache in caches:
        cache.cache_clear()
    yield tmp_path
    monkeypatch.undo()
    for cache in caches:
        cache.cache_clear()
