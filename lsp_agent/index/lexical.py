"""BM25 over code tokens: a bm25s index of the persisted chunks plus a small delta of recent edits.

Rebuilding bm25s for one edited file would cost a second on a large repository, so edits since the last build are
kept aside: their old chunks are masked out of the bm25s scores and their new chunks are scored with the same
Lucene BM25 formula and the base's document frequencies. The delta is folded in by the next rebuild.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence

import bm25s
import numpy as np

K1 = 1.2
B = 0.75
logging.getLogger("bm25s").setLevel(logging.WARNING)  # it logs every build at DEBUG

MAX_DELTA_DOCS = 3000  # beyond this many delta chunks a rebuild is cheaper than scoring them one by one


class LexicalIndex:
    """BM25 scores over chunks keyed by id; supports removing and adding chunks without a rebuild."""

    def __init__(
        self, vocab: dict[str, int], doc_ids: np.ndarray, lengths: np.ndarray, blobs: Sequence[bytes]
    ) -> None:
        """Build from stored chunks: `blobs[i]` holds (term id, count) int32 pairs of document `doc_ids[i]`."""
        self._ids = np.asarray(doc_ids, dtype=np.int64)
        self._pos = {int(doc_id): i for i, doc_id in enumerate(self._ids)}
        self._alive = np.ones(len(self._ids), dtype=np.float32)
        self._delta: dict[int, tuple[Mapping[str, int], int]] = {}
        self._vocab = vocab
        n = len(self._ids)
        self._n = max(n, 1)
        lengths = np.asarray(lengths, dtype=np.float32)
        self._avgdl = float(lengths.mean()) if n and lengths.sum() > 0 else 1.0
        vocab_size = max(vocab.values(), default=-1) + 1
        pairs = np.frombuffer(b"".join(blobs), dtype=np.int32).reshape(-1, 2)
        sizes = np.fromiter((len(b) // 8 for b in blobs), dtype=np.int64, count=n)
        terms, tfs = pairs[:, 0], pairs[:, 1].astype(np.float32)
        docs = np.repeat(np.arange(n, dtype=np.int32), sizes)
        df = np.bincount(terms, minlength=vocab_size)
        self._df = df
        # Lucene BM25, as bm25s computes it: idf = ln(1 + (N - df + .5) / (df + .5)), tf / (tf + k1 * norm).
        idf = np.log1p((self._n - df + 0.5) / (df + 0.5)).astype(np.float32)
        norm = (K1 * ((1 - B) + B * lengths / self._avgdl)).astype(np.float32)
        weights = idf[terms] * tfs / (tfs + norm[docs])
        order = np.argsort(terms, kind="stable")
        self._bm25 = bm25s.BM25(k1=K1, b=B, method="lucene")
        self._bm25.scores = {
            "data": weights[order].astype(np.float32),
            "indices": docs[order],
            "indptr": np.concatenate([[0], np.cumsum(df)]).astype(np.int64),
            "num_docs": n,
        }
        self._bm25.vocab_dict = vocab
        self._bm25.nonoccurrence_array = None
        self._bm25.unique_token_ids_set = set(vocab.values())

    @property
    def delta_size(self) -> int:
        """Chunks added since the bm25s build."""
        return len(self._delta)

    def needs_rebuild(self) -> bool:
        """True when the delta has grown past what per-query scoring handles cheaply."""
        return len(self._delta) > max(MAX_DELTA_DOCS, len(self._ids) // 10)

    def remove(self, doc_ids: Iterable[int]) -> None:
        """Drop chunks (masked in the base, deleted from the delta)."""
        for doc_id in doc_ids:
            pos = self._pos.get(doc_id)
            if pos is not None:
                self._alive[pos] = 0.0
            self._delta.pop(doc_id, None)

    def add(self, doc_id: int, counts: Mapping[str, int]) -> None:
        """Add a chunk to the delta (a no-op when the base already holds it)."""
        pos = self._pos.get(doc_id)
        if pos is not None and self._alive[pos]:
            return
        self._delta[doc_id] = (counts, sum(counts.values()))

    def _idf(self, token: str) -> float:
        tid = self._vocab.get(token)
        df = int(self._df[tid]) if tid is not None and tid < len(self._df) else 0
        return math.log(1 + (self._n - df + 0.5) / (df + 0.5))

    def score_tokens(self, query: Sequence[str], tf: Mapping[str, int], length: int) -> float:
        """BM25 of one document given as term counts, on the base's statistics."""
        norm = K1 * ((1 - B) + B * length / self._avgdl)
        score = 0.0
        for token in query:
            f = tf.get(token)
            if f:
                score += self._idf(token) * f / (norm + f)
        return score

    def search(
        self,
        query: Sequence[str],
        top_n: int,
        exclude: set[int] | None = None,
        extra: Sequence[tuple[Hashable, Mapping[str, int]]] = (),
    ) -> list[tuple[Hashable, float]]:
        """Best (id, score) pairs; `exclude` hides ids, `extra` are temporary documents scored for this query."""
        terms = list(dict.fromkeys(query))
        if not terms:
            return []
        results: list[tuple[Hashable, float]] = []
        if len(self._ids):
            ids = [i for i in self._bm25.get_tokens_ids(terms) if i < len(self._df)]
            if ids:
                scores = self._bm25.get_scores_from_ids(ids) * self._alive
                if exclude:
                    for doc_id in exclude:
                        pos = self._pos.get(doc_id)
                        if pos is not None:
                            scores[pos] = 0.0
                k = min(top_n, len(scores))
                top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
                results.extend((int(self._ids[i]), float(scores[i])) for i in top if scores[i] > 0)
        for doc_id, (tf, length) in self._delta.items():
            if exclude and doc_id in exclude:
                continue
            s = self.score_tokens(terms, tf, length)
            if s > 0:
                results.append((doc_id, s))
        for key, counts in extra:
            s = self.score_tokens(terms, counts, sum(counts.values()))
            if s > 0:
                results.append((key, s))
        results.sort(key=lambda r: -r[1])
        return results[:top_n]
