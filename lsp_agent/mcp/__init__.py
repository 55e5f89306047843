"""MCP: tools from Model Context Protocol servers (stdio and streamable HTTP) in the agent's tool registry."""

from lsp_agent.mcp.bridge import (
    allow_all,
    expand_permission_rules,
    mcp_tools,
    register_mcp_tools,
    tool_name,
)
from lsp_agent.mcp.config import McpServerConfig, collect_servers, parse_servers, server_from_flag
from lsp_agent.mcp.connection import McpUnavailable, RemoteTool
from lsp_agent.mcp.manager import McpManager
from lsp_agent.mcp.setup import attach_mcp_tools

__all__ = [
    "McpManager",
    "McpServerConfig",
    "McpUnavailable",
    "RemoteTool",
    "allow_all",
    "attach_mcp_tools",
    "collect_servers",
    "expand_permission_rules",
    "mcp_tools",
    "parse_servers",
    "register_mcp_tools",
    "server_from_flag",
    "tool_name",
]
