"""Forking a session (`session/fork` and the `/fork [N]` command): a new session whose conversation is a copy of
another's, whole or up to exchange N, stored in the one conversation store; the source and the files are untouched.

`session/fork` takes the exchange in its `_meta` (`{"lspAgent": {"exchange": N}}`; the schema has no field for it)
and makes the fork the client's active session, as session/resume would; `/fork` only stores it (the client's
session history lists it, session/load or session/resume opens it).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError, helpers
from acp.schema import ForkSessionResponse, SessionInfoUpdate

from lsp_agent.acp.read_folders import requested_directories
from lsp_agent.acp.session_list import iso_time, make_title
from lsp_agent.acp.sessions import mode_state
from lsp_agent.acp.workspace import checked_folder
from lsp_agent.agent.conversation.session import Session

if TYPE_CHECKING:
    from lsp_agent.acp.agent import LspAgentAcp

log = logging.getLogger(__name__)

INVALID_PARAMS, INTERNAL_ERROR = -32602, -32603
META_KEY = "lspAgent"  # session/fork's _meta: {"lspAgent": {"exchange": N}} forks up to exchange N


def requested_exchange(meta: dict[str, Any]) -> int | None:
    """The exchange a session/fork's `_meta` asks to fork at (None: the whole conversation); ValueError when bad."""
    ours = meta.get(META_KEY)
    if ours is None:
        return None
    if not isinstance(ours, dict):
        raise ValueError(f'_meta.{META_KEY} must be an object such as {{"exchange": 2}}, got {ours!r:.60}')
    number = ours.get("exchange")
    if number is None:
        return None
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise ValueError(
            f"_meta.{META_KEY}.exchange must be an exchange number (0 or more), got {number!r:.60}"
        )
    return number


def forked_memory(memory: Session, new_id: str, up_to: int | None) -> Session:
    """A copy of the conversation under a new id: every exchange, or the first `up_to`; ValueError saying why not.

    A run still going in the source is left out (its answer belongs to the source). Cut at `up_to`, loose notes
    are left out (they may speak of the dropped exchanges), and a summary that covers a dropped exchange is
    replaced by the kept exchanges in full.
    """
    fork = Session.from_dict(memory.to_dict())
    fork.id = new_id
    if up_to is not None:
        count = len(fork.exchanges)
        if up_to > count:
            have = f"exchanges 1 to {count}" if count else "no exchange yet"
            raise ValueError(f"no exchange {up_to}: the conversation has {have}")
        if up_to and fork.exchanges[up_to - 1].rewound:
            raise ValueError(f"exchange {up_to} was rewound: fork at an exchange that was not")
        dropped = fork.exchanges[up_to:]
        del fork.exchanges[up_to:]
        fork.notes.clear()
        if any(e.folded for e in dropped):
            fork.summary = None
            for exchange in fork.exchanges:
                exchange.folded = False
    fork.exchanges = [e for e in fork.exchanges if e.outcome != "running"]
    return fork


def replay_of(memory: Session) -> list[dict[str, Any]]:
    """What session/load shows of a fork cut at an exchange (or of a conversation no ACP client had): each kept
    exchange's prompt and answer."""
    updates = []
    for exchange in memory.exchanges:
        if exchange.rewound:
            continue
        updates.append(helpers.update_user_message_text(exchange.task))
        if exchange.answer:
            updates.append(helpers.update_agent_message_text(exchange.answer))
    return [u.model_dump(mode="json", by_alias=True, exclude_none=True) for u in updates]


def fork_title(data: dict[str, Any], memory: Session, up_to: int | None) -> str:
    """ "Fork of <the source's title>" (its first task when it has no title), "... at N" when cut."""
    title = data.get("title") if isinstance(data.get("title"), str) else None
    if title is None and memory.exchanges:
        title = make_title(memory.exchanges[0].task)
    where = f" at {up_to}" if up_to is not None else ""
    return make_title(f"Fork{where} of {title or 'an empty conversation'}") or "Fork"


def source_data(agent: LspAgentAcp, session_id: str) -> dict[str, Any]:
    """The session to fork as the store keeps it (a live one as it is now); a JSON-RPC error when unknown."""
    live = agent.sessions.get(session_id)
    if live is not None:
        return {"cwd": str(live.root), "memory": live.memory.to_dict(), **live.stored_fields()}
    data = agent.store.load(session_id) if isinstance(session_id, str) and session_id else None
    if data is None:
        raise RequestError(
            INVALID_PARAMS,
            f"unknown session {session_id!r:.80}: no stored session has this id (session/list shows them)",
        )
    return data


def store_fork(agent: LspAgentAcp, source_id: str, root: Path, up_to: int | None) -> tuple[str, str]:
    """Write a fork of `source_id` in folder `root` into the store; (its id, its title). JSON-RPC errors."""
    data = source_data(agent, source_id)
    new_id = uuid.uuid4().hex
    try:
        memory = forked_memory(Session.from_dict(data["memory"]), new_id, up_to)
    except ValueError as exc:
        raise RequestError(INVALID_PARAMS, str(exc)) from None
    history = data.get("history") if isinstance(data.get("history"), list) else []
    title = fork_title(data, memory, up_to)
    fields = {
        "mode": data.get("mode"),
        "history": copy.deepcopy(history) if up_to is None and history else replay_of(memory),
        "cost": 0.0,
        "title": title,
        "model": data.get("model"),
        "reasoningEffort": data.get("reasoningEffort"),
        "additionalDirectories": data.get("additionalDirectories") or [],
        "forkedFrom": {"sessionId": source_id, "exchange": up_to},
    }
    try:
        agent.store.write(memory, root, fields)
    except OSError as exc:
        raise RequestError(INTERNAL_ERROR, f"could not store the fork: {exc}") from None
    return new_id, title


async def fork_session(
    agent: LspAgentAcp,
    session_id: str,
    cwd: str,
    additional_directories: list[str] | None,
    mcp_servers: list[Any] | None,
    meta: dict[str, Any],
) -> ForkSessionResponse:
    """session/fork: the fork stored, then made active in `cwd` like a resumed session (no replay)."""
    root = checked_folder(cwd)
    if additional_directories is not None:
        requested_directories(additional_directories, root)  # refused before anything is stored
    try:
        up_to = requested_exchange(meta)
    except ValueError as exc:
        raise RequestError(INVALID_PARAMS, str(exc)) from None
    new_id, title = store_fork(agent, session_id, root, up_to)
    try:
        session = agent._restore(cwd, new_id, mcp_servers, additional_directories)
    except Exception:
        agent.store.delete(new_id)
        raise
    options = agent._start(session)
    asyncio.ensure_future(_announce_title(agent, new_id, title))
    return ForkSessionResponse(session_id=new_id, modes=mode_state(session.mode), config_options=options)


async def _announce_title(agent: LspAgentAcp, session_id: str, title: str) -> None:
    """After the answer: the fork's title (session_info_update)."""
    await asyncio.sleep(0)
    update = SessionInfoUpdate(
        session_update="session_info_update", title=title, updated_at=iso_time(time.time())
    )
    try:
        await agent.conn.session_update(session_id=session_id, update=update)
    except Exception as exc:  # noqa: BLE001 - informational
        log.warning("could not send the fork's title: %s", exc)


def fork_text(agent: LspAgentAcp, source_id: str, root: Path, argument: str) -> str:
    """What `/fork [N]` says: the stored fork (of the whole conversation, or up to exchange N) and how to open it."""
    up_to = exchange_number(argument) if argument else None
    if argument and up_to is None:
        return f"Not forked: {argument[:40]!r} is not an exchange number; `/rewind` lists them."
    try:
        new_id, title = store_fork(agent, source_id, root, up_to)
    except RequestError as exc:
        return f"Not forked: {exc}."
    what = "the whole conversation" if up_to is None else f"exchanges 1 to {up_to}"
    return (
        f'Forked {what} into a new session "{title}" ({new_id}); this session and the files are unchanged. '
        "Open the fork from your editor's session history (session/load or session/resume)."
    )


def exchange_number(argument: str) -> int | None:
    """A command's exchange number (ASCII digits, at most 9 of them), or None."""
    if argument.isascii() and argument.isdigit() and len(argument) <= 9:
        return int(argument)
    return None
