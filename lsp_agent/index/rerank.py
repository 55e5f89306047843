"""Reorder search hits by what the query names: an existing symbol or path first, definitions before tests and docs.

A query that is (or, when short, contains) a name the index defines (`MultiCommand.invoke`, `secho`, a path)
ranks that definition first, whatever the word statistics say; tests, docs and examples count less unless the
query asks for them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Hashable, Mapping

from lsp_agent.index.exact import (
    WORST_RANK,
    DefinitionSpan,
    base_key,
    exact_definitions,
    named_symbols,
    narrowed,
)
from lsp_agent.index.locate import FileMap, file_kind, kind_factor, path_matches
from lsp_agent.index.models import Chunk, FileAnalysis, SearchHit
from lsp_agent.index.query import SHORT_QUERY_WORDS, QueryAnalysis
from lsp_agent.index.store import ChunkRow

EXACT_BOOST = 2.0  # an exact definition scores this many times the best text score (then ordered among them)
PATH_BOOST = 1.5  # chunks of a file the query names


class ChunkPaths:
    """Chunk id -> path lookups through a function (the index's chunk-to-file map)."""

    def __init__(self, lookup: Callable[[int], str | None]) -> None:
        self.get = lookup


def rerank(
    ranked: list[tuple[Hashable, float]],
    paths: Mapping[Hashable, str],
    conn: sqlite3.Connection,
    analysis: QueryAnalysis,
    path_of_chunk: ChunkPaths,
    files: FileMap,
    overrides: Mapping[str, FileAnalysis] | None = None,
) -> list[tuple[Hashable, float]]:
    """Hits with test/doc/example chunks down-weighted and exact named definitions (and named paths) first."""
    best = max((s for _, s in ranked), default=1.0) or 1.0
    scores: dict[Hashable, float] = {}
    for key, score in ranked:
        scores[key] = score * kind_factor(file_kind(paths[key]), analysis)
    named = exact_definitions(conn, named_symbols(analysis), overrides, values=analysis.is_code_query)
    narrowed_chunks = set()
    factors: dict[str, float] = {}  # a common name can have hundreds of definitions in few files
    for key, path, rank in named:
        chunk = key.chunk if isinstance(key, DefinitionSpan) else key
        if isinstance(chunk, int) and path_of_chunk.get(chunk) is None:
            continue  # hidden by an override
        text_score = scores.get(chunk, 0.0)
        if chunk is not key:
            narrowed_chunks.add(chunk)
        factor = factors.get(path)
        if factor is None:
            factor = factors[path] = kind_factor(file_kind(path), analysis)
        exact = best * (EXACT_BOOST + 0.1 * (WORST_RANK + 1 - rank)) * factor
        scores[key] = exact + text_score * 0.01
    if analysis.is_code_query:  # the query is the name: the member's hit stands for the class holding it
        for chunk in narrowed_chunks - {m.key for m in named}:
            scores.pop(chunk, None)
    if len(analysis.text.split()) <= SHORT_QUERY_WORDS:
        for rank, chunk_id in enumerate(chunks_of_paths(conn, files, analysis.paths)):
            if path_of_chunk.get(chunk_id) is not None:  # None: hidden by an override
                scores[chunk_id] = best * PATH_BOOST - 0.001 * rank + scores.get(chunk_id, 0.0) * 0.01
    return sorted(scores.items(), key=lambda item: -item[1])


def chunks_of_paths(conn: sqlite3.Connection, files: FileMap, named: list[str], limit: int = 20) -> list[int]:
    """Chunk ids of the files a query names (the path itself or a path ending with it), top of file first."""
    out: list[int] = []
    for path in named:
        for f in path_matches(files, path):
            rows = conn.execute(
                "SELECT id FROM chunks WHERE file_id = ? ORDER BY start LIMIT ?",
                (int(files.file_ids[f]), limit),
            )
            out += [r[0] for r in rows]
    return out


def search_hits(
    ranked: list[tuple[Hashable, float]],
    rows: Mapping[int, ChunkRow],
    extra_chunks: Mapping[Hashable, tuple[str, Chunk]],
    file_lines: Callable[[str], list[str]],
) -> list[SearchHit]:
    """The hits of ranked keys: stored chunks, chunks of overridden files, definitions narrowed inside either."""
    hits: list[SearchHit] = []
    for key, score in ranked:
        chunk_key = base_key(key)
        if isinstance(chunk_key, int):
            row = rows.get(chunk_key)
            if row is None:
                continue
            rel, chunk = row.path, row.chunk
        else:
            rel, chunk = extra_chunks[chunk_key]
        if isinstance(key, DefinitionSpan):
            chunk = narrowed(chunk, key, lambda rel=rel: file_lines(rel))
        hits.append(
            SearchHit(rel, chunk.start, chunk.end, chunk.symbol, chunk.kind, round(score, 6), chunk.text)
        )
    return hits
