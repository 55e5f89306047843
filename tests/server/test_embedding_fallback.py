"""A failing embedding backend through the real protocol: the user is told, and the index goes on lexically."""

from __future__ import annotations

import pytest
from lsprotocol import types
from server_editor import start_editor, stop_editor, write_tree

from lsp_agent.testing.scripted_model import ScriptedModelServer

FILES = {"shop/payment.py": "def charge_card(card, amount):\n    return card.charge(amount)\n"}


@pytest.mark.asyncio
async def test_failing_embeddings_are_reported_and_indexing_falls_back_to_lexical(tmp_path):
    root = write_tree(tmp_path / "ws", FILES)
    with ScriptedModelServer([]) as model:
        model.embedding_error = (401, "invalid api key")
        settings = {"embeddings": "openai/test-embed", "apiBase": model.base_url, "apiKey": "test"}
        editor = await start_editor(root, tmp_path / "cache", init_options={"lspAgent": settings})
        try:
            status = await editor.wait_index_ready()
            assert status["index"]["ready"] and status["index"]["files"] == 1
            errors = [m.message for m in editor.client.messages if m.type == types.MessageType.Error]
            (error,) = [m for m in errors if "lspAgent.embeddings" in m]
            assert "openai/test-embed" in error and "invalid api key" in error and "lexical" in error
            hits = await editor.command("lspAgent.search", {"query": "charge card", "topK": 1})
            assert hits[0]["symbol"] == "charge_card"
        finally:
            await stop_editor(editor)
