"""The language server's MCP side: one manager for the server's life, reconfigured when the settings change."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_agent.mcp.config import collect_servers
from lsp_agent.mcp.manager import McpManager
from lsp_agent.mcp.setup import attach_mcp_tools
from lsp_agent.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


class EditorMcp:
    """Owns the server's McpManager: lazy start on the first run, errors shown once, status rows, shutdown."""

    def __init__(self, show_error: Callable[[str], None] | None = None, *, read_files: bool = True) -> None:
        self.show_error = show_error
        self.read_files = read_files
        self.manager: McpManager | None = None
        self._shown: set[str] = set()

    async def prepare(
        self, settings: Any, root: Path | None, registry: ToolRegistry | None = None
    ) -> tuple[ToolRegistry, Any]:
        """(registry, settings) for a run: built-in tools plus the ready MCP servers' tools, permission patterns
        resolved. Servers that fail to start are shown to the user (once per distinct error) and left out."""
        if registry is None:
            from lsp_agent.tools.registry import default_registry

            registry = default_registry()
        manager = await self._manager(settings, root)
        settings, errors = await attach_mcp_tools(manager, registry, settings)
        self._report(list(manager.config_errors) + errors)
        return registry, settings

    def status(self) -> list[dict[str, Any]]:
        """The MCP section of lspAgent.status: one row per configured server."""
        return self.manager.status() if self.manager is not None else []

    def close(self) -> None:
        """Stop every MCP server (language server shutdown/exit)."""
        if self.manager is not None:
            self.manager.close()

    async def _manager(self, settings: Any, root: Path | None) -> McpManager:
        """The manager, created on first use and reconfigured when the server definitions changed."""
        servers, errors = collect_servers(
            root, getattr(settings, "mcp_servers", None) or {}, read_files=self.read_files
        )
        if self.manager is None:
            self.manager = McpManager(servers, root=root)
            self.manager.config_errors = errors
        elif self.manager.configs != servers or self.manager.config_errors != errors:
            await asyncio.to_thread(self.manager.configure, servers, errors)
        return self.manager

    def _report(self, errors: list[str]) -> None:
        """Show each new problem once (a server that keeps failing is not repeated every run)."""
        fresh = [e for e in errors if e not in self._shown]
        self._shown.update(fresh)
        if fresh and self.show_error is not None:
            try:
                self.show_error("lsp-agent MCP: " + "; ".join(fresh) + " (continuing without those tools)")
            except Exception:  # noqa: BLE001 - reporting must never break a run
                log.exception("could not show MCP errors")
