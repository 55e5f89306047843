"""Cosine search over chunk vectors, with the same remove/add delta as the lexical index."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np


class VectorIndex:
    """Normalised vectors keyed by chunk id; dot product = cosine similarity."""

    def __init__(self, ids: np.ndarray, matrix: np.ndarray) -> None:
        self._ids = ids
        self._matrix = matrix
        self._pos = {int(i): p for p, i in enumerate(ids)}
        self._alive = np.ones(len(ids), dtype=bool)
        self._delta: dict[int, np.ndarray] = {}

    def remove(self, doc_ids: Iterable[int]) -> None:
        """Hide chunks."""
        for doc_id in doc_ids:
            pos = self._pos.get(doc_id)
            if pos is not None:
                self._alive[pos] = False
            self._delta.pop(doc_id, None)

    def add(self, doc_id: int, vector: np.ndarray) -> None:
        """Add a chunk's vector (a no-op when the base already holds it)."""
        pos = self._pos.get(doc_id)
        if pos is not None and self._alive[pos]:
            return
        self._delta[doc_id] = vector

    def search(
        self,
        query: np.ndarray,
        top_n: int,
        exclude: set[int] | None = None,
        extra: Sequence[tuple[Hashable, np.ndarray]] = (),
    ) -> list[tuple[Hashable, float]]:
        """Best (id, cosine) pairs."""
        results: list[tuple[Hashable, float]] = []
        if len(self._ids) and self._matrix.shape[1] == query.shape[0]:
            scores = self._matrix @ query
            scores = np.where(self._alive, scores, -np.inf)
            if exclude:
                for doc_id in exclude:
                    pos = self._pos.get(doc_id)
                    if pos is not None:
                        scores[pos] = -np.inf
            k = min(top_n, len(scores))
            top = np.argpartition(-scores, k - 1)[:k]
            results.extend((int(self._ids[i]), float(scores[i])) for i in top if np.isfinite(scores[i]))
        for doc_id, vec in self._delta.items():
            if not (exclude and doc_id in exclude) and vec.shape == query.shape:
                results.append((doc_id, float(vec @ query)))
        for key, vec in extra:
            if vec.shape == query.shape:
                results.append((key, float(vec @ query)))
        results.sort(key=lambda r: -r[1])
        return results[:top_n]


def reciprocal_rank_fusion(
    *rankings: Sequence[tuple[Hashable, float]], k: int = 60
) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists: score = sum of 1 / (k + rank)."""
    fused: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, (key, _) in enumerate(ranking):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank + 1)
    return sorted(fused.items(), key=lambda r: -r[1])
