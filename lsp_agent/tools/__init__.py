"""The agent's tools: a registry of JSON-schema tools and the built-in file, search and index tools."""

from lsp_agent.tools.registry import (
    Tool,
    ToolContext,
    ToolError,
    ToolLimits,
    ToolRegistry,
    ToolResult,
    default_registry,
)

__all__ = ["Tool", "ToolContext", "ToolError", "ToolLimits", "ToolRegistry", "ToolResult", "default_registry"]
