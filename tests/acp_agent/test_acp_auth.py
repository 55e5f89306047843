"""ACP `authenticate` through the real protocol: an API key given once (the env_var auth method) is kept 0600 beside
the permission rules and used by later runs, and never reaches a log or the stored session (its transcript)."""

from __future__ import annotations

import asyncio
import stat
import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.schema import ClientCapabilities, Implementation
from acp_support import RecordingClient, agent_env, text_prompt

from lsp_agent.testing.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]
SECRET = "sk-test-0123456789abcdef-never-shown"


async def start(env: dict[str, str], log_file: Path):
    """`lsp-agent acp` logging at DEBUG to `log_file` (the caller enters the returned context)."""
    return spawn_agent_process(
        RecordingClient(),
        sys.executable,
        "-m",
        "lsp_agent",
        "acp",
        "--log-level",
        "DEBUG",
        "--log-file",
        str(log_file),
        env=env,
    )


async def initialize(conn) -> object:
    return await asyncio.wait_for(
        conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="tests", version="1"),
        ),
        30,
    )


async def test_a_key_given_once_is_kept_private_and_used_by_later_runs(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("x = 1\n")
    log_file = tmp_path / "agent.log"
    with ScriptedModelServer(
        [{"tool_calls": [{"name": "task_complete", "arguments": {"summary": "ok"}}]}]
    ) as server:
        env = agent_env(server, home)
        del env["LSP_AGENT_API_KEY"]
        # the client asked the user for the key and starts the agent with it, then authenticates
        async with await start({**env, "LSP_AGENT_API_KEY": SECRET}, log_file) as (conn, _proc):
            answer = await initialize(conn)
            (method,) = answer.auth_methods
            assert method.type == "env_var" and [v.name for v in method.vars] == ["LSP_AGENT_API_KEY"]
            assert method.vars[0].secret
            caps = answer.agent_capabilities.session_capabilities
            assert caps.list and caps.resume and caps.close and caps.delete and caps.additional_directories
            await conn.authenticate(method_id="api-key")
            with pytest.raises(RequestError, match="unknown auth method"):
                await conn.authenticate(method_id="oauth")
        key_file = home / "config" / "lsp-agent" / "permissions" / "api-key"
        assert key_file.read_text().strip() == SECRET
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600

        # a later start without the key in its environment: the stored key goes with each request
        async with await start(env, log_file) as (conn, _proc):
            await initialize(conn)
            session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=text_prompt("hi")), 300)
            await conn.authenticate(method_id="api-key")  # given earlier: nothing to give again
        assert server.headers[-1].get("authorization") == f"Bearer {SECRET}"

    logged = log_file.read_text()
    assert "api-key" in logged and "DEBUG" in logged  # the log was written, at the most verbose level
    assert SECRET not in logged and SECRET[:12] not in logged
    stored = "".join(p.read_text() for p in (home / "cache").rglob("*.json"))  # the session's history
    assert '"hi"' in stored and SECRET not in stored


async def test_authenticate_without_a_key_says_what_to_do(tmp_path: Path) -> None:
    env = agent_env(None, tmp_path / "home")
    async with await start(env, tmp_path / "agent.log") as (conn, _proc):
        await initialize(conn)
        with pytest.raises(RequestError, match="LSP_AGENT_API_KEY"):
            await conn.authenticate(method_id="api-key")


async def test_a_terminal_login_for_clients_that_run_one(tmp_path: Path) -> None:
    from acp.schema import AuthCapabilities

    env = agent_env(None, tmp_path / "home")
    async with await start(env, tmp_path / "agent.log") as (conn, _proc):
        answer = await asyncio.wait_for(
            conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(auth=AuthCapabilities(terminal=True)),
                client_info=Implementation(name="tests", version="1"),
            ),
            30,
        )
        terminal = next(m for m in answer.auth_methods if m.type == "terminal")
        assert terminal.id == "api-key-terminal" and terminal.args == ["--login"]
        with pytest.raises(RequestError, match="acp --login"):
            await conn.authenticate(method_id="api-key-terminal")
        # what the client runs in a terminal: the agent's command with the method's args
        login = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "lsp_agent", "acp", *terminal.args,
            env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(login.communicate(f"{SECRET}\n".encode()), 60)
        assert login.returncode == 0 and b"kept in" in err
        assert SECRET.encode() not in out + err
        await conn.authenticate(method_id="api-key-terminal")
    key_file = tmp_path / "home" / "config" / "lsp-agent" / "permissions" / "api-key"
    assert key_file.read_text().strip() == SECRET and stat.S_IMODE(key_file.stat().st_mode) == 0o600
