"""Streamable HTTP clients of `lsp-agent acp --listen`, on the SDK's server (acp.http), watched for going away.

A Streamable HTTP client has no socket of its own: it POSTs requests and reads the agent's messages from event
streams (GET, one for the connection and one a session). The SDK (agent-client-protocol 0.12.1) keeps a
connection until the client sends DELETE, and its GET handler never reads the ASGI `http.disconnect`, so a client
that vanished (closed laptop, killed editor, lost network) left its prompt running, and its sessions, MCP servers
and connection alive, for good. Here each event stream is watched: once every stream of a connection has closed
and none came back within DISCONNECT_GRACE_SECONDS (a client reconnecting after a blip keeps its connection), the
connection's prompts are cancelled, its sessions closed and the connection removed, as when a WebSocket closes.
A DELETE does the same at once.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import Any

from acp.http.asgi import AcpAsgiApp
from acp.http.protocol import CONNECTION_ID_HEADER, is_initialize_request
from acp.http.server import AcpServer

from lsp_agent.acp.main import close_sessions, make_agent

log = logging.getLogger(__name__)

DISCONNECT_GRACE_SECONDS = 3.0


class WatchedHttp:
    """The SDK's Streamable HTTP app, with our agent of each connection and the connection's open event streams."""

    def __init__(self, flags: dict, grace: float = DISCONNECT_GRACE_SECONDS) -> None:
        self.flags = flags
        self.grace = grace
        self.server = AcpServer(self._make_agent)
        self.app = AcpAsgiApp(self.server)
        self.agents: dict[str, Any] = {}  # connection id -> the agent serving it
        self.streams: dict[str, int] = {}  # connection id -> its open event streams
        self._made: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("made", default=None)

    def _make_agent(self, _conn: Any) -> Any:
        """The SDK's agent factory: a new agent, noted for the initialize POST that made it."""
        agent = make_agent(self.flags)
        made = self._made.get()
        if made is not None:
            made.append(agent)
        return agent

    async def post(self, scope: dict[str, Any], receive: Any, send: Any, message: dict[str, Any]) -> None:
        """A checked POST; an initialize's new connection is remembered with its agent."""
        if not is_initialize_request(message):
            await self.app(scope, receive, send)
            return
        made: list[Any] = []
        token = self._made.set(made)  # the SDK calls the factory within this call, in this task
        connection: list[str] = []

        async def noting_send(event: dict[str, Any]) -> None:
            if event["type"] == "http.response.start":
                connection.extend(v.decode("latin-1") for k, v in event["headers"] if k.lower() == HEADER)
            await send(event)

        try:
            await self.app(scope, receive, noting_send)
        finally:
            self._made.reset(token)
        if made and connection:
            self.agents[connection[0]] = made[0]

    async def stream(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """An event stream (GET), served by the SDK until it ends or its client disconnects."""
        connection = _header(scope, HEADER)
        if connection not in self.agents:
            await self.app(scope, receive, send)  # the SDK answers a missing or unknown connection
            return
        self.streams[connection] = self.streams.get(connection, 0) + 1
        serving = asyncio.ensure_future(self.app(scope, _never, send))
        gone = asyncio.ensure_future(_disconnect(receive))
        try:
            await asyncio.wait({serving, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (serving, gone):
                task.cancel()
            await asyncio.gather(serving, gone, return_exceptions=True)
            self.streams[connection] -= 1
            if not self.streams[connection] and connection in self.agents:
                asyncio.ensure_future(self._forget_if_gone(connection))

    async def delete(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """DELETE: the SDK removes the connection; its sessions' runs and MCP servers are stopped too."""
        await self.app(scope, receive, send)
        agent = self.agents.pop(_header(scope, HEADER) or "", None)
        if agent is not None:
            await close_sessions(agent)

    async def _forget_if_gone(self, connection: str) -> None:
        """After the grace period with no event stream open: cancel the connection's prompts and remove it."""
        await asyncio.sleep(self.grace)
        if self.streams.get(connection) or connection not in self.agents:
            return
        agent = self.agents.pop(connection)
        self.streams.pop(connection, None)
        log.info(
            "a Streamable HTTP client went away (no event stream for %.0f s): its prompts are cancelled",
            self.grace,
        )
        await close_sessions(agent)
        await self.server.handle_delete(connection_id=connection)

    async def close(self) -> None:
        """At shutdown: every connection's runs stopped."""
        for agent in list(self.agents.values()):
            await close_sessions(agent)
        self.agents.clear()


HEADER = CONNECTION_ID_HEADER.lower().encode()


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    """One header of a request, or None."""
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


async def _disconnect(receive: Any) -> None:
    """Return once the client of this request disconnects."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _never() -> dict[str, Any]:
    """The SDK's event stream handler reads nothing; were it to, it would wait (the watcher reads the client)."""
    await asyncio.Event().wait()
    return {"type": "http.disconnect"}
