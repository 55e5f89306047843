"""The editor's conversations: kept in memory, persisted in the one conversation store, one current per folder.

Every change to a conversation (an exchange begun or finished, a proposal applied or rejected, a summary) is
written at once to the store the CLI and the ACP front-end share (agent/conversation/store.py), with the secret
values of the folder's run redacted. An ask without a sessionId continues its folder's current conversation, so a
restarted server (or editor) goes on where it stopped; "new conversation" makes a fresh one current and leaves
the old one on disk.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_agent.agent.conversation.session import Session
from lsp_agent.agent.conversation.store import ConversationStore, default_store

if TYPE_CHECKING:
    from lsp_agent.server.server import AgentServer

log = logging.getLogger(__name__)

FRONT_END = "lsp"


class EditorConversations:
    """The conversations of one server: by id in memory, on disk in the shared store."""

    def __init__(self, server: AgentServer, store: ConversationStore | None = None) -> None:
        self.server = server
        self._store = store
        self.sessions: dict[str, Session] = {}

    @property
    def store(self) -> ConversationStore:
        """The store (resolved on first use, so the environment of the running server decides where)."""
        if self._store is None:
            self._store = default_store()
        return self._store

    def get(self, session_id: str | None, root: Path | None = None) -> Session:
        """The conversation `session_id` (from memory, else the store, else new); the folder's current when None."""
        if session_id is None:
            return self.current(root)
        session = self.sessions.get(session_id)
        if session is None:
            stored = self.store.load(session_id)
            session = stored.session if stored is not None else Session(session_id)
            session.root = stored.root if stored is not None and stored.root is not None else root
            self._keep(session)
        return session

    def for_ask(self, session_id: str | None, root: Path) -> Session:
        """The conversation an ask in `root` joins; it becomes the folder's current one."""
        session = self.get(session_id, root)
        if session.root is None:
            session.root = root
        self._make_current(session, root)
        return session

    def current(self, root: Path | None) -> Session:
        """The folder's current conversation (a new one when it has none)."""
        root = root or self.server.primary_root
        current_id = self.store.current_id(root) if root is not None else None
        if current_id is not None:
            return self.get(current_id, root)
        return self.start(root)

    def start(self, root: Path | None, session_id: str | None = None) -> Session:
        """A new conversation, current in its folder; an existing id starts over (its file is rewritten)."""
        session = (
            self.get(session_id, root) if session_id else self._keep(Session("lsp-" + uuid.uuid4().hex[:10]))
        )
        session.root = session.root or root
        if session.exchanges or session.notes or session.summary is not None:
            session.clear()
        if root is not None:
            self._make_current(session, root)
        return session

    def save(self, session: Session) -> None:
        """Write a conversation to the store (secrets redacted); raises OSError (Session.changed logs it)."""
        from lsp_agent.workspace.redaction import redactor_for

        redact = redactor_for(self.server.settings, session.root).redact
        self.store.save(session, root=session.root, front_end=FRONT_END, redact=redact)

    def _keep(self, session: Session) -> Session:
        """Hold a conversation in memory and persist every change to it."""
        self.sessions[session.id] = session
        session.on_change = self.save
        return session

    def _make_current(self, session: Session, root: Path) -> None:
        """Name the folder's current conversation (a failure is logged: the next restart starts a new one)."""
        if self.store.current_id(root) == session.id:
            return
        try:
            self.store.set_current(root, session.id)
        except OSError as exc:
            log.warning("could not remember conversation %s as current in %s: %s", session.id, root, exc)
