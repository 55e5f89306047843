"""`lsp-agent ask`'s MCP servers: one manager from the config files, the settings and `--mcp-server` flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from lsp_agent.mcp.manager import McpManager


def open_mcp(settings: Any, root: Path, flags: list[str], err: TextIO) -> McpManager | None:
    """The run's MCP manager (servers start when the run is built), or None when no server is configured.

    Configuration problems are printed as warnings; the caller closes the manager when the run is over.
    """
    manager = McpManager.from_settings(settings, root, flags)
    for error in manager.config_errors:
        print(f"warning: {error}", file=err)
    if not manager.configs:
        manager.close()
        return None
    return manager


def report_tools(manager: McpManager, err: TextIO) -> None:
    """One line saying how many MCP tools the run has and from which servers."""
    tools = manager.tools()
    if tools:
        ready = [row["name"] for row in manager.status() if row["state"] == "ready"]
        print(f"MCP: {len(tools)} tool(s) from {', '.join(ready)}", file=err)
