"""A Streamable HTTP client that vanishes mid-prompt (its event streams closed, no DELETE) has its prompt cancelled
and the command it was running stopped, as a WebSocket client's, after the grace a reconnecting client gets."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from acp import PROTOCOL_VERSION, connect_to_agent
from acp.http.client import create_http_stream
from acp.schema import ClientCapabilities, FileSystemCapabilities
from acp_support import RecordingClient, agent_env, text_prompt
from test_acp_remote import _running, call, listening

from lsp_agent.acp.remote_http import DISCONNECT_GRACE_SECONDS
from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


async def wait_for(predicate, seconds: float) -> bool:
    """Whether `predicate` came true within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.1)
    return bool(predicate())


async def test_a_streamable_http_client_that_vanishes_has_its_prompt_cancelled(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    steps = [{"tool_calls": [call("run_command", argv=["sleep", "62.5"])]}]
    client = RecordingClient(default_answer="allow_once")
    with ScriptedModelServer(steps) as server:
        with listening(agent_env(server, tmp_path), tmp_path, "--log-level", "INFO") as agent:
            http = httpx.AsyncClient(timeout=httpx.Timeout(None))  # the client's own: closing it is vanishing
            conn = connect_to_agent(client, create_http_stream(agent.http_url, client=http))
            fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(fs=fs)
            )
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=text_prompt("go")))
            assert await wait_for(lambda: _running("sleep 62.5"), 120), "the command never started"

            await http.aclose()  # gone: every event stream drops, no DELETE is ever sent
            vanished = time.monotonic()
            stopped = await wait_for(lambda: not _running("sleep 62.5"), DISCONNECT_GRACE_SECONDS + 15)
            took = time.monotonic() - vanished
            turn.cancel()
            await asyncio.gather(turn, return_exceptions=True)
            assert stopped, "the command outlived its client's connection"
            assert took >= DISCONNECT_GRACE_SECONDS - 0.5  # not before the grace a reconnecting client gets
            assert agent.proc.poll() is None  # the listener serves on
            assert "a Streamable HTTP client went away" in "".join(agent.stderr)

            # the listener still serves a new client
            async with httpx.AsyncClient(timeout=httpx.Timeout(None)) as again:
                other = connect_to_agent(RecordingClient(), create_http_stream(agent.http_url, client=again))
                await other.initialize(protocol_version=PROTOCOL_VERSION)
                assert (await other.new_session(cwd=str(workspace), mcp_servers=[])).session_id
                await other.close()
