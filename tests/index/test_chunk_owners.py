"""Every chunk's file read in one pass: the same as reading rows, also past SQLite's string limit."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.index.chunk_owners import chunk_owners, file_paths
from lsp_agent.index.lexical import LexicalIndex
from lsp_agent.index.lexical_state import chunk_postings, current_postings
from lsp_agent.index.locate import FileMap


def indexed(shop_repo: Path, tmp_path: Path) -> sqlite3.Connection:
    """A connection to a refreshed index of the shop repository with a file edited after (ids out of file order)."""
    db = tmp_path / "index.sqlite3"
    with WorkspaceIndex(shop_repo, IndexConfig(), db_path=db) as index:
        index.refresh()
        first = sorted(shop_repo.rglob("*.py"))[0]
        first.write_text(first.read_text() + "\n\ndef added_later():\n    return 1\n")
        index.refresh()
    return sqlite3.connect(db, isolation_level=None)


def test_owners_are_the_rows_of_the_chunks_table(shop_repo: Path, tmp_path: Path) -> None:
    conn = indexed(shop_repo, tmp_path)
    rows = sorted(conn.execute("SELECT id, file_id FROM chunks"))
    files = conn.execute("SELECT id, path FROM files ORDER BY id").fetchall()
    ids, paths = file_paths(conn)
    assert len(files) > 3 and list(zip(ids.tolist(), paths, strict=True)) == files
    owners = chunk_owners(conn)
    assert len(rows) > 5 and list(zip(owners.ids.tolist(), owners.files.tolist(), strict=True)) == rows
    assert owners.ids.dtype == owners.files.dtype == np.int64
    # Longer than every path, shorter than the lists: group_concat fails and rows are read instead.
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(len(p) for p in paths) + 1)
    with pytest.raises(sqlite3.DataError):
        conn.execute("SELECT group_concat(path) FROM files").fetchone()
    small = chunk_owners(conn)
    assert np.array_equal(small.ids, owners.ids) and np.array_equal(small.files, owners.files)
    small_ids, small_paths = file_paths(conn)
    assert list(zip(small_ids.tolist(), small_paths, strict=True)) == files


def test_no_chunks_no_owners(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "empty.sqlite3")
    conn.execute("CREATE TABLE chunks(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL)")
    owners = chunk_owners(conn)
    assert len(owners.ids) == len(owners.files) == 0


def test_the_file_map_from_the_owners_read_with_the_build_is_the_one_read_apart(
    shop_repo: Path, tmp_path: Path
) -> None:
    conn = indexed(shop_repo, tmp_path)
    postings, owners = current_postings(conn)
    lexical = LexicalIndex.from_postings(postings)
    assert np.array_equal(postings.ids, chunk_postings(conn).ids) and np.array_equal(postings.ids, owners.ids)
    given, read = FileMap(conn, lexical, owners), FileMap(conn, lexical)
    expected = conn.execute("SELECT id, path FROM files ORDER BY id").fetchall()
    assert [(int(i), p) for i, p in zip(given.file_ids, given.paths, strict=True)] == expected
    assert np.array_equal(given.file_ids, read.file_ids) and given.paths == read.paths
    assert np.array_equal(given.chunk_positions.ids, read.chunk_positions.ids)
    assert np.array_equal(given.chunk_positions.positions, read.chunk_positions.positions)
    assert np.array_equal(given.chunk_file, read.chunk_file) and given.position == read.position
    owner_of = dict(conn.execute("SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id"))
    assert {c: given.paths[given.chunk_positions[c]] for c in owner_of} == owner_of
