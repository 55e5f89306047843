"""The ACP tests' shared agent: one `lsp-agent acp` process and one scripted model per test module."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from acp_support import ClientSwitch, SharedAgent, acp_agent, agent_env, text_prompt

from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SharedAgent]:
    """A running agent with a scripted model; tests set the script and client, and open their own sessions."""
    home = tmp_path_factory.mktemp("acp-home")
    switch = ClientSwitch()
    with ScriptedModelServer([]) as server:
        env = agent_env(server, home)
        async with acp_agent(switch, env) as (conn, proc):
            # one finished turn first: litellm's import (a minute on a loaded machine) is not any test's to wait for
            (home / "warm").mkdir()
            server.reset([{"tool_calls": [{"name": "task_complete", "arguments": {"summary": "ready"}}]}])
            session = await conn.new_session(cwd=str(home / "warm"), mcp_servers=[])
            await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("ready?")), 300
            )
            yield SharedAgent(conn, proc, server, switch, env)
