"""The embedding half of the localization benchmark: rankers over an index that holds vectors, and their cost.

localization.py --embeddings local (or a litellm model) adds these systems next to the default ones, each
ranking the same instances in the same run:
- `search + dense (chunk RRF)`: `WorkspaceIndex.search` with its reciprocal rank fusion of BM25 and vector chunk
  rankings, read as files;
- `locate + dense (fused)`: `WorkspaceIndex.locate` with the best chunk's cosine as DENSE_SHARE of each file's
  text score (what a user with `--embeddings` gets);
- `dense alone`: files by their best chunk's cosine (no BM25, no names): what the vectors know on their own;
- variants worth measuring: other dense shares, and the default ranking fused with the dense file ranking by
  reciprocal rank at file level.
Vectors come through the machine-wide vector cache (lsp_agent/index/vector_cache.py), one file for the whole
benchmark, so a repository's later trees embed only the chunks that changed since the earlier ones.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from unittest.mock import patch

import numpy as np

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.index.dense import reciprocal_rank_fusion
from lsp_agent.index.dense_ranking import dense_file_scores
from lsp_agent.index.embeddings import MAX_EMBED_CHARS, Embedder, make_embedder
from lsp_agent.index.rows import text_hash
from lsp_agent.index.vector_cache import VectorCache, cache_model_key

Ranker = Callable[[str], list[str]]
SHARES = (0.15, 0.5)  # dense shares tried next to locate's DENSE_SHARE


class QueryMemo:
    """The index's embedder with each single text (a query) embedded once: the dense systems share an instance's
    query vector instead of each running the model again. A reuse is charged the seconds the first embedding
    took (`take_reused`), so every system's latency still includes its query's embedding."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self._memo: dict[str, tuple[np.ndarray, float]] = {}
        self._reused = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The inner model's vectors; a single text's from the memo after its first time."""
        if len(texts) != 1:  # chunk batches during a refresh: never memoised
            return self.inner.embed(texts)
        text = texts[0]
        if text in self._memo:
            vector, seconds = self._memo[text]
            self._reused += seconds
            return vector
        started = time.perf_counter()
        vector = self.inner.embed(texts)
        if len(self._memo) >= 4:  # an instance's query and its prose; older instances are done with
            self._memo.clear()
        self._memo[text] = (vector, time.perf_counter() - started)
        return vector

    def take_reused(self) -> float:
        """Seconds of query embedding reused since the last call (to add to the calling system's latency)."""
        reused, self._reused = self._reused, 0.0
        return reused


def open_dense_index(root: Path, db: Path, embeddings: str, vectors: Path) -> tuple[WorkspaceIndex, dict]:
    """The tree's index with vectors, and what its first refresh cost: seconds (parsing and embedding), chunks,
    and how many of them were embedded then (the others came from the vector cache). Kept next to the database."""
    cost_file = db.with_suffix(".cost.json")
    before = _cached_vectors(vectors)
    index = WorkspaceIndex(root, IndexConfig(embeddings=embeddings, embedding_cache=vectors), db_path=db)
    started = time.perf_counter()
    stats = index.refresh()
    if stats.parsed or not cost_file.exists():
        cost = {
            "seconds": time.perf_counter() - started,
            "chunks": stats.chunks,
            "embedded": _cached_vectors(vectors) - before,
        }
        cost_file.write_text(json.dumps(cost))
    if index._embedder is not None:
        index._embedder = QueryMemo(index._embedder)
    return index, json.loads(cost_file.read_text())


def embedding_plan(trees: list[tuple[str, int, set[str]]], embeddings: str, vectors: Path) -> None:
    """Print what a dense run over `trees` (name, usable instances, chunk hashes; in run order) would embed: the
    chunks neither in the vector cache nor in an earlier tree. Reads only; embeds nothing."""
    embedder = make_embedder(embeddings)
    assert embedder is not None
    known: set[str] = set()
    if vectors.exists():
        conn = sqlite3.connect(f"file:{vectors}?mode=ro", uri=True, timeout=60)
        query = "SELECT hash FROM vectors WHERE model=?"
        known = {h for (h,) in conn.execute(query, (cache_model_key(embedder.name, None),))}
        conn.close()
    print(f"{len(known)} chunk vectors of {embedder.name} in {vectors}")
    total = 0
    for name, usable, hashes in trees:
        new = hashes - known
        known |= hashes
        total += len(new)
        print(
            f"{name}: {usable} usable instances, {len(hashes)} distinct chunks, {len(new)} to embed ({total} in all)"
        )


def _cached_vectors(path: Path) -> int:
    cache = VectorCache(path)
    try:
        return cache.stats()[0]
    finally:
        cache.close()


def dense_files(index: WorkspaceIndex, query: str) -> list[str]:
    """Files by their best chunk's cosine to the query alone."""
    with index._read_lock:
        index._ensure_rankers()
        files = index._file_map()
        scores = dense_file_scores(index._embedder, index._vectors, query, files)
    if scores is None:
        return []
    order = np.argsort(-scores, kind="stable")[:50]
    return [files.paths[int(i)] for i in order if scores[int(i)] > 0]


def locate_files(index: WorkspaceIndex, query: str) -> list[str]:
    """locate's file ranking."""
    return [f.path for f in index.locate(query, limit=50)]


def search_files(index: WorkspaceIndex, query: str) -> list[str]:
    """`search` hits read as files, in order of first appearance."""
    files: list[str] = []
    for hit in index.search(query, top_k=50):
        if hit.path not in files:
            files.append(hit.path)
    return files


def with_share(index: WorkspaceIndex, share: float) -> Ranker:
    """locate with another dense share."""
    import lsp_agent.index.locate as locate_module

    def rank(query: str) -> list[str]:
        """locate's file ranking with DENSE_SHARE replaced during the call."""
        with patch.object(locate_module, "DENSE_SHARE", share):
            return locate_files(index, query)

    return rank


def file_rrf(default: WorkspaceIndex, dense: WorkspaceIndex) -> Ranker:
    """The default locate ranking and the dense file ranking fused by reciprocal rank."""

    def rank(query: str) -> list[str]:
        """Both file rankings, fused."""
        first = [(p, 0.0) for p in locate_files(default, query)]
        second = [(p, 0.0) for p in dense_files(dense, query)]
        return [str(p) for p, _ in reciprocal_rank_fusion(first, second)][:50]

    return rank


_FENCE = re.compile(r"```.*?(?:```|\Z)|<!--.*?(?:-->|\Z)", re.S)  # code blocks, issue-template comments
_CODE_LINE = re.compile(
    r"^\s*(>>>|\.\.\.|\$|In \[\d+\]:|Out\[\d+\]:|Traceback|File \"|\w*(Error|Exception)\b:?).*$", re.M
)


def prose_of(query: str) -> str:
    """An issue's prose: the query without code blocks, template comments, interpreter lines and tracebacks
    (all of it if that leaves almost nothing)."""
    prose = _CODE_LINE.sub("", _FENCE.sub(" ", query))
    prose = re.sub(r"\n\s*\n+", "\n", prose).strip()
    return prose if len(prose) >= 40 else query


class ProseQueries:
    """An embedder that embeds the prose of what it is given (for queries only: chunk vectors are all cached)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The inner model's vectors of each text's prose."""
        return self.inner.embed([prose_of(t) for t in texts])


def prose_query(index: WorkspaceIndex) -> Ranker:
    """locate (fused) with only the issue's prose embedded as the query."""

    def rank(query: str) -> list[str]:
        """locate's file ranking, the query's vector from its prose."""
        inner = index._embedder
        assert inner is not None
        index._embedder = ProseQueries(inner)
        try:
            return locate_files(index, query)
        finally:
            index._embedder = inner

    return rank


class FileSummaries:
    """One vector per file, of its path and the names it defines in order (a repo map entry): ~10x fewer and
    shorter texts than its chunks. Embedded once through the vector cache, under a model key of their own."""

    def __init__(self, index: WorkspaceIndex, vectors: Path) -> None:
        names: dict[str, list[str]] = {}
        rows = index._reader.conn.execute(
            "SELECT f.path, COALESCE(s.qualified_name, s.name) FROM files f LEFT JOIN symbols s ON s.file_id=f.id "
            "WHERE f.language != 'binary' ORDER BY f.path, s.line"
        )
        for path, name in rows:
            names.setdefault(path, [])
            if name:
                names[path].append(name)
        texts = {path: f"{path}\n{' '.join(defined)}"[:MAX_EMBED_CHARS] for path, defined in names.items()}
        embedder = index._embedder
        assert embedder is not None
        key = cache_model_key(embedder.name, None) + "|file-summary"
        hashes = {path: text_hash(text) for path, text in texts.items()}
        cache = VectorCache(vectors)
        started = time.perf_counter()
        known = cache.get(key, hashes.values())
        todo = sorted({h: p for p, h in hashes.items() if h not in known}.items())
        for i in range(0, len(todo), 256):
            batch = todo[i : i + 256]
            items = list(
                zip([h for h, _ in batch], embedder.embed([texts[p] for _, p in batch]), strict=True)
            )
            cache.put(key, items)
            known.update(items)
        cache.close()
        self.embedded, self.seconds = len(todo), time.perf_counter() - started
        self.position = {path: i for i, path in enumerate(texts)}
        self.matrix = np.vstack([known[hashes[path]] for path in texts])

    def scores(self, qvec: np.ndarray, paths: list[str]) -> np.ndarray:
        """Each of `paths`' summary cosine to the query vector (0 for files without one)."""
        cosines = self.matrix @ qvec
        return np.array([cosines[self.position[p]] if p in self.position else 0.0 for p in paths])


def summary_locate(index: WorkspaceIndex, summaries: FileSummaries) -> Ranker:
    """locate with the files' summary cosine in place of their best chunk's."""
    import lsp_agent.index.workspace_index as workspace_module

    def summary_scores(embedder, vectors, query, files):  # noqa: ANN001, ANN202
        return summaries.scores(embedder.embed([query])[0], files.paths)

    def rank(query: str) -> list[str]:
        """locate's file ranking, its dense half from the file summaries."""
        with patch.object(workspace_module, "dense_file_scores", summary_scores):
            return locate_files(index, query)

    return rank


def summaries_alone(index: WorkspaceIndex, summaries: FileSummaries) -> Ranker:
    """Files by their summary's cosine to the query alone."""

    def rank(query: str) -> list[str]:
        """The file summaries nearest the query."""
        assert index._embedder is not None
        paths = list(summaries.position)
        scores = summaries.scores(index._embedder.embed([query])[0], paths)
        return [paths[int(i)] for i in np.argsort(-scores, kind="stable")[:50]]

    return rank


def dense_systems(
    default: WorkspaceIndex, dense: WorkspaceIndex, label: str, vectors: Path
) -> dict[str, Ranker]:
    """The rankers that use the vectors, by the name the table shows."""
    from lsp_agent.index.locate import DENSE_SHARE

    systems: dict[str, Ranker] = {
        f"search + {label} (chunk RRF)": lambda q: search_files(dense, q),
        f"locate + {label} (share {DENSE_SHARE})": lambda q: locate_files(dense, q),
        f"{label} alone (best chunk)": lambda q: dense_files(dense, q),
        f"locate + {label} (file RRF)": file_rrf(default, dense),
    }
    for share in SHARES:
        systems[f"locate + {label} (share {share})"] = with_share(dense, share)
    systems[f"locate + {label} (prose query)"] = prose_query(dense)
    summaries = FileSummaries(dense, vectors)
    print(f"  file summaries: {summaries.embedded} embedded in {summaries.seconds:.1f} s", flush=True)
    systems[f"locate + {label} (file summaries)"] = summary_locate(dense, summaries)
    systems[f"{label} alone (file summaries)"] = summaries_alone(dense, summaries)
    return systems
