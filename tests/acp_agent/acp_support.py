"""An ACP client for the tests (the SDK's client side) driving a real `lsp-agent acp` process over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from lsp_agent.testing.scripted_model import ScriptedModelServer

NEVER = "never"  # a permission answer that never comes


@dataclass
class RecordingClient:
    """Records every update and question; answers permissions from a list; fs/* on disk plus unsaved buffers."""

    answers: list[str] = field(default_factory=list)
    default_answer: str = "allow_once"
    buffers: dict[str, str] = field(default_factory=dict)  # absolute path -> unsaved editor text
    updates: list[Any] = field(default_factory=list)
    questions: list[Any] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    on_ask: Callable[[Any], None] | None = (
        None  # runs before answering (e.g. the user edits the file meanwhile)
    )

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kw: Any) -> Any:
        self.questions.append(tool_call)
        self.asked.set()
        if self.on_ask is not None:
            self.on_ask(tool_call)
        answer = self.answers.pop(0) if self.answers else self.default_answer
        if answer == NEVER:
            await asyncio.Event().wait()
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append(update)

    async def write_text_file(self, content: str, path: str, session_id: str, **kw: Any) -> Any:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        self.buffers.pop(path, None)
        self.writes.append(path)
        return WriteTextFileResponse()

    async def read_text_file(self, path: str, session_id: str, **kw: Any) -> Any:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None

    def of(self, kind: str) -> list[Any]:
        """Updates of one sessionUpdate kind."""
        return [u for u in self.updates if getattr(u, "session_update", None) == kind]

    def text_of(self, kind: str) -> str:
        """Concatenated text of message or thought chunks."""
        return "".join(u.content.text for u in self.of(kind) if getattr(u.content, "type", "") == "text")


class ClientSwitch:
    """The client of a connection shared by a test module: each call goes to the current test's RecordingClient."""

    def __init__(self) -> None:
        self.current = RecordingClient()

    async def request_permission(self, **kw: Any) -> Any:
        return await self.current.request_permission(**kw)

    async def session_update(self, **kw: Any) -> None:
        await self.current.session_update(**kw)

    async def write_text_file(self, **kw: Any) -> Any:
        return await self.current.write_text_file(**kw)

    async def read_text_file(self, **kw: Any) -> Any:
        return await self.current.read_text_file(**kw)


@dataclass
class SharedAgent:
    """One `lsp-agent acp` process and scripted model for a whole test module; each test opens its own session."""

    conn: Any
    proc: asyncio.subprocess.Process
    server: ScriptedModelServer
    switch: ClientSwitch
    env: dict[str, str]

    def client(self, **kw: Any) -> RecordingClient:
        """A fresh recording client for this test (answers, buffers as given)."""
        self.switch.current = RecordingClient(**kw)
        return self.switch.current

    def script(self, steps: list[dict]) -> ScriptedModelServer:
        """The scripted model, answering this test's steps (earlier requests forgotten)."""
        self.server.reset(steps)
        return self.server

    async def session(self, workspace: Path, **kw: Any) -> str:
        """A new session in `workspace`; its id."""
        return (
            await self.conn.new_session(cwd=str(workspace), mcp_servers=kw.get("mcp_servers", []))
        ).session_id


def agent_env(server: ScriptedModelServer | None, home: Path, **extra: str) -> dict[str, str]:
    """The environment of a spawned `lsp-agent acp` (scripted model, private cache and config dirs)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_AGENT_")}
    env.update(
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_STATE_HOME=str(home / "state"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        **extra,
    )
    if server is not None:
        env.update(
            LSP_AGENT_MODEL="openai/scripted", LSP_AGENT_API_BASE=server.base_url, LSP_AGENT_API_KEY="test"
        )
    return env


@contextlib.asynccontextmanager
async def acp_agent(
    client: RecordingClient, env: dict[str, str], *, fs: bool = True
) -> AsyncIterator[tuple[Any, asyncio.subprocess.Process]]:
    """A running `lsp-agent acp`, initialized; yields (connection, process)."""
    async with spawn_agent_process(client, sys.executable, "-m", "lsp_agent", "acp", env=env) as (conn, proc):
        caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs))
        await asyncio.wait_for(
            conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=caps,
                client_info=Implementation(name="tests", version="1"),
            ),
            30,
        )
        yield conn, proc


def text_prompt(text: str) -> list[Any]:
    """A prompt of one text block."""
    from acp import text_block

    return [text_block(text)]
