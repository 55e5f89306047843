"""The session methods beyond new/load/prompt: list, close, delete, config options, titles and commands updates."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from acp import RequestError, helpers
from acp.schema import (
    ConfigOptionUpdate,
    ListSessionsResponse,
    SessionInfo,
    SessionInfoUpdate,
    SetSessionConfigOptionResponse,
)

from lsp_agent.acp.commands import slash_command
from lsp_agent.acp.config_options import MODE, apply_option, config_options
from lsp_agent.acp.mcp_commands import prompt_command_list, prompt_commands
from lsp_agent.acp.session_list import SessionLister, iso_time, make_title
from lsp_agent.acp.sessions import available_commands

if TYPE_CHECKING:
    from lsp_agent.acp.agent import LspAgentAcp
    from lsp_agent.acp.sessions import AcpSession
    from lsp_agent.config import Settings

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
CLOSE_WAIT_SECONDS = 2.0  # session/close waits this long for a cancelled run to stop


async def list_sessions(lister: SessionLister, cwd: str | None, cursor: str | None) -> ListSessionsResponse:
    """One page of the stored conversations (of folder `cwd` when given), newest first."""
    if cwd is not None and (not isinstance(cwd, str) or not cwd.startswith("/")):
        raise RequestError(INVALID_PARAMS, f"cwd must be an absolute path, got {cwd!r}")
    try:
        entries, next_cursor = await asyncio.to_thread(lister.page, cwd, cursor)
    except ValueError as exc:
        raise RequestError(INVALID_PARAMS, str(exc)) from None
    sessions = [
        SessionInfo(
            session_id=e.session_id,
            cwd=e.cwd,
            title=e.title,
            updated_at=e.updated_at,
            additional_directories=list(e.additional_directories) or None,
            field_meta={"lspAgent": {"frontEnd": e.front_end}} if e.front_end else None,
        )
        for e in entries
    ]
    return ListSessionsResponse(sessions=sessions, next_cursor=next_cursor)


async def close_session(agent: LspAgentAcp, session_id: str) -> None:
    """Cancel the session's run, wait for it to stop, close its MCP servers and forget it (it stays stored)."""
    session = agent.sessions.get(session_id)
    if session is None:
        raise RequestError(
            INVALID_PARAMS,
            f"no active session {session_id!r} in this agent (session/list shows the stored ones)",
        )
    if session.busy:
        await agent.cancel(session_id)
        deadline = time.monotonic() + CLOSE_WAIT_SECONDS
        while session.busy and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    if session.mcp is not None:
        mcp, session.mcp = session.mcp, None
        await asyncio.to_thread(mcp.close)
    session.requests.cancel_all()
    agent.sessions.pop(session_id, None)
    agent.store.save(session)


async def delete_session(agent: LspAgentAcp, session_id: str) -> None:
    """Close the session when it is active and remove it from the store, whichever front-end made it."""
    if session_id in agent.sessions:
        await close_session(agent, session_id)
    try:
        found = await asyncio.to_thread(agent.store.delete, session_id)
    except OSError as exc:
        raise RequestError(-32603, f"could not delete session {session_id!r}: {exc}") from None
    if not found:
        raise RequestError(INVALID_PARAMS, f"unknown session {session_id!r}: no stored session has this id")


async def set_config_option(
    agent: LspAgentAcp, session: AcpSession, settings: Settings, config_id: str, value: Any
) -> SetSessionConfigOptionResponse:
    """Change one option; the client is told the options (and, for the mode, the legacy current mode)."""
    await ensure_litellm()
    try:
        apply_option(session, settings, config_id, value)
    except ValueError as exc:
        raise RequestError(INVALID_PARAMS, str(exc)) from None
    agent.store.save(session)
    options = config_options(session, settings)
    session.options_sent = dumped(options)
    if config_id == MODE:
        await agent.conn.session_update(
            session_id=session.id, update=helpers.update_current_mode(session.mode)
        )
    return SetSessionConfigOptionResponse(config_options=options)


async def send_options_if_changed(agent: LspAgentAcp, session: AcpSession, settings: Settings) -> None:
    """A config_option_update when the options differ from what the client was told (e.g. reasoning now known)."""
    options = config_options(session, settings)
    if dumped(options) == session.options_sent:
        return
    session.options_sent = dumped(options)
    await agent.conn.session_update(
        session_id=session.id,
        update=ConfigOptionUpdate(session_update="config_option_update", config_options=options),
    )


def dumped(options: list[Any]) -> list[Any]:
    """Options as JSON, to compare what the client was told with what holds now."""
    return [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options]


async def ensure_litellm() -> None:
    """Import litellm off the event loop (whether a model reasons is litellm's to say)."""
    from lsp_agent.agent.model.client import get_litellm, litellm_loaded

    if not litellm_loaded():
        try:
            await asyncio.to_thread(get_litellm)
        except Exception as exc:  # noqa: BLE001 - the options then leave the reasoning effort out
            log.warning("litellm could not be imported: %s", exc)


def prompt_title(blocks: list[Any], more: Any = ()) -> str | None:
    """The title a first prompt gives its session (a slash command's argument for /plan, none for others)."""
    command = slash_command(blocks, more)
    if command is not None:
        name, argument, _ = command
        return make_title(argument) if name == "plan" else None
    return make_title("\n".join(b.text for b in blocks if getattr(b, "type", "") == "text"))


async def give_title(agent: LspAgentAcp, session: AcpSession, blocks: list[Any]) -> None:
    """Name an untitled session after its first prompt and tell the client (session_info_update)."""
    if session.title is not None:
        return
    title = prompt_title(blocks, prompt_commands(session.mcp))
    if title is None:
        return
    session.title = title
    agent.store.save(session)
    update = SessionInfoUpdate(
        session_update="session_info_update", title=title, updated_at=iso_time(time.time())
    )
    try:
        await agent.conn.session_update(session_id=session.id, update=update)
    except Exception as exc:  # noqa: BLE001 - informational
        log.warning("could not send the session title: %s", exc)


def announce(agent: LspAgentAcp, session: AcpSession) -> None:
    """After a session/new, load or resume answer: the commands (again once MCP prompts are listed) and the
    options once litellm says whether the model reasons."""
    asyncio.ensure_future(_announce_commands(agent, session))
    asyncio.ensure_future(_announce_options(agent, session))


async def send_commands_if_changed(agent: LspAgentAcp, session: AcpSession) -> None:
    """An available_commands_update when the commands differ from what the client was last told."""
    commands = [*available_commands(), *prompt_command_list(session.mcp)]
    names = [c.name for c in commands]
    if names == session.commands_sent:
        return
    session.commands_sent = names
    try:
        await agent.conn.session_update(
            session_id=session.id, update=helpers.update_available_commands(commands)
        )
    except Exception as exc:  # noqa: BLE001 - informational
        log.warning("could not send the available commands: %s", exc)


async def _announce_commands(agent: LspAgentAcp, session: AcpSession) -> None:
    """The built-in commands at once; the MCP servers started, then their prompts too."""
    await asyncio.sleep(0)
    await send_commands_if_changed(agent, session)
    if session.mcp is None:
        return
    try:
        await session.mcp.ensure_started()  # failures are kept by the manager (/status and the run show them)
    except Exception as exc:  # noqa: BLE001 - the first prompt tries again
        log.info("the MCP servers of session %s did not start: %s", session.id, exc)
    if agent.sessions.get(session.id) is session:
        await send_commands_if_changed(agent, session)


async def _announce_options(agent: LspAgentAcp, session: AcpSession) -> None:
    """The config options again once the warm-up tells whether the model reasons (only when they changed)."""
    if agent.model_warmup is not None:
        await asyncio.wait([agent.model_warmup])  # done or failed: whether the model reasons is known now
    if agent.sessions.get(session.id) is session:
        try:
            await send_options_if_changed(agent, session, agent._settings(session.root))
        except Exception as exc:  # noqa: BLE001 - informational
            log.warning("could not send the session's config options: %s", exc)
