"""A BM25 build kept in the index database, so a first search updates it instead of sorting every posting again.

The indexer stores its build in the snapshot file it publishes (team_file.build_file); a laptop that joins from
that file, or any index holding a stored build, reads it and applies the chunks added and removed since
(Postings.updated: the same arrays as a fresh build). Without a stored build, or with one too far behind (more
than STALE_SHARE of the chunks changed), the postings are built from the chunks as before.
"""

from __future__ import annotations

import logging
import sqlite3

import numpy as np

from lsp_agent.index.chunk_owners import ChunkOwners, chunk_owners
from lsp_agent.index.postings import Postings
from lsp_agent.index.store import SCHEMA_VERSION

log = logging.getLogger(__name__)

FORMAT = f"postings-1 schema-{SCHEMA_VERSION}"  # a stored build of another format or index schema is ignored
ARRAYS = {  # stored dtype of each array (Postings holds int64 for all but docs and tfs)
    "ids": np.int64,
    "lengths": np.int32,
    "terms": np.int64,
    "df": np.int32,
    "docs": np.int32,
    "tfs": np.uint16,
}
STALE_SHARE = 0.5  # beyond this share of chunks added or removed since the stored build, build afresh
BATCH = 500  # chunk ids per SELECT ... IN


def save(conn: sqlite3.Connection, postings: Postings) -> None:
    """Store a build in the database of `conn` (replacing any), within the caller's transaction if any."""
    conn.execute("CREATE TABLE IF NOT EXISTS lexical_state(name TEXT PRIMARY KEY, data BLOB NOT NULL)")
    conn.execute("DELETE FROM lexical_state")
    rows = [("format", FORMAT.encode())]
    rows += [(name, getattr(postings, name).astype(dtype).tobytes()) for name, dtype in ARRAYS.items()]
    conn.executemany("INSERT INTO lexical_state(name, data) VALUES(?, ?)", rows)


def load(conn: sqlite3.Connection) -> Postings | None:
    """The stored build, or None when there is none or it is of another format or inconsistent."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name='lexical_state'").fetchone():
        return None
    stored = dict(conn.execute("SELECT name, data FROM lexical_state"))
    if stored.get("format") != FORMAT.encode() or any(name not in stored for name in ARRAYS):
        return None
    arrays = {name: np.frombuffer(stored[name], dtype=dtype) for name, dtype in ARRAYS.items()}
    widened = {name: a.astype(np.int64) for name, a in arrays.items() if name in ("lengths", "df")}
    postings = Postings(**{**arrays, **widened})
    n, postings_count = len(postings.ids), len(postings.docs)
    consistent = (
        len(postings.lengths) == n
        and len(postings.df) == len(postings.terms)
        and len(postings.tfs) == postings_count == int(postings.df.sum())
        and (not postings_count or 0 <= int(postings.docs.min()) <= int(postings.docs.max()) < n)
        and bool(np.all(np.diff(postings.terms) > 0) and np.all(np.diff(postings.ids) > 0))
    )
    if not consistent:
        log.warning("the stored BM25 build of this index is inconsistent; building it afresh")
        return None
    return postings


def current_postings(conn: sqlite3.Connection) -> tuple[Postings, ChunkOwners]:
    """The postings of the index's chunks now (the stored build updated with the changes since, else a build),
    and every chunk's file, read in the same snapshot (the chunk-to-file map of the first search uses them)."""
    conn.execute("BEGIN")  # one read snapshot for the stored build, the ids and the added rows
    try:
        owners = chunk_owners(conn)
        stored = load(conn)
        if stored is not None:
            ids = owners.ids
            added = np.setdiff1d(ids, stored.ids, assume_unique=True)
            removed = len(stored.ids) - (len(ids) - len(added))
            if len(added) + removed <= STALE_SHARE * max(len(ids), 1):
                log.debug(
                    "BM25 from the stored build: %d chunks added and %d removed since", len(added), removed
                )
                return stored.updated(ids, _rows(conn, added.tolist())), owners
        return chunk_postings(conn), owners
    finally:
        conn.execute("COMMIT")


def chunk_postings(conn: sqlite3.Connection) -> Postings:
    """A build over every chunk of the database (the sort a stored build spares)."""
    rows = conn.execute("SELECT id, length, terms FROM chunks ORDER BY id").fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    lengths = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    return Postings.from_blobs(ids, lengths, [r[2] for r in rows])


def _rows(conn: sqlite3.Connection, ids: list[int]) -> list[tuple[int, int, bytes]]:
    """(id, length, packed terms) of chunks, by id."""
    rows: list[tuple[int, int, bytes]] = []
    for start in range(0, len(ids), BATCH):
        part = ids[start : start + BATCH]
        marks = ",".join("?" * len(part))
        rows += conn.execute(f"SELECT id, length, terms FROM chunks WHERE id IN ({marks})", part)
    rows.sort()
    return rows
