"""Opening an index whose file is not in WAL mode yet, while another connection writes it (db_lock.use_wal)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from lsp_agent.index import team_file
from lsp_agent.index.store import IndexStore

WAL_HEADER = (2, 2)  # bytes 18 and 19 of an SQLite file: the read and write versions, 2 in WAL mode


def rollback_journal_index(path: Path) -> None:
    """An index database of the current schema, left in rollback-journal mode (as a team file arrives)."""
    IndexStore(path).close()
    with sqlite3.connect(str(path), isolation_level=None) as db:
        assert db.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    assert not path.with_name(path.name + "-wal").exists()


def header_versions(path: Path) -> tuple[int, int]:
    """The file's read and write format versions."""
    head = path.read_bytes()[:20]
    return head[18], head[19]


def test_an_index_being_written_in_rollback_mode_is_opened_once_the_write_ends(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    rollback_journal_index(path)
    writer = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    # SQLite fails a journal-mode change against this write at once, busy timeout or not.
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT OR REPLACE INTO meta VALUES('written', 'yes')")
    threading.Timer(0.6, lambda: writer.execute("COMMIT")).start()
    started = time.monotonic()
    store = IndexStore(path)
    try:
        assert time.monotonic() - started >= 0.5  # it waited for the write instead of failing
        assert store.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert store.conn.execute("SELECT value FROM meta WHERE key='written'").fetchone() == ("yes",)
    finally:
        store.close()
        writer.close()


def test_a_joined_file_is_in_wal_mode_before_it_becomes_the_index(tmp_path: Path, monkeypatch) -> None:
    downloaded = tmp_path / "download.sqlite3"
    rollback_journal_index(downloaded)
    store = IndexStore(tmp_path / "index.sqlite3")
    seen: list[tuple[int, int]] = []
    replace = team_file.os.replace

    def check_then_replace(src: str, dst: str) -> None:
        seen.append(header_versions(Path(src)))
        replace(src, dst)

    monkeypatch.setattr(team_file.os, "replace", check_then_replace)
    try:
        assert team_file.adopt(downloaded, [store], threading.RLock())
        assert seen == [WAL_HEADER]  # so an opener after the swap only reads the mode, never switches it
        assert not downloaded.with_name(downloaded.name + "-wal").exists()
        assert store.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        store.close()
