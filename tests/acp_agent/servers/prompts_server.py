"""A small real MCP server with prompts (and one tool) for the ACP slash-command tests; stdio."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("review", log_level="WARNING")


@server.prompt()
def review(path: str, focus: str = "bugs") -> str:
    """Review one file."""
    return f"Review {path} for {focus}; list each problem with its line."


@server.prompt()
def standup() -> str:
    """Summarize the day's changes."""
    return "Summarize what changed in this workspace today."


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    server.run()
