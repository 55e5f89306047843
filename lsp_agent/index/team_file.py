"""Snapshot files: a snapshot's whole local index as one SQLite file in PostgreSQL, for laptops joining.

Copying a large tree's rows one by one costs about as much as parsing a good part of it. So the indexer also
stores the SQLite file of its local index with the snapshot (zstd-compressed, in parts of a few MB, written in one
transaction: a crashed indexer leaves no partial file), and a laptop whose local index is empty downloads it,
checks it (zstd's content checksum, its size and index schema), puts it in place of the empty index and keeps a
file's rows only when its path and content hash match the working copy: the refresh that follows parses the rest
and drops what the working copy lacks.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.index.db_lock import index_dir_lock, use_wal
from lsp_agent.index.lexical_state import chunk_postings
from lsp_agent.index.lexical_state import save as save_postings
from lsp_agent.index.models import IndexConfig
from lsp_agent.index.pipeline import PARALLEL_MIN_FILES, FileJob, Workers, parse_ahead
from lsp_agent.index.store import SCHEMA_VERSION, IndexStore
from lsp_agent.index.team_git import BLOB_TABLE, record_blobs, stored_blobs, vouched_files
from lsp_agent.index.team_identity import repo_and_head
from lsp_agent.index.team_transfer import SnapshotFileError, download, upload_file, zstd
from lsp_agent.index.tree_hashes import Candidate, seed_candidates, vouched_candidates
from lsp_agent.workspace.walk import WalkedFile

if TYPE_CHECKING:  # psycopg is imported only when a team index is used
    from lsp_agent.index.team_store import TeamStore

log = logging.getLogger(__name__)

FILES_KEPT = 3  # snapshot files kept per repository (each is about a third of its index's size)
MIN_MATCH = 0.5  # a snapshot file is used when at least this share of the working copy's files match it
# more files read than this (no git, likely): none are parsed during the download; run_jobs() takes parses made
# ahead only below its parallel batch size, so the two bounds are one
PARSE_AHEAD_MAX = PARALLEL_MIN_FILES


@dataclass(frozen=True)
class SnapshotFile:
    """The stored file of a snapshot: its id, commit, size uncompressed and the model of its vectors."""

    snapshot: int
    commit: str
    raw_bytes: int
    model: str | None


# --- the indexer ---------------------------------------------------------------------------------------------


def build_file(store: IndexStore, dest: Path, models: tuple[str | None, str | None], root: Path) -> None:
    """A copy of the local index of `root` fit to share: no sizes or mtimes, the blob ids of the files git
    reports unmodified, vectors under the team's model name only. `models`: (the local and the team's name)."""
    local_model, model = models
    dest.unlink(missing_ok=True)
    store.conn.execute("VACUUM INTO ?", (str(dest),))
    db = sqlite3.connect(str(dest), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("BEGIN")
        record_blobs(db, root)  # before sizes go: a file's stat must still be the one it was indexed with
        db.execute("UPDATE files SET size=-1, mtime_ns=0")  # never equal to a working copy's: hashes decide
        db.execute("DELETE FROM vectors WHERE model IS NOT ?", (local_model if model else None,))
        dropped = db.execute("SELECT changes()").fetchone()[0]
        db.execute("UPDATE vectors SET model=?", (model,))
        db.execute("COMMIT")
        if dropped:
            db.execute("VACUUM")
        db.execute("BEGIN")  # the BM25 build too: a first search on the laptop updates it instead of sorting
        save_postings(db, chunk_postings(db))
        db.execute("COMMIT")
    finally:
        db.close()


def publish_file(
    team: TeamStore, store: IndexStore, snapshot: int, models: tuple[str | None, str | None], root: Path
) -> bool:
    """build_file() and upload_file() for a snapshot (nothing without zstandard); whether a file was stored."""
    if zstd() is None:
        return False
    tmp = store.path.with_name(store.path.name + ".snapshot")
    try:
        build_file(store, tmp, models, root)
        stored = upload_file(team, snapshot, tmp, models[1])
    finally:
        tmp.unlink(missing_ok=True)
    prune_files(team, snapshot)
    return stored


def prune_files(team: TeamStore, snapshot: int, keep: int = FILES_KEPT) -> int:
    """Drop the files of all but the repository's `keep` newest snapshots that have one; returns how many.

    The snapshots themselves stay (their rows serve joins that copy rows); a laptop joins from the file of its
    HEAD's snapshot or, failing that, the repository's newest.
    """
    with team.errors():
        cur = team.conn.execute(
            "DELETE FROM lsp_snapshot_dbs WHERE snapshot_id IN (SELECT d.snapshot_id FROM lsp_snapshot_dbs d "
            "JOIN lsp_snapshots s ON s.id = d.snapshot_id WHERE s.repo = (SELECT repo FROM lsp_snapshots "
            "WHERE id=%s) ORDER BY s.created DESC, s.id DESC OFFSET %s)",
            (snapshot, keep),
        )
        return max(cur.rowcount, 0)


# --- the laptop ----------------------------------------------------------------------------------------------


def find_file(team: TeamStore, repo: str, head: str | None) -> SnapshotFile | None:
    """The snapshot file to start from: the one of HEAD's snapshot, else the repository's newest."""
    if zstd() is None:
        return None
    with team.errors():
        if not team.conn.execute("SELECT to_regclass('lsp_snapshot_dbs') IS NOT NULL").fetchone()[0]:  # type: ignore[index]
            return None
        row = team.conn.execute(
            "SELECT s.id, s.commit, d.raw_bytes, d.model FROM lsp_snapshots s "
            "JOIN lsp_snapshot_dbs d ON d.snapshot_id = s.id WHERE s.repo=%s AND s.complete AND d.schema=%s "
            "ORDER BY s.commit = %s DESC, s.created DESC, s.id DESC LIMIT 1",
            (repo, SCHEMA_VERSION, head or ""),
        ).fetchone()
    return SnapshotFile(*row) if row else None


def stored_hashes(path: Path) -> tuple[dict[str, str], dict[str, tuple[str, int]]]:
    """(path -> content hash of every file a downloaded snapshot file holds, path -> (git blob id, size) of
    those its indexer's git had unmodified); SnapshotFileError if it is unusable."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None or row[0] != SCHEMA_VERSION:
                raise SnapshotFileError(
                    f"snapshot file has index schema {row and row[0]}, not {SCHEMA_VERSION}"
                )
            db.execute("SELECT id, file_id, terms FROM chunks LIMIT 1").fetchall()
            return dict(db.execute("SELECT path, hash FROM files")), stored_blobs(db)
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise SnapshotFileError(f"snapshot file is not a usable index: {exc}") from None


def adopt(path: Path, stores: Sequence[IndexStore], lock: threading.RLock) -> bool:
    """Put the file at `path` in place of the (empty) database of `stores`, reopening them.

    False, with nothing changed, when another process has the database open (its WAL file outlives our close).
    The check and the swap hold the index's directory lock, so no process opens the old file in between.
    """
    target = stores[0].path
    wal = [target.with_name(target.name + suffix) for suffix in ("-wal", "-shm")]
    with lock:
        for store in stores:
            store.close()
        try:
            with index_dir_lock(target, exclusive=True):
                if any(p.exists() for p in wal):
                    return False
                # In WAL before it is the index: openers then only read the mode, never change it.
                with closing(sqlite3.connect(str(path), isolation_level=None)) as db:
                    use_wal(db)
                os.replace(path, target)
                return True
        finally:
            for store in stores:
                store._open()  # the same objects: their owners keep using them


def keep_matching(
    path: Path, candidates: list[Candidate], models: tuple[str | None, str | None], found: SnapshotFile
) -> None:
    """Give the files of a downloaded snapshot file whose path and hash match the working copy its size and
    mtime, before it is put in place (no journal: a failure leaves only a download to drop).

    The others keep size -1, so the refresh re-reads them. `models`: (our embedder's name, the team's name for
    it); the file's vectors are kept under our name when they are of the same model, else dropped.
    """
    local_model, model = models
    db = sqlite3.connect(str(path), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("BEGIN")
        db.execute(f"DROP TABLE IF EXISTS {BLOB_TABLE}")  # the publisher's, read by the join
        db.executemany(  # in path order: each lookup lands next to the last in the path index (~1/3 less CPU)
            "UPDATE files SET size=?, mtime_ns=? WHERE path=? AND hash=?",
            sorted(
                [(size, mtime, rel, digest) for rel, size, mtime, digest in candidates], key=itemgetter(2)
            ),
        )
        if local_model is not None and model is not None and found.model == model:
            db.execute("DELETE FROM vectors WHERE model IS NOT ?", (found.model,))
            db.execute("UPDATE vectors SET model=?", (local_model,))
        else:
            db.execute("DELETE FROM vectors")
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        raise SnapshotFileError(f"snapshot file {found.snapshot} could not be prepared: {exc}") from None
    finally:
        db.close()


def join_from_file(
    root: Path,
    config: IndexConfig,
    stores: tuple[IndexStore, IndexStore],
    connect: Callable[[], TeamStore],
    walked: list[WalkedFile],
    lock: threading.RLock,
    models: tuple[str | None, str | None],
    workers: Workers | None = None,
) -> tuple[list[Candidate], int | None]:
    """Find and download the tree's snapshot file while the tree is walked and hashed; put it in place of the
    empty index, its files that match the working copy marked so (keep_matching(), `models` its argument).
    The walk done first, the few files read (not vouched for by git) are analysed while the download goes on,
    for the refresh (`workers.ahead`): they are most likely the working copy's changes.

    Connecting (and importing the driver) happens in the download's thread too; git lists the files it
    vouches for in another (team_git.py), which are hashed only where the snapshot holds another blob. Returns
    (the walk's candidates, how many of them the adopted file holds; None when the rows must be copied
    instead: no file, a damaged file or one of another schema, too little of the tree matching it, or another
    process holding the index).
    A database failure raises TeamStoreError.
    """
    tmp = stores[0].path.with_name(stores[0].path.name + ".team")
    found: list[SnapshotFile] = []
    failed: list[BaseException] = []

    def fetch() -> None:
        try:
            team = connect()
            best = find_file(team, *repo_and_head(root))
            if best is not None:
                download(team, best.snapshot, best.raw_bytes, tmp)
                found.append(best)
        except SnapshotFileError as exc:
            log.warning("%s; copying the team's rows instead", exc)
        except BaseException as exc:  # raised again in the caller's thread
            failed.append(exc)

    reader = threading.Thread(target=fetch, name="lsp-agent-team-file", daemon=True)
    reader.start()
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="lsp-agent-git") as git:
            candidates, vouched = seed_candidates(
                root, config, stores[0], walked, git.submit(vouched_files, root)
            )
        if workers is not None and len(candidates) <= PARSE_AHEAD_MAX:
            jobs = [FileJob(rel, str(root / rel), size, mtime, None) for rel, size, mtime, _ in candidates]
            parse_ahead(jobs, reader, workers.ahead)
    finally:
        reader.join()
    try:
        if failed:
            raise failed[0]
        held = _held(tmp) if found else None
        candidates = _in_walk_order(walked, candidates + vouched_candidates(vouched, *(held or ({}, {}))))
        matched = _adopted(tmp, found[0], (held[0], models), candidates, stores, lock) if held else None
    finally:
        tmp.unlink(missing_ok=True)
    return candidates, matched


def _held(tmp: Path) -> tuple[dict[str, str], dict[str, tuple[str, int]]] | None:
    """stored_hashes() of a downloaded snapshot file; None (with a warning) when it is unusable."""
    try:
        return stored_hashes(tmp)
    except SnapshotFileError as exc:
        log.warning("%s; copying the team's rows instead", exc)
        return None


def _in_walk_order(walked: list[WalkedFile], candidates: list[Candidate]) -> list[Candidate]:
    """Candidates in the order the walk found them (files copied as rows get their ids in that order)."""
    order = {entry.rel: n for n, entry in enumerate(walked)}
    return sorted(candidates, key=lambda candidate: order[candidate[0]])


def _adopted(
    tmp: Path,
    found: SnapshotFile,
    held_and_models: tuple[dict[str, str], tuple[str | None, str | None]],
    candidates: list[Candidate],
    stores: tuple[IndexStore, IndexStore],
    lock: threading.RLock,
) -> int | None:
    """Check a downloaded snapshot file against the tree, mark its matching files and put it in place of the
    empty index; how many files match (None when it was not put in place). `held_and_models`: the file's
    path -> content hash, and keep_matching()'s models."""
    held, models = held_and_models
    matched = sum(held.get(rel) == digest for rel, _, _, digest in candidates)
    if not matched or matched < MIN_MATCH * len(candidates):
        log.info(
            "snapshot %s of %s matches %d of %d files: copying rows",
            found.snapshot,
            found.commit,
            matched,
            len(candidates),
        )
        return None
    try:
        keep_matching(tmp, candidates, models, found)
    except SnapshotFileError as exc:
        log.warning("%s; copying the team's rows instead", exc)
        return None
    if not adopt(tmp, stores, lock):
        log.info("another process has the local index open: copying the team's rows instead of its file")
        return None
    log.info(
        "joined from snapshot file of %s (snapshot %s): %d of %d files match",
        found.commit,
        found.snapshot,
        matched,
        len(candidates),
    )
    return matched
