"""An MCP server whose tool list changes: `unlock` adds the `secret` tool and says so (tools/list_changed).

It announces the change both ways: a `subscriptions/listen` event (2026-07-28 connections) and the legacy
notifications/tools/list_changed (handshake-era connections); each connection receives the one it understands.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("dynamic", log_level="WARNING")


def secret() -> str:
    """The tool that exists only after unlock."""
    return "the vault is open"


@server.tool()
async def unlock(ctx: Context) -> str:
    """Add the `secret` tool."""
    server.add_tool(secret)
    await ctx.notify_tools_changed()
    await ctx.request_context.session.send_tool_list_changed()
    return "unlocked: a new tool is available"


if __name__ == "__main__":
    server.run()
