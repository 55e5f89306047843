"""One MCP server connection: a long-lived task that owns the SDK client and serves tool calls."""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from lsp_agent.mcp.config import McpServerConfig
from lsp_agent.mcp.listing import RemotePrompt, RemoteTool, list_prompts, list_tools
from lsp_agent.mcp.server_stderr import ServerStderr

log = logging.getLogger(__name__)

STATES = ("idle", "starting", "ready", "failed", "stopped")
STOP_TIMEOUT = 6.0
CONNECT_MODE = "auto"  # the SDK's handshake: 2026-07-28 discovery, else the legacy initialize


class McpUnavailable(Exception):
    """The server cannot take calls (it failed, died or was stopped); the message says which and why."""


@dataclass
class _Call:
    """A queued request (a tools/call, None for tools/list; a prompts/get when `prompt`) with its caller's future."""

    tool: str | None
    arguments: dict[str, Any]
    future: asyncio.Future[Any]
    scope: anyio.CancelScope | None = field(default=None)
    prompt: bool = False


class McpConnection:
    """Starts, serves and stops one MCP server; every method runs on the manager's event loop."""

    def __init__(self, config: McpServerConfig, *, cwd: Path | None = None) -> None:
        self.config = config
        self.cwd = cwd
        self.state = "idle"
        self.error: str | None = None
        self.tools: list[RemoteTool] = []
        self.prompts: list[RemotePrompt] = []
        self.server_info: str | None = None
        self.died = False  # failed after having been ready (restarted on the next run)
        self.failed_at = 0.0
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._queue: asyncio.Queue[_Call | None] = asyncio.Queue()
        self._pending: set[asyncio.Future[Any]] = set()
        self._stderr: ServerStderr | None = None
        self._refreshes: set[asyncio.Task[bool]] = set()
        self.tools_changed = 0  # tools/list_changed notices received (each re-lists the tools)

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> str | None:
        """Connect and list the tools within the startup timeout; returns an error message or None."""
        if self.state == "ready":
            return None
        if self.state == "starting" and self._ready is not None:
            await asyncio.shield(self._ready)
            return self.error if self.state == "failed" else None
        await self._stop_task()  # a previous, dead incarnation may still be cleaning up
        self.state, self.error, self.died, self.tools = "starting", None, False, []
        self._queue = asyncio.Queue()
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(), name=f"mcp:{self.config.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.config.startup_timeout)
        except TimeoutError:
            self._fail(
                f"did not start within {self.config.startup_timeout:g}s (if it is just slow, raise its "
                "'startupTimeout', or the mcpStartupTimeout setting for every server)"
            )
            await self._stop_task()
        return self.error if self.state == "failed" else None

    async def stop(self) -> None:
        """Close the session (and the server process, for stdio); pending calls fail."""
        if self.state in ("idle", "stopped") and self._task is None:
            self.state = "stopped"
            return
        if self._task is not None and not self._task.done():
            self._queue.put_nowait(None)
            done, _ = await asyncio.wait({self._task}, timeout=STOP_TIMEOUT)
            if not done:
                await self._stop_task()
        self._fail_pending("it was stopped")
        if self.state != "failed":
            self.state = "stopped"
        self._close_stderr()

    # -- calls -----------------------------------------------------------------------------------

    async def refresh_tools(self) -> bool:
        """Re-list the tools of a ready server (they may change); False when the server turned out dead."""
        if self.state != "ready":
            return False
        try:
            self.tools = await self.call(None, {})
        except McpUnavailable:
            return False
        except Exception as exc:  # noqa: BLE001 - keep the previous list when listing fails
            log.info("MCP server %s: could not re-list tools: %s", self.config.name, exc)
        return self.state == "ready"

    async def call(self, tool: str | None, arguments: dict[str, Any], *, prompt: bool = False) -> Any:
        """Run tools/call (tools/list when `tool` is None; prompts/get of `tool` with `prompt`) on the connection
        task and return its result."""
        if self.state != "ready":
            raise McpUnavailable(self._unavailable_message())
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        call = _Call(tool, arguments, future, prompt=prompt)
        future.add_done_callback(lambda f: f.cancelled() and call.scope is not None and call.scope.cancel())
        self._pending.add(future)
        self._queue.put_nowait(call)
        try:
            return await future
        finally:
            self._pending.discard(future)

    def status(self) -> dict[str, Any]:
        """{"name", "state", "tools", "error", ...} for lspAgent.status and the CLI."""
        return {
            "name": self.config.name,
            "state": self.state,
            "transport": self.config.transport,
            "target": self.config.describe(),
            "tools": [t.name for t in self.tools] if self.state == "ready" else [],
            "error": self.error,
        }

    # -- the connection task ---------------------------------------------------------------------

    async def _run(self) -> None:
        """Own the client for the server's whole life: connect, list tools, serve calls until stopped."""
        from mcp import Client
        from mcp_types import Implementation

        from lsp_agent import __version__

        ready = self._ready
        try:
            async with AsyncExitStack() as stack:
                transport = await self._transport(stack)
                client = Client(
                    transport,
                    client_info=Implementation(name="lsp-agent", version=__version__),
                    read_timeout_seconds=self.config.startup_timeout,
                    message_handler=self._on_message,
                    mode=CONNECT_MODE,
                )
                await stack.enter_async_context(client)
                self.tools = await list_tools(client)
                self.prompts = await list_prompts(client)
                info = client.server_info
                self.server_info = f"{info.name} {info.version}".strip() if info is not None else None
                self.state = "ready"
                _resolve(ready)
                log.info("MCP server %s ready with %d tools", self.config.name, len(self.tools))
                async with anyio.create_task_group() as group:
                    group.start_soon(self._listen_for_tool_changes, client)
                    while True:
                        call = await self._queue.get()
                        if call is None:
                            group.cancel_scope.cancel()
                            break
                        group.start_soon(self._serve, client, call)
        except asyncio.CancelledError:
            if self.state == "starting":
                self._fail("it was stopped while starting")
            raise
        except BaseException as exc:  # noqa: BLE001 - any transport failure marks the server failed
            was_ready = self.state == "ready"
            self._fail(self._explain(exc, was_ready))
            self.died = was_ready
            log.info("MCP server %s: %s", self.config.name, self.error)
        finally:
            _resolve(ready)
            self._fail_pending(self.error or "it was stopped")

    async def _on_message(self, message: Any) -> None:
        """Server notifications (and listen events, teed here by the SDK): tools/list_changed re-lists the tools."""
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._tools_changed()

    async def _listen_for_tool_changes(self, client: Any) -> None:
        """On a 2026-07-28 connection, keep a tools/list_changed subscription open (if the server offers one)."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        tools = getattr(client.server_capabilities, "tools", None)
        if client.session.protocol_version not in MODERN_PROTOCOL_VERSIONS or not getattr(
            tools, "list_changed", False
        ):
            return
        try:
            async with client.listen(tools_list_changed=True) as events:
                if not events.honored.tools_list_changed:
                    return
                async for _event in events:
                    pass  # the SDK also hands each event to message_handler (_on_message), which re-lists
        except Exception as exc:  # noqa: BLE001 - without the stream, tools are still re-listed at each run
            log.info("MCP server %s: no tools/list_changed events: %s", self.config.name, exc)

    def _tools_changed(self) -> None:
        """Re-list the tools in the background, so the next run (and lspAgent.status) sees the new list."""
        self.tools_changed += 1
        if self.state != "ready":
            return
        task = asyncio.get_running_loop().create_task(self.refresh_tools())
        self._refreshes.add(task)
        task.add_done_callback(self._refreshes.discard)

    async def _serve(self, client: Any, call: _Call) -> None:
        """One tools/call; its outcome (or exception) goes to the caller's future."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if call.future.done():
            return
        try:
            with anyio.CancelScope() as scope:
                call.scope = scope
                if call.prompt:
                    result = await client.get_prompt(call.tool, call.arguments)
                elif call.tool is None:
                    result = await list_tools(client)
                else:
                    result = await client.call_tool(
                        call.tool, call.arguments, read_timeout_seconds=self.config.call_timeout
                    )
                _settle(call.future, result=result)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                _settle(call.future, error=TimeoutError(f"no answer within {self.config.call_timeout:g}s"))
            elif exc.code == CONNECTION_CLOSED:
                self._fail(self._explain(exc, True))
                self.died = True
                _settle(call.future, error=McpUnavailable(self._unavailable_message()))
                self._queue.put_nowait(None)
            else:
                _settle(call.future, error=exc)
        except Exception as exc:  # noqa: BLE001 - a failed call is the caller's error, not the server's end
            _settle(call.future, error=exc)
        finally:
            if self._stderr is not None:
                self._stderr.trim()

    async def _transport(self, stack: AsyncExitStack) -> Any:
        """The SDK transport for this server (stdio process, streamable HTTP or SSE)."""
        cfg = self.config
        if cfg.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            self._close_stderr()
            self._stderr = ServerStderr()
            params = StdioServerParameters(
                command=cfg.command or "",
                args=list(cfg.args),
                env=dict(cfg.env) or None,  # merged over the SDK's safe default (PATH, HOME, ...)
                cwd=cfg.cwd or (str(self.cwd) if self.cwd else None),
            )
            return stdio_client(params, errlog=self._stderr.file)
        headers = dict(cfg.headers) or None
        if cfg.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(cfg.url or "", headers=headers, timeout=cfg.startup_timeout)
        from mcp.client.streamable_http import streamable_http_client

        http_client = None
        if headers:
            from mcp.shared._httpx_utils import create_mcp_http_client

            http_client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        return streamable_http_client(cfg.url or "", http_client=http_client)

    # -- helpers ---------------------------------------------------------------------------------

    async def _stop_task(self) -> None:
        """Cancel the connection task and wait (bounded) for its cleanup."""
        task = self._task
        if task is None or task.done():
            return
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=STOP_TIMEOUT)
        if not done:
            log.warning("MCP server %s did not shut down within %.0fs", self.config.name, STOP_TIMEOUT)

    def _fail(self, message: str) -> None:
        """Mark the server failed with a message (the first failure wins)."""
        if self.state != "failed":
            self.state = "failed"
            self.error = message
            self.failed_at = time.monotonic()

    def _fail_pending(self, reason: str) -> None:
        """Fail every call still waiting for an answer."""
        for future in list(self._pending):
            _settle(future, error=McpUnavailable(f"MCP server {self.config.name!r} is unavailable: {reason}"))

    def _unavailable_message(self) -> str:
        """Why calls cannot go through, for the model."""
        name = self.config.name
        if self.state == "failed":
            return f"MCP server {name!r} is unavailable: {self.error}. Its tools cannot be used in this run."
        return f"MCP server {name!r} is {self.state}; its tools cannot be used right now."

    def _explain(self, exc: BaseException, was_ready: bool) -> str:
        """A one-line, actionable reason for a failure, with the server's stderr tail when there is one."""
        leaf = _leaf(exc)
        cfg = self.config
        if isinstance(leaf, FileNotFoundError) and cfg.transport == "stdio":
            reason = f"command not found: {cfg.command!r} (check 'command' and PATH)"
        elif isinstance(leaf, PermissionError) and cfg.transport == "stdio":
            reason = f"cannot execute {cfg.command!r}: permission denied"
        elif type(leaf).__name__ in ("ConnectError", "ConnectTimeout"):
            reason = f"cannot connect to {cfg.url} ({leaf or 'connection refused'}); is the server running?"
        elif type(leaf).__name__ in ("ReadError", "RemoteProtocolError") or "closed" in str(leaf).lower():
            reason = "the connection closed" + (
                " (the server exited or crashed)" if cfg.transport == "stdio" else ""
            )
        else:
            reason = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
        prefix = "stopped while running" if was_ready else "failed to start"
        tail = self._stderr.tail() if self._stderr is not None else ""
        return f"{prefix}: {reason}" + (f"; its stderr ends with: {tail}" if tail else "")

    def _close_stderr(self) -> None:
        """Release the stderr capture file."""
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside nested exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _resolve(future: asyncio.Future[None] | None) -> None:
    """Mark the startup future done (idempotent)."""
    if future is not None and not future.done():
        future.set_result(None)


def _settle(future: asyncio.Future[Any], *, result: Any = None, error: BaseException | None = None) -> None:
    """Complete a caller's future unless it is already done (cancelled callers are skipped)."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
