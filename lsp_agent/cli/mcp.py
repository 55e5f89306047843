"""`lsp-agent ask`: MCP servers from the config files, the settings and `--mcp-server` flags join the run's tools."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from lsp_agent.mcp.bridge import expand_permission_rules, register_mcp_tools
from lsp_agent.mcp.manager import McpManager
from lsp_agent.tools.registry import ToolRegistry

_MANAGERS: list[McpManager] = []


def add_mcp_tools(
    registry: ToolRegistry, settings: Any, args: argparse.Namespace, err: TextIO | None = None
) -> McpManager | None:
    """Start the configured servers (reporting those that fail) and register their tools.

    Permission patterns such as "files__*" in the settings are resolved to the registered tool names in place,
    so the run's permission gate sees them; servers stop when the process exits (or on close()).
    """
    err = err or sys.stderr
    root = Path(getattr(args, "repo", ".") or ".").expanduser().resolve()
    manager = McpManager.from_settings(settings, root, list(getattr(args, "mcp_server", None) or []))
    for error in manager.config_errors:
        print(f"warning: {error}", file=err)
    if not manager.configs:
        manager.close()
        return None
    _MANAGERS.append(manager)
    for error in manager.ensure_started_sync():
        print(f"warning: {error}; continuing without its tools", file=err)
    names = register_mcp_tools(registry, manager)
    if names:
        ready = [row["name"] for row in manager.status() if row["state"] == "ready"]
        print(f"MCP: {len(names)} tool(s) from {', '.join(ready)}", file=err)
    rules = expand_permission_rules(settings.permissions, registry.names())
    settings.permissions.clear()
    settings.permissions.update(rules)
    return manager


def close_all() -> None:
    """Stop every MCP server the CLI started."""
    while _MANAGERS:
        _MANAGERS.pop().close()
