"""A workspace's local index over the team index: seed it with the files the team already indexed, publish a tree.

Seeding reads and hashes the files of the tree that the local index lacks (or holds another version of); those
whose (path, content hash) the team index holds are copied from PostgreSQL with their chunks, symbols, term counts
and vectors, so only the files that differ (local changes, files nobody indexed) are parsed and embedded here.
Queries then run on the local index, which holds the team's rows for matching files and the working copy's rows
for the rest: the working copy wins, and rankings are the ones a local index of the same tree gives.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from lsp_agent.index.embeddings import Embedder
from lsp_agent.index.models import IndexConfig
from lsp_agent.index.pipeline import Workers
from lsp_agent.index.rows import FileRows
from lsp_agent.index.store import IndexStore
from lsp_agent.index.store_url import TeamStoreError, describe, is_team_url, redact
from lsp_agent.index.team_file import join_from_file, publish_file
from lsp_agent.index.team_identity import tree_identity
from lsp_agent.index.team_store import TeamStore, file_key
from lsp_agent.index.tree_hashes import seed_candidates
from lsp_agent.index.vector_cache import SharedVectors, cache_model_key
from lsp_agent.workspace.walk import WalkedFile

if TYPE_CHECKING:  # workspace_index imports this module
    from lsp_agent.index.workspace_index import WorkspaceIndex

log = logging.getLogger(__name__)

RETRY_SECONDS = 60  # an unreachable team index is tried again after this long (a timeout costs every refresh)
BULK_MIN_FILES = 500  # as WorkspaceIndex: a first load this large drops secondary indexes until the end
SEED_BATCH = 400  # files read from PostgreSQL per query: small enough that reading and writing overlap


@dataclass
class Published:
    """What `lsp-agent index --store` wrote: the snapshot and how much of it the team index already held."""

    repo: str
    commit: str
    snapshot: int
    files: int
    reused_files: int
    vectors: int = 0
    reused_vectors: int = 0
    file: bool = False  # whether this run stored the snapshot's SQLite file (team_file.py)


def model_key(embedder: Embedder | None, config: IndexConfig) -> str | None:
    """The team index's name for the embedding model (the same name behind another server is another model)."""
    return cache_model_key(embedder.name, config.api_base) if embedder is not None else None


def seed_from_team(
    root: Path,
    config: IndexConfig,
    stores: tuple[IndexStore, IndexStore],
    connect: Callable[[], TeamStore],
    embedder: Embedder | None,
    walked: list[WalkedFile],
    lock: threading.RLock,
    workers: Workers | None = None,
) -> int:
    """Bring the team's rows of every file of the tree it holds by content into the local index; returns how many.

    `stores`: the index's writer and reader (an empty index is replaced by a snapshot file, and both reopened
    under `lock`); otherwise the rows are copied file by file.
    """
    store = stores[0]
    model = model_key(embedder, config)
    vectors_of = embedder.name if embedder is not None and model is not None else None
    if not store.files():  # a first index: the snapshot's file, fetched while the tree is hashed
        models = (vectors_of, model)
        candidates, matched = join_from_file(root, config, stores, connect, walked, lock, models, workers)
        if matched is not None:
            return matched
    else:
        candidates, _ = seed_candidates(root, config, store, walked)
    team = connect()
    if not candidates:
        return 0
    fresh = not store.files()
    bulk = store.bulk_load() if fresh and len(candidates) >= BULK_MIN_FILES else nullcontext()
    with store.transaction(), bulk:
        if fresh and not store.files():
            return _copy_new(store, team, candidates, model, vectors_of)
        return _copy_changed(store, team, candidates, model, vectors_of)


def _copy_changed(
    store: IndexStore,
    team: TeamStore,
    candidates: list[tuple[str, int, int, str]],
    model: str | None,
    local: str | None,
) -> int:
    """Copy the team's rows of candidates into an index that may hold other versions of them (file by file)."""
    copied = 0
    for i in range(0, len(candidates), SEED_BATCH):
        part = candidates[i : i + SEED_BATCH]
        rows = team.file_rows([file_key(rel, digest) for rel, _, _, digest in part])
        hashes: list[str] = []
        for rel, size, mtime, digest in part:
            found = rows.get(file_key(rel, digest))
            if found is not None:
                store.replace_file(rel, size, mtime, digest, found)
                hashes.extend(chunk[7] for chunk in found.chunks)
                copied += 1
        if local is not None and model is not None and hashes:
            store.put_vectors(local, team.vectors(model, hashes).items())
    return copied


def _copy_new(
    store: IndexStore,
    team: TeamStore,
    candidates: list[tuple[str, int, int, str]],
    model: str | None,
    local: str | None,
) -> int:
    """Copy the team's rows of candidates into an index without them: rows go to the local tables as read, one
    executemany per table and batch, each batch read from PostgreSQL in a thread while the previous one is
    written (SQLite releases the GIL while it works). Ids are the ones replace_file() would give."""
    disk = {file_key(rel, digest): (rel, size, mtime, digest) for rel, size, mtime, digest in candidates}
    keys = list(disk)
    file_id = (store.conn.execute("SELECT MAX(id) FROM files").fetchone()[0] or 0) + 1
    chunk_id = store._new_chunk_id()  # the next free id (ids are never reused)

    def read(part: list[str], file_id: int, chunk_id: int) -> tuple[list, list, list, dict]:
        files, chunks, symbols = team.local_rows(part, file_id, chunk_id)
        wanted = [row[9] for row in chunks] if local is not None and model is not None else []
        return files, chunks, symbols, team.vectors(model, wanted) if wanted else {}  # type: ignore[arg-type]

    parts = [keys[i : i + SEED_BATCH] for i in range(0, len(keys), SEED_BATCH)]
    copied = 0
    with ThreadPoolExecutor(1, thread_name_prefix="lsp-agent-team-read") as pool:
        ahead = pool.submit(read, parts[0], file_id, chunk_id)
        for n in range(len(parts)):
            files, chunks, symbols, vectors = ahead.result()
            file_id, chunk_id = file_id + len(files), chunk_id + len(chunks)
            if n + 1 < len(parts):
                ahead = pool.submit(read, parts[n + 1], file_id, chunk_id)
            store.conn.executemany(
                "INSERT INTO files(id, path, size, mtime_ns, hash, language, identifiers) VALUES(?,?,?,?,?,?,?)",
                [(fid, *disk[key], language, identifiers) for fid, key, language, identifiers in files],
            )
            store.conn.executemany(
                "INSERT INTO chunks(id, file_id, start, end_line, symbol, kind, text, length, terms, hash) "
                "VALUES(?,?,?,?,?,?,?,?,?,?)",
                chunks,
            )
            store.conn.executemany(
                "INSERT INTO symbols(file_id, name, qualified_name, kind, line, end_line) VALUES(?,?,?,?,?,?)",
                symbols,
            )
            if vectors:
                store.put_vectors(local, vectors.items())  # type: ignore[arg-type]
            copied += len(files)
    store._next_chunk_id = chunk_id
    return copied


class TeamLink:
    """The team index a WorkspaceIndex seeds from; an unreachable database costs one warning, never the index."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = describe(url)  # user@host:port/db, for status lines
        self.status: str | None = None  # the last problem, for status lines
        self._team: TeamStore | None = None
        self._retry_at = 0.0  # after a failure, refreshes go on locally until then without trying again

    def connect(self) -> TeamStore:
        """The open connection (TeamStoreError when the database cannot be reached)."""
        if self._team is None or self._team.conn.closed:
            self._team = TeamStore(self.url)
        return self._team

    def seed(
        self,
        root: Path,
        config: IndexConfig,
        stores: tuple[IndexStore, IndexStore],
        embedder: Embedder | None,
        lock: threading.RLock,
        workers: Workers | None = None,
    ) -> tuple[int, list[WalkedFile] | None]:
        """seed_from_team(): (files copied, the files walked); on failure the local index goes on alone (0, None)
        and the reason is logged once. `workers`: the refresh's, whose `ahead` a join fills."""
        walked: list[WalkedFile] = []
        if time.monotonic() < self._retry_at:
            return 0, None
        try:
            copied = seed_from_team(root, config, stores, self.connect, embedder, walked, lock, workers)
        except TeamStoreError as exc:
            self.fail(str(exc))
            return 0, None
        except Exception as exc:  # a dropped connection mid-read: the local index must still serve
            self.fail(f"the team index at {describe(self.url)} failed: {redact(str(exc), self.url)}")
            return 0, None
        if self.status is not None:
            log.warning("team index at %s is reachable again", describe(self.url))
        self.status = None
        if copied:
            log.info("seeded %d files from the team index at %s", copied, describe(self.url))
        return copied, walked

    def fail(self, message: str) -> None:
        """Note a failure (logged once until the team index works again) and drop the connection."""
        if self.status is None:
            log.warning("%s; using the local index only", message)
        self.status = message
        self._retry_at = time.monotonic() + RETRY_SECONDS
        self.close()

    def close(self) -> None:
        """Close the connection, if any."""
        if self._team is not None:
            try:
                self._team.close()
            finally:
                self._team = None


def seed_team(
    link: TeamLink | None,
    root: Path,
    config: IndexConfig,
    stores: tuple[IndexStore, IndexStore],
    embedder: Embedder | None,
    lock: threading.RLock,
    workers: Workers | None = None,
) -> tuple[int, list[WalkedFile] | None]:
    """TeamLink.seed() when there is a team index: (files copied, the files walked); else (0, None)."""
    return link.seed(root, config, stores, embedder, lock, workers) if link is not None else (0, None)


def _local_rows(store: IndexStore, file_ids: list[int]) -> dict[int, FileRows]:
    """FileRows of local files by id, chunks in id order (the order they were written)."""
    out: dict[int, FileRows] = {}
    marks = ",".join("?" * len(file_ids))
    q = store.conn.execute
    for fid, language, identifiers in q(
        f"SELECT id, language, identifiers FROM files WHERE id IN ({marks})", file_ids
    ):
        out[fid] = FileRows(language, [], [], identifiers)
    for fid, *chunk in q(
        "SELECT file_id, start, end_line, symbol, kind, text, length, terms, hash FROM chunks "
        f"WHERE file_id IN ({marks}) ORDER BY id",
        file_ids,
    ):
        out[fid].chunks.append(tuple(chunk))  # type: ignore[arg-type]
    for fid, *symbol in q(
        "SELECT file_id, name, qualified_name, kind, line, end_line FROM symbols "
        f"WHERE file_id IN ({marks}) ORDER BY rowid",
        file_ids,
    ):
        out[fid].symbols.append(tuple(symbol))  # type: ignore[arg-type]
    return out


def publish(
    root: Path, store: IndexStore, team: TeamStore, embedder: Embedder | None, config: IndexConfig
) -> Published:
    """Write the local index of a tree to the team index as the snapshot of its commit, reusing what it holds."""
    team.create_schema()
    files = store.conn.execute("SELECT id, path, hash FROM files ORDER BY id").fetchall()
    keys = {path: file_key(path, digest) for _, path, digest in files}
    repo, commit = tree_identity(root, keys)
    snapshot = team.begin_snapshot(repo, commit)
    stored = team.stored_keys(list(keys.values()))
    missing = [(fid, path, digest) for fid, path, digest in files if keys[path] not in stored]
    for i in range(0, len(missing), 500):
        part = missing[i : i + 500]
        rows = _local_rows(store, [fid for fid, _, _ in part])
        team.put_files((keys[path], path, digest, rows[fid]) for fid, path, digest in part)
    done = Published(repo, commit, snapshot, len(files), len(files) - len(missing))
    model = model_key(embedder, config)
    if embedder is not None and model is not None:
        local = store.conn.execute(
            "SELECT DISTINCT v.hash FROM vectors v JOIN chunks c ON c.hash=v.hash WHERE v.model=?",
            (embedder.name,),
        ).fetchall()
        hashes = [h for (h,) in local]
        known = team.stored_vector_hashes(model, hashes)
        todo = [h for h in hashes if h not in known]
        team.put_vectors(model, store.vectors_for_hashes(embedder.name, todo).items())
        done.vectors, done.reused_vectors = len(hashes), len(known)
    done.snapshot = team.complete_snapshot(snapshot, repo, commit, sorted(keys.items()))
    local = embedder.name if embedder is not None and model is not None else None
    done.file = publish_file(team, store, done.snapshot, (local, model), root)
    return done


def team_link(store: str | None) -> TeamLink | None:
    """The TeamLink of an index store setting: None for the local SQLite index ("sqlite" or nothing)."""
    if not store or store.strip().lower() == "sqlite":
        return None
    if not is_team_url(store):
        raise ValueError(
            f"index store {redact(store)!r} is not a postgresql:// URL: pass one, or 'sqlite' for the local index"
        )
    return TeamLink(store.strip())


class TeamVectors:
    """The machine's vector cache with the team index behind it: a chunk anyone published is not embedded again.

    Reads only: vectors reach the team index when `lsp-agent index --store` publishes a tree, never from an
    editor's unsaved or uncommitted code.
    """

    def __init__(self, link: TeamLink, model: str, local: SharedVectors | None) -> None:
        self.link = link
        self.model = model
        self.local = local

    def get(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Known vectors by chunk hash: the machine's cache first, then the team index (copied into the cache)."""
        hashes = list(hashes)
        found = self.local.get(hashes) if self.local is not None else {}
        rest = [h for h in hashes if h not in found]
        if rest and self.link.status is None:
            try:
                more = self.link.connect().vectors(self.model, rest)
            except TeamStoreError as exc:
                self.link.fail(str(exc))
                more = {}
            if more and self.local is not None:
                self.local.put(more.items())
            found.update(more)
        return found

    def put(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Remember new vectors in the machine's cache."""
        if self.local is not None:
            self.local.put(items)

    def close(self) -> None:
        """Close the machine's cache (the link is closed by its owner)."""
        if self.local is not None:
            self.local.close()


def team_vectors(
    link: TeamLink | None, local: SharedVectors | None, embedder: Embedder | None, config: IndexConfig
) -> SharedVectors | TeamVectors | None:
    """The vector cache an index embeds through: the machine's, backed by the team index when there is one."""
    model = model_key(embedder, config)
    return local if link is None or model is None else TeamVectors(link, model, local)


def publish_index(index: WorkspaceIndex, team: TeamStore) -> Published:
    """publish() a refreshed WorkspaceIndex, holding its writer so no refresh or buffer update runs meanwhile."""
    with index._write_lock:
        return publish(index.root, index._writer, team, index._embedder, index.config)
