"""ACP sessions: their folder, mode, memory and replayable history, persisted so session/load can restore them."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    SessionMode,
    SessionModeState,
    SessionNotification,
    UnstructuredCommandInput,
)

from lsp_agent.agent.conversation.session import Session
from lsp_agent.agent.conversation.store import ConversationStore

if TYPE_CHECKING:
    from lsp_agent.acp.permissions import EditConsent, PermissionRequests
    from lsp_agent.agent.loop.run import AgentRun
    from lsp_agent.mcp.manager import McpManager

log = logging.getLogger(__name__)

MAX_HISTORY = 1000  # session/update payloads kept for replay
MODES = {
    "ask": ("Ask", "Answers questions about the code; reads and searches, never edits or runs anything"),
    "code": ("Code", "Reads, edits (each edit asks first) and runs tools (running code asks first)"),
    "plan": ("Plan", "Plans subtasks first and shows the plan, then works through it"),
}
DEFAULT_MODE = "code"
COMMANDS = {
    "plan": ("Plan this task in subtasks first, then carry them out", "task to plan"),
    "reindex": ("Rebuild the workspace index (search_code, find_symbol, the repo map)", None),
    "status": ("Show the model, mode, index and MCP servers of this session", None),
    "rewind": (
        "Go back to an earlier exchange: files applied since restored, the conversation goes on",
        "exchange",
    ),
}


def mode_state(current: str) -> SessionModeState:
    """The session's modes as ACP describes them."""
    modes = [SessionMode(id=key, name=name, description=text) for key, (name, text) in MODES.items()]
    return SessionModeState(current_mode_id=current, available_modes=modes)


def available_commands() -> list[AvailableCommand]:
    """The slash commands this agent understands."""
    return [
        AvailableCommand(
            name=name,
            description=text,
            input=AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None,
        )
        for name, (text, hint) in COMMANDS.items()
    ]


@dataclass
class AcpSession:
    """One conversation in one folder: what the agent remembers and what the client is shown again on load."""

    id: str
    root: Path
    memory: Session
    requests: PermissionRequests
    edits: EditConsent
    mode: str = DEFAULT_MODE
    history: list[dict[str, Any]] = field(default_factory=list)
    mcp: McpManager | None = None
    run: AgentRun | None = None
    turn: asyncio.Task | None = None
    turns: int = 0
    cost: float = 0.0  # USD the session's turns cost so far (usage_update reports it)
    title: str | None = None  # made from the first prompt (session_info_update, session/list)
    model: str | None = None  # picked through the model config option (None: the `model` setting)
    reasoning_effort: str | None = None  # picked through the reasoning_effort config option
    read_folders: list[Path] = field(default_factory=list)  # additionalDirectories: read, never written
    options_sent: list[Any] = field(default_factory=list)  # the config options the client was last told
    commands_sent: list[str] | None = None  # the slash commands the client was last told
    busy: bool = False  # a prompt is being answered
    cancel_requested: bool = False

    def restore(self, data: dict[str, Any]) -> None:
        """Take back what SessionStore.load read (bad values are left at their defaults)."""
        self.history = [h for h in data.get("history") or [] if isinstance(h, dict)]
        self.cost = float(data["cost"]) if isinstance(data.get("cost"), int | float) else 0.0
        self.title = data["title"] if isinstance(data.get("title"), str) else None
        self.model = data["model"] if isinstance(data.get("model"), str) else None
        effort = data.get("reasoningEffort")
        self.reasoning_effort = effort if isinstance(effort, str) else None

    def record(self, update: Any) -> None:
        """Keep one session/update payload for replay."""
        self.history.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))
        del self.history[:-MAX_HISTORY]

    def replay(self) -> list[Any]:
        """The recorded updates as typed payloads (damaged entries are skipped)."""
        updates = []
        for data in self.history:
            try:
                updates.append(
                    SessionNotification.model_validate({"sessionId": self.id, "update": data}).update
                )
            except ValueError as exc:
                log.warning("skipping a stored update of session %s: %s", self.id, exc)
        return updates


class SessionStore:
    """ACP sessions in the one conversation store (agent/conversation/store.py), with their mode and history."""

    def __init__(self, directory: Path) -> None:
        self.conversations = ConversationStore(directory)

    @property
    def directory(self) -> Path:
        """Where the conversations are stored."""
        return self.conversations.directory

    def path_of(self, session_id: str) -> Path:
        """Where a session is stored."""
        return self.conversations.path_of(session_id)

    def save(self, session: AcpSession) -> None:
        """Write a session (atomically, secrets redacted; a failure is logged, the session lives on in memory)."""
        from lsp_agent.acp.auth import stored_key
        from lsp_agent.workspace.redaction import redactor_for

        extra = {
            "acp": {
                "mode": session.mode,
                "history": session.history,
                "cost": session.cost,
                "title": session.title,
                "model": session.model,
                "reasoningEffort": session.reasoning_effort,
                "additionalDirectories": [str(p) for p in session.read_folders],
            }
        }
        try:
            redact = redactor_for(
                SimpleNamespace(api_key=stored_key()), session.root
            ).redact  # the given key too
            self.conversations.save(
                session.memory, root=session.root, front_end="acp", extra=extra, redact=redact
            )
        except OSError as exc:
            log.warning("could not save ACP session %s: %s", session.id, exc)

    def delete(self, session_id: str) -> bool:
        """Remove a stored session; False when there was none (OSError when the disk refuses)."""
        return self.conversations.delete(session_id)

    def load(self, session_id: str) -> dict[str, Any] | None:
        """The stored data of a session ({id, cwd, mode, memory, history, cost, title, model, ...}), or None."""
        stored = self.conversations.load(session_id)
        if stored is None:
            return None
        acp = stored.extra.get("acp") if isinstance(stored.extra.get("acp"), dict) else {}
        return {
            "id": session_id,
            "cwd": str(stored.root) if stored.root is not None else None,
            "mode": acp.get("mode"),
            "memory": stored.session.to_dict(),
            "history": acp.get("history") if isinstance(acp.get("history"), list) else [],
            "cost": acp.get("cost"),
            **{key: acp.get(key) for key in ("title", "model", "reasoningEffort", "additionalDirectories")},
        }


def default_store() -> SessionStore:
    """Sessions live in the one conversation store, beside the editor's and the CLI's."""
    from lsp_agent.agent.conversation.session import sessions_dir

    return SessionStore(sessions_dir())
