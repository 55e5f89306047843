"""MCP prompts as slash commands of an ACP session: `/<server>__<prompt> ARGS` makes the prompt's text the task.

The session's MCP servers start in the background when the session opens; once their prompts are listed (and
whenever the list changes, e.g. a server started late or was restarted by a run) the client gets an
`available_commands_update` with the built-in commands and one command per prompt. Arguments are words in the
prompt's order or `name=value` words (quotes as in a shell); a prompt with one argument takes the whole text.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

if TYPE_CHECKING:
    from lsp_agent.mcp.listing import RemotePrompt
    from lsp_agent.mcp.manager import McpManager


def prompt_commands(manager: McpManager | None) -> dict[str, tuple[str, RemotePrompt]]:
    """{command name: (server, prompt)} of the ready servers' prompts."""
    if manager is None:
        return {}
    from lsp_agent.mcp.bridge import tool_name

    return {tool_name(server, prompt.name): (server, prompt) for server, prompt in manager.prompts()}


def usage(name: str, prompt: RemotePrompt) -> str:
    """How the command is typed: `/name arg=... [opt=...]`."""
    words = [f"{a}=..." if required else f"[{a}=...]" for a, _, required in prompt.arguments]
    return " ".join([f"/{name}", *words])


def prompt_command_list(manager: McpManager | None) -> list[AvailableCommand]:
    """The MCP prompts as ACP commands (the hint names their arguments)."""
    out = []
    for name, (server, prompt) in prompt_commands(manager).items():
        hint = usage(name, prompt).partition(" ")[2]
        out.append(
            AvailableCommand(
                name=name,
                description=f"{prompt.description} (MCP prompt of {server})",
                input=AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None,
            )
        )
    return out


def prompt_arguments(name: str, prompt: RemotePrompt, text: str) -> dict[str, str]:
    """The prompt's arguments from what followed the command: `name=value` words, other words filling the
    arguments in order (a prompt of one argument takes the whole text); ValueError with the usage."""
    names = [a for a, _, _ in prompt.arguments]
    stripped = text.strip()
    if len(names) == 1 and stripped and not stripped.startswith(f"{names[0]}="):
        return {names[0]: stripped}
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"{exc}; usage: {usage(name, prompt)}") from None
    values: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            values[key] = value
            continue
        free = next((n for n in names if n not in values), None)
        if free is None:
            raise ValueError(f"unexpected {word!r}; usage: {usage(name, prompt)}")
        values[free] = word
    missing = [a for a, _, required in prompt.arguments if required and a not in values]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}; usage: {usage(name, prompt)}")
    return values


async def expand(manager: McpManager, server: str, prompt: RemotePrompt, arguments: dict[str, Any]) -> str:
    """The prompt's text from its server (an error message as ValueError)."""
    try:
        text = await manager.get_prompt(server, prompt.name, arguments)
    except Exception as exc:  # noqa: BLE001 - the server's failure is the user's to read
        raise ValueError(
            f"the MCP server {server!r} could not give the prompt {prompt.name!r}: {exc}"
        ) from None
    if not text:
        raise ValueError(f"the MCP prompt {prompt.name!r} of {server!r} has no text")
    return text
