"""BM25's postings sorted by term, built from the chunks' packed term counts or updated exactly from a former build.

A build sorts every (term, count) pair of every chunk by term; on millions of lines that sort is most of a first
search. An update instead takes a former build's sorted postings, drops the removed chunks', merges in the added
chunks' and renumbers: the arrays are equal, element for element, to a build over the same chunks, so scores and
rankings are too (tests compare them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lsp_agent.index.tokens import COUNT_MASK


@dataclass(frozen=True)
class Postings:
    """Chunks (ids ascending, token counts) and their postings: per term (ascending), the chunks' positions
    (ascending) and counts; `df[i]` postings belong to `terms[i]`."""

    ids: np.ndarray  # int64, ascending
    lengths: np.ndarray  # int64, tokens per chunk
    terms: np.ndarray  # int64, ascending term hashes
    df: np.ndarray  # int64, postings per term
    docs: np.ndarray  # int32, position of each posting's chunk in `ids`
    tfs: np.ndarray  # uint16, each posting's count

    @classmethod
    def from_blobs(cls, ids: np.ndarray, lengths: np.ndarray, blobs: Sequence[bytes]) -> Postings:
        """Sort the packed term counts of chunks (`blobs[i]` of chunk `ids[i]`, ids ascending) by term."""
        n = len(ids)
        packed = np.frombuffer(b"".join(blobs), dtype=np.int64)
        sizes = np.fromiter((len(b) // 8 for b in blobs), dtype=np.int64, count=n)
        order = np.argsort(packed >> 16, kind="stable")  # stable: a term's chunks stay in id order
        packed = packed[order]
        keys = packed >> 16
        starts = np.ones(len(keys), dtype=bool)
        starts[1:] = keys[1:] != keys[:-1]
        firsts = np.flatnonzero(starts)
        df = np.diff(np.append(firsts, len(keys)))
        docs = np.repeat(np.arange(n, dtype=np.int32), sizes)[order]
        tfs = (packed & COUNT_MASK).astype(np.uint16)
        return cls(
            np.asarray(ids, dtype=np.int64), np.asarray(lengths, dtype=np.int64), keys[firsts], df, docs, tfs
        )

    def updated(self, ids: np.ndarray, added: Sequence[tuple[int, int, bytes]]) -> Postings:
        """The postings of the chunks `ids` (ascending), given this build and the rows (id, length, packed
        terms) of those of `ids` it lacks; chunks it holds that `ids` lacks are dropped. Chunk rows never change
        their terms, so a chunk held here is the chunk of the same id in `ids`.
        """
        ids = np.asarray(ids, dtype=np.int64)
        n = len(ids)
        new_pos = np.minimum(np.searchsorted(ids, self.ids), max(n - 1, 0))
        kept = ids[new_pos] == self.ids if n else np.zeros(len(self.ids), dtype=bool)
        add_ids = np.fromiter((a[0] for a in added), dtype=np.int64, count=len(added))
        add_pos = np.searchsorted(ids, add_ids)
        if len(added) + int(kept.sum()) != n or (len(added) and not np.array_equal(ids[add_pos], add_ids)):
            raise ValueError("the added chunks and the kept ones are not the chunks given")
        lengths = np.empty(n, dtype=np.int64)
        lengths[new_pos[kept]] = self.lengths[kept]
        lengths[add_pos] = [a[1] for a in added]
        docs, tfs, df = self._kept(kept, new_pos)
        # The added postings in (term, position) order: the order a build gives its postings.
        packed = np.frombuffer(b"".join(a[2] for a in added), dtype=np.int64)
        sizes = np.fromiter((len(a[2]) // 8 for a in added), dtype=np.int64, count=len(added))
        add_docs = np.repeat(add_pos.astype(np.int32), sizes)
        order = np.lexsort((add_docs, packed >> 16))
        add_terms, add_docs, add_tfs = packed[order] >> 16, add_docs[order], packed[order] & COUNT_MASK
        live = df > 0  # the former terms some kept chunk still has
        terms = _merged(self.terms[live], add_terms)
        new_df = np.zeros(len(terms), dtype=np.int64)
        new_df[np.searchsorted(terms, self.terms[live])] = df[live]
        ends = np.cumsum(new_df)  # the end of each term's kept postings, in the merged term order
        add_rank = np.searchsorted(terms, add_terms)
        at = ends[add_rank]  # after the term's kept postings: right when the added chunks come last
        for i in np.flatnonzero(add_docs < docs[np.maximum(at - 1, 0)] if len(docs) else []):
            first = at[i] - new_df[add_rank[i]]  # an added chunk before a kept one: find its place
            at[i] = first + np.searchsorted(docs[first : at[i]], add_docs[i])
        new_df += np.bincount(add_rank, minlength=len(terms))
        docs = np.insert(docs, at, add_docs)
        tfs = np.insert(tfs, at, add_tfs.astype(np.uint16))
        return Postings(ids, lengths, terms, new_df, docs, tfs)

    def _kept(self, kept: np.ndarray, new_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positions renumbered, counts, df per term) of the postings of the kept chunks, in build order."""
        if kept.all():
            same = not len(new_pos) or int(new_pos[-1]) == len(new_pos) - 1  # no chunk came before a kept one
            return (self.docs if same else new_pos[self.docs].astype(np.int32)), self.tfs, self.df
        alive = kept[self.docs]
        gone = np.flatnonzero(~alive)
        bounds = np.concatenate([[0], np.cumsum(self.df)])
        df = self.df - np.bincount(np.searchsorted(bounds, gone, side="right") - 1, minlength=len(self.df))
        return new_pos[self.docs[alive]].astype(np.int32), self.tfs[alive], df


def _merged(terms: np.ndarray, more: np.ndarray) -> np.ndarray:
    """Ascending distinct `terms` (ascending, distinct) with those of the sorted `more` they lack."""
    fresh = np.unique(more)
    at = np.searchsorted(terms, fresh)
    fresh = (
        fresh[(at == len(terms)) | (terms[np.minimum(at, len(terms) - 1)] != fresh)] if len(terms) else fresh
    )
    return np.insert(terms, np.searchsorted(terms, fresh), fresh)
