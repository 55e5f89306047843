"""Slash commands of ACP sessions: /plan TASK, /reindex, /status, /rewind [N] and the MCP servers' prompts."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from acp import helpers
from acp.schema import PromptResponse

from lsp_agent.acp.mcp_commands import expand, prompt_arguments, prompt_commands
from lsp_agent.acp.sessions import COMMANDS, MODES

if TYPE_CHECKING:
    from lsp_agent.acp.agent import LspAgentAcp
    from lsp_agent.acp.sessions import AcpSession
    from lsp_agent.config import Settings

REINDEX_WAIT_SECONDS = 600.0


def slash_command(blocks: list[Any], more: Collection[str] = ()) -> tuple[str, str, list[Any]] | None:
    """(name, argument, other blocks) when the prompt starts with a known /command (or one of `more`), else None."""
    if not blocks or getattr(blocks[0], "type", "") != "text":
        return None
    text = blocks[0].text.lstrip()
    if not text.startswith("/"):
        return None
    name, _, argument = text[1:].partition(" ")
    name = name.strip()
    if name not in COMMANDS and name not in more:
        return None
    return name, argument.strip(), list(blocks[1:])


async def run_command(
    agent: LspAgentAcp, session: AcpSession, settings: Settings, name: str, argument: str, rest: list[Any]
) -> PromptResponse:
    """Carry out one slash command."""
    if name not in COMMANDS:
        return await _run_prompt(agent, session, settings, name, argument, rest)
    if name == "plan":
        if not argument and not rest:
            return await _say(
                agent, session, "Usage: /plan TASK (plans the task in subtasks, then carries them out)"
            )
        blocks = [helpers.text_block(argument), *rest] if argument else rest
        return await agent._run(session, blocks, settings.replace(plan=True))
    session.record(helpers.update_user_message_text(f"/{name} {argument}".strip()))
    if name == "rewind":
        text = await asyncio.to_thread(rewind_text, session, argument)
        agent.store.save(session)
        return await _say(agent, session, text)
    if name == "reindex":
        agent.indexes.start(session.root, settings, force=True)
        await agent.indexes.get(session.root, timeout=REINDEX_WAIT_SECONDS)
        return await _say(agent, session, f"Workspace index: {agent.indexes.describe(session.root)}.")
    return await _say(agent, session, status_text(agent, session, settings))


def rewind_text(session: AcpSession, argument: str) -> str:
    """What /rewind says: the exchanges when no number is given, else what rewinding to that one did."""
    from lsp_agent.agent.conversation.rewind import exchange_rows, rewind_on_disk

    if session.run is not None:
        return "Not rewound: a prompt of this session is still running; cancel it or wait, then rewind."
    if not argument:
        rows = exchange_rows(session.memory, session.root)
        if not rows:
            return "Nothing to rewind: this session has no exchange yet."
        lines = ["Exchanges of this session (`/rewind N` goes back to N, `/rewind 0` to the start):"]
        for row in rows:
            mark = " (rewound)" if row["rewound"] else ""
            applied = f" - applied {', '.join(row['applied'])}" if row["applied"] else ""
            lines.append(f"{row['number']}. {' '.join(str(row['task']).split())[:80]}{mark}{applied}")
        return "\n".join(lines)
    if not argument.isdigit():
        return f"Not rewound: {argument!r} is not an exchange number; `/rewind` lists them."
    try:
        outcome = rewind_on_disk(session.memory, session.root, int(argument))
    except ValueError as exc:
        return f"Not rewound: {exc}."
    lines = [outcome.summary() + "."]
    lines += [f"- restored {path}" for path in outcome.restored]
    lines += [f"- not restored: {problem}" for problem in outcome.refused]
    return "\n".join(lines)


async def _run_prompt(
    agent: LspAgentAcp, session: AcpSession, settings: Settings, name: str, argument: str, rest: list[Any]
) -> PromptResponse:
    """An MCP prompt as the task of a turn (a usage or server error is the answer instead)."""
    found = prompt_commands(session.mcp).get(name)
    try:
        if found is None or session.mcp is None:
            raise ValueError(f"/{name}: its MCP server is no longer running; /status shows the servers")
        server, prompt = found
        text = await expand(session.mcp, server, prompt, prompt_arguments(name, prompt, argument))
    except ValueError as exc:
        session.record(helpers.update_user_message_text(f"/{name} {argument}".strip()))
        return await _say(agent, session, str(exc))
    return await agent._run(session, [helpers.text_block(text), *rest], settings)


def status_text(agent: LspAgentAcp, session: AcpSession, settings: Settings) -> str:
    """What /status shows."""
    lines = [
        f"lsp-agent session {session.id} in {session.root}",
        f"- model: {settings.model or 'not configured (set LSP_AGENT_MODEL or pass --model)'}",
        f"- mode: {MODES[session.mode][0]} ({MODES[session.mode][1]})",
        f"- workspace index: {agent.indexes.describe(session.root)}",
    ]
    if session.mcp is None:
        lines.append("- MCP servers: none configured")
    else:
        for server in session.mcp.status():
            tools = len(server.get("tools") or [])
            lines.append(f"- MCP server {server.get('name')}: {server.get('state')} ({tools} tools)")
        lines.extend(f"- MCP problem: {error}" for error in session.mcp.errors())
    lines.append(f"- prompts answered in this session: {session.turns}")
    return "\n".join(lines)


async def _say(agent: LspAgentAcp, session: AcpSession, text: str) -> PromptResponse:
    """Answer a command with one agent message."""
    update = helpers.update_agent_message_text(text)
    session.record(update)
    await agent.conn.session_update(session_id=session.id, update=update)
    return PromptResponse(stop_reason="end_turn")
