"""Dense vectors through litellm's real HTTP path (the scripted OpenAI-compatible server) and RRF fusion."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.index.embeddings import EmbeddingError, make_embedder
from lsp_agent.testing.scripted_model import ScriptedModelServer, hashed_embedding

REPO = Path(__file__).resolve().parents[2]
# The "model" knows that these words mean the same thing, which BM25 cannot know.
CONCEPTS = {"automobile": "car", "vehicle": "car", "car": "car", "motorcar": "car"}


def _embed(text: str) -> list[float]:
    words = re.findall(r"[a-z]+", text.lower())
    return hashed_embedding(" ".join(CONCEPTS.get(w, w) for w in words), dim=512)


@pytest.fixture
def embed_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer([], embed=_embed) as server:
        yield server


def _config(server: ScriptedModelServer) -> IndexConfig:
    return IndexConfig(embeddings="openai/test-embed", api_base=server.base_url, api_key="test")


def _add_garage(repo: Path) -> Path:
    garage = repo / "shop" / "garage.py"
    garage.write_text(
        "def park_motorcar(spot):\n    return spot\n\n\ndef wash_bicycle(bike):\n    return bike\n"
    )
    return garage


def test_vectors_fused_with_bm25_and_recomputed_only_for_changed_chunks(
    shop_repo: Path, embed_server: ScriptedModelServer
) -> None:
    garage = _add_garage(shop_repo)
    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:
        stats = index.refresh()
        assert len(embed_server.embedding_inputs) >= stats.chunks - 2  # one vector per distinct chunk text
        # "automobile" shares no token with park_motorcar; only the vectors connect them.
        hits = index.search("automobile", top_k=3)
        assert hits and hits[0].symbol == "park_motorcar"

        garage.write_text(garage.read_text().replace("return bike", "return bike.clean()"))
        embed_server.embedding_inputs.clear()
        assert index.refresh().parsed == 1
        # Only the edited function's text changed, so only it is embedded again.
        assert len(embed_server.embedding_inputs) == 1 and "wash_bicycle" in embed_server.embedding_inputs[0]

    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:  # vectors persist
        embed_server.embedding_inputs.clear()
        assert index.refresh().parsed == 0
        hits = index.search("automobile vehicle", top_k=3)
        assert hits[0].symbol == "park_motorcar"
        assert embed_server.embedding_inputs == ["automobile vehicle"]  # only the query was embedded


def test_buffer_updates_and_overrides_get_vectors(shop_repo: Path, embed_server: ScriptedModelServer) -> None:
    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:
        index.refresh()
        index.update_file("shop/emails.py", "def rent_vehicle(days):\n    return days\n")
        assert index.search("automobile", top_k=1)[0].symbol == "rent_vehicle"
        override = {"shop/cart.py": "def tow_car(plate):\n    return plate\n"}
        embed_server.embedding_inputs.clear()
        hits = index.search("automobile", top_k=2, overrides=override)
        assert {h.symbol for h in hits} == {"rent_vehicle", "tow_car"}
        assert any("tow_car" in text for text in embed_server.embedding_inputs)


def test_failing_embedding_model_is_a_clear_error_and_leaves_the_index(
    shop_repo: Path, embed_server: ScriptedModelServer
) -> None:
    embed_server.embedding_error = (500, "embedding backend overloaded")
    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:
        with pytest.raises(EmbeddingError, match="test-embed"):
            index.refresh()
        assert index.stats().files == 0  # rolled back, nothing half-written
        embed_server.embedding_error = None
        assert index.refresh().parsed == 7


def test_search_keeps_its_lexical_half_when_the_embedding_model_fails(
    shop_repo: Path, embed_server: ScriptedModelServer
) -> None:
    _add_garage(shop_repo)
    with WorkspaceIndex(shop_repo, _config(embed_server)) as index:
        index.refresh()
        embed_server.embedding_error = (503, "embedding backend down")
        hits = index.search("park motorcar", top_k=2)
        assert hits and hits[0].symbol == "park_motorcar"  # BM25 alone still answers
        assert "park motorcar" in embed_server.embedding_inputs  # the dense half was really tried


def test_unreachable_embedding_model_is_a_clear_error() -> None:
    embedder = make_embedder("openai/test-embed", api_base="http://127.0.0.1:9/v1", api_key="test")
    assert embedder is not None
    with pytest.raises(EmbeddingError, match="test-embed"):
        embedder.embed(["hello"])
    assert make_embedder("none") is None


@pytest.mark.slow
def test_cli_search_with_litellm_embeddings(shop_repo: Path, embed_server: ScriptedModelServer) -> None:
    _add_garage(shop_repo)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "LSP_AGENT_API_BASE": embed_server.base_url,
        "LSP_AGENT_API_KEY": "test",
    }
    args = ["search", "automobile", "--repo", str(shop_repo), "--json", "--top-k", "2"]

    def search() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lsp_agent", *args, "--embeddings", "openai/test-embed"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )

    result = search()
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert hits[0]["symbol"] == "park_motorcar" and hits[0]["path"] == "shop/garage.py"
    assert "automobile" in embed_server.embedding_inputs

    embed_server.embedding_error = (401, "invalid api key")
    (shop_repo / "shop" / "garage.py").write_text("def park_truck():\n    return 1\n")
    result = search()
    assert result.returncode != 0
    assert "test-embed" in result.stderr and "invalid api key" in result.stderr
    assert "Traceback" not in result.stderr and "Give Feedback" not in result.stderr + result.stdout
