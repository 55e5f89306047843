"""The ACP tests' shared agent: one `lsp-agent acp` process and one scripted model per test module."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from acp_support import ClientSwitch, SharedAgent, acp_agent, agent_env

from lsp_agent.testing.scripted_model import ScriptedModelServer


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SharedAgent]:
    """A running agent with a scripted model; tests set the script and client, and open their own sessions."""
    home = tmp_path_factory.mktemp("acp-home")
    switch = ClientSwitch()
    with ScriptedModelServer([]) as server:
        env = agent_env(server, home)
        async with acp_agent(switch, env) as (conn, proc):
            yield SharedAgent(conn, proc, server, switch, env)
