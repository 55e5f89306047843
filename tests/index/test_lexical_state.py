"""The stored BM25 build and its exact update: the same arrays and rankings as a build over the same chunks."""

from __future__ import annotations

import logging
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex, lexical_state
from lsp_agent.index.lexical import LexicalIndex
from lsp_agent.index.postings import Postings
from lsp_agent.index.tokens import COUNT_MASK, pack_terms, term_hash

FIELDS = ("ids", "lengths", "terms", "df", "docs", "tfs")
QUERIES = ["cart total", "refund payment", "ShoppingCart.total_price", "render email template", "tax"]


def assert_same(a: Postings, b: Postings) -> None:
    """Equal element for element, and of the same types."""
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


def chunk(rng: random.Random, vocabulary: int) -> tuple[int, bytes]:
    """(length, packed terms) of a random chunk: a few terms of a small vocabulary, some with large counts."""
    counts = {
        rng.randrange(vocabulary) * 7919 + 3: rng.choice([1, 1, 2, 3, 70000])
        for _ in range(rng.randrange(12))
    }
    return sum(min(c, COUNT_MASK) for c in counts.values()), pack_terms(counts)


def build(chunks: dict[int, tuple[int, bytes]]) -> Postings:
    """A build over chunks by id."""
    ids = sorted(chunks)
    return Postings.from_blobs(
        np.array(ids, dtype=np.int64), np.array([chunks[i][0] for i in ids]), [chunks[i][1] for i in ids]
    )


def weights(index: LexicalIndex) -> bytes:
    """Every posting's BM25 weight, term by term, as bytes."""
    return b"".join(index._weights(column)[1].tobytes() for column in range(len(index._terms)))


@pytest.mark.parametrize("seed", range(12))
def test_an_update_equals_a_build_over_the_same_chunks(seed: int) -> None:
    rng = random.Random(seed)
    vocabulary = rng.choice([5, 40, 400])
    before = {i: chunk(rng, vocabulary) for i in rng.sample(range(1, 3000), rng.randrange(0, 300))}
    after = {i: c for i, c in before.items() if rng.random() > rng.choice([0.0, 0.05, 0.5, 1.0])}
    for i in rng.sample(range(1, 4000), rng.randrange(0, 60)):  # some below kept ids, some above every one
        if i not in before:
            after[i] = chunk(rng, vocabulary)
    stored = build(before)
    added = sorted((i, *after[i]) for i in after if i not in before)
    updated = stored.updated(np.array(sorted(after), dtype=np.int64), added)
    assert_same(updated, build(after))
    fresh, patched = LexicalIndex.from_postings(build(after)), LexicalIndex.from_postings(updated)
    assert weights(fresh) == weights(patched) and fresh._avgdl == patched._avgdl


@pytest.mark.parametrize("seed", range(4))
def test_weights_per_term_are_those_of_weighing_every_posting_at_once(seed: int) -> None:
    rng = random.Random(seed)
    words = [f"word{n}" for n in range(30)]
    chunks = {
        i: (
            rng.randrange(1, 90),
            pack_terms({term_hash(w): rng.choice([1, 2, 5]) for w in rng.sample(words, 4)}),
        )
        for i in range(1, rng.randrange(2, 400))
    }
    index = LexicalIndex.from_postings(build(chunks))
    tfs = index._tfs.astype(np.float32)  # the former build-time formula, over all postings at once
    every = np.repeat(index._idfs, index._df) * tfs / (tfs + index._norm[index._docs])
    assert weights(index) == every.tobytes()
    query = rng.sample(words, 3)
    scores = np.zeros(len(index.ids), dtype=np.float32)
    for word in query:
        column = index._column(term_hash(word))
        if column is not None:
            a, b = index._indptr[column], index._indptr[column + 1]
            scores[index._docs[a:b]] += every[a:b]
    assert scores.any() and index.base_scores(query).tobytes() == scores.tobytes()


def test_an_update_refuses_rows_that_are_not_the_missing_chunks() -> None:
    rng = random.Random(1)
    stored = build({i: chunk(rng, 20) for i in (1, 2, 3)})
    with pytest.raises(ValueError, match="not the chunks given"):
        stored.updated(np.array([1, 2, 3, 4], dtype=np.int64), [])


def edit(root: Path) -> None:
    """Local changes: a file edited, one deleted, one added."""
    cart = root / "shop" / "cart.py"
    cart.write_text(cart.read_text() + "\n\ndef grand_total_with_tax(cart):\n    return cart.total * 1.2\n")
    (root / "shop" / "emails.py").unlink()
    (root / "shop" / "returns.py").write_text("def refund_parcel(order):\n    return order.total * tax\n")


def rankings(index: WorkspaceIndex) -> list:
    """Every hit of every query, in order, with its score."""
    out = [[(h.path, h.start, h.symbol, h.score) for h in index.search(q, 50)] for q in QUERIES]
    return out + [[(f.path, f.score) for f in index.locate(q, 50)] for q in QUERIES]


def test_an_index_with_a_stored_build_and_later_edits_ranks_as_a_fresh_build(
    shop_repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "index.sqlite3"
    with WorkspaceIndex(shop_repo, IndexConfig(), db_path=db) as index:
        index.refresh()
    conn = sqlite3.connect(db, isolation_level=None)
    lexical_state.save(conn, lexical_state.chunk_postings(conn))
    conn.close()
    edit(shop_repo)
    caplog.set_level(logging.DEBUG, logger="lsp_agent.index.lexical_state")
    with WorkspaceIndex(shop_repo, IndexConfig(), db_path=db) as index:
        assert index.refresh().parsed == 2
        answers = rankings(index)
        assert "BM25 from the stored build" in caplog.text
        conn = sqlite3.connect(db)
        fresh = LexicalIndex.from_postings(lexical_state.chunk_postings(conn))
        conn.close()
        ours = index._lexical
        assert ours is not None
        for name in ("_ids", "_terms", "_df", "_docs", "_indptr"):
            assert np.array_equal(getattr(ours, name), getattr(fresh, name)), name
        assert weights(ours) == weights(fresh)
    with WorkspaceIndex(shop_repo, IndexConfig(), db_path=tmp_path / "cold.sqlite3") as cold:
        cold.refresh()
        assert answers == rankings(cold)  # scores and order, to the last bit


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE lexical_state SET data = substr(data, 1, length(data) - 8) WHERE name = 'docs'",
        "UPDATE lexical_state SET data = X'00' WHERE name = 'format'",
        "DELETE FROM lexical_state WHERE name = 'tfs'",
    ],
    ids=["cut", "format", "missing"],
)
def test_a_damaged_or_foreign_stored_build_is_built_afresh(
    shop_repo: Path, tmp_path: Path, damage: str
) -> None:
    db = tmp_path / "index.sqlite3"
    with WorkspaceIndex(shop_repo, IndexConfig(), db_path=db) as index:
        index.refresh()
        before = rankings(index)
    conn = sqlite3.connect(db, isolation_level=None)
    lexical_state.save(conn, lexical_state.chunk_postings(conn))
    conn.execute(damage)
    assert lexical_state.load(conn) is None
    conn.close()
    with WorkspaceIndex(shop_repo, IndexConfig(), db_path=db) as index:
        assert rankings(index) == before
