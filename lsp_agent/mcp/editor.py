"""The language server's MCP side: one manager for the server's life, reconfigured when the settings change."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_agent.mcp.config import servers_for
from lsp_agent.mcp.manager import McpManager

log = logging.getLogger(__name__)


class EditorMcp:
    """Owns the server's McpManager: lazy start on the first run, errors shown once, status rows, shutdown.

    Each run gets `manager` through the run assembly (build_run), which registers the ready servers' tools.
    """

    def __init__(
        self,
        show_error: Callable[[str], None] | None = None,
        *,
        settings: Callable[[], Any] | None = None,
        root: Callable[[], Path | None] | None = None,
        read_files: bool = True,
    ) -> None:
        self.show_error = show_error
        self.current_settings = settings  # for status rows before the first run
        self.current_root = root
        self.read_files = read_files
        self.manager: McpManager | None = None
        self._shown: set[str] = set()

    async def start(self, settings: Any, root: Path | None) -> list[str]:
        """Start the configured servers not yet running (first run, or after a crash or a settings change);
        new problems are shown to the user once. Returns this attempt's errors."""
        manager = await self._manager(settings, root)
        errors = list(manager.config_errors)
        if manager.configs:
            errors.extend(await manager.ensure_started())
        self._report(errors)
        return errors

    def status(self) -> list[dict[str, Any]]:
        """The MCP section of lspAgent.status: one row per configured server ("idle" until a run starts it)."""
        if self.manager is not None:
            return self.manager.status()
        if self.current_settings is None:
            return []
        root = self.current_root() if self.current_root is not None else None
        servers, _ = servers_for(self.current_settings(), root, read_files=self.read_files)
        return McpManager(servers, root=root).status()

    def close(self) -> None:
        """Stop every MCP server (language server shutdown/exit)."""
        if self.manager is not None:
            self.manager.close()

    async def _manager(self, settings: Any, root: Path | None) -> McpManager:
        """The manager, created on first use and reconfigured when the server definitions changed."""
        servers, errors = servers_for(settings, root, read_files=self.read_files)
        if self.manager is None:
            self.manager = McpManager(servers, root=root)
            self.manager.config_errors = errors
        elif self.manager.configs != servers or self.manager.config_errors != errors:
            await asyncio.to_thread(self.manager.configure, servers, errors)
            self._shown.clear()  # a changed configuration gets its problems shown afresh
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
