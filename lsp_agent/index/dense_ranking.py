"""The dense half of search and locate: chunks and files ranked by their vectors' cosine to the query."""

from __future__ import annotations

import logging
from collections.abc import Hashable

import numpy as np

from lsp_agent.index.dense import VectorIndex
from lsp_agent.index.embeddings import Embedder, EmbeddingError, embedding_text
from lsp_agent.index.locate import FileMap
from lsp_agent.index.models import Chunk
from lsp_agent.index.rows import text_hash
from lsp_agent.index.store import IndexStore

log = logging.getLogger(__name__)

CANDIDATES = 100  # results taken from each ranker before fusion
DENSE_FILE_CANDIDATES = 500  # nearest chunks read for the files' dense scores in locate


def dense_chunk_ranking(
    embedder: Embedder,
    vectors: VectorIndex,
    reader: IndexStore,
    query: str,
    exclude: set[int],
    extra_chunks: dict[Hashable, tuple[str, Chunk]],
) -> list[tuple[Hashable, float]]:
    """Vector ranking; override chunks reuse stored vectors by text hash and embed the rest now."""
    qvec = embedder.embed([query])[0]
    extra: list[tuple[Hashable, np.ndarray]] = []
    if extra_chunks:
        texts = {k: embedding_text(rel, c.symbol, c.text) for k, (rel, c) in extra_chunks.items()}
        hashes = {k: text_hash(f"{rel}\0{c.symbol}\0{c.text}") for k, (rel, c) in extra_chunks.items()}
        known = reader.vectors_for_hashes(embedder.name, set(hashes.values()))
        todo = [k for k in extra_chunks if hashes[k] not in known]
        if todo:
            for k, vec in zip(todo, embedder.embed([texts[k] for k in todo]), strict=True):
                known[hashes[k]] = vec
        extra = [(k, known[hashes[k]]) for k in extra_chunks]
    return vectors.search(qvec, CANDIDATES, exclude, extra)


def dense_file_scores(
    embedder: Embedder | None, vectors: VectorIndex | None, query: str, files: FileMap
) -> np.ndarray | None:
    """Each file's best chunk cosine to the query (None without an embedding model or when it fails)."""
    if embedder is None or vectors is None:
        return None
    try:
        qvec = embedder.embed([query])[0]
    except EmbeddingError as exc:  # a failing backend costs the dense half, never the ranking
        log.warning("dense ranking skipped: %s", exc)
        return None
    out = np.zeros(len(files.paths), dtype=np.float64)
    for chunk_id, cosine in vectors.search(qvec, DENSE_FILE_CANDIDATES):
        pos = files.chunk_positions.get(chunk_id)  # type: ignore[arg-type]
        if pos is not None and cosine > out[pos]:
            out[pos] = cosine
    return out
