"""BM25 over code tokens: a column-compressed index of the persisted chunks plus a small delta of recent edits.

Terms are identified by their stable hash (tokens.term_hash), so workers pack a chunk's counts without a shared
vocabulary. Rebuilding the index for one edited file would cost a second on a large repository, so edits since
the last build are kept aside: their old chunks are masked out of the base scores and their new chunks are
scored with the same Lucene BM25 formula and the base's document frequencies. The next rebuild folds them in.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

from lsp_agent.index.postings import Postings
from lsp_agent.index.tokens import term_hash

K1 = 1.2
B = 0.75
MAX_DELTA_DOCS = 3000  # beyond this many delta chunks a rebuild is cheaper than scoring them one by one


class LexicalIndex:
    """BM25 scores over chunks keyed by id; supports removing and adding chunks without a rebuild."""

    def __init__(self, doc_ids: np.ndarray, lengths: np.ndarray, blobs: Sequence[bytes]) -> None:
        """Build from stored chunks: `blobs[i]` holds document `doc_ids[i]`'s packed term counts."""
        self._load(Postings.from_blobs(doc_ids, lengths, blobs))

    @classmethod
    def from_postings(cls, postings: Postings) -> LexicalIndex:
        """The index of sorted postings (a build's or an exact update of one: the same arrays either way)."""
        index = cls.__new__(cls)
        index._load(postings)
        return index

    def _load(self, postings: Postings) -> None:
        self._ids = postings.ids  # ascending: a chunk's position is found by binary search
        self._alive = np.ones(len(self._ids), dtype=np.float32)
        self._delta: dict[int, tuple[Mapping[int, int], int]] = {}
        n = len(self._ids)
        self._n = max(n, 1)
        lengths = postings.lengths.astype(np.float32)
        self._avgdl = float(lengths.mean()) if n and lengths.sum() > 0 else 1.0
        self._terms, self._df = postings.terms, postings.df
        self._docs, self._tfs = postings.docs, postings.tfs
        # Lucene BM25: idf = ln(1 + (N - df + .5) / (df + .5)), tf / (tf + k1 * (1 - b + b * len / avglen)).
        # A posting's weight is computed when a query reaches its term (_weights), not for every posting here.
        self._idfs = np.log1p((self._n - self._df + 0.5) / (self._df + 0.5)).astype(np.float32)
        self._norm = (K1 * ((1 - B) + B * lengths / self._avgdl)).astype(np.float32)
        self._indptr = np.concatenate([[0], np.cumsum(self._df)]).astype(np.int64)

    def _weights(self, column: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, BM25 weights) of one term's postings: the same float32 operations, in the same order, as
        weighting every posting at once would apply to them."""
        a, b = self._indptr[column], self._indptr[column + 1]
        docs, tfs = self._docs[a:b], self._tfs[a:b].astype(np.float32)
        return docs, self._idfs[column] * tfs / (tfs + self._norm[docs])

    def _position(self, doc_id: int) -> int | None:
        """The position of a base document, None when the build lacks it."""
        i = int(np.searchsorted(self._ids, doc_id))
        return i if i < len(self._ids) and self._ids[i] == doc_id else None

    @property
    def delta_size(self) -> int:
        """Chunks added since the build."""
        return len(self._delta)

    def needs_rebuild(self) -> bool:
        """True when the delta has grown past what per-query scoring handles cheaply."""
        return len(self._delta) > max(MAX_DELTA_DOCS, len(self._ids) // 10)

    def remove(self, doc_ids: Iterable[int]) -> None:
        """Drop chunks (masked in the base, deleted from the delta)."""
        for doc_id in doc_ids:
            pos = self._position(doc_id)
            if pos is not None:
                self._alive[pos] = 0.0
            self._delta.pop(doc_id, None)

    def add(self, doc_id: int, counts: Mapping[int, int]) -> None:
        """Add a chunk (term hash -> count) to the delta; a no-op when the base already holds it."""
        pos = self._position(doc_id)
        if pos is not None and self._alive[pos]:
            return
        self._delta[doc_id] = (counts, sum(counts.values()))

    def _column(self, term: int) -> int | None:
        i = int(np.searchsorted(self._terms, term))
        return i if i < len(self._terms) and self._terms[i] == term else None

    def _idf(self, column: int | None) -> float:
        df = int(self._df[column]) if column is not None else 0
        return math.log(1 + (self._n - df + 0.5) / (df + 0.5))

    def _score(self, query: Mapping[int, float], tf: Mapping[int, int], length: int) -> float:
        """BM25 of one document given as term counts, on the base's statistics (`query`: hash -> idf)."""
        norm = K1 * ((1 - B) + B * length / self._avgdl)
        score = 0.0
        for term, idf in query.items():
            f = tf.get(term)
            if f:
                score += idf * f / (norm + f)
        return score

    @property
    def ids(self) -> np.ndarray:
        """The base documents' ids, in the order of base_scores()' array."""
        return self._ids

    @staticmethod
    def _hashes(query: Sequence[str]) -> list[int]:
        return list(dict.fromkeys(term_hash(t) for t in query))

    def base_scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 of every base document for the query's distinct terms (aligned with `ids`; removed ones 0)."""
        scores = np.zeros(len(self._ids), dtype=np.float32)
        for h in self._hashes(query):
            c = self._column(h)
            if c is not None:
                docs, weights = self._weights(c)
                scores[docs] += weights  # a term occurs once per document
        return scores * self._alive

    def delta_scores(self, query: Sequence[str]) -> list[tuple[int, float]]:
        """(id, score) of the chunks added since the build that match the query."""
        if not self._delta:
            return []
        idfs = {h: self._idf(self._column(h)) for h in self._hashes(query)}
        scored = ((doc_id, self._score(idfs, tf, length)) for doc_id, (tf, length) in self._delta.items())
        return [(doc_id, s) for doc_id, s in scored if s > 0]

    def search(
        self,
        query: Sequence[str],
        top_n: int,
        exclude: set[int] | None = None,
        extra: Sequence[tuple[Hashable, Mapping[int, int]]] = (),
    ) -> list[tuple[Hashable, float]]:
        """Best (id, score) pairs; `exclude` hides ids, `extra` are temporary documents scored for this query."""
        hashes = self._hashes(query)
        if not hashes:
            return []
        results: list[tuple[Hashable, float]] = []
        if len(self._ids):
            scores = self.base_scores(query)
            if exclude:
                for doc_id in exclude:
                    pos = self._position(doc_id)
                    if pos is not None:
                        scores[pos] = 0.0
            k = min(top_n, len(scores))
            top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
            results.extend((int(self._ids[i]), float(scores[i])) for i in top if scores[i] > 0)
        idfs = {h: self._idf(self._column(h)) for h in hashes}
        for doc_id, (tf, length) in self._delta.items():
            if exclude and doc_id in exclude:
                continue
            s = self._score(idfs, tf, length)
            if s > 0:
                results.append((doc_id, s))
        for key, counts in extra:
            s = self._score(idfs, counts, sum(counts.values()))
            if s > 0:
                results.append((key, s))
        results.sort(key=lambda r: -r[1])
        return results[:top_n]
