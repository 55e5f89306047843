"""`lsp-agent acp` reads the config files: a user file sets a session's context window, approves edits and sets
the MCP start timeout; a workspace file that tries to approve edits is refused (the client is asked)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from acp_support import RecordingClient, acp_agent, agent_env, text_prompt

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="function")]

BUGGY = "def add(a, b):\n    return a - b\n"
FIX = [
    {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}}]},
    {"content": "done", "tool_calls": [{"name": "task_complete", "arguments": {"summary": "fixed add"}}]},
]  # fmt: skip


def project(path: Path, config: str | None = None) -> Path:
    """A folder with calc.py (and a workspace config.toml when given)."""
    (path / ".lsp-agent").mkdir(parents=True)
    (path / "calc.py").write_text(BUGGY)
    if config is not None:
        (path / ".lsp-agent" / "config.toml").write_text(config)
    return path


async def test_the_config_files_configure_acp_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_file = home / "config" / "lsp-agent" / "config.toml"  # agent_env's XDG_CONFIG_HOME is home/config
    user_file.parent.mkdir(parents=True)
    hang = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # never answers initialize
    user_file.write_text(
        f'contextWindow = 65432\nmcpStartupTimeout = 1\n[permissions]\nedit_files = "allow"\n'
        f"[mcpServers.hang]\ncommand = {json.dumps(hang[0])}\nargs = {json.dumps(hang[1:])}\n"
    )
    mine = project(tmp_path / "mine")
    cloned = project(tmp_path / "cloned", 'contextWindow = 54321\n[permissions]\nedit_files = "allow"\n')
    client = RecordingClient(default_answer="reject_once")
    with ScriptedModelServer([]) as server:
        async with acp_agent(client, agent_env(server, home)) as (conn, _):
            server.reset(FIX)
            session = await conn.new_session(cwd=str(mine), mcp_servers=[])
            reply = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix")), 300
            )
            assert reply.stop_reason == "end_turn"
            assert client.questions == [] and (mine / "calc.py").read_text() == BUGGY.replace("-", "+")
            assert {u.size for u in client.of("usage_update")} == {65432}
            assert "MCP server 'hang'" in client.text_of("agent_message_chunk")
            assert "did not start within 1s" in client.text_of("agent_message_chunk")

            # the settings are read for each new session: without the user's permission, the repository's
            # own `edit_files = "allow"` is refused, so the client is asked (and rejects)
            user_file.write_text("contextWindow = 65432\n")
            client.updates.clear()
            server.reset(FIX)
            session = await conn.new_session(cwd=str(cloned), mcp_servers=[])
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=text_prompt("fix")), 120)
            assert len(client.questions) == 1 and (cloned / "calc.py").read_text() == BUGGY
            assert {u.size for u in client.of("usage_update")} == {54321}  # its harmless setting applies
