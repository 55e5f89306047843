"""WorkspaceIndex: the persisted, incrementally refreshed chunk and symbol index of one workspace."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from contextlib import nullcontext
from pathlib import Path

from lsp_agent.index import models, symbol_lookup
from lsp_agent.index.chunking import ParsedFile, analyze
from lsp_agent.index.dense import VectorIndex, reciprocal_rank_fusion
from lsp_agent.index.dense_ranking import CANDIDATES, dense_chunk_ranking, dense_file_scores
from lsp_agent.index.embeddings import EmbeddingError
from lsp_agent.index.exact import base_key, override_key
from lsp_agent.index.index_writes import Progress, changed_files, embed_missing, store_buffers, store_result
from lsp_agent.index.lexical import LexicalIndex
from lsp_agent.index.lexical_state import current_postings
from lsp_agent.index.locate import FileHit, FileMap, rank_files
from lsp_agent.index.mentions import Mentions
from lsp_agent.index.models import Chunk, FileAnalysis, IndexConfig, IndexStats, SearchHit, SymbolHit
from lsp_agent.index.pipeline import Workers, paused_gc, run_jobs
from lsp_agent.index.query import QueryAnalysis, analyze_query
from lsp_agent.index.repomap import build_repo_map
from lsp_agent.index.rerank import ChunkPaths, rerank, search_hits
from lsp_agent.index.rows import text_hash
from lsp_agent.index.store import IndexStore, default_db_path
from lsp_agent.index.team_sync import seed_team, team_link, team_vectors
from lsp_agent.index.tokens import tokenize, unpack_terms
from lsp_agent.index.vector_cache import embedding_backend
from lsp_agent.workspace.paths import index_rel
from lsp_agent.workspace.walk import is_ignored

log = logging.getLogger(__name__)

BULK_MIN_FILES = 500  # a first index this large loads without secondary indexes and builds them at the end


class WorkspaceIndex:
    """Index of one workspace root; every method is safe to call from any thread."""

    def __init__(self, root: Path, config: IndexConfig | None = None, db_path: Path | None = None) -> None:
        self.root = models.workspace_root(root)
        self.config = config or IndexConfig()
        self.db_path = Path(db_path) if db_path else default_db_path(self.root)
        self._writer = IndexStore(self.db_path)
        self._reader = IndexStore(self.db_path)
        self._write_lock = threading.RLock()  # refresh, update_file, remove_file
        self._read_lock = threading.RLock()  # the reader connection and the in-memory rankers
        self._embedder, self._shared = embedding_backend(self.config)  # model and machine-wide vector cache
        self.team = team_link(self.config.store)  # a PostgreSQL team index to seed from (team_sync.py)
        self._shared = team_vectors(self.team, self._shared, self._embedder, self.config)
        self._lexical: LexicalIndex | None = None
        self._vectors: VectorIndex | None = None
        # Editor buffers not yet written because a refresh held the writer; the refresh flushes them.
        self._pending: dict[str, str | None] = {}
        self._buffers: dict[str, str] = {}  # texts indexed from buffers, for snippets
        # The last parse of each buffer, for incremental parsing of the next version.
        self._trees: OrderedDict[str, ParsedFile] = OrderedDict()
        self._override_cache: OrderedDict[tuple[str, str], FileAnalysis] = OrderedDict()
        self._repo_map_cache: tuple[int, int, str] | None = None
        self._mentions_cache: tuple[int, Mentions] | None = None
        self._file_map_cache: tuple[int, LexicalIndex, FileMap] | None = None
        self._generation = 0
        self._closed = False

    # --- paths ---------------------------------------------------------------------------------------------

    def _rel(self, path: Path | str) -> str:
        """A workspace-relative POSIX path; ValueError for paths outside the root."""
        return index_rel(self.root, path)

    def _indexable(self, rel: str) -> bool:
        """Whether the walk rules would index this path."""
        return not is_ignored(self.root, self.root / rel, self.config.exclude)

    # --- refresh -------------------------------------------------------------------------------------------

    def refresh(self, progress: Progress | None = None, cancel: threading.Event | None = None) -> IndexStats:
        """Bring the index in line with the disk: parse new and changed files, drop deleted ones.

        Everything happens in one transaction: an exception (or a crash) leaves the previous index intact.
        Cancellation stops parsing and keeps the files finished so far (each file's rows are complete).
        """
        started = time.perf_counter()
        self._check_open()
        with self._write_lock, Workers(self.config.worker_niceness) as workers:
            store = self._writer
            stores = (store, self._reader)  # an empty index may be replaced by the team's snapshot file
            seeded, walked = seed_team(
                self.team, self.root, self.config, stores, self._embedder, self._read_lock, workers
            )
            if seeded:
                with self._read_lock:
                    self._lexical, self._vectors, self._generation = None, None, self._generation + 1
            known = store.files()
            jobs, seen = changed_files(self.root, self.config, known, workers, walked)
            deleted = [rec for rel, rec in known.items() if rel not in seen]
            removed: list[int] = []
            added: list[tuple[int, str, bytes]] = []
            parsed = 0
            bulk = store.bulk_load() if not known and len(jobs) >= BULK_MIN_FILES else nullcontext()
            with store.transaction(), bulk:
                # Still empty inside the transaction (no other process indexed meanwhile): skip per-file lookups.
                fresh = not known and not store.files()
                for rec in deleted:
                    removed.extend(store.delete_file(rec.id))
                total = len(jobs)
                with paused_gc():  # the rows arriving make no cycles
                    for done, result in enumerate(run_jobs(jobs, workers), start=1):
                        if store_result(store, known, result, fresh, removed, added):
                            parsed += 1
                        if progress:
                            progress(done, total, result.job.path)
                        if cancel is not None and cancel.is_set():
                            break
                if not (cancel is not None and cancel.is_set()):
                    embed_missing(self._embedder, store, progress, cancel, self._shared)
                    store.prune_vectors()
            self._apply_changes(removed, added)
            self._flush_pending(blocking=True)
            files, chunks, symbols = store.counts()
        return IndexStats(files, chunks, symbols, time.perf_counter() - started, parsed)

    def _apply_changes(self, removed: list[int], added: list[tuple[int, str, bytes]]) -> None:
        """Mirror committed changes into the in-memory rankers (or drop them for a rebuild when large)."""
        if not removed and not added:
            return
        with self._read_lock:
            self._generation += 1
            lexical = self._lexical
            if lexical is not None:
                lexical.remove(removed)
                for chunk_id, _, packed in added:
                    lexical.add(chunk_id, unpack_terms(packed))
                if lexical.needs_rebuild():
                    self._lexical = None
            if self._vectors is not None and self._embedder is not None:
                self._vectors.remove(removed)
                known = self._reader.vectors_for_hashes(self._embedder.name, {h for _, h, _ in added})
                for chunk_id, h, _ in added:
                    if h in known:
                        self._vectors.add(chunk_id, known[h])

    # --- editor buffers ------------------------------------------------------------------------------------

    def update_file(self, path: Path | str, text: str) -> None:
        """Index an editor buffer's text for `path` (unsaved edits); ignored files are left alone."""
        self._check_open()
        rel = self._rel(path)
        if not self._indexable(rel):
            return
        if len(text) > self.config.max_file_size:  # the walk would skip it too
            self.remove_file(rel)
            return
        with self._read_lock:
            self._pending[rel] = text
        self._flush_pending(blocking=False)

    def remove_file(self, path: Path | str) -> None:
        """Drop a file from the index (deleted in the editor or on disk)."""
        self._check_open()
        rel = self._rel(path)
        with self._read_lock:
            self._pending[rel] = None
        self._flush_pending(blocking=False)

    def _flush_pending(self, blocking: bool) -> None:
        """Write pending buffer updates unless a refresh holds the writer (it flushes them when done)."""
        if not self._write_lock.acquire(blocking=blocking):
            return
        try:
            with self._read_lock:
                pending = dict(self._pending)
            if not pending:
                return
            store = self._writer
            with store.transaction():
                removed, added = store_buffers(store, pending, self._trees)
                if added:
                    embed_missing(self._embedder, store, None, None, self._shared)
            self._apply_changes(removed, added)
            with self._read_lock:
                for rel, text in pending.items():
                    if self._pending.get(rel, 0) is text:
                        del self._pending[rel]
                    if text is None:
                        self._buffers.pop(rel, None)
                    else:
                        self._buffers[rel] = text
        finally:
            self._write_lock.release()

    # --- search --------------------------------------------------------------------------------------------

    def _ensure_rankers(self) -> None:
        """Build the BM25 (and vector) index from the database when missing."""
        if self._lexical is None:
            postings, owners = current_postings(self._reader.conn)  # every chunk's file too, read at once
            lexical = self._lexical = LexicalIndex.from_postings(postings)
            self._file_map_cache = (self._generation, lexical, FileMap(self._reader.conn, lexical, owners))
        if self._embedder is not None and self._vectors is None:
            ids, matrix = self._reader.chunk_vectors(self._embedder.name)
            self._vectors = VectorIndex(ids, matrix)

    def _analyze_override(self, rel: str, text: str) -> FileAnalysis:
        key = (rel, text_hash(text))
        cached = self._override_cache.get(key)
        if cached is None:
            cached = self._override_cache[key] = analyze(rel, text)
            while len(self._override_cache) > 64:
                self._override_cache.popitem(last=False)
        else:
            self._override_cache.move_to_end(key)
        return cached

    def search(
        self, query: str, top_k: int = 10, overrides: Mapping[str, str | None] | None = None
    ) -> list[SearchHit]:
        """Chunks best matching a natural-language or identifier query; `overrides` replace files for this query."""
        self._check_open()
        if not query or not query.strip():
            raise ValueError("empty query: say what to look for")
        top_k = max(1, int(top_k))
        terms = tokenize(query)
        parts = analyze_query(query)
        with self._read_lock:
            self._ensure_rankers()
            assert self._lexical is not None
            effective: dict[str, str | None] = dict(self._pending)
            for path, text in (overrides or {}).items():
                effective[self._rel(path)] = text
            exclude: set[int] = set()
            extra_chunks: dict[Hashable, tuple[str, Chunk]] = {}
            extra_tokens: list[tuple[Hashable, dict[int, int]]] = []
            analyses: dict[str, FileAnalysis] = {}
            for rel, text in effective.items():
                exclude.update(self._reader.chunk_ids_for_path(rel))
                if text is None or not self._indexable(rel):
                    continue
                analysis = analyses[rel] = self._analyze_override(rel, text)
                for i, (chunk, (_, packed)) in enumerate(zip(analysis.chunks, analysis.tokens, strict=True)):
                    key = override_key(rel, i)
                    extra_chunks[key] = (rel, chunk)
                    extra_tokens.append((key, unpack_terms(packed)))
            ranked = self._lexical.search(terms, CANDIDATES, exclude, extra_tokens)
            if self._embedder is not None and self._vectors is not None:
                try:
                    dense = dense_chunk_ranking(
                        self._embedder, self._vectors, self._reader, query, exclude, extra_chunks
                    )
                except EmbeddingError as exc:  # a failing backend costs the dense half, never the search
                    log.warning("dense search skipped: %s", exc)
                else:
                    ranked = reciprocal_rank_fusion(ranked, dense)
            ranked = self._rerank(ranked, parts, exclude, extra_chunks, analyses)[:top_k]
            rows = self._reader.chunks_by_id({base_key(k) for k, _ in ranked} - set(extra_chunks))
            texts = {**self._buffers, **{rel: text for rel, text in effective.items() if text is not None}}
        return search_hits(ranked, rows, extra_chunks, symbol_lookup.IndexedLines(self.root, texts).lines)

    def _rerank(
        self,
        ranked: list[tuple[Hashable, float]],
        analysis: QueryAnalysis,
        exclude: set[int],
        extra_chunks: dict[Hashable, tuple[str, Chunk]],
        analyses: dict[str, FileAnalysis],
    ) -> list[tuple[Hashable, float]]:
        """Named definitions and paths first, tests and docs after definitions (see rerank.py); hold the read lock."""
        files = self._file_map()
        known = files.chunk_positions.found([k for k, _ in ranked if type(k) is int])  # one search for all

        def path_of(chunk_id: int) -> str | None:
            """The chunk's path, None for unknown chunks and those hidden by overrides."""
            pos = known.get(chunk_id) if chunk_id in known else files.chunk_positions.get(chunk_id)
            return None if pos is None or chunk_id in exclude else files.paths[pos]

        paths = {k: extra_chunks[k][0] if k in extra_chunks else path_of(k) or "" for k, _ in ranked}  # type: ignore[arg-type]
        return rerank(ranked, paths, self._reader.conn, analysis, ChunkPaths(path_of), files, analyses)

    def _file_map(self) -> FileMap:
        """Chunk -> file positions for the current rankers, rebuilt when the index changed (hold the read lock)."""
        assert self._lexical is not None
        cached = self._file_map_cache
        if cached is None or cached[0] != self._generation or cached[1] is not self._lexical:
            lexical = self._lexical
            cached = self._file_map_cache = (self._generation, lexical, FileMap(self._reader.conn, lexical))
        return cached[2]

    def locate(self, query: str, limit: int = 10) -> list[FileHit]:
        """The files most likely relevant to a task (an identifier, a question or an issue report), best first.

        Each hit names the symbols that matched (the best chunk's, and definitions of names the query uses) and
        the reasons beyond word overlap (a named path, a traceback frame, a definition).
        """
        self._check_open()
        if not query or not query.strip():
            raise ValueError("empty query: say what to look for")
        analysis = analyze_query(query)
        with self._read_lock:
            self._ensure_rankers()
            assert self._lexical is not None
            files = self._file_map()
            ranked = rank_files(
                self._lexical,
                files,
                self._reader.conn,
                analysis,
                files.chunk_positions,
                max(1, int(limit)),
                dense_file_scores(self._embedder, self._vectors, query, files),
            )
            rows = self._reader.chunks_by_id([c for _, _, c, _, _ in ranked if c is not None])
        hits: list[FileHit] = []
        for f, score, chunk, reasons, named in ranked:
            symbols = list(named)
            row = rows.get(chunk) if chunk is not None else None
            if row is not None and row.chunk.symbol and all(s != row.chunk.symbol for s, _ in symbols):
                symbols.insert(0, (row.chunk.symbol, row.chunk.start))
            hits.append(FileHit(files.paths[f], round(score, 6), symbols[:5], reasons))
        return hits

    # --- symbols and map -----------------------------------------------------------------------------------

    def _mentions(self) -> Mentions:
        """Which files mention which names, rebuilt when the index changed (hold the read lock)."""
        cached = self._mentions_cache
        if cached is None or cached[0] != self._generation:
            cached = self._mentions_cache = (self._generation, Mentions(self._reader.file_identifiers()))
        return cached[1]

    def find_symbol(self, name: str, limit: int = 50) -> list[SymbolHit]:
        """Definitions (first, from the index) and references (files mentioning the name, parsed on demand in path
        order until `limit` hits; also deep definitions) of a name or qualified name (`Class.method`, `Type::m`)."""
        self._check_open()
        name = (name or "").strip().replace("::", ".")  # Rust and C++ paths: qualified names are dotted
        if not name:
            raise ValueError("empty symbol name")
        limit = max(1, int(limit))
        with self._read_lock:
            rows = symbol_lookup.indexed_definitions(self._reader.conn, name, limit)
            candidates = [path for path, _ in self._mentions().files_mentioning(name.rsplit(".", 1)[-1])]
        return symbol_lookup.symbol_hits(
            name, rows, candidates, symbol_lookup.IndexedLines(self.root, self._buffers), limit
        )

    def files_mentioning(self, name: str) -> list[str]:
        """The indexed files where `name` occurs as an identifier (next edits' attribute uses), by path."""
        with self._read_lock:
            return [path for path, _ in self._mentions().files_mentioning(name)]

    def symbols_starting_with(self, prefix: str, limit: int = 50) -> list[tuple[str, str, str, int]]:
        """(name, kind, path, line) of definitions whose name starts with `prefix` (mention completion)."""
        self._check_open()
        with self._read_lock:
            return symbol_lookup.definitions_starting_with(self._reader.conn, prefix, limit)

    def repo_map(self, max_chars: int = 4000) -> str:
        """The most important files and their key definitions (PageRank over name mentions), within max_chars."""
        self._check_open()
        with self._read_lock:
            cached = self._repo_map_cache
            if cached and cached[0] == self._generation and cached[1] == max_chars:
                return cached[2]
            lines = symbol_lookup.IndexedLines(self.root, self._buffers)
            text = build_repo_map(self._reader.conn, self._mentions(), max_chars, lines.line)
            self._repo_map_cache = (self._generation, max_chars, text)
            return text

    def stats(self) -> IndexStats:
        """Current counts."""
        self._check_open()
        with self._read_lock:
            files, chunks, symbols = self._reader.counts()
        return IndexStats(files, chunks, symbols)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the workspace index is closed")

    def close(self) -> None:
        """Release the database connections."""
        with self._write_lock, self._read_lock:
            if not self._closed:
                self._closed = True
                self._writer.close()
                self._reader.close()
                for extra in (self._shared, self.team):  # the machine's vector cache, the team index
                    if extra is not None:
                        extra.close()

    def __enter__(self) -> WorkspaceIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
