"""Reorder search hits by what the query names: an existing symbol or path first, definitions before tests and docs.

A query that is (or, when short, contains) a name the index defines (`MultiCommand.invoke`, `secho`, a path)
ranks that definition first, whatever the word statistics say; tests, docs and examples count less unless the
query asks for them.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Hashable, Mapping

from lsp_agent.index.locate import FileMap, file_kind, kind_factor, path_matches
from lsp_agent.index.query import SHORT_QUERY_WORDS, QueryAnalysis, looks_like_code

EXACT_BOOST = 2.0  # an exact definition scores this many times the best text score (then ordered among them)
PATH_BOOST = 1.5  # chunks of a file the query names


class ChunkPaths:
    """Chunk id -> path lookups through a function (the index's chunk-to-file map)."""

    def __init__(self, lookup: Callable[[int], str | None]) -> None:
        self.get = lookup


def named_symbols(analysis: QueryAnalysis) -> list[str]:
    """Names a short query asks for by name: the whole query if it is one, dotted and code-like identifiers."""
    if len(re.findall(r"\w+", analysis.text)) > SHORT_QUERY_WORDS:
        return []
    names: list[str] = []
    if analysis.is_code_query and "/" not in analysis.text:
        names.append(analysis.text.strip().strip("`").replace("::", ".").rstrip("()"))
    names += analysis.dotted
    names += [n for n in analysis.identifiers if looks_like_code(n) or n in analysis.code]
    return list(dict.fromkeys(n for n in names if n and not n.endswith((".py", "."))))


def exact_definitions(conn: sqlite3.Connection, names: list[str]) -> dict[int, int]:
    """Chunk id -> preference (0 best) of chunks that are the definition of a named symbol."""
    last = {name.rsplit(".", 1)[-1]: name for name in names}
    if not last:
        return {}
    marks = ",".join("?" * len(last))
    rows = conn.execute(
        "SELECT c.id, c.symbol, s.name, s.qualified_name FROM symbols s JOIN chunks c ON c.file_id = s.file_id "
        f"AND c.start <= s.line AND s.line <= c.end_line WHERE s.name IN ({marks})",
        list(last),
    ).fetchall()
    found: dict[int, int] = {}
    for chunk_id, symbol, name, qualified in rows:
        written = last[name]
        qualified = qualified or name
        if symbol != qualified:
            continue  # a chunk holding the definition (a class skeleton), not the definition's own chunk
        if qualified == written:
            rank = 0
        elif "." in written and qualified.endswith("." + written):
            rank = 1
        elif "." not in written:
            rank = 2
        else:
            continue
        found[chunk_id] = min(rank, found.get(chunk_id, rank))
    return found


def rerank(
    ranked: list[tuple[Hashable, float]],
    paths: Mapping[Hashable, str],
    conn: sqlite3.Connection,
    analysis: QueryAnalysis,
    path_of_chunk: ChunkPaths,
    files: FileMap,
) -> list[tuple[Hashable, float]]:
    """Hits with test/doc/example chunks down-weighted and exact named definitions (and named paths) first."""
    best = max((s for _, s in ranked), default=1.0) or 1.0
    scores: dict[Hashable, float] = {}
    for key, score in ranked:
        scores[key] = score * kind_factor(file_kind(paths[key]), analysis)
    exact = exact_definitions(conn, named_symbols(analysis))
    for chunk_id, rank in exact.items():
        path = path_of_chunk.get(chunk_id)
        if path is None:
            continue
        factor = kind_factor(file_kind(path), analysis)
        scores[chunk_id] = best * (EXACT_BOOST + 0.1 * (3 - rank)) * factor + scores.get(chunk_id, 0.0) * 0.01
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
