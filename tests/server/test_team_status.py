"""An unreachable team index through the real protocol: one warning per outage, the local index still serves."""

from __future__ import annotations

import asyncio
import socket

import pytest
from lsprotocol import types
from server_editor import start_editor, stop_editor, write_tree

FILES = {"shop/payment.py": "def charge_card(card, amount):\n    return card.charge(amount)\n"}


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.asyncio
async def test_an_unreachable_team_index_is_shown_once_and_the_local_index_serves(tmp_path):
    root = write_tree(tmp_path / "ws", FILES)
    url = f"postgresql://alice:s3cret-pw@127.0.0.1:{closed_port()}/team?connect_timeout=2"
    editor = await start_editor(root, tmp_path / "cache", init_options={"lspAgent": {"indexStore": url}})
    try:
        status = await editor.wait_index_ready()
        assert status["index"]["files"] == 1
        team = status["index"]["team"]
        assert team["state"] == "unreachable" and team["store"].startswith("alice@127.0.0.1:")
        assert "is unreachable" in team["message"]
        hits = await editor.command("lspAgent.search", {"query": "charge card", "topK": 1})
        assert hits[0]["symbol"] == "charge_card"
        await editor.command("lspAgent.reindex")  # the outage goes on: no second message
        await asyncio.sleep(0.5)
        await editor.wait_index_ready()
        warnings = [m.message for m in editor.client.messages if m.type == types.MessageType.Warning]
        (warning,) = [m for m in warnings if "team index" in m]
        assert "alice@127.0.0.1:" in warning and "is unreachable" in warning and "local index only" in warning
        every = " ".join(m.message for m in editor.client.messages) + str(team)
        assert "s3cret-pw" not in every
    finally:
        await stop_editor(editor)
