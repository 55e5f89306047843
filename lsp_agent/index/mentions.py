"""Which files mention which names: the files' identifier counts, searchable by name (find_symbol, repo map)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lsp_agent.index.tokens import COUNT_MASK, term_hash


class Mentions:
    """An in-memory inverted index: identifier hash -> (file, count), built from tokens.identifier_counts() blobs."""

    def __init__(self, files: Sequence[tuple[str, bytes]]) -> None:
        self.paths = [path for path, _ in files]
        arrays = [np.frombuffer(blob, dtype=np.int64) for _, blob in files]
        packed = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
        owners = np.repeat(np.arange(len(arrays), dtype=np.int64), [len(a) for a in arrays])
        hashes = packed >> 16
        order = np.argsort(hashes, kind="stable")  # stable: within a name, files stay in path order
        self._hashes = hashes[order]
        self._counts = (packed & COUNT_MASK)[order]
        self._files = owners[order]

    def files_mentioning(self, name: str) -> list[tuple[str, int]]:
        """(path, occurrences) of the files where `name` occurs as an identifier, by path."""
        h = term_hash(name)
        lo, hi = np.searchsorted(self._hashes, [h, h + 1])
        return [(self.paths[f], int(c)) for f, c in zip(self._files[lo:hi], self._counts[lo:hi], strict=True)]

    def mentions_of(self, names: Sequence[str]) -> list[tuple[int, int, int]]:
        """(name index, file index, occurrences) for every file mentioning one of `names`."""
        hashes = np.fromiter(map(term_hash, names), dtype=np.int64, count=len(names))
        lo = np.searchsorted(self._hashes, hashes, side="left")
        hi = np.searchsorted(self._hashes, hashes, side="right")
        sizes = hi - lo
        which = np.repeat(np.arange(len(names)), sizes)
        positions = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
        return list(
            zip(
                which.tolist(), self._files[positions].tolist(), self._counts[positions].tolist(), strict=True
            )
        )
