"""Fixtures for the index tests: a copy of a small real-looking project and an index over it."""

from __future__ import annotations

import shutil
import tempfile
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


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real PostgreSQL with pgvector (the pgserver wheel) for the session; its admin URL.

    Never skipped: a server that cannot start fails the tests that need it, loudly.
    """
    import pgserver
    import psycopg

    # As root pgserver runs PostgreSQL as its own user, which must reach the data folder (pytest's are 0700).
    data = Path(tempfile.mkdtemp(prefix="lsp-agent-pg-"))
    data.chmod(0o755)
    server = pgserver.get_server(data, cleanup_mode="stop")
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    yield url
    server.cleanup()
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: str, request: pytest.FixtureRequest) -> str:
    """A fresh database of its own for one test (with pgvector), as a postgresql:// URL."""
    import re

    import psycopg

    name = "t_" + re.sub(r"\W", "_", request.node.name.lower())[:50]
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return pg_server.replace("/postgres?", f"/{name}?", 1)
