"""The team index in PostgreSQL: files by content, their chunks, symbols and term counts, pgvector vectors, snapshots.

Everything is content-addressed: a file's rows are keyed by `file_key` (the index schema version, the path and the
content hash: the chunks' hashes cover the path), so another branch or commit reuses every unchanged file, and
vectors are keyed by (model, chunk hash). Writers insert with ON CONFLICT DO NOTHING, a file with its chunks and
symbols in one transaction, so concurrent indexers never write a row twice and a crash leaves only whole files.
A snapshot (repository, commit) lists its files and is marked complete in the transaction that lists them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from lsp_agent.index.rows import FileRows, text_hash
from lsp_agent.index.store import SCHEMA_VERSION, storable
from lsp_agent.index.store_url import TeamStoreError, describe, redact

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 5  # seconds, unless the URL says otherwise: an unreachable server must not block an editor
BATCH = 2000
SCHEMA = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE IF NOT EXISTS lsp_files(key text PRIMARY KEY, path text NOT NULL, hash text NOT NULL,
    language text NOT NULL, identifiers bytea NOT NULL);
CREATE TABLE IF NOT EXISTS lsp_chunks(file_key text NOT NULL REFERENCES lsp_files ON DELETE CASCADE,
    ord int NOT NULL, start_line int NOT NULL, end_line int NOT NULL, symbol text, kind text NOT NULL,
    text text NOT NULL, length int NOT NULL, terms bytea NOT NULL, hash text NOT NULL,
    PRIMARY KEY(file_key, ord));
CREATE INDEX IF NOT EXISTS lsp_chunks_hash ON lsp_chunks(hash);
CREATE TABLE IF NOT EXISTS lsp_symbols(file_key text NOT NULL REFERENCES lsp_files ON DELETE CASCADE,
    ord int NOT NULL, name text NOT NULL, qualified_name text, kind text NOT NULL, line int NOT NULL,
    end_line int NOT NULL, PRIMARY KEY(file_key, ord));
CREATE INDEX IF NOT EXISTS lsp_symbols_name ON lsp_symbols(name);
CREATE TABLE IF NOT EXISTS lsp_vectors(model text NOT NULL, hash text NOT NULL, dim int NOT NULL,
    vec vector NOT NULL, PRIMARY KEY(model, hash));
CREATE TABLE IF NOT EXISTS lsp_snapshots(id bigserial PRIMARY KEY, repo text NOT NULL, commit text NOT NULL,
    files int NOT NULL DEFAULT 0, complete boolean NOT NULL DEFAULT false,
    created timestamptz NOT NULL DEFAULT now());
CREATE UNIQUE INDEX IF NOT EXISTS lsp_snapshots_key ON lsp_snapshots(repo, commit) WHERE complete;
CREATE TABLE IF NOT EXISTS lsp_snapshot_files(
    snapshot_id bigint NOT NULL REFERENCES lsp_snapshots ON DELETE CASCADE, path text NOT NULL,
    file_key text NOT NULL REFERENCES lsp_files, PRIMARY KEY(snapshot_id, path));
CREATE TABLE IF NOT EXISTS lsp_snapshot_dbs(snapshot_id bigint PRIMARY KEY REFERENCES lsp_snapshots
    ON DELETE CASCADE, schema text NOT NULL, model text, raw_bytes bigint NOT NULL);
CREATE TABLE IF NOT EXISTS lsp_snapshot_parts(snapshot_id bigint NOT NULL REFERENCES lsp_snapshot_dbs
    ON DELETE CASCADE, part int NOT NULL, data bytea NOT NULL, PRIMARY KEY(snapshot_id, part))
"""
# Parts are zstd already: no second compression by TOAST. Only when needed (ALTER needs the table's owner).
STORAGE = (
    "DO $$ BEGIN IF (SELECT attstorage FROM pg_attribute WHERE attrelid = 'lsp_snapshot_parts'::regclass "
    "AND attname = 'data') <> 'e' THEN ALTER TABLE lsp_snapshot_parts ALTER COLUMN data SET STORAGE EXTERNAL; "
    "END IF; END $$"
)
HNSW = (
    "CREATE INDEX IF NOT EXISTS lsp_vectors_hnsw_{dim} ON lsp_vectors "
    "USING hnsw ((vec::vector({dim})) vector_cosine_ops) WHERE dim = {dim}"
)
SchemaLock = 7_324_001  # advisory lock id serialising schema creation between indexers


def pg_text(text: str | None) -> str | None:
    """Text PostgreSQL stores: no NUL characters, no lone surrogates (each becomes U+FFFD)."""
    text = storable(text)
    return text.replace("\0", "\ufffd") if text and "\0" in text else text


def file_key(path: str, content_hash: str) -> str:
    """A file's key in the team index: its rows depend on the chunker's version, its path and its content."""
    return text_hash(f"v{SCHEMA_VERSION}\0{path}\0{content_hash}")


@dataclass(frozen=True)
class Snapshot:
    """A complete snapshot of a tree: repository, commit and how many files it lists."""

    id: int
    repo: str
    commit: str
    files: int


def _friendly(exc: Exception, url: str) -> str:
    """A one-line, password-free message for a driver error, with what to do for the common ones."""
    import psycopg

    detail = redact(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, url)
    where = describe(url)
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return (
            f"the team index at {where} refused a write ({detail}): this role is read-only; "
            "index with the writer role (docs/team-index.md)"
        )
    if isinstance(exc, psycopg.errors.UndefinedTable):
        return (
            f"the team index at {where} has no lsp-agent tables yet: run `lsp-agent index --store URL` once"
        )
    if isinstance(exc, psycopg.OperationalError):
        return f"the team index at {where} is unreachable: {detail}"
    return f"the team index at {where} failed: {detail}"


class TeamStore:
    """One connection to the team index; not thread-safe (each user opens its own)."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
            from pgvector.psycopg import register_vector
        except ImportError:
            raise TeamStoreError(
                "a postgresql:// index store needs the postgres extra: pip install 'lsp-agent[postgres]'"
            ) from None
        self.url = url
        self.where = describe(url)
        options: dict[str, Any] = {} if "connect_timeout" in url else {"connect_timeout": CONNECT_TIMEOUT}
        try:
            self.conn = psycopg.connect(url, autocommit=True, **options)
        except (psycopg.Error, ValueError) as exc:
            raise TeamStoreError(_friendly(exc, url)) from None
        self._register_vector = register_vector
        self._vector_ready = False

    def _vectors_on(self) -> None:
        """Teach the connection the vector type (after the extension exists)."""
        if not self._vector_ready:
            self._register_vector(self.conn)
            self._vector_ready = True

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Turn driver errors into TeamStoreError with a redacted, actionable message."""
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            raise TeamStoreError(_friendly(exc, self.url)) from None

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def create_schema(self) -> None:
        """Create the tables and the extension if missing (needs the writer role)."""
        with self.errors(), self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (SchemaLock,))
            for statement in [*SCHEMA.split(";"), STORAGE]:
                self.conn.execute(statement)  # type: ignore[arg-type]

    # --- files ---------------------------------------------------------------------------------------------

    def stored_keys(self, keys: Sequence[str]) -> set[str]:
        """Which of these file keys the team index holds."""
        found: set[str] = set()
        with self.errors():
            for i in range(0, len(keys), BATCH):
                rows = self.conn.execute(
                    "SELECT key FROM lsp_files WHERE key = ANY(%s)", (list(keys[i : i + BATCH]),)
                )
                found.update(r[0] for r in rows)
        return found

    def file_rows(self, keys: Sequence[str]) -> dict[str, FileRows]:
        """The stored rows of these files by key, chunks and symbols in their original order."""
        out: dict[str, FileRows] = {}
        with self.errors(), self.conn.cursor(binary=True) as cur:  # binary: bytea without hex decoding
            for i in range(0, len(keys), BATCH):
                part = list(keys[i : i + BATCH])
                for key, language, identifiers in cur.execute(
                    "SELECT key, language, identifiers FROM lsp_files WHERE key = ANY(%s)", (part,)
                ):
                    out[key] = FileRows(language, [], [], bytes(identifiers))
                for key, *row, terms, h in cur.execute(
                    "SELECT file_key, start_line, end_line, symbol, kind, text, length, terms, hash "
                    "FROM lsp_chunks WHERE file_key = ANY(%s) ORDER BY file_key, ord",
                    (part,),
                ):
                    out[key].chunks.append((*row, bytes(terms), h))  # type: ignore[arg-type]
                for key, *row in cur.execute(
                    "SELECT file_key, name, qualified_name, kind, line, end_line FROM lsp_symbols "
                    "WHERE file_key = ANY(%s) ORDER BY file_key, ord",
                    (part,),
                ):
                    out[key].symbols.append(tuple(row))  # type: ignore[arg-type]
        return out

    def local_rows(self, keys: Sequence[str], file_id: int, chunk_id: int) -> tuple[list, list, list]:
        """Rows of the stored files among `keys` shaped for the local index's tables, ready for executemany.

        Stored files get the ids `file_id`, `file_id + 1`, ... in `keys` order and their chunks the ids from
        `chunk_id` on (file by file, in chunk order), as replace_file() would give them one file at a time.
        Returns (files, chunks, symbols); a files row is (id, key, language, identifiers). The LATERAL
        subqueries (OFFSET 0 keeps them apart) look each file up by primary key: a plain join hash-joins a
        sequential scan of the whole table for every batch.
        """
        with self.errors(), self.conn.cursor(binary=True) as cur:
            stored = {
                k: (lang, ident)
                for k, lang, ident in cur.execute(
                    "SELECT key, language, identifiers FROM lsp_files WHERE key = ANY(%s)", (list(keys),)
                )
            }
            found = [k for k in keys if k in stored]
            files = [(file_id + n, k, *stored[k]) for n, k in enumerate(found)]
            chunks = cur.execute(
                "SELECT %s - 1 + row_number() OVER (ORDER BY k.n, c.ord), %s - 1 + k.n, c.start_line, c.end_line, "
                "c.symbol, c.kind, c.text, c.length, c.terms, c.hash FROM unnest(%s::text[]) WITH ORDINALITY "
                "AS k(key, n) CROSS JOIN LATERAL (SELECT * FROM lsp_chunks WHERE file_key = k.key OFFSET 0) c "
                "ORDER BY k.n, c.ord",
                (chunk_id, file_id, found),
            ).fetchall()
            symbols = cur.execute(
                "SELECT %s - 1 + k.n, s.name, s.qualified_name, s.kind, s.line, s.end_line FROM unnest(%s::text[]) "
                "WITH ORDINALITY AS k(key, n) CROSS JOIN LATERAL (SELECT * FROM lsp_symbols WHERE file_key = k.key "
                "OFFSET 0) s ORDER BY k.n, s.ord",
                (file_id, found),
            ).fetchall()
        return files, chunks, symbols

    def put_files(self, files: Iterable[tuple[str, str, str, FileRows]]) -> int:
        """Store (key, path, content hash, rows) of files the index lacks, in batches; returns how many were new.

        Each batch is one transaction: a file row goes in with its chunks and symbols or not at all, and a file
        another indexer stored first (ON CONFLICT DO NOTHING waits for its commit) is skipped whole.
        """
        items = list(files)
        added = 0
        with self.errors():
            for i in range(0, len(items), BATCH // 4):
                added += self._put_batch(items[i : i + BATCH // 4])
        return added

    def _put_batch(self, batch: list[tuple[str, str, str, FileRows]]) -> int:
        with self.conn.transaction():
            with self.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO lsp_files(key, path, hash, language, identifiers) VALUES(%s,%s,%s,%s,%s) "
                    "ON CONFLICT DO NOTHING RETURNING key",
                    [(k, p, h, r.language, r.identifiers) for k, p, h, r in batch],
                    returning=True,
                )
                ours: set[str] = set()
                while True:
                    ours.update(row[0] for row in cur.fetchall())
                    if not cur.nextset():
                        break
            mine = [(k, r) for k, _, _, r in batch if k in ours]
            with self.conn.cursor().copy(
                "COPY lsp_chunks(file_key, ord, start_line, end_line, symbol, kind, text, length, terms, hash) "
                "FROM STDIN"
            ) as copy:
                for key, rows in mine:
                    for n, (start, end, symbol, kind, text, *rest) in enumerate(rows.chunks):
                        copy.write_row((key, n, start, end, pg_text(symbol), kind, pg_text(text), *rest))
            with self.conn.cursor().copy(
                "COPY lsp_symbols(file_key, ord, name, qualified_name, kind, line, end_line) FROM STDIN"
            ) as copy:
                for key, rows in mine:
                    for n, (name, qualified, *rest) in enumerate(rows.symbols):
                        copy.write_row((key, n, pg_text(name), pg_text(qualified), *rest))
        return len(ours)

    # --- vectors -------------------------------------------------------------------------------------------

    def vectors(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of these chunk hashes for one model (the team embedding cache)."""
        out: dict[str, np.ndarray] = {}
        with self.errors():
            if not self._has_vectors():
                return out
            self._vectors_on()
            for i in range(0, len(hashes), BATCH):
                for h, vec in self.conn.execute(
                    "SELECT hash, vec FROM lsp_vectors WHERE model=%s AND hash = ANY(%s)",
                    (model, list(hashes[i : i + BATCH])),
                ):
                    out[h] = np.asarray(vec.to_numpy() if hasattr(vec, "to_numpy") else vec, dtype=np.float32)
        return out

    def stored_vector_hashes(self, model: str, hashes: Sequence[str]) -> set[str]:
        """Which of these chunk hashes have a vector for the model."""
        found: set[str] = set()
        with self.errors():
            for i in range(0, len(hashes), BATCH):
                rows = self.conn.execute(
                    "SELECT hash FROM lsp_vectors WHERE model=%s AND hash = ANY(%s)",
                    (model, list(hashes[i : i + BATCH])),
                )
                found.update(r[0] for r in rows)
        return found

    def _has_vectors(self) -> bool:
        return bool(self.conn.execute("SELECT to_regclass('lsp_vectors') IS NOT NULL").fetchone()[0])  # type: ignore[index]

    def put_vectors(self, model: str, items: Iterable[tuple[str, np.ndarray]]) -> int:
        """Add vectors the index lacks (ON CONFLICT DO NOTHING) and an HNSW index for their dimension."""
        from pgvector import Vector

        rows = [(model, h, len(v), Vector(np.asarray(v, dtype=np.float32))) for h, v in items]
        if not rows:
            return 0
        added = 0
        with self.errors():
            self._vectors_on()
            for dim in sorted({r[2] for r in rows}):
                with self.conn.transaction():  # two indexers creating the same index at once: one waits
                    self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (SchemaLock,))
                    self.conn.execute(HNSW.format(dim=int(dim)))  # type: ignore[arg-type]
            for i in range(0, len(rows), BATCH):
                with self.conn.transaction(), self.conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO lsp_vectors(model, hash, dim, vec) VALUES(%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                        rows[i : i + BATCH],
                    )
                    added += max(cur.rowcount, 0)
        return added

    def nearest_chunks(
        self, model: str, query: np.ndarray, snapshot: int, limit: int = 10
    ) -> list[tuple[str, int, float]]:
        """(path, start line, cosine distance) of a snapshot's chunks nearest to a vector, through HNSW."""
        from pgvector import Vector

        dim = len(query)
        with self.errors():
            self._vectors_on()
            rows = self.conn.execute(
                f"WITH near AS (SELECT hash, vec::vector({dim}) <=> %s AS distance FROM lsp_vectors "  # noqa: S608
                f"WHERE model=%s AND dim={dim} ORDER BY vec::vector({dim}) <=> %s LIMIT %s) "
                "SELECT s.path, c.start_line, near.distance FROM near JOIN lsp_chunks c ON c.hash = near.hash "
                "JOIN lsp_snapshot_files s ON s.file_key = c.file_key AND s.snapshot_id = %s "
                "ORDER BY near.distance, s.path, c.start_line LIMIT %s",
                (Vector(query), model, Vector(query), limit * 4, snapshot, limit),
            )
            return [(p, int(s), float(d)) for p, s, d in rows]

    # --- snapshots -----------------------------------------------------------------------------------------

    def begin_snapshot(self, repo: str, commit: str) -> int:
        """An incomplete snapshot row (what a crashed indexer leaves behind is never served)."""
        with self.errors():
            row = self.conn.execute(
                "INSERT INTO lsp_snapshots(repo, commit) VALUES(%s, %s) RETURNING id", (repo, commit)
            ).fetchone()
        return int(row[0])  # type: ignore[index]

    def complete_snapshot(
        self, snapshot: int, repo: str, commit: str, files: Sequence[tuple[str, str]]
    ) -> int:
        """List (path, key) of the snapshot and mark it complete in one transaction; returns the id serving it.

        When another indexer completed the same repository and commit first, its snapshot stays and ours goes.
        """
        with self.errors(), self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"{repo}\n{commit}",))
            done = self.conn.execute(
                "SELECT id FROM lsp_snapshots WHERE repo=%s AND commit=%s AND complete", (repo, commit)
            ).fetchone()
            if done is not None:
                self.conn.execute("DELETE FROM lsp_snapshots WHERE id=%s", (snapshot,))
                return int(done[0])
            with self.conn.cursor().copy(
                "COPY lsp_snapshot_files(snapshot_id, path, file_key) FROM STDIN"
            ) as copy:
                for path, key in files:
                    copy.write_row((snapshot, path, key))
            self.conn.execute(
                "UPDATE lsp_snapshots SET complete=true, files=%s WHERE id=%s", (len(files), snapshot)
            )
        return snapshot

    def snapshot(self, repo: str, commit: str | None = None) -> Snapshot | None:
        """The complete snapshot of a commit, or the repository's newest complete one."""
        sql = "SELECT id, repo, commit, files FROM lsp_snapshots WHERE repo=%s AND complete"
        params: tuple = (repo,)
        if commit is not None:
            sql += " AND commit=%s"
            params += (commit,)
        with self.errors():
            row = self.conn.execute(sql + " ORDER BY created DESC, id DESC LIMIT 1", params).fetchone()  # type: ignore[arg-type]
        return Snapshot(*row) if row else None

    def snapshot_files(self, snapshot: int) -> dict[str, str]:
        """path -> file key of a snapshot."""
        with self.errors():
            rows = self.conn.execute(
                "SELECT path, file_key FROM lsp_snapshot_files WHERE snapshot_id=%s", (snapshot,)
            )
            return {p: k for p, k in rows}
