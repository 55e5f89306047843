"""MCP tools in the tool registry: `<server>__<tool>` names, their schemas, permission "external"."""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from lsp_agent.mcp.config import safe_name
from lsp_agent.mcp.connection import McpUnavailable, RemoteTool
from lsp_agent.mcp.manager import McpManager
from lsp_agent.mcp.results import DEFAULT_MAX_CHARS, render_result
from lsp_agent.tools.registry import Tool, ToolContext, ToolError, ToolRegistry

SEPARATOR = "__"
MAX_NAME = 64  # OpenAI's limit on function names
MAX_DESCRIPTION = 1024
_TOOL_BAD = re.compile(r"[^A-Za-z0-9_-]+")


def tool_name(server: str, tool: str) -> str:
    """`<server>__<tool>` restricted to the characters and length every provider accepts."""
    name = f"{safe_name(server)}{SEPARATOR}{_TOOL_BAD.sub('_', tool).strip('_') or 'tool'}"
    if len(name) > MAX_NAME:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def mcp_tools(manager: McpManager, max_chars: int = DEFAULT_MAX_CHARS) -> list[Tool]:
    """Registry tools for every tool of every ready server."""
    tools: list[Tool] = []
    seen: set[str] = set()
    for server, remote in manager.tools():
        name = tool_name(server, remote.name)
        if name in seen:
            continue
        seen.add(name)
        tools.append(_as_tool(manager, server, remote, name, max_chars))
    return tools


def register_mcp_tools(
    registry: ToolRegistry, manager: McpManager, max_chars: int = DEFAULT_MAX_CHARS
) -> list[str]:
    """Add (or refresh) the MCP tools in `registry`; returns their names. Built-in tools keep their names."""
    names = []
    for tool in mcp_tools(manager, max_chars):
        existing = registry.get(tool.name)
        if existing is not None and existing.permission != "external":
            continue
        registry.register(tool, replace=True)
        names.append(tool.name)
    return names


def expand_permission_rules(rules: Mapping[str, str], tool_names: Iterable[str]) -> dict[str, str]:
    """Rules with glob patterns ("files__*") expanded to the matching tool names.

    An exact rule for a tool wins over patterns; when several patterns match, "deny" wins.
    """
    out = dict(rules)
    patterns = [(p, v) for p, v in rules.items() if any(ch in p for ch in "*?[")]
    if not patterns:
        return out
    for name in tool_names:
        if name in rules:
            continue
        matched = [v for p, v in patterns if fnmatch.fnmatchcase(name, p)]
        if matched:
            out[name] = "deny" if "deny" in matched else "allow"
    return out


def allow_all(tool_names: Iterable[str], rules: Mapping[str, str]) -> dict[str, str]:
    """Rules that allow every tool in `tool_names` unless a rule denies it (the CLI's --allow-exec)."""
    out = dict(rules)
    for name in tool_names:
        out.setdefault(name, "allow")
    return out


def _as_tool(manager: McpManager, server: str, remote: RemoteTool, name: str, max_chars: int) -> Tool:
    """A registry Tool that forwards to the server through the manager."""

    async def call(ctx: ToolContext, **arguments: Any) -> str:
        try:
            result = await manager.call_tool(server, remote.name, arguments)
        except McpUnavailable as exc:
            raise ToolError(str(exc)) from None
        except TimeoutError as exc:
            raise ToolError(
                f"{name}: the MCP server {server!r} did not answer in time ({exc}); try a smaller request, or "
                "raise 'toolTimeout' in the server's settings"
            ) from None
        except Exception as exc:
            if type(exc).__name__ == "MCPError":
                raise ToolError(f"{name}: the MCP server {server!r} refused the call: {exc}") from None
            raise
        text = render_result(result, max_chars)
        if getattr(result, "is_error", False):
            raise ToolError(f"{name} reported an error: {text}")
        return text

    description = remote.description.strip()
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    description = (
        f"{description}\n(MCP tool {remote.name!r} of server {server!r}; reaches outside the workspace)"
    )
    return Tool(
        name=name,
        description=description,
        parameters=_object_schema(remote.input_schema),
        function=call,
        permission="external",
    )


def _object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The server's input schema as an object schema (a missing or odd schema becomes an empty object)."""
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return {"type": "object", "properties": {}}
    out = {k: v for k, v in schema.items() if k not in ("title", "$schema")}
    out["type"] = "object"
    out.setdefault("properties", {})
    return out
