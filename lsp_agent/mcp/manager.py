"""The MCP manager: owns every server connection on its own event loop thread, usable from any loop."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
import time
import weakref
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lsp_agent.mcp.config import McpServerConfig, servers_for
from lsp_agent.mcp.connection import McpConnection, McpUnavailable, RemoteTool
from lsp_agent.mcp.listing import RemotePrompt, prompt_text

log = logging.getLogger(__name__)

T = TypeVar("T")
RETRY_FAILED_START_AFTER = 60.0  # seconds before a server that failed to start is tried again
CLOSE_TIMEOUT = 10.0


class McpManager:
    """Starts MCP servers lazily (on the first run that needs them), keeps them for later runs, stops them on close.

    The SDK's client sessions live in long-lived tasks on a private event loop in a daemon thread, so they
    outlive any single run's loop; every public coroutine may be awaited from any other loop.
    """

    def __init__(self, servers: Sequence[McpServerConfig] = (), *, root: Path | None = None) -> None:
        self.root = root
        self._configs: dict[str, McpServerConfig] = {s.name: s for s in servers}
        self._connections: dict[str, McpConnection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.config_errors: list[str] = []
        _LIVE.add(self)

    @classmethod
    def from_settings(
        cls,
        settings: Any,
        root: Path | None,
        flags: Sequence[str] = (),
        *,
        read_files: bool = True,
    ) -> McpManager:
        """A manager for the servers in the config files, `settings.mcp_servers` and `--mcp-server` flags."""
        servers, errors = servers_for(settings, root, flags, read_files=read_files)
        manager = cls(servers, root=root)
        manager.config_errors = errors
        return manager

    # -- configuration ---------------------------------------------------------------------------

    @property
    def configs(self) -> list[McpServerConfig]:
        """The configured servers."""
        return list(self._configs.values())

    def configure(self, servers: Sequence[McpServerConfig], errors: Sequence[str] = ()) -> None:
        """Replace the server definitions; removed or changed servers are stopped, new ones start lazily."""
        new = {s.name: s for s in servers}
        with self._lock:
            stale = [
                name
                for name, conn in self._connections.items()
                if name not in new or new[name] != conn.config
            ]
            self._configs = new
            self.config_errors = list(errors)
            stale_conns = [self._connections.pop(name) for name in stale]
        if stale_conns and self._loop is not None:
            self._run_sync(_stop_all(stale_conns), CLOSE_TIMEOUT)

    def configure_from(self, settings: Any, flags: Sequence[str] = (), *, read_files: bool = True) -> None:
        """configure() from settings, config files and flags (for didChangeConfiguration)."""
        servers, errors = servers_for(settings, self.root, flags, read_files=read_files)
        self.configure(servers, errors)

    # -- starting and calling --------------------------------------------------------------------

    async def ensure_started(self) -> list[str]:
        """Start every configured server not yet running (concurrently); returns this attempt's errors."""
        if not self._configs or self._closed:
            return []
        return await self._submit(self._start_all())

    def ensure_started_sync(self) -> list[str]:
        """ensure_started() for callers without an event loop (the CLI builds its registry before the run)."""
        if not self._configs or self._closed:
            return []
        self._ensure_loop()
        longest = max(c.startup_timeout for c in self._configs.values())
        return self._run_sync(self._start_all(), longest + 15.0) or []

    async def call_tool(self, server: str, tool: str, arguments: Mapping[str, Any]) -> Any:
        """tools/call on a running server; McpUnavailable if it is not running, MCPError/TimeoutError on failure."""
        conn = self._connections.get(server)
        if conn is None:
            raise McpUnavailable(f"MCP server {server!r} is not configured")
        return await self._submit(conn.call(tool, dict(arguments)))

    def tools(self) -> list[tuple[str, RemoteTool]]:
        """(server name, tool) for every tool of every ready server."""
        out: list[tuple[str, RemoteTool]] = []
        for name, conn in list(self._connections.items()):
            if conn.state == "ready":
                out.extend((name, t) for t in conn.tools)
        return out

    def prompts(self) -> list[tuple[str, RemotePrompt]]:
        """(server name, prompt) for every prompt of every ready server."""
        out: list[tuple[str, RemotePrompt]] = []
        for name, conn in list(self._connections.items()):
            if conn.state == "ready":
                out.extend((name, p) for p in conn.prompts)
        return out

    async def get_prompt(self, server: str, prompt: str, arguments: Mapping[str, str]) -> str:
        """prompts/get on a running server, its messages as one text; McpUnavailable/MCPError on failure."""
        conn = self._connections.get(server)
        if conn is None:
            raise McpUnavailable(f"MCP server {server!r} is not configured")
        return prompt_text(await self._submit(conn.call(prompt, dict(arguments), prompt=True)))

    def status(self) -> list[dict[str, Any]]:
        """[{"name", "state": idle|starting|ready|failed|stopped, "tools", "error", ...}] for lspAgent.status."""
        rows = []
        for name, cfg in list(self._configs.items()):
            conn = self._connections.get(name)
            if conn is not None:
                rows.append(conn.status())
            else:
                rows.append(
                    {
                        "name": name,
                        "state": "stopped" if self._closed else "idle",
                        "transport": cfg.transport,
                        "target": cfg.describe(),
                        "tools": [],
                        "error": None,
                    }
                )
        return rows

    def errors(self) -> list[str]:
        """Configuration errors and the current failure of every failed server."""
        out = list(self.config_errors)
        connections = list(self._connections.values())  # read from any thread: copy first
        out.extend(f"MCP server {c.config.name!r} {c.error}" for c in connections if c.error)
        return out

    # -- shutdown --------------------------------------------------------------------------------

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Stop every server and the manager's loop thread (idempotent; safe from any thread but the loop's)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            self._run_sync(_stop_all(list(self._connections.values())), timeout)
        except Exception:  # noqa: BLE001 - closing must not raise
            log.warning("MCP servers did not all stop cleanly", exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=2.0)

    async def aclose(self) -> None:
        """close() without blocking the caller's loop."""
        await asyncio.to_thread(self.close)

    # -- the private loop ------------------------------------------------------------------------

    async def _start_all(self) -> list[str]:
        """Runs on the manager loop: re-list running servers' tools (finding dead ones), then start idle,
        died or retry-due servers concurrently."""
        ready = [c for c in self._connections.values() if c.state == "ready"]
        await asyncio.gather(*(c.refresh_tools() for c in ready), return_exceptions=True)
        todo: list[McpConnection] = []
        now = time.monotonic()
        for name, cfg in list(self._configs.items()):
            conn = self._connections.get(name)
            if conn is None or conn.state == "stopped":
                conn = self._connections[name] = McpConnection(cfg, cwd=self.root)
            due = conn.state == "failed" and (conn.died or now - conn.failed_at > RETRY_FAILED_START_AFTER)
            if conn.state in ("idle", "starting") or due:
                todo.append(conn)
        results = await asyncio.gather(*(c.start() for c in todo), return_exceptions=True)
        errors = []
        for conn, result in zip(todo, results, strict=True):
            if isinstance(result, BaseException):
                errors.append(f"MCP server {conn.config.name!r} failed to start: {result}")
            elif result:
                errors.append(f"MCP server {conn.config.name!r} ({conn.config.describe()}) {result}")
        return errors

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        """Start the loop thread on first use."""
        with self._lock:
            if self._closed:
                raise McpUnavailable("the MCP manager is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()
                    loop.close()

                self._thread = threading.Thread(target=run, name="lsp-agent-mcp", daemon=True)
                self._thread.start()
                ready.wait(5.0)
                self._loop = loop
            return self._loop

    async def _submit(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the manager loop and await it from the caller's loop (cancellation propagates)."""
        try:
            loop = self._ensure_loop()
        except BaseException:
            coro.close()
            raise
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))

    def _run_sync(self, coro: Coroutine[Any, Any, T], timeout: float) -> T | None:
        """Run a coroutine on the manager loop from a plain thread, bounded by `timeout`."""
        loop = self._loop
        if loop is None or not loop.is_running():
            coro.close()
            return None
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            log.warning("MCP manager: gave up waiting after %.0fs", timeout)
            return None


async def _stop_all(connections: Sequence[McpConnection]) -> None:
    """Stop connections concurrently."""
    await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)


_LIVE: weakref.WeakSet[McpManager] = weakref.WeakSet()


@atexit.register
def _close_live_managers() -> None:
    """Stop server processes left running when the interpreter exits without close()."""
    for manager in list(_LIVE):
        manager.close(timeout=5.0)
