"""Embedding vectors shared by every index on this machine, so unchanged chunks are never embedded twice.

A workspace's own database keeps only the vectors of the chunks it holds now (refresh prunes the rest). This
cache outlives that: switching branches back and forth, a second worktree or clone of the same repository, or an
older release next to a newer one finds its unchanged chunks' vectors here instead of running the model again.
Keys are the embedding model (with its API base and the embedded text's format version) and the chunk hash,
which covers the chunk's path, symbol and text: exactly what gets embedded. Least recently used vectors are
dropped once the file outgrows its byte budget.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from lsp_agent.index.embeddings import EMBEDDING_TEXT_VERSION, Embedder, make_embedder
from lsp_agent.index.models import IndexConfig
from lsp_agent.index.store import cache_root

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB: about 700k MiniLM vectors, a dozen repositories the size of Django
EVICT_TO = 0.9  # an over-budget cache is trimmed to this share of its budget, so trimming is rare
SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors(id INTEGER PRIMARY KEY, model TEXT NOT NULL, hash TEXT NOT NULL,
    vec BLOB NOT NULL, used INTEGER NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS vectors_key ON vectors(model, hash);
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
"""


def cache_model_key(model: str, api_base: str | None) -> str:
    """The cache's name for an embedding model: the same model name behind another server is another model."""
    return f"{model}|{api_base or ''}|text-v{EMBEDDING_TEXT_VERSION}"


class VectorCache:
    """A SQLite file of (model, chunk hash) -> vector, safe to share between processes and threads."""

    def __init__(self, path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        # Another process (a second workspace, the CLI next to the server) may be writing: wait, don't fail.
        self._conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=60)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(SCHEMA)
        except sqlite3.Error:
            self._conn.close()
            raise

    def get(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Cached vectors by chunk hash (marked as used now, so they are evicted last)."""
        hashes = list(hashes)
        out: dict[str, np.ndarray] = {}
        now = time.time_ns()
        with self._lock:
            for i in range(0, len(hashes), 500):
                part = hashes[i : i + 500]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT hash, vec FROM vectors WHERE model=? AND hash IN ({marks})", [model, *part]
                ).fetchall()
                for h, blob in rows:
                    out[h] = np.frombuffer(blob, dtype=np.float32)
            if out:
                with self._transaction():
                    self._conn.executemany(
                        "UPDATE vectors SET used=? WHERE model=? AND hash=?", [(now, model, h) for h in out]
                    )
        return out

    def put(self, model: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Remember vectors by chunk hash, then trim the least recently used ones when over budget."""
        now = time.time_ns()
        rows = [(model, h, np.asarray(v, dtype=np.float32).tobytes(), now) for h, v in items]
        if not rows:
            return
        with self._lock, self._transaction():
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors(model, hash, vec, used) VALUES(?,?,?,?)", rows
            )
            self._trim()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One write transaction (hold the lock): a batch of rows costs one commit, not one each."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _trim(self) -> None:
        """Drop the least recently used vectors until the cache fits EVICT_TO of its budget (hold the lock)."""
        count, size = self._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(length(vec)), 0) FROM vectors"
        ).fetchone()
        if size <= self.max_bytes or not count:
            return
        excess = size - int(self.max_bytes * EVICT_TO)
        drop = min(count, -(-excess * count // size))  # rows of the average size that free the excess
        self._conn.execute(
            "DELETE FROM vectors WHERE id IN (SELECT id FROM vectors ORDER BY used, id LIMIT ?)", (drop,)
        )
        log.info(
            "embedding cache %s over %d bytes: dropped %d least recently used vectors", self.path, size, drop
        )

    def stats(self) -> tuple[int, int]:
        """(vectors, bytes of vector data) held."""
        with self._lock:
            count, size = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(length(vec)), 0) FROM vectors"
            ).fetchone()
        return int(count), int(size)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


def open_vector_cache(path: Path) -> VectorCache | None:
    """The shared cache at `path`, or None (with a warning) when it cannot be opened: it only saves work.

    A file that is not a database (a disk fault, a foreign file) is replaced by an empty cache.
    """
    try:
        return VectorCache(path)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError):  # locked, read-only, disk full: not ours to fix
            log.warning("embedding cache %s unusable (%s); embedding without it", path, exc)
            return None
        log.warning("embedding cache %s is unreadable (%s); starting it afresh", path, exc)
        for stale in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            stale.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("embedding cache %s unusable (%s); embedding without it", path, exc)
        return None
    try:
        return VectorCache(path)
    except (OSError, sqlite3.Error) as exc:
        log.warning("embedding cache %s unusable (%s); embedding without it", path, exc)
        return None


class SharedVectors:
    """One index's view of the shared cache: its model's vectors, opened at first use. A failing cache is
    switched off (with a warning), never fatal: it only saves work."""

    def __init__(self, path: Path, model_key: str) -> None:
        self.path = path
        self.model_key = model_key
        self._cache: VectorCache | None = None
        self._off = False

    def _open(self) -> VectorCache | None:
        if self._cache is None and not self._off:
            self._cache = open_vector_cache(self.path)
            self._off = self._cache is None
        return self._cache

    def get(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Cached vectors of this model by chunk hash ({} when the cache fails)."""
        cache = self._open()
        if cache is None:
            return {}
        try:
            return cache.get(self.model_key, hashes)
        except sqlite3.Error as exc:
            self._give_up(exc)
            return {}

    def put(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Remember this model's vectors (a failure only costs later reuse)."""
        cache = self._open()
        if cache is None:
            return
        try:
            cache.put(self.model_key, items)
        except sqlite3.Error as exc:
            self._give_up(exc)

    def _give_up(self, exc: sqlite3.Error) -> None:
        log.warning("embedding cache %s failed (%s); embedding without it", self.path, exc)
        self.close()
        self._off = True

    def close(self) -> None:
        """Close the cache's connection (it reopens at the next use)."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None


def embedding_backend(config: IndexConfig) -> tuple[Embedder | None, SharedVectors | None]:
    """The embedding model the config names and its view of the machine-wide vector cache; (None, None) for none."""
    embedder = make_embedder(config.embeddings, config.api_base, config.api_key)
    if embedder is None:
        return None, None
    path = config.embedding_cache or cache_root() / "embeddings.sqlite3"
    return embedder, SharedVectors(path, cache_model_key(embedder.name, config.api_base))
