"""SQLite persistence of one workspace's index: files, chunks, symbols and embedding vectors."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lsp_agent.index.db_lock import index_dir_lock, use_wal
from lsp_agent.index.models import Chunk
from lsp_agent.index.rows import FileRows

log = logging.getLogger(__name__)

SCHEMA_VERSION = "8"  # bump when chunking or tokenization changes: the index is rebuilt
BULK_CACHE_KIB = -65536  # page cache while loading a first index (negative: KiB)
BINARY_LANGUAGE = "binary"  # files kept only so that refreshes skip them; never counted or searched
LONE_SURROGATE = re.compile("[\ud800-\udfff]")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL, language TEXT NOT NULL, identifiers BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, start INTEGER NOT NULL, end_line INTEGER NOT NULL,
    symbol TEXT, kind TEXT NOT NULL, text TEXT NOT NULL, length INTEGER NOT NULL, terms BLOB NOT NULL,
    hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE TABLE IF NOT EXISTS symbols(
    file_id INTEGER NOT NULL, name TEXT NOT NULL, qualified_name TEXT, kind TEXT NOT NULL,
    line INTEGER NOT NULL, end_line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS symbols_name ON symbols(name);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file_id);
CREATE TABLE IF NOT EXISTS vectors(model TEXT NOT NULL, hash TEXT NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY(model, hash));
"""


def storable(text: str | None) -> str | None:
    """Text SQLite can store: a lone surrogate (an editor buffer with a broken escape) becomes U+FFFD.

    SQLite takes UTF-8 only; one "\\ud800" would fail the whole transaction, and every later flush with it.
    """
    if text is None or text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub("\ufffd", text)
    return text


def cache_root() -> Path:
    """$XDG_CACHE_HOME/lsp-agent, else ~/.cache/lsp-agent."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lsp-agent"


def default_db_path(root: Path) -> Path:
    """Where a workspace's index is stored on disk: cache_root()/index/FOLDER-HASH_OF_ITS_PATH.sqlite3."""
    real = os.path.realpath(root)
    digest = hashlib.sha256(real.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(real).name) or "root"
    return cache_root() / "index" / f"{name}-{digest}.sqlite3"


@dataclass(frozen=True)
class FileRecord:
    """What the index remembers of a file on disk."""

    id: int
    path: str
    size: int
    mtime_ns: int
    hash: str


@dataclass(frozen=True)
class ChunkRow:
    """A stored chunk with its file path."""

    id: int
    path: str
    chunk: Chunk


class IndexStore:
    """The SQLite database; callers serialise access (WorkspaceIndex holds the locks)."""

    def __init__(self, db_path: Path) -> None:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.path = db_path
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):  # locked, read-only, disk full: not ours to fix
                raise
            # Not a database or malformed (a disk fault, a foreign file): it is only a cache, so start afresh.
            log.warning("index database %s is unreadable (%s); rebuilding it", db_path, exc)
            self.conn.close()
            for path in (
                db_path,
                db_path.with_name(db_path.name + "-wal"),
                db_path.with_name(db_path.name + "-shm"),
            ):
                path.unlink(missing_ok=True)
            self._open()

    def _open(self) -> None:
        """Connect and bring the schema up to date (wiping an index of another schema version)."""
        # Another process (the CLI next to the server) may hold the write lock for a while: wait, don't fail.
        with index_dir_lock(self.path):  # not while a joining laptop swaps the file in (team_file.adopt)
            self.conn = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=120
            )
            use_wal(self.conn)
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self._next_chunk_id: int | None = None
            row = self.conn.execute(
                "SELECT value FROM meta WHERE key='schema'"
                if self.conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone()
                else "SELECT NULL WHERE 0"
            ).fetchone()
        if row is None or row[0] != SCHEMA_VERSION:
            self.conn.execute(SCHEMA.split(";")[0])  # meta, so the check below can run in the transaction
            with self.transaction():
                row = self.conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                if row is None or row[0] != SCHEMA_VERSION:
                    for table in (
                        "files",
                        "chunks",
                        "symbols",
                        "vectors",
                        "terms",
                        "lexical_state",
                    ):  # terms: 5-6
                        self.conn.execute(f"DROP TABLE IF EXISTS {table}")
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            self.conn.execute(statement)
                    self.conn.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES('schema', ?)", (SCHEMA_VERSION,)
                    )

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception (so the database is never half-updated)."""
        self.conn.execute("BEGIN IMMEDIATE")
        # Another process may have written since our last transaction: re-check the cached counters.
        self._next_chunk_id = None
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            self._next_chunk_id = None
            raise
        if self._next_chunk_id is not None:
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES('last_chunk_id', ?)",
                (str(self._next_chunk_id - 1),),
            )
        self.conn.execute("COMMIT")

    @contextmanager
    def bulk_load(self) -> Iterator[None]:
        """Inside a transaction on an empty index: drop secondary indexes while loading, rebuild them after."""
        names = ("chunks_file", "symbols_name", "symbols_file")
        for name in names:
            self.conn.execute(f"DROP INDEX IF EXISTS {name}")
        cache_size = self.conn.execute("PRAGMA cache_size").fetchone()[0]
        self.conn.execute(f"PRAGMA cache_size={BULK_CACHE_KIB}")  # fewer pages spilled mid-transaction
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA cache_size={cache_size}")
        for statement in SCHEMA.split(";"):
            if "CREATE INDEX" in statement:
                self.conn.execute(statement)

    def files(self) -> dict[str, FileRecord]:
        """Every indexed file by relative path."""
        rows = self.conn.execute("SELECT id, path, size, mtime_ns, hash FROM files")
        return {r[1]: FileRecord(*r) for r in rows}

    def file(self, path: str) -> FileRecord | None:
        """One file's record."""
        r = self.conn.execute(
            "SELECT id, path, size, mtime_ns, hash FROM files WHERE path=?", (path,)
        ).fetchone()
        return FileRecord(*r) if r else None

    def touch(self, file_id: int, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a file whose content did not change."""
        self.conn.execute("UPDATE files SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, file_id))

    def chunk_ids(self, file_id: int) -> list[int]:
        """Ids of a file's chunks."""
        return [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE file_id=?", (file_id,))]

    def delete_file(self, file_id: int) -> list[int]:
        """Remove a file with its chunks and definitions; returns the removed chunk ids."""
        ids = self.chunk_ids(file_id)
        self.conn.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))
        self.conn.execute("DELETE FROM symbols WHERE file_id=?", (file_id,))
        self.conn.execute("DELETE FROM files WHERE id=?", (file_id,))
        return ids

    def replace_file(
        self, path: str, size: int, mtime_ns: int, digest: str, rows: FileRows, new: bool = False
    ) -> tuple[list[int], list[tuple[int, str, bytes]]]:
        """Store a file's new analysis; returns (removed chunk ids, [(new id, chunk hash, packed terms)]).

        Chunks whose text did not change keep their rows (only their line numbers are updated) and symbols are
        diffed, so an edit rewrites what it touched, not the whole file. `new`: the caller knows the path is not
        stored yet (a first index), so it is not looked up.
        """
        old = None if new else self.file(path)
        if old is not None:
            self.conn.execute(
                "UPDATE files SET size=?, mtime_ns=?, hash=?, language=?, identifiers=? WHERE id=?",
                (size, mtime_ns, digest, rows.language, rows.identifiers, old.id),
            )
            file_id = old.id
            existing: dict[str, list[tuple[int, int, int]]] = {}
            for chunk_id, h, start, end in self.conn.execute(
                "SELECT id, hash, start, end_line FROM chunks WHERE file_id=?", (file_id,)
            ):
                existing.setdefault(h, []).append((chunk_id, start, end))
        else:
            cur = self.conn.execute(
                "INSERT INTO files(path, size, mtime_ns, hash, language, identifiers) VALUES(?,?,?,?,?,?)",
                (path, size, mtime_ns, digest, rows.language, rows.identifiers),
            )
            file_id = int(cur.lastrowid)
            existing = {}
        added: list[tuple[int, str, bytes]] = []
        inserts = []
        moved = []
        for start, end, symbol, kind, text, length, blob, h in rows.chunks:
            same = existing.get(h)
            if same:
                chunk_id, old_start, old_end = same.pop()
                if (old_start, old_end) != (start, end):
                    moved.append((start, end, chunk_id))
                continue
            chunk_id = self._new_chunk_id()
            inserts.append(
                (chunk_id, file_id, start, end, storable(symbol), kind, storable(text), length, blob, h)
            )
            added.append((chunk_id, h, blob))
        removed = [chunk_id for left in existing.values() for chunk_id, _, _ in left]
        if removed:
            self.conn.executemany("DELETE FROM chunks WHERE id=?", [(i,) for i in removed])
        if moved:
            self.conn.executemany("UPDATE chunks SET start=?, end_line=? WHERE id=?", moved)
        self.conn.executemany(
            "INSERT INTO chunks(id, file_id, start, end_line, symbol, kind, text, length, terms, hash) "
            "VALUES(?,?,?,?,?,?,?,?,?,?)",
            inserts,
        )
        self._replace_symbols(file_id, rows.symbols, diff=old is not None)
        return removed, added

    def _replace_symbols(self, file_id: int, new: list[tuple], diff: bool) -> None:
        """Write a file's symbols, deleting and inserting only the rows that differ from the stored ones."""
        new = [(storable(name), storable(qualified), *rest) for name, qualified, *rest in new]
        if diff:
            stored: dict[tuple, list[int]] = {}
            for rowid, *values in self.conn.execute(
                "SELECT rowid, name, qualified_name, kind, line, end_line FROM symbols WHERE file_id=?",
                (file_id,),
            ):
                stored.setdefault(tuple(values), []).append(rowid)
            fresh = []
            for row in new:
                ids = stored.get(row)
                if ids:
                    ids.pop()
                else:
                    fresh.append(row)
            gone = [(rowid,) for ids in stored.values() for rowid in ids]
            if gone:
                self.conn.executemany("DELETE FROM symbols WHERE rowid=?", gone)
            new = fresh
        self.conn.executemany(
            "INSERT INTO symbols(file_id, name, qualified_name, kind, line, end_line) VALUES(?,?,?,?,?,?)",
            [(file_id, *row) for row in new],
        )

    def _new_chunk_id(self) -> int:
        """Chunk ids are assigned here (never reused) so a file's chunks go in with one executemany."""
        if self._next_chunk_id is None:
            row = self.conn.execute("SELECT MAX(id) FROM chunks").fetchone()
            seq = self.conn.execute("SELECT value FROM meta WHERE key='last_chunk_id'").fetchone()
            self._next_chunk_id = max(row[0] or 0, int(seq[0]) if seq else 0) + 1
        chunk_id = self._next_chunk_id
        self._next_chunk_id += 1
        return chunk_id

    def chunks_by_id(self, ids: Iterable[int]) -> dict[int, ChunkRow]:
        """Stored chunks with their paths."""
        ids = list(ids)
        out: dict[int, ChunkRow] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            rows = self.conn.execute(
                "SELECT c.id, f.path, c.start, c.end_line, c.symbol, c.kind, c.text FROM chunks c "
                f"JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
                part,
            )
            for r in rows:
                out[r[0]] = ChunkRow(r[0], r[1], Chunk(r[2], r[3], r[4], r[5], r[6]))
        return out

    def file_identifiers(self) -> list[tuple[str, bytes]]:
        """(path, tokens.identifier_counts() blob) of every indexed text file, by path."""
        rows = self.conn.execute(
            "SELECT path, identifiers FROM files WHERE language != ? ORDER BY path", (BINARY_LANGUAGE,)
        )
        return rows.fetchall()

    def chunk_ids_for_path(self, path: str) -> list[int]:
        """Chunk ids of one file by relative path."""
        rows = self.conn.execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.id=c.file_id WHERE f.path=?", (path,)
        )
        return [r[0] for r in rows]

    def counts(self) -> tuple[int, int, int]:
        """(files, chunks, symbols)."""
        q = self.conn.execute
        return (
            q("SELECT COUNT(*) FROM files WHERE language != ?", (BINARY_LANGUAGE,)).fetchone()[0],
            q("SELECT COUNT(*) FROM chunks").fetchone()[0],
            q("SELECT COUNT(*) FROM symbols").fetchone()[0],
        )

    # --- vectors -------------------------------------------------------------------------------------------

    def missing_vectors(self, model: str) -> list[tuple[str, str, str | None, str]]:
        """(hash, path, symbol, text) of chunks without a vector for this model, one per distinct hash."""
        rows = self.conn.execute(
            "SELECT c.hash, f.path, c.symbol, c.text FROM chunks c JOIN files f ON f.id=c.file_id "
            "WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model=? AND v.hash=c.hash) GROUP BY c.hash",
            (model,),
        )
        return list(rows)

    def put_vectors(self, model: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Store vectors by chunk hash."""
        self.conn.executemany(
            "INSERT OR REPLACE INTO vectors(model, hash, vec) VALUES(?,?,?)",
            [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items],
        )

    def vectors_for_hashes(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Known vectors by chunk hash."""
        hashes = list(hashes)
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            marks = ",".join("?" * len(part))
            rows = self.conn.execute(
                f"SELECT hash, vec FROM vectors WHERE model=? AND hash IN ({marks})", [model, *part]
            )
            for h, blob in rows:
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def chunk_vectors(self, model: str) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, matrix) of every chunk that has a vector."""
        rows = self.conn.execute(
            "SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.model=? AND v.hash=c.hash ORDER BY c.id",
            (model,),
        ).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        return ids, matrix

    def prune_vectors(self) -> None:
        """Drop vectors no chunk uses any more."""
        self.conn.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT hash FROM chunks)")
