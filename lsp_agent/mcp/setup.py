"""The run assembly's MCP step (assembly.build_registry): start the servers a run needs and add their tools."""

from __future__ import annotations

from typing import Any

from lsp_agent.mcp.bridge import allow_all, expand_permission_rules, register_mcp_tools
from lsp_agent.mcp.manager import McpManager
from lsp_agent.tools.registry import ToolRegistry


async def attach_mcp_tools(
    manager: McpManager | None,
    registry: ToolRegistry,
    settings: Any,
    *,
    allow_external: bool = False,
) -> tuple[Any, list[str]]:
    """(settings, errors): servers started lazily, their tools registered, permission patterns expanded.

    The returned settings carry `permissions` with "server__*" patterns resolved to tool names (and every MCP
    tool allowed when `allow_external`, e.g. the CLI's --allow-exec); errors name servers that failed to start,
    whose tools are left out while the run goes on.
    """
    errors: list[str] = []
    names: list[str] = []
    if manager is not None and manager.configs:
        errors = await manager.ensure_started()
        names = register_mcp_tools(registry, manager)
    rules = dict(getattr(settings, "permissions", None) or {})
    new_rules = expand_permission_rules(rules, registry.names())
    if allow_external:
        new_rules = allow_all(names, new_rules)
    if new_rules != rules:
        settings = settings.replace(permissions=new_rules)
    return settings, errors
