"""What an MCP server lists (its tools and its prompts) and a prompt's messages as the text of a task."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

MAX_PAGES = 50  # a server paging forever is cut here


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the MCP server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class RemotePrompt:
    """A prompt as the MCP server lists it: its name, description and arguments (name, description, required)."""

    name: str
    description: str
    arguments: list[tuple[str, str, bool]] = field(default_factory=list)


async def list_tools(client: Any) -> list[RemoteTool]:
    """Every tool the server lists, following pagination (bounded)."""
    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            schema = dict(tool.input_schema or {})
            schema.setdefault("type", "object")
            description = tool.description or tool.title or f"MCP tool {tool.name}"
            tools.append(RemoteTool(tool.name, description, schema))
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def list_prompts(client: Any) -> list[RemotePrompt]:
    """Every prompt the server lists ([] when it offers none, or listing fails: its tools still work)."""
    if getattr(client.server_capabilities, "prompts", None) is None:
        return []
    prompts: list[RemotePrompt] = []
    cursor: str | None = None
    try:
        for _ in range(MAX_PAGES):
            page = await client.list_prompts(cursor=cursor)
            for prompt in page.prompts:
                arguments = [(a.name, a.description or "", bool(a.required)) for a in prompt.arguments or []]
                description = prompt.description or prompt.title or f"MCP prompt {prompt.name}"
                prompts.append(RemotePrompt(prompt.name, description, arguments))
            cursor = page.next_cursor
            if not cursor:
                break
    except Exception as exc:  # noqa: BLE001 - a server whose prompts cannot be listed still serves its tools
        log.info("could not list the prompts of an MCP server: %s", exc)
    return prompts


def prompt_text(result: Any) -> str:
    """A prompts/get result as one text: its messages' text (other content is named, not shown)."""
    parts: list[str] = []
    for message in getattr(result, "messages", None) or []:
        content = message.content
        kind = getattr(content, "type", "")
        if kind == "text":
            parts.append(content.text)
        elif kind == "resource" and getattr(content.resource, "text", None) is not None:
            parts.append(f"{content.resource.uri}:\n{content.resource.text}")
        else:
            parts.append(f"(a {kind or 'non-text'} part of the prompt is not shown)")
    return "\n\n".join(parts).strip()
