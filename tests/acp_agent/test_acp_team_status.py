"""ACP with an unreachable team index: /status says so, and the local index serves."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from acp_support import RecordingClient, acp_agent, agent_env, text_prompt

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


async def until(check, timeout: float = 60.0) -> None:
    """Poll `check` until it holds."""
    for _ in range(int(timeout * 10)):
        if check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("timed out")


async def test_status_names_an_unreachable_team_index(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://alice:s3cret-pw@127.0.0.1:{port}/team?connect_timeout=2"
    client = RecordingClient()
    async with acp_agent(client, agent_env(None, tmp_path, LSP_AGENT_INDEX_STORE=url)) as (conn, _):
        session = await conn.new_session(cwd=str(root), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=text_prompt("/reindex"))
        await until(lambda: "Workspace index: ready" in client.text_of("agent_message_chunk"))
        await conn.prompt(session_id=session.session_id, prompt=text_prompt("/status"))
        await until(lambda: "mode: Code" in client.text_of("agent_message_chunk"))
    text = client.text_of("agent_message_chunk")
    line = next(ln for ln in text.splitlines() if ln.startswith("- workspace index:"))
    assert "ready (1 files, local only: the team index at alice@127.0.0.1:" in line
    assert "is unreachable" in line and "s3cret-pw" not in text
